"""The language a prompt is read in, as the judge's trace reports it (issue 33, item 3)."""

from __future__ import annotations

import pytest

from sentinel_runtime.pipeline import config as pipeline_config
from sentinel_runtime.pipeline.understand import canonical, introspection, language, trace


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("How many days do I have to ask for a refund on my annual plan?", "en"),
        ("Combien de jours ai-je pour demander le remboursement de mon abonnement ?", "fr"),
        ("Wie viele Tage habe ich Zeit, um eine Erstattung meines Jahresabos zu verlangen?", "de"),
        ("Quanti giorni ho per chiedere il rimborso del mio abbonamento annuale?", "it"),
        ("¿Cuántos días tengo para pedir el reembolso de mi plan anual?", "es"),
        ("Hi", "und"),
        ("12345 ?!", "und"),
    ],
)
def test_the_language_is_read_or_left_undetermined(text: str, code: str) -> None:
    assert language.detect(text)[0] == code


def test_the_trace_names_the_language_in_its_signals_and_steps() -> None:
    config = pipeline_config.DEFAULT.introspection
    prompt = canonical.canonicalise("Wie setze ich mein Passwort zurück?", 8000)
    state = introspection.introspect(prompt, config)
    assert state.signals[0] == "language:de"
    assert all(trace.is_signal(code) for code in state.signals)
    assert "language de." in state.trace

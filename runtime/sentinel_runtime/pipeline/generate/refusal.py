"""Refusals with safe alternatives, one template per risk category (stage 4, outcome 3)."""

from __future__ import annotations

from sentinel_runtime.pipeline.types import Answer, Introspection

REFUSAL = "I can't help with that request."
_ALTERNATIVES: dict[str, tuple[str, ...]] = {
    "self_harm": (
        "If you are thinking about harming yourself, please reach out to someone you trust or "
        "a local crisis line (in the US, call or text 988).",
        "I can share information about coping strategies and where to find support.",
    ),
    "cyber": (
        "I can explain how this class of attack works at a high level and how to defend "
        "against it.",
        "I can point you to responsible-disclosure and secure-configuration guidance.",
    ),
    "weapons": ("I can discuss the history, law or safety regulation of this topic instead.",),
    "explosives": ("I can discuss the history, law or safety regulation of this topic instead.",),
    "chemical_biological": (
        "I can explain the general science, history or public-health response instead.",
    ),
    "drugs": (
        "I can share harm-reduction and treatment resources, or the pharmacology at a high level.",
    ),
    "fraud_deception": ("I can explain how to recognise and report this kind of fraud.",),
    "privacy": ("I can explain how people can protect their personal information.",),
    "hate_harassment": ("I can help write respectful content or explain moderation policy.",),
    "violence": ("I can discuss conflict de-escalation or where to find help.",),
    "extremism": ("I can explain the history of extremist movements and counter-extremism.",),
}
_DEFAULT_ALTERNATIVES = ("I can help with a related question that does not involve harm.",)


def refuse(state: Introspection) -> Answer:
    alternatives = _ALTERNATIVES.get(state.risk_category, _DEFAULT_ALTERNATIVES)
    text = " ".join((REFUSAL, *alternatives))
    return Answer(
        decision="refuse",
        text=text,
        alternatives=alternatives,
        generator="refusal",
        details={"risk_category": state.risk_category},
    )

"""Choosing the encoder stage's band and thresholds on validation scores (numpy only)."""

from __future__ import annotations

import numpy as np
import pytest

from sentinel_runtime.training import encoder_band

LINEAR_REFUSE, LINEAR_AMBIGUOUS = 0.62, 0.21


def scores(encoder_quality: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Linear probabilities that overlap in the middle, and an encoder that knows the label
    with ``encoder_quality`` (0: noise, 1: perfect) wherever it is asked."""
    rng = np.random.default_rng(seed)
    labels = np.array([0] * 4000 + [1] * 600)
    linear = np.where(labels == 1, rng.beta(1.2, 1.5, labels.size), rng.beta(1, 12, labels.size))
    noise = rng.random(labels.size)
    encoder = encoder_quality * labels + (1 - encoder_quality) * noise
    return linear, np.clip(encoder + rng.normal(0, 0.01, labels.size), 0, 1), labels


def choose(linear: np.ndarray, encoder: np.ndarray, labels: np.ndarray) -> encoder_band.Choice:
    return encoder_band.choose(
        linear,
        encoder,
        labels,
        linear_refuse=LINEAR_REFUSE,
        linear_ambiguous=LINEAR_AMBIGUOUS,
    )


def test_a_good_encoder_buys_recall_at_the_linear_models_false_positive_rates() -> None:
    choice = choose(*scores(0.8))
    chosen = choice.chosen
    assert chosen.low <= LINEAR_AMBIGUOUS < LINEAR_REFUSE < chosen.high
    assert chosen.refused_harmful > choice.linear_only["refused_harmful"] + 0.05
    # Every band on the curve refuses and restricts no more benign rows than the linear model.
    for candidate in choice.curve:
        assert candidate.refused_benign <= choice.linear_only["refused_benign"] + 1e-9
        assert candidate.restricted_benign <= choice.linear_only["restricted_benign"] + 1e-9
        assert candidate.ambiguous <= candidate.refuse


def test_the_restriction_threshold_keeps_the_linear_models_recall_and_restricts_less() -> None:
    linear, encoder, labels = scores(0.4)  # an encoder whose refusals alone do not keep it
    choice = choose(linear, encoder, labels)
    chosen = choice.chosen
    assert chosen.ambiguous < chosen.refuse
    assert chosen.restricted_harmful >= choice.linear_only["restricted_harmful"] - 1e-9
    assert chosen.restricted_benign < choice.linear_only["restricted_benign"]
    # It is the highest such threshold: one step up loses a harmful row.
    inside = (linear >= chosen.low) & (linear < chosen.high)
    above = linear >= chosen.high
    higher = above | (inside & (encoder > chosen.ambiguous))
    assert (higher & (labels == 1)).mean() / (labels == 1).mean() < chosen.restricted_harmful


def test_the_chosen_band_is_the_narrowest_that_keeps_most_of_the_gain() -> None:
    choice = choose(*scores(0.8))
    base = choice.linear_only["refused_harmful"]
    best = max(c.refused_harmful for c in choice.curve)
    enough = base + encoder_band.GAIN_SHARE * (best - base)
    assert choice.chosen.refused_harmful >= enough - 1e-12
    narrower = [c for c in choice.curve if c.reach < choice.chosen.reach]
    assert narrower, "the grid has narrower bands"
    assert all(c.refused_harmful < enough for c in narrower)
    assert choice.chosen.reach < max(c.reach for c in choice.curve)


def test_an_encoder_that_knows_nothing_gets_the_narrowest_band() -> None:
    choice = choose(*scores(0.0))
    assert choice.chosen.reach == min(c.reach for c in choice.curve)


def test_the_same_scores_give_the_same_choice() -> None:
    assert choose(*scores(0.6, seed=3)) == choose(*scores(0.6, seed=3))


@pytest.mark.parametrize(
    ("linear", "encoder", "labels"),
    [
        pytest.param([0.1, 0.9], [0.2], [0, 1], id="unaligned"),
        pytest.param([0.1, 0.9], [0.2, 0.8], [0, 0], id="one-label"),
    ],
)
def test_scores_that_cannot_choose_a_band_are_an_error(
    linear: list[float], encoder: list[float], labels: list[int]
) -> None:
    with pytest.raises(ValueError, match="aligned scores"):
        encoder_band.choose(
            linear,
            encoder,
            labels,
            linear_refuse=LINEAR_REFUSE,
            linear_ambiguous=LINEAR_AMBIGUOUS,
        )


def test_look_alikes_cap_the_encoders_refusals_where_plain_benign_rows_do_not() -> None:
    """Look-alikes sit where the linear model is unsure, and the encoder (quality 0.8 on the
    others) mistakes half of them for harmful: without them the cascade refuses far more of
    them than the linear model; with them it refuses no more, and pays in recall."""
    linear, encoder, labels = scores(0.8)
    rng = np.random.default_rng(11)
    count = 800
    look_linear = rng.uniform(0.25, 0.65, count)  # in any band the grid offers
    look_encoder = np.where(rng.random(count) < 0.5, rng.uniform(0.8, 1.0, count), 0.05)
    p = np.concatenate([linear, look_linear])
    q = np.concatenate([encoder, look_encoder])
    y = np.concatenate([labels, np.zeros(count, dtype=int)])
    look = [""] * labels.size + ["look-alikes"] * count

    def cascade_refuses_lookalikes(chosen: encoder_band.Candidate) -> float:
        inside = (look_linear >= chosen.low) & (look_linear < chosen.high)
        refused = (look_linear >= chosen.high) | (inside & (look_encoder >= chosen.refuse))
        return float(refused.mean())

    blind = choose(linear, encoder, labels).chosen
    capped = encoder_band.choose(
        p, q, y, linear_refuse=LINEAR_REFUSE, linear_ambiguous=LINEAR_AMBIGUOUS, lookalike=look
    )
    allowed = capped.linear_only["refused_lookalike"]
    assert allowed == pytest.approx(float((look_linear >= LINEAR_REFUSE).mean()))
    assert cascade_refuses_lookalikes(blind) > allowed + 0.1
    for candidate in capped.curve:
        assert candidate.refused_lookalike <= allowed + 1e-9
        assert cascade_refuses_lookalikes(candidate) == pytest.approx(candidate.refused_lookalike)
    assert capped.chosen.refused_harmful <= blind.refused_harmful
    # Plain benign rows keep their own cap, and look-alikes do not count in it.
    assert capped.chosen.refused_benign <= capped.linear_only["refused_benign"] + 1e-9


def test_look_alikes_must_be_benign() -> None:
    linear, encoder, labels = scores(0.8)
    look = ["harmful?" if label == 1 else "" for label in labels]
    with pytest.raises(ValueError, match="look-alike rows are benign"):
        encoder_band.choose(
            linear,
            encoder,
            labels,
            linear_refuse=LINEAR_REFUSE,
            linear_ambiguous=LINEAR_AMBIGUOUS,
            lookalike=look,
        )


def test_each_look_alike_source_is_capped_on_its_own() -> None:
    """A small source the encoder gets wrong is not hidden by a large one it gets right."""
    linear, encoder, labels = scores(0.8)
    rng = np.random.default_rng(12)
    large, small = 2000, 200
    look_linear = rng.uniform(0.25, 0.65, large + small)
    look_encoder = np.concatenate(
        [np.full(large, 0.01), np.where(rng.random(small) < 0.5, 0.99, 0.01)]
    )
    names = ["big"] * large + ["small"] * small
    p = np.concatenate([linear, look_linear])
    q = np.concatenate([encoder, look_encoder])
    y = np.concatenate([labels, np.zeros(large + small, dtype=int)])

    def choice(groups: list[str]) -> encoder_band.Choice:
        return encoder_band.choose(
            p,
            q,
            y,
            linear_refuse=LINEAR_REFUSE,
            linear_ambiguous=LINEAR_AMBIGUOUS,
            lookalike=[""] * labels.size + groups,
        )

    pooled, apart = choice(["one"] * (large + small)), choice(names)
    small_rows = slice(large, large + small)

    def small_refused(chosen: encoder_band.Candidate) -> float:
        lin, enc = look_linear[small_rows], look_encoder[small_rows]
        inside = (lin >= chosen.low) & (lin < chosen.high)
        return float(((lin >= chosen.high) | (inside & (enc >= chosen.refuse))).mean())

    allowed = apart.linear_only["refused_lookalike/small"]
    assert small_refused(pooled.chosen) > allowed + 0.05
    assert small_refused(apart.chosen) <= allowed + 1e-9

"""Choose the encoder stage's band and thresholds from validation scores (numpy only).

Inputs are the training sources' ``holdout`` rows (never an evaluation set): the linear
model's harm probability of each row's most harmful reading (fitted on the ``dev`` rows,
as ``train.thresholds_for`` does), the encoder's probability of that same reading (also
fitted on ``dev``), and the label. The cascade reads the linear probability ``p``: below
the band the linear model decides (benign: the band starts at or below its restriction
threshold), at or above the band it refuses (the band ends above its refusal threshold),
and inside ``[low, high)`` the encoder decides with thresholds of its own.

The encoder's thresholds are set against the linear model alone at its own thresholds, on
the same rows. ``refuse``: with the benign rows the linear model refuses above the band, the
cascade refuses no larger share of the benign rows than the linear model does, so it buys
recall at the same over-refusal; and, given ``lookalike`` rows (benign look-alikes the
linear model never trains on: the holdout halves of OR-Bench, CoCoNot's contrast set and our
multilingual templates), no larger share of any one of those sources either. The training
sources' plain benign rows say little about look-alikes, which is where the encoder over-
refused (docs/how-sentinel-decides.md, "The built-in judge, second round"); look-alike rows
count only towards that cap. ``ambiguous``: the highest threshold at which the cascade still
restricts (or refuses) as large a share of the harmful rows as the linear model does, so it
restricts fewer benign rows for the same recall (never more benign rows than the linear model, never
above ``refuse``). Among bands on a fixed grid, the one chosen reaches ``GAIN_SHARE`` of the
largest gain in harmful rows refused over the linear model alone with the fewest rows inside
the band: wide enough for the encoder to fix errors, narrow enough that most prompts skip it
(an encoder that gains nothing gets the narrowest band).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

LOW_GRID = (0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4)
HIGH_GRID = (0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.975, 0.99, 0.995)
GAIN_SHARE = 0.9


@dataclass(frozen=True)
class Candidate:
    low: float
    high: float
    refuse: float  # the encoder's refusal threshold inside the band
    ambiguous: float  # ... and its restriction threshold
    reach: float  # share of the holdout rows (look-alikes aside) inside the band
    reach_benign: float
    reach_harmful: float
    refused_harmful: float  # share of harmful holdout rows the cascade refuses
    refused_benign: float
    restricted_harmful: float  # restricted or refused
    restricted_benign: float
    refused_lookalike: float = 0.0  # share of the look-alike rows the cascade refuses

    def as_dict(self) -> dict[str, float]:
        return {key: round(value, 4) for key, value in asdict(self).items()}


@dataclass(frozen=True)
class Choice:
    chosen: Candidate
    linear_only: dict[str, float]  # the linear model's own shares at its thresholds
    curve: tuple[Candidate, ...]


def _threshold(scores: np.ndarray, allowed: int) -> float:
    """The smallest threshold that puts at most ``allowed`` of ``scores`` at or above it."""
    if allowed >= len(scores):
        return float(scores.min()) if len(scores) else 0.5
    ordered = np.sort(scores)[::-1]
    return float(np.nextafter(ordered[allowed], np.inf))


def _keeping(scores: np.ndarray, needed: int) -> float:
    """The highest threshold that keeps at least ``needed`` of ``scores`` at or above it."""
    if needed <= 0:
        return math.inf
    if needed >= len(scores):
        return float(scores.min()) if len(scores) else 0.0
    return float(np.sort(scores)[::-1][needed - 1])


def _cap(
    rate: float, rows: np.ndarray, inside: np.ndarray, above: np.ndarray, encoder: np.ndarray
) -> float | None:
    """The encoder threshold at which the cascade refuses at most ``rate`` of ``rows``;
    ``None`` when the rows above the band alone already exceed it."""
    allowed = math.floor(rate * rows.sum() + 1e-9) - int((above & rows).sum())
    return None if allowed < 0 else _threshold(encoder[inside & rows], allowed)


def evaluate(
    band: tuple[float, float],
    linear: np.ndarray,
    encoder: np.ndarray,
    labels: np.ndarray,
    linear_only: dict[str, float],
    *,
    lookalike: dict[str, np.ndarray] | None = None,
) -> Candidate | None:
    """The cascade with ``band``, its thresholds set against ``linear_only``'s shares;
    ``lookalike``: each look-alike source's rows."""
    low, high = band
    groups = lookalike or {}
    look = np.zeros(labels.shape, dtype=bool)
    for rows in groups.values():
        look |= rows
    benign, harmful = (labels == 0) & ~look, (labels == 1) & ~look
    inside = (linear >= low) & (linear < high)
    above = linear >= high
    caps = []
    for rate in (linear_only["refused_benign"], linear_only["restricted_benign"]):
        cap = _cap(rate, benign, inside, above, encoder)
        if cap is None:
            return None  # the linear model alone already refuses more above the band
        caps.append(cap)
    refuse = caps[0]
    for name, rows in groups.items():
        cap = _cap(linear_only[f"refused_lookalike/{name}"], rows, inside, above, encoder)
        if cap is None:
            return None
        refuse = max(refuse, cap)
    needed = math.ceil(linear_only["restricted_harmful"] * harmful.sum() - 1e-9)
    recall = _keeping(encoder[inside & harmful], needed - int((above & harmful).sum()))
    ambiguous = min(refuse, max(recall, caps[1]))

    def share(mask: np.ndarray, threshold: float) -> float:
        decided = above | (inside & (encoder >= threshold))
        return float((decided & mask).sum() / max(1, mask.sum()))

    return Candidate(
        low=low,
        high=high,
        refuse=refuse,
        ambiguous=ambiguous,
        reach=float((inside & ~look).sum() / max(1, (~look).sum())),
        reach_benign=float((inside & benign).sum() / max(1, benign.sum())),
        reach_harmful=float((inside & harmful).sum() / max(1, harmful.sum())),
        refused_harmful=share(harmful, refuse),
        refused_benign=share(benign, refuse),
        restricted_harmful=share(harmful, ambiguous),
        restricted_benign=share(benign, ambiguous),
        refused_lookalike=share(look, refuse) if look.any() else 0.0,
    )


def choose(
    linear: Sequence[float],
    encoder: Sequence[float],
    labels: Sequence[int],
    *,
    linear_refuse: float,
    linear_ambiguous: float,
    lookalike: Sequence[str] | None = None,
) -> Choice:
    """The band and the encoder's thresholds, from validation rows (see the module doc);
    ``lookalike`` names each benign look-alike row's source ("" for the other rows): the
    cap holds for each source."""
    p, q, y = (np.asarray(a, dtype=np.float64) for a in (linear, encoder, labels))
    names = np.asarray(lookalike if lookalike is not None else [""] * len(y), dtype=object)
    look = names != ""
    if not (len(p) == len(q) == len(y) == len(look)):
        raise ValueError("choosing a band needs aligned scores of harmful and benign rows")
    if (y[look] != 0).any():
        raise ValueError("look-alike rows are benign")
    if not {0, 1} <= set(y[~look].tolist()):
        raise ValueError("choosing a band needs aligned scores of harmful and benign rows")
    benign, harmful = (y == 0) & ~look, y == 1
    linear_only = {
        "refused_harmful": float(((p >= linear_refuse) & harmful).sum() / harmful.sum()),
        "refused_benign": float(((p >= linear_refuse) & benign).sum() / benign.sum()),
        "restricted_harmful": float(((p >= linear_ambiguous) & harmful).sum() / harmful.sum()),
        "restricted_benign": float(((p >= linear_ambiguous) & benign).sum() / benign.sum()),
    }
    groups = {str(name): names == name for name in sorted(set(names[look].tolist()))}
    if groups:
        linear_only["refused_lookalike"] = float(((p >= linear_refuse) & look).sum() / look.sum())
    for name, rows in groups.items():
        refused = ((p >= linear_refuse) & rows).sum() / rows.sum()
        linear_only[f"refused_lookalike/{name}"] = float(refused)
    lows = sorted({x for x in LOW_GRID if x < linear_ambiguous} | {linear_ambiguous})
    highs = sorted({x for x in HIGH_GRID if x > linear_refuse})
    curve = [
        found
        for low in lows
        for high in highs
        if (found := evaluate((low, high), p, q, y, linear_only, lookalike=groups)) is not None
    ]
    if not curve:
        raise ValueError("no band keeps the false-positive rates on these rows")
    base = linear_only["refused_harmful"]
    best = max(c.refused_harmful for c in curve)
    # An encoder that gains nothing over the linear model gets the narrowest band.
    enough = base + GAIN_SHARE * (best - base) if best > base else 0.0
    good = [c for c in curve if c.refused_harmful >= enough - 1e-12]
    chosen = min(good, key=lambda c: (c.reach, -c.refused_harmful, c.low, c.high))
    return Choice(chosen, linear_only, tuple(curve))


def summary(choice: Choice) -> dict[str, Any]:
    return {
        "chosen": choice.chosen.as_dict(),
        "linear_only": {key: round(value, 4) for key, value in choice.linear_only.items()},
        "gain_share": GAIN_SHARE,
        "curve": [c.as_dict() for c in choice.curve],
    }

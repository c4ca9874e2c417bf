"""Fit the built-in judge's heads on training rows: pure given rows and a seed.

Features are :mod:`sentinel_runtime.pipeline.understand.judge.features` (the runtime's own), the
heads scikit-learn logistic regressions: ``harm`` and ``injection`` binary with balanced
class weights (harmful rows are the minority), the risk categories one multinomial
regression over harmful rows. The result is a :class:`LinearJudge` of plain arrays.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from sentinel_runtime.pipeline.understand.judge import features
from sentinel_runtime.pipeline.understand.judge.model import LinearJudge
from sentinel_runtime.training.sources import TrainingRow


@dataclass(frozen=True)
class FitConfig:
    seed: int = 13
    harm_c: float = 4.0
    injection_c: float = 4.0
    category_c: float = 4.0
    # A category needs this many harmful rows to get a head of its own ("other" otherwise).
    min_category_rows: int = 20


def idf_of(texts: Sequence[str]) -> np.ndarray:
    df = np.zeros(features.DIMENSIONS, dtype=np.float64)
    for text in texts:
        for bucket in features.term_counts(text):
            df[bucket] += 1
    n = len(texts)
    return (np.log((1.0 + n) / (1.0 + df)) + 1.0).astype(np.float32)


def matrix(texts: Sequence[str], idf: np.ndarray) -> sparse.csr_matrix:
    indptr, indices, values = [0], [], []
    for text in texts:
        idx, val = features.vectorise(text, idf)
        order = np.argsort(idx)
        indices.append(idx[order])
        values.append(val[order])
        indptr.append(indptr[-1] + len(idx))
    return sparse.csr_matrix(
        (
            np.concatenate(values) if values else np.zeros(0, np.float32),
            np.concatenate(indices) if indices else np.zeros(0, np.int64),
            np.array(indptr),
        ),
        shape=(len(texts), features.DIMENSIONS),
        dtype=np.float32,
    )


def _binary(x: sparse.csr_matrix, y: np.ndarray, c: float, seed: int) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(
        C=c, class_weight="balanced", solver="liblinear", random_state=seed, max_iter=1000
    )
    model.fit(x, y)
    return model.coef_[0].astype(np.float32), float(model.intercept_[0])


def fit(
    rows: Sequence[TrainingRow],
    config: FitConfig,
    thresholds: dict[str, float],
    meta: dict[str, Any],
) -> LinearJudge:
    from sklearn.linear_model import LogisticRegression

    texts = [row.text for row in rows]
    idf = idf_of(texts)
    x = matrix(texts, idf)
    columns: list[np.ndarray] = []
    biases: list[float] = []
    heads: list[str] = []
    for head in ("harm", "injection"):
        chosen = [i for i, row in enumerate(rows) if getattr(row, head) is not None]
        y = np.array([getattr(rows[i], head) for i in chosen])
        if len(set(y.tolist())) < 2:
            raise ValueError(f"the {head} head needs both labels among its rows")
        weights, bias = _binary(
            x[chosen], y, config.harm_c if head == "harm" else config.injection_c, config.seed
        )
        columns.append(weights)
        biases.append(bias)
        heads.append(head)
    harmful = [i for i, row in enumerate(rows) if row.harm == 1 and row.category]
    categories = [str(rows[i].category) for i in harmful]
    counts = Counter(categories)
    labels = [c if counts[c] >= config.min_category_rows else "other" for c in categories]
    names = sorted(set(labels))
    if len(names) >= 2:
        model = LogisticRegression(C=config.category_c, max_iter=2000, random_state=config.seed)
        model.fit(x[harmful], np.array(labels))
        coef, intercept = model.coef_, model.intercept_
        if len(model.classes_) == 2:
            # A binary fit keeps one row (for the second class); a zero row for the first
            # makes the softmax over both equal to its sigmoid.
            coef = np.vstack([np.zeros_like(coef[0]), coef[0]])
            intercept = np.array([0.0, intercept[0]])
        for k, name in enumerate(model.classes_):
            columns.append(coef[k].astype(np.float32))
            biases.append(float(intercept[k]))
            heads.append(f"category:{name}")
    weights = np.stack(columns, axis=1).astype(np.float16)
    info = {
        **meta,
        "heads": heads,
        "thresholds": thresholds,
        "rows": len(rows),
        "fit": {
            "seed": config.seed,
            "harm_c": config.harm_c,
            "injection_c": config.injection_c,
            "category_c": config.category_c,
        },
    }
    return LinearJudge(idf.astype(np.float16), weights, np.array(biases, np.float32), info)


def quantile_threshold(scores: Sequence[float], false_positive_rate: float) -> float:
    """The smallest score above all but ``false_positive_rate`` of benign ``scores``."""
    ordered = sorted(scores)
    if not ordered:
        return 0.5
    index = min(len(ordered) - 1, math.ceil(len(ordered) * (1.0 - false_positive_rate)))
    return float(ordered[index])

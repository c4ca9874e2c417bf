"""``/v1/embeddings`` through the official openai client against the app in process: the
vectors are the index's own embedder's, in OpenAI's shape (float lists or base64)."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import numpy as np
import openai
import pytest

from sentinel_runtime.guardrails.scanners.token_limit import offline_encoding
from sentinel_runtime.index.embedders import Embedder
from support.inprocess import AppRuntime, app_runtime

QUESTION = "How many days do customers have to request a refund?"


@pytest.fixture(scope="module")
def runtime() -> Iterator[AppRuntime]:
    with app_runtime() as served:
        yield served


def embedder_of(runtime: AppRuntime) -> Embedder:
    """The embedder the runtime's indexes use."""
    return runtime.client.app.state.services.indexes.embedder  # type: ignore[attr-defined]


def tokens(text: str) -> int:
    return len(offline_encoding("cl100k_base").encode(text, disallowed_special=()))


def test_one_text_is_embedded_by_the_index_embedder(runtime: AppRuntime) -> None:
    embedder = embedder_of(runtime)

    # The client asks for base64 unless told otherwise, and decodes it.
    result = runtime.openai().embeddings.create(model="any", input=QUESTION)

    assert result.object == "list" and result.model == embedder.name
    (item,) = result.data
    assert item.object == "embedding" and item.index == 0
    assert len(item.embedding) == embedder.dim
    assert np.allclose(item.embedding, embedder.embed([QUESTION])[0], atol=1e-6)
    assert result.usage.prompt_tokens == result.usage.total_tokens == tokens(QUESTION)


def test_a_list_is_embedded_in_order_as_floats(runtime: AppRuntime) -> None:
    texts = ["refund policy", "A completely different sentence about shipping.", "refund"]

    result = runtime.openai().embeddings.create(model="any", input=texts, encoding_format="float")

    assert [item.index for item in result.data] == [0, 1, 2]
    expected = embedder_of(runtime).embed(texts)
    assert np.allclose([item.embedding for item in result.data], expected, atol=1e-6)
    assert result.usage.prompt_tokens == sum(tokens(t) for t in texts)


def test_base64_is_little_endian_float32_of_the_same_vector(runtime: AppRuntime) -> None:
    def embed(encoding_format: str) -> object:
        body = {"input": QUESTION, "encoding_format": encoding_format}
        response = runtime.client.post("/v1/embeddings", json=body)
        assert response.status_code == 200, response.text
        return response.json()["data"][0]["embedding"]

    encoded = embed("base64")
    floats = embed("float")

    assert isinstance(encoded, str)
    decoded = np.frombuffer(base64.b64decode(encoded), dtype="<f4")
    assert np.array_equal(decoded, np.array(floats, dtype=np.float32))


def test_dimensions_equal_to_the_embedder_are_accepted(runtime: AppRuntime) -> None:
    dim = embedder_of(runtime).dim

    result = runtime.openai().embeddings.create(model="any", input="refund", dimensions=dim)

    assert len(result.data[0].embedding) == dim


def test_other_dimensions_are_refused(runtime: AppRuntime) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        runtime.openai().embeddings.create(model="any", input="refund", dimensions=8)

    assert caught.value.body["param"] == "dimensions"
    assert str(embedder_of(runtime).dim) in caught.value.body["message"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"input": [1, 2, 3]}, id="token-array"),
        pytest.param({"input": [[1, 2], [3]]}, id="token-arrays"),
        pytest.param({"input": []}, id="no-input"),
        pytest.param({"input": ["refund", ""]}, id="empty-text"),
        pytest.param({"input": ["a"] * 2049}, id="too-many"),
        pytest.param({"input": "refund " * 9000}, id="too-long"),
        pytest.param({}, id="missing"),
    ],
)
def test_input_that_cannot_be_embedded_is_a_400_naming_input(runtime, body) -> None:
    response = runtime.client.post("/v1/embeddings", json=body)

    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == "input"


def test_both_endpoints_are_in_the_openapi_document(runtime: AppRuntime) -> None:
    paths = runtime.client.get("/openapi.json").json()["paths"]

    assert set(paths["/v1/embeddings"]) == {"post"}
    assert set(paths["/v1/completions"]) == {"post"}

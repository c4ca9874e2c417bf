"""Request and response bodies of the KAITO-compatible index API (``routes/indexes.py``).

Field names and shapes are KAITO v0.12's (``presets/ragengine/models.py``): documents carry
``hash_value`` and ``is_truncated``, listings ``total_items``, ``/retrieve`` takes
``max_node_count``, ``/persist``, ``/load`` and ``DELETE /indexes/{name}`` answer
``{"message"}``. Ours on top: ``similarity`` and ``sentinel`` on ``/retrieve``, ``top_k`` as an
older name of ``max_node_count``. Index names are ``protocol.IndexName`` (the index manager's
rule). How many documents a request may carry and how large each may be are settings
(``MAX_DOCUMENTS_PER_REQUEST``, ``MAX_DOCUMENT_BYTES``), checked by ``oversized``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, field_validator

from sentinel_runtime.api.protocol import IndexName
from sentinel_runtime.index import store
from sentinel_runtime.index.types import Document, Hit
from sentinel_runtime.pipeline import report

MAX_DOC_IDS = 10_000  # ids of one delete request (documents per request: the settings)
MAX_QUERY_CHARS = 10_000
MAX_NODE_COUNT = 300  # KAITO's RAG_MAX_TOP_K
DEFAULT_NODE_COUNT = 5
DEFAULT_MAX_TEXT_LENGTH = 1000  # KAITO's default for listings
CONTEXT_TOKEN_RATIO_RANGE = (0.2, 0.8)


def document_hash(doc: Document) -> str:
    """``hash_value``: SHA-256 of the text and the metadata (canonical JSON), so a client can
    tell whether a document changed, metadata included."""
    digest = hashlib.sha256(doc.text.encode())
    digest.update(b"\0")
    digest.update(json.dumps(dict(doc.metadata), sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()


class DocumentIn(BaseModel):
    """A document as KAITO sends it; ``hash_value`` and ``is_truncated`` of a document read
    back from the API are accepted and ignored."""

    doc_id: str | None = Field(default=None, max_length=store.MAX_DOC_ID_CHARS)
    text: str = Field(min_length=1)
    metadata: dict[str, Any] | None = None

    def to_document(self) -> Document:
        return Document(self.doc_id or "", self.text, self.metadata or {})


class DocumentOut(BaseModel):
    doc_id: str
    text: str
    hash_value: str
    metadata: dict[str, Any]
    is_truncated: bool = False

    @classmethod
    def of(cls, doc: Document, max_text_length: int | None = None) -> DocumentOut:
        cut = max_text_length is not None and len(doc.text) > max_text_length
        return cls(
            doc_id=doc.doc_id,
            text=doc.text[:max_text_length] if cut else doc.text,
            hash_value=document_hash(doc),
            metadata=dict(doc.metadata),
            is_truncated=cut,
        )


class IndexRequest(BaseModel):
    index_name: IndexName
    documents: list[DocumentIn] = Field(min_length=1)


def oversized(
    documents: Sequence[DocumentIn], max_documents: int, max_bytes: int
) -> tuple[str, str] | None:
    """Why a request carries too much (message, the field at fault), or None: more than
    ``max_documents`` documents, or a text over ``max_bytes`` UTF-8 bytes."""
    if len(documents) > max_documents:
        return (
            f"{len(documents)} documents in one request; at most {max_documents} "
            "(MAX_DOCUMENTS_PER_REQUEST). Send them in several requests.",
            "documents",
        )
    for number, doc in enumerate(documents):
        # A cheap bound first: a character is at most 4 UTF-8 bytes (surrogates counted).
        if len(doc.text) * 4 > max_bytes:
            size = len(doc.text.encode("utf-8", "surrogatepass"))
            if size > max_bytes:
                return (
                    f"document {number} has {size} bytes of text (UTF-8); at most {max_bytes} "
                    "(MAX_DOCUMENT_BYTES). Split it into several documents.",
                    f"documents.{number}.text",
                )
    return None


class ListDocumentsResponse(BaseModel):
    documents: list[DocumentOut]
    count: int  # documents on this page
    total_items: int  # documents matching the filter in the whole index


class UpdateDocumentIn(DocumentIn):
    doc_id: str = Field(min_length=1, max_length=store.MAX_DOC_ID_CHARS)


class UpdateRequest(BaseModel):
    documents: list[UpdateDocumentIn] = Field(min_length=1)


class UpdateResponse(BaseModel):
    updated_documents: list[DocumentOut]
    unchanged_documents: list[DocumentOut]
    not_found_documents: list[DocumentOut]


class DeleteRequest(BaseModel):
    doc_ids: list[str] = Field(min_length=1, max_length=MAX_DOC_IDS)


class DeleteResponse(BaseModel):
    deleted_doc_ids: list[str]
    not_found_doc_ids: list[str]


class RetrieveRequest(BaseModel):
    index_name: IndexName
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    max_node_count: int = Field(default=DEFAULT_NODE_COUNT, ge=1, le=MAX_NODE_COUNT)
    top_k: int | None = Field(default=None, ge=1, le=MAX_NODE_COUNT)  # ours, the older name
    metadata_filter: dict[str, Any] | None = None
    # KAITO's share of the context window the nodes may fill (chat completions' parameter);
    # given, the nodes are chosen by that token budget (``routes.indexes.within_budget``).
    context_token_ratio: float | None = None

    @field_validator("context_token_ratio")
    @classmethod
    def _ratio_in_range(cls, value: float | None) -> float | None:
        low, high = CONTEXT_TOKEN_RATIO_RANGE
        if value is not None and not low <= value <= high:
            raise ValueError(
                f"Invalid context_token_ratio: {value}. Must be between {low} and {high}."
            )
        return value

    def node_count(self) -> int:
        """``max_node_count``, or ``top_k`` when only that was given."""
        if "max_node_count" in self.model_fields_set or self.top_k is None:
            return self.max_node_count
        return self.top_k


class RetrievedChunk(BaseModel):
    doc_id: str
    node_id: str  # the chunk id, KAITO's name for it
    text: str
    score: float  # reciprocal-rank-fusion score: orders the results
    similarity: float  # ours: dense cosine similarity clamped to [0, 1]
    metadata: dict[str, Any]

    @classmethod
    def of(cls, hit: Hit) -> RetrievedChunk:
        return cls(**report.node(hit))


class RetrieveResponse(BaseModel):
    query: str
    results: list[RetrievedChunk]
    count: int
    # Ours: the gate's plan and the evidence filter's verdicts (what was withheld and why).
    sentinel: dict[str, Any] = Field(default_factory=dict)


class MessageResponse(BaseModel):
    """KAITO's answer to ``/persist``, ``/load`` and ``DELETE /indexes/{name}``."""

    message: str

"""Request and response bodies of the KAITO-compatible index API (``routes/indexes.py``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from sentinel_runtime.index import store
from sentinel_runtime.index.types import Document, Hit
from sentinel_runtime.pipeline import report

MAX_DOCUMENTS = 10_000
MAX_QUERY_CHARS = 10_000


class DocumentIn(BaseModel):
    doc_id: str | None = Field(default=None, max_length=store.MAX_DOC_ID_CHARS)
    text: str = Field(min_length=1)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def to_document(self) -> Document:
        return Document(self.doc_id or "", self.text, self.metadata)


class DocumentOut(BaseModel):
    doc_id: str
    text: str
    metadata: dict[str, Any]

    @classmethod
    def of(cls, doc: Document) -> DocumentOut:
        return cls(doc_id=doc.doc_id, text=doc.text, metadata=dict(doc.metadata))


class ListedDocument(DocumentOut):
    is_truncated: bool = False


class IndexRequest(BaseModel):
    index_name: str
    documents: list[DocumentIn] = Field(min_length=1, max_length=MAX_DOCUMENTS)


class ListDocumentsResponse(BaseModel):
    documents: list[ListedDocument]
    count: int  # documents on this page
    total: int  # documents matching the filter in the whole index


class UpdateDocumentIn(DocumentIn):
    doc_id: str = Field(min_length=1, max_length=store.MAX_DOC_ID_CHARS)


class UpdateRequest(BaseModel):
    documents: list[UpdateDocumentIn] = Field(min_length=1, max_length=MAX_DOCUMENTS)


class UpdateResponse(BaseModel):
    updated_documents: list[DocumentOut]
    unchanged_documents: list[DocumentOut]
    not_found_documents: list[DocumentOut]


class DeleteRequest(BaseModel):
    doc_ids: list[str] = Field(min_length=1, max_length=MAX_DOCUMENTS)


class DeleteResponse(BaseModel):
    deleted_doc_ids: list[str]
    not_found_doc_ids: list[str]


class RetrieveRequest(BaseModel):
    index_name: str
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    top_k: int = Field(default=5, ge=1, le=100)
    metadata_filter: dict[str, Any] | None = None


class RetrievedChunk(BaseModel):
    doc_id: str
    node_id: str  # the chunk id, KAITO's name for it
    text: str
    score: float  # reciprocal-rank-fusion score: orders the results
    similarity: float  # dense cosine similarity clamped to [0, 1]
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


class FileResponse(BaseModel):
    index_name: str
    path: str
    documents: int

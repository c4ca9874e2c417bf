"""Index the bundled demo corpus (``corpus.jsonl``) as the ``demo`` index, once.

Twelve short company documents: policies that answer benign questions, a security page
that makes ambiguous questions interesting, a stale 2019 page, and a forum post carrying
instructions aimed at the AI, which the evidence filter drops. An existing ``demo`` index
(persisted from an earlier run) is left as it is.
"""

from __future__ import annotations

import json
import logging
from importlib import resources

from sentinel_runtime.index.manager import IndexManager
from sentinel_runtime.index.types import Document
from sentinel_runtime.observability import events
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)

INDEX_NAME = "demo"


def documents() -> list[Document]:
    text = (resources.files("sentinel_runtime.demo") / "corpus.jsonl").read_text("utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [Document(r["doc_id"], r["text"], r.get("metadata") or {}) for r in rows]


def load_demo(indexes: IndexManager) -> None:
    if INDEX_NAME in indexes:
        return
    added = indexes.add_documents(INDEX_NAME, documents())
    log_event(logger, events.DEMO_CORPUS_LOADED, index_name=INDEX_NAME, documents=len(added))

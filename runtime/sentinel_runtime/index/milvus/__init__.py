"""The Milvus store: each index is a Milvus collection that every runtime pointed at the same
Milvus (``VECTOR_DB_URL``) reads and writes, so replicas answer from one set of documents.

One row per chunk. Search is the embedded store's, done by Milvus:

* dense: an exact (``FLAT``) inner-product search over the embedder's unit vectors;
* lexical: Milvus's own BM25 (a ``BM25`` function feeding a sparse field, ``k1`` 1.5,
  ``b`` 0.75 as ``bm25``). The analysed field holds the chunk's words as ``analysis.tokenize``
  gives them, joined by spaces, and Milvus splits on whitespace: both stores see the same
  words, and Milvus computes the same scores as ``bm25.BM25`` (Lucene's idf, the collection's
  average length, deletions included);
* filters run inside Milvus, before ranking, as boolean expressions: the source allowlist
  (``source_key in [...]``), the time window (``has_stamp == true and stamp >= t``; rows
  without a timestamp pass it only with ``keep_undated``) and metadata equality
  (``array_contains_all(meta_keys, [...])``). So a filter never costs results, as in the
  embedded store. Everything user-written reaches an expression only as a hex digest
  (blake2b), so no quoting or escaping rule of Milvus's expression language applies to
  user text.

The two ranked lists are fused here, by ``base.fuse``, because the pipeline needs each hit's
dense similarity and BM25 score, which Milvus's ``hybrid_search`` folds into one number.

Differences from the embedded store (docs/configuration.md, "Vector stores"): ties at the
candidate cut are broken by Milvus, not by insertion order; a chunk's text, its words and the
whitespace between chunks must each fit in 65,535 UTF-8 bytes (a VARCHAR), and a document may
carry at most 1,024 metadata keys; nested values in a metadata filter compare JSON-exactly (``[1]``
never equals ``[true]``); changes are not atomic across runtimes (last writer wins; a new
document is inserted without a look for another row of its id, so two runtimes adding it at
once can store it twice); listing documents reads one row per document from Milvus.
``persist`` exports the index file, ``load`` imports one into Milvus; nothing is rewritten
after changes, since Milvus keeps the data.

The package, by job: ``connection`` (the client, its errors), ``schema`` (collection names,
digests, fields and indexes), ``codec`` (documents as rows and back), ``queries`` (filter
expressions, query limits, ranking), ``store`` (``MilvusStore``, one index) and ``backend``
(``MilvusBackend``, the indexes of one prefix). Every name importers use is re-exported here.
"""

from __future__ import annotations

from sentinel_runtime.index.milvus.backend import MilvusBackend, logger
from sentinel_runtime.index.milvus.codec import BATCH_BYTES, BATCH_ROWS
from sentinel_runtime.index.milvus.connection import COLLECTION_NOT_FOUND
from sentinel_runtime.index.milvus.queries import KEYS_PER_EXPRESSION, MAX_LIMIT, SCAN_BATCH
from sentinel_runtime.index.milvus.schema import (
    BM25_B,
    BM25_K1,
    FORMAT,
    KEY_CHARS,
    MAX_METADATA_KEYS,
    MAX_VARCHAR_BYTES,
    VERSION,
    collection_name,
    index_name,
    key,
    metadata_key,
)
from sentinel_runtime.index.milvus.store import MilvusStore

__all__ = [
    "BATCH_BYTES",
    "BATCH_ROWS",
    "BM25_B",
    "BM25_K1",
    "COLLECTION_NOT_FOUND",
    "FORMAT",
    "KEYS_PER_EXPRESSION",
    "KEY_CHARS",
    "MAX_LIMIT",
    "MAX_METADATA_KEYS",
    "MAX_VARCHAR_BYTES",
    "SCAN_BATCH",
    "VERSION",
    "MilvusBackend",
    "MilvusStore",
    "collection_name",
    "index_name",
    "key",
    "logger",
    "metadata_key",
]

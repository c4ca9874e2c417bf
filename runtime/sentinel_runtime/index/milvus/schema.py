"""How an index is laid out in Milvus: collection names, the digests under which user text
reaches Milvus, the collection's fields and indexes, and the description that marks a
collection as a Sentinel index of one embedder.

``backend`` creates and opens collections with these; ``rows`` fills the fields;
``queries`` filters on them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from sentinel_runtime.index import base, persistence
from sentinel_runtime.index.embedders import Embedder

FORMAT = "sentinel-index"
VERSION = 1
MAX_VARCHAR_BYTES = 65_535
MAX_METADATA_KEYS = 1024
KEY_CHARS = 32  # hex digits of a key
BM25_K1 = 1.5
BM25_B = 0.75
_ESCAPES = {"_": "_u", ".": "_d", "-": "_h"}
_UNESCAPES = {v[1]: k for k, v in _ESCAPES.items()}
# The fields a document is rebuilt from, and those a search hit reads.
DOC_FIELDS = ["doc_key", "doc_id", "position", "seq", "text", "gap", "tail", "metadata"]
HIT_FIELDS = ["doc_id", "position", "seq", "text", "metadata"]


# -- names and digests -------------------------------------------------------------------


def key(text: str) -> str:
    """The digest under which user text (ids, sources, metadata) reaches Milvus."""
    return hashlib.blake2b(text.encode(), digest_size=KEY_CHARS // 2).hexdigest()


def collection_name(prefix: str, name: str) -> str:
    """``PREFIX__NAME`` with '_', '.', '-' of the name written '_u', '_d', '_h': Milvus
    names are letters, digits and '_'. An escaped name never holds '__', so no two
    (prefix, name) pairs share a collection."""
    return f"{prefix}__" + "".join(_ESCAPES.get(c, c) for c in name)


def index_name(prefix: str, collection: str) -> str | None:
    """The index a collection holds under ``prefix``, or None when it is not one of them."""
    head = f"{prefix}__"
    if not collection.startswith(head):
        return None
    escaped, out, i = collection[len(head) :], [], 0
    while i < len(escaped):
        char = escaped[i]
        if char == "_":
            if i + 1 >= len(escaped) or escaped[i + 1] not in _UNESCAPES:
                return None
            out.append(_UNESCAPES[escaped[i + 1]])
            i += 2
        else:
            out.append(char)
            i += 1
    name = "".join(out)
    return name if name and name[0].isalnum() else None


def _canonical(value: Any) -> Any:
    # JSON-equal values get one form: 2.0 is 2 (as Python's == says), true stays true.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    return value


def metadata_key(name: str, value: Any) -> str | None:
    """The token of ``metadata[name] == value``; None for a value no document can hold."""
    try:
        text = json.dumps(_canonical(value), sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return key(f"{name}\x00{text}")


# -- the collection ----------------------------------------------------------------------


def description(embedder: Embedder) -> dict[str, Any]:
    """What a collection's description says of the index format and its embedder."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "embedder": {"name": embedder.name, "dim": embedder.dim},
    }


def collection_schema(client: Any, embedder: Embedder, name: str) -> tuple[Any, Any]:
    """The fields, the BM25 function and the indexes of index ``name``'s collection."""
    from pymilvus import DataType, Function, FunctionType, MilvusClient

    described = json.dumps({**description(embedder), "index": name})
    schema = MilvusClient.create_schema(
        auto_id=False, enable_dynamic_field=False, description=described
    )
    varchar = DataType.VARCHAR
    schema.add_field("pk", varchar, is_primary=True, max_length=KEY_CHARS)
    schema.add_field("doc_key", varchar, max_length=KEY_CHARS)
    schema.add_field("doc_id", varchar, max_length=4 * base.MAX_DOC_ID_CHARS)
    schema.add_field("position", DataType.INT64)
    schema.add_field("chunks", DataType.INT64)
    schema.add_field("seq", DataType.INT64)
    schema.add_field("text", varchar, max_length=MAX_VARCHAR_BYTES)
    schema.add_field(
        "words",
        varchar,
        max_length=MAX_VARCHAR_BYTES,
        enable_analyzer=True,
        analyzer_params={"tokenizer": "whitespace"},
    )
    schema.add_field("gap", varchar, max_length=MAX_VARCHAR_BYTES)
    schema.add_field("tail", varchar, max_length=MAX_VARCHAR_BYTES)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=embedder.dim)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_field("source_key", varchar, max_length=KEY_CHARS)
    schema.add_field("stamp", DataType.DOUBLE)
    schema.add_field("has_stamp", DataType.BOOL)
    schema.add_field(
        "meta_keys",
        DataType.ARRAY,
        element_type=varchar,
        max_capacity=MAX_METADATA_KEYS,
        max_length=KEY_CHARS,
    )
    schema.add_field("metadata", DataType.JSON)
    schema.add_function(
        Function(
            name="bm25",
            function_type=FunctionType.BM25,
            input_field_names=["words"],
            output_field_names=["sparse"],
        )
    )
    indexes = client.prepare_index_params()
    indexes.add_index("dense", index_type="FLAT", metric_type="IP")
    indexes.add_index(
        "sparse",
        index_type="SPARSE_INVERTED_INDEX",
        metric_type="BM25",
        params={"bm25_k1": BM25_K1, "bm25_b": BM25_B},
    )
    return schema, indexes


def check_collection(
    described: Mapping[str, Any], collection: str, name: str, embedder: Embedder
) -> None:
    """Raise ``IndexFileError`` unless ``collection`` (``describe_collection``'s answer) is
    a Sentinel index built with ``embedder``."""
    try:
        meta = json.loads(described.get("description") or "")
        found_embedder = meta["embedder"]
        found = (str(found_embedder["name"]), int(found_embedder["dim"]))
        if meta.get("format") != FORMAT:
            raise ValueError(meta.get("format"))
    except (ValueError, KeyError, TypeError) as exc:
        raise persistence.IndexFileError(
            f"Milvus collection {collection} is not a Sentinel index"
        ) from exc
    if found != (embedder.name, embedder.dim):
        raise persistence.IndexFileError(
            f"index {name!r} (Milvus collection {collection}) was built with embedder "
            f"{found[0]!r} (dimension {found[1]}); this runtime embeds with "
            f"{embedder.name!r} (dimension {embedder.dim}). Vectors of different "
            "embedders cannot be compared: re-index the documents, or run with the "
            "embedder the index was built with (EMBEDDING_TYPE, EMBEDDING_MODEL_ID)."
        )

"""The two index stores side by side on one corpus: ``python bench/run.py --only stores``.

The corpus is ``index_build``'s (100k documents of about 500 characters, one chunk each;
10k with ``--quick``), posted in batches of 5000 through each store's ``add``: chunking and
the hashing embedder, then FAISS + BM25 in the process (embedded) or inserts into a Milvus
collection whose BM25 function analyses the words (milvus). Milvus is the real Milvus 2.5
server that the milvus-lite wheel ships, on a loopback port (``tests/support/milvus.py``),
on the same two cores as the benchmark: what a runtime beside a one-node Milvus would see,
minus the network. Queries are the same for both: top 10, hybrid, with and without a source
filter that allows 10% of the chunks. "add 1 doc, durable" is one more document until it
survives a restart: the add and the rewrite of the index file that the runtime does after
every change with ``VECTOR_DB_PERSIST_DIR`` (embedded), the insert (milvus). "reopen" is what
a restart costs before the first answer: reading the index file (embedded) or connecting and
checking the collection (milvus).
"""

from __future__ import annotations

import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from index_build import BATCH, corpus, queries
from sentinel_runtime.index import persistence
from sentinel_runtime.index.base import Store
from sentinel_runtime.index.hashing import HashingEmbedder
from sentinel_runtime.index.store import IndexStore
from sentinel_runtime.index.types import Document, SearchFilter
from stats import median, p99, table, timings_ms
from support import milvus as milvus_support


def _rss_mb(pid: int | str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _measure(
    store: Store,
    docs: list[Document],
    texts: list[str],
    reopen: Callable[[], Store],
    persist: Callable[[], object],
) -> dict[str, str]:
    started = time.perf_counter()
    for i in range(0, len(docs), BATCH):
        store.add(docs[i : i + BATCH])
    build = time.perf_counter() - started
    chunks = store.chunk_count
    only_s3 = SearchFilter(sources=("s3",))
    n = len(texts)

    def each(fn: Callable[[int], object]) -> Callable[[], object]:
        position = iter(range(10**9))
        return lambda: fn(next(position) % n)

    hybrid = timings_ms(each(lambda i: store.search(texts[i], 10)), n, warmup=10)
    filtered = timings_ms(each(lambda i: store.search(texts[i], 10, only_s3)), n, warmup=10)
    extra = iter(range(10**9))

    def add_one() -> None:
        store.add([Document(f"extra-{next(extra)}", docs[0].text, {"source": "s1"})])
        persist()

    one_doc = timings_ms(add_one, 10, warmup=1)
    started = time.perf_counter()
    reopened = reopen()
    first = reopened.search(texts[0], 10)
    reopen_s = time.perf_counter() - started
    assert first, "the reopened store answers"
    return {
        "chunks": f"{chunks:,}",
        "build s": f"{build:.1f}",
        "chunks/s": f"{chunks / build:,.0f}",
        "hybrid median ms": f"{median(hybrid):.2f}",
        "hybrid p99 ms": f"{p99(hybrid):.2f}",
        "filtered median ms": f"{median(filtered):.2f}",
        "filtered p99 ms": f"{p99(filtered):.2f}",
        "add 1 doc, durable, median ms": f"{median(one_doc):,.1f}",
        "reopen + first answer s": f"{reopen_s:.2f}",
    }


def _embedded(docs: list[Document], texts: list[str], directory: Path) -> dict[str, str]:
    embedder = HashingEmbedder()
    before = _rss_mb()
    store = IndexStore("bench", embedder)
    path = persistence.index_file(directory, "bench")

    def reopen() -> Store:
        return IndexStore.load(path, "bench", embedder)

    # With VECTOR_DB_PERSIST_DIR the runtime rewrites the index file after every change.
    measured = _measure(store, docs, texts, reopen, lambda: store.save(path))
    measured["memory MB"] = f"{_rss_mb() - before:,.0f} (in the runtime)"
    return measured


def _milvus(docs: list[Document], texts: list[str], directory: Path) -> dict[str, str]:
    from sentinel_runtime.index.milvus import MilvusBackend

    embedder = HashingEmbedder()
    with milvus_support.MilvusServer(directory / "milvus") as server:
        backend = MilvusBackend(embedder, server.url, prefix="bench")
        store, _ = backend.create("bench")

        def reopen() -> Store:
            found = MilvusBackend(embedder, server.url, prefix="bench").lookup("bench")
            assert found is not None
            return found

        measured = _measure(store, docs, texts, reopen, lambda: None)  # Milvus keeps it
        assert server.process is not None
        measured["memory MB"] = f"{_rss_mb(server.process.pid):,.0f} (the Milvus server)"
        backend.drop("bench")
        backend.close()
    return measured


def run(quick: bool = False, n_docs: int | None = None) -> str:
    n_docs = n_docs or (10_000 if quick else 100_000)
    n_queries = 100 if quick else 300
    docs = corpus(n_docs)
    texts = queries(docs, n_queries)
    columns: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as directory:
        columns["embedded (FAISS + BM25)"] = _embedded(docs, texts, Path(directory))
        if milvus_support.binary() is None:
            note = f"not measured: {milvus_support.REASON}"
            columns["milvus"] = dict.fromkeys(next(iter(columns.values())), note)
        else:
            columns["milvus (2.5, milvus-lite's server)"] = _milvus(docs, texts, Path(directory))
    names = list(columns)
    metrics = list(columns[names[0]])
    rows = [[metric, *(columns[name][metric] for name in names)] for metric in metrics]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return table(
        f"Stores side by side: {n_docs:,} documents of about 500 characters in batches of "
        f"{BATCH}, top 10 over {n_queries} queries (benchmark peak RSS {peak:,.0f} MB)",
        ["", *names],
        rows,
    )


if __name__ == "__main__":
    import sys

    HERE = Path(__file__).resolve().parent
    sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]
    print(run(quick="--quick" in sys.argv))

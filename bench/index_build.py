"""Index build throughput and query latency of the built-in index on a synthetic corpus.

Build: 100k documents of about 500 characters (one chunk each) posted in batches of 5000
to ``IndexStore.add``: chunking, the hashing embedder, the ingest screen (the evidence
filter's, as ``sentinel serve`` screens), FAISS and BM25 together; then one save of the
index file and one load of it (what a restart costs).
Query latency, beside baselines measured in the same run on the same queries:

* ``IndexStore.search (hybrid)``: embed the query, FAISS and BM25 candidates, fusion;
* ``... with a source filter``: the same with 10% of the documents allowed;
* ``FAISS IndexFlatIP``: the dense scan alone, on pre-computed query vectors (the floor);
* ``BM25 alone``: the lexical half alone.
"""

from __future__ import annotations

import resource
import tempfile
import time
from pathlib import Path

import faiss
import numpy as np

from sentinel_runtime.index.analysis import tokenize
from sentinel_runtime.index.bm25 import BM25
from sentinel_runtime.index.hashing import HashingEmbedder
from sentinel_runtime.index.store import IndexStore
from sentinel_runtime.index.types import Document, SearchFilter
from sentinel_runtime.pipeline.evidence.screen import EvidenceScreen
from stats import median, p99, table, timings_ms

# fmt: off
COMMON = (
    "the", "of", "and", "to", "in", "is", "for", "that", "on", "with", "as", "by", "it", "this",
    "be", "are", "from", "at", "or", "was", "an", "which", "service", "request", "data", "policy",
    "payment", "account", "user", "team", "report", "system", "update", "release", "customer",
    "support", "network", "access", "time", "process", "order", "document", "review", "cost",
    "change", "plan", "security", "storage", "cluster", "invoice", "refund", "shipping",
    "contract", "record", "audit", "model", "index",
)
SYLLABLES = (
    "ka", "to", "ri", "mo", "sa", "len", "der", "vin", "tor", "pha", "gel", "mun", "ost", "ric",
    "bel", "da", "ne", "xu", "lo", "fi",
)
# fmt: on
BATCH = 5000


def vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    """Common words first, then pronounceable made-up words (a realistic long tail)."""
    words = list(COMMON)
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choice(SYLLABLES, size=int(rng.integers(2, 5))))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def corpus(n_docs: int, seed: int = 11, chars: int = 500) -> list[Document]:
    """Deterministic English-like documents: Zipf-distributed words in sentences."""
    rng = np.random.default_rng(seed)
    words = np.array(vocabulary(30_000, rng))
    weights = 1.0 / np.arange(1, len(words) + 1) ** 1.07
    drawn = words[rng.choice(len(words), size=n_docs * 90, p=weights / weights.sum())]
    lengths = rng.integers(6, 19, size=n_docs * 20)
    docs, cursor, sentence = [], 0, 0
    for i in range(n_docs):
        parts: list[str] = []
        size = 0
        while size < chars - 40:
            n = int(lengths[sentence])
            sentence += 1
            text = " ".join(drawn[cursor : cursor + n])
            cursor += n
            parts.append(text[:1].upper() + text[1:] + ".")
            size += len(parts[-1]) + 1
        docs.append(Document(f"doc-{i}", " ".join(parts), {"source": f"s{i % 10}"}))
    return docs


def queries(docs: list[Document], n: int, seed: int = 5) -> list[str]:
    """3 to 6 words taken from a random document: queries that have answers."""
    rng = np.random.default_rng(seed)
    out = []
    for index in rng.integers(0, len(docs), size=n):
        words = tokenize(docs[int(index)].text)
        start = int(rng.integers(0, max(1, len(words) - 6)))
        out.append(" ".join(words[start : start + int(rng.integers(3, 7))]))
    return out


def run(quick: bool = False) -> str:
    n_docs = 10_000 if quick else 100_000
    n_queries = 100 if quick else 500
    docs = corpus(n_docs)
    embedder = HashingEmbedder()
    screen = EvidenceScreen()
    store = IndexStore("bench", embedder, screen=screen)
    started = time.perf_counter()
    for i in range(0, n_docs, BATCH):
        store.add(docs[i : i + BATCH])
    build = time.perf_counter() - started
    chunks = store.chunk_count
    average = sum(len(d.text) for d in docs) / n_docs

    sample = [d.text for d in docs[:10_000]]
    started = time.perf_counter()
    embedder.embed(sample)
    embed_rate = len(sample) / (time.perf_counter() - started)
    started = time.perf_counter()
    screen.quiet(sample)
    screen_rate = len(sample) / (time.perf_counter() - started)

    lexical = BM25()
    started = time.perf_counter()
    for key, doc in enumerate(docs):
        lexical.add(key, tokenize(doc.text))
    bm25_rate = n_docs / (time.perf_counter() - started)

    flat = faiss.IndexFlatIP(embedder.dim)
    flat.add(store.snapshot().vectors)
    texts = queries(docs, n_queries)
    vectors = embedder.embed(texts)
    tokenised = [tokenize(q) for q in texts]
    only_s3 = SearchFilter(sources=("s3",))

    def each(fn):  # one sample per query, cycling through them
        position = iter(range(10**9))
        return lambda: fn(next(position) % n_queries)

    rows = []
    for label, fn in [
        ("IndexStore.search (hybrid)", lambda i: store.search(texts[i], 10)),
        ("... with a source filter (10%)", lambda i: store.search(texts[i], 10, only_s3)),
        ("FAISS IndexFlatIP (floor)", lambda i: flat.search(vectors[i : i + 1], 10)),
        ("BM25 alone", lambda i: lexical.search(tokenised[i], 10)),
        ("hashing embed of the query", lambda i: embedder.embed([texts[i]])),
    ]:
        samples = timings_ms(each(fn), n_queries, warmup=10)
        rows.append([label, f"{median(samples):.3f}", f"{p99(samples):.3f}"])

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "bench.sentinel-index"
        started = time.perf_counter()
        store.save(path)
        save_s = time.perf_counter() - started
        file_mb = path.stat().st_size / 2**20
        started = time.perf_counter()
        IndexStore.load(path, "bench", embedder, screen=screen)
        load_s = time.perf_counter() - started

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    build_rows = [
        [
            f"{chunks} chunks of {average:.0f} chars",
            f"{build:.1f}",
            f"{chunks / build:,.0f}",
            f"{embed_rate:,.0f}",
            f"{screen_rate:,.0f}",
            f"{bm25_rate:,.0f}",
            f"{save_s:.1f} ({file_mb:,.0f} MB)",
            f"{load_s:.1f}",
            f"{peak_mb:,.0f}",
        ]
    ]
    return "\n\n".join(
        [
            table(
                "Index build: IndexStore.add in batches of 5000"
                " (chunk + embed + screen + FAISS + BM25)",
                [
                    "corpus",
                    "seconds",
                    "chunks/s",
                    "embed only/s",
                    "screen only/s",
                    "BM25 only/s",
                    "save s",
                    "load s",
                    "peak RSS MB",
                ],
                build_rows,
            ),
            table(
                f"Query latency, top 10 of {chunks} chunks ({n_queries} queries)",
                ["search", "median ms", "p99 ms"],
                rows,
            ),
        ]
    )


if __name__ == "__main__":
    import sys

    print(run(quick="--quick" in sys.argv))

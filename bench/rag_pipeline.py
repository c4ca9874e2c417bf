"""End-to-end answer latency on a 100k-chunk index, beside the raw search it is built on.

One corpus (``index_build.corpus``), one set of queries, measured in the same run:

* ``FAISS IndexFlatIP`` on pre-computed query vectors: the floor of any dense retrieval;
* ``IndexStore.search (hybrid)``: embedding, FAISS, BM25 and fusion, the retrieval we ship;
* ``pipeline (in process)``: introspection, gate, retrieval, evidence scoring, extractive
  generation and citation validation (``pipeline.runner.run``), no HTTP, twice: "cold" for
  questions never asked before (their chunks' document signals are computed, as for most
  questions on a large index) and "warm" for the measured questions asked again;
* ``POST /v1/chat/completions``: a real ``sentinel serve`` (default policy, output scanners
  on) loading the same index from ``VECTOR_DB_PERSIST_DIR``, over keep-alive HTTP;
* LlamaIndex with FAISS (what KAITO uses) on the same corpus, when ``llama-index`` is
  installed: its retriever (embed the query, ``IndexFlatIP.search``, fetch the nodes), and
  its query engine with ``MockLLM`` (the retriever, then response synthesis: prompt packing
  and a fake LLM call that echoes nothing of substance), the nearest thing it has to our
  pipeline without a model. Neither filters evidence, checks citations or runs BM25.

Every in-process path is timed in the same rounds, ten queries each in turn, so drift on the
shared machine reaches all of them alike (``rounds``).

Targets: end-to-end median under 50 ms; pipeline above raw search under 5 ms; the pipeline,
cold and warm, at most 0.8x LlamaIndex's retriever (issue 23).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import faiss
import httpx

import index_build
from sentinel_runtime.index.hashing import HashingEmbedder
from sentinel_runtime.index.manager import IndexManager
from sentinel_runtime.pipeline import config, runner
from sentinel_runtime.pipeline.evidence.screen import EvidenceScreen
from stats import median, p99, table, timings_ms

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
from support.runtime import start_runtime

TOP_K = 5
INDEX = "bench"
WARMUP = 10
BLOCK = 10  # queries in a row per path (see rounds)
LLAMA_RETRIEVER = "LlamaIndex + FAISS retriever"
LLAMA_ENGINE = "LlamaIndex query engine (MockLLM)"
COLD = "pipeline (in process), cold"
WARM = "pipeline (in process), warm"


def rounds(paths: dict[str, Callable[[int], object]], n: int) -> dict[str, list[float]]:
    """ms per call of each path on queries 0..n-1, after ``WARMUP`` untimed calls each on
    queries n..n+WARMUP-1 (so a cold path's measured questions stay unasked).

    Each path answers ``BLOCK`` queries in a row, as a server answering a stream of them
    would (call by call in turn, the FAISS paths' 150 MB scans would empty the caches before
    every call of the others), and the paths take turns block by block, their order
    rotating, so drift on the shared machine reaches all of them alike."""
    names = list(paths)
    for name in names:
        for i in range(n, n + WARMUP):
            paths[name](i)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for block, start in enumerate(range(0, n, BLOCK)):
        shift = block % len(names)
        for name in names[shift:] + names[:shift]:
            for i in range(start, min(n, start + BLOCK)):
                started = time.perf_counter()
                paths[name](i)
                samples[name].append((time.perf_counter() - started) * 1000)
    return samples


def _llamaindex(store, embedder: HashingEmbedder):
    """LlamaIndex's VectorStoreIndex over FAISS with the same vectors and query embedder, so
    the comparison is the framework's retrieval path, not the embedding model."""
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.schema import TextNode
    from llama_index.vector_stores.faiss import FaissVectorStore

    class SameEmbedder(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return embedder.embed([query])[0].tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return embedder.embed([text])[0].tolist()

    snapshot = store.snapshot()
    texts = [d.text[s:e] for d in snapshot.documents for s, e in d.spans]
    nodes = [
        TextNode(id_=str(i), text=text, embedding=vector.tolist())
        for i, (text, vector) in enumerate(zip(texts, snapshot.vectors, strict=True))
    ]
    vector_store = FaissVectorStore(faiss_index=faiss.IndexFlatIP(embedder.dim))
    index = VectorStoreIndex(
        nodes,
        storage_context=StorageContext.from_defaults(vector_store=vector_store),
        embed_model=SameEmbedder(),
    )
    from llama_index.core.llms import MockLLM

    engine = index.as_query_engine(llm=MockLLM(max_tokens=64), similarity_top_k=TOP_K)
    return index.as_retriever(similarity_top_k=TOP_K), engine


class TimedScreen(EvidenceScreen):
    """The server's ingest screen, adding up the time it takes."""

    seconds = 0.0

    def quiet(self, texts: Sequence[str]) -> list[bool]:
        started = time.perf_counter()
        try:
            return super().quiet(texts)
        finally:
            self.seconds += time.perf_counter() - started


def run(quick: bool = False) -> str:
    n_docs = 10_000 if quick else 100_000
    n_queries = 100 if quick else 300
    docs = index_build.corpus(n_docs)
    texts = index_build.queries(docs, n_queries + WARMUP)
    embedder = HashingEmbedder()
    # Screened at ingest, as `sentinel serve` indexes (answer/services.py).
    screen = TimedScreen()
    manager = IndexManager(embedder, None, screen=screen)
    started = time.perf_counter()
    for i in range(0, n_docs, index_build.BATCH):
        manager.add_documents(INDEX, docs[i : i + index_build.BATCH])
    built = time.perf_counter() - started
    store = manager.get(INDEX)
    screened = store.snapshot().quiet
    ingest = (
        f"index built in {built:.1f} s, of which the ingest screen {screen.seconds:.1f} s;"
        f" {screened.mean():.0%} of {len(screened)} chunks screened quiet"
    )

    # One query at a time: FAISS's OpenMP threads only add contention on two shared cores.
    faiss.omp_set_num_threads(1)
    flat = faiss.IndexFlatIP(embedder.dim)
    flat.add(store.snapshot().vectors)
    vectors = embedder.embed(texts)
    context = runner.PipelineContext(config=config.DEFAULT, store=store)
    loop = asyncio.new_event_loop()

    def ask(text: str) -> runner.PipelineResult:
        return loop.run_until_complete(runner.run(runner.PipelineRequest(text, INDEX), context))

    # Cold: questions never asked (most of their chunks never seen, so the evidence filter
    # computes their document signals); warm: the measured questions, all asked once before.
    cold = index_build.queries(docs, n_queries + WARMUP, seed=99)
    for text in texts:
        ask(text)
    stage_totals: dict[tuple[str, str], list[float]] = {}

    def staged(label: str, batch: list[str]) -> Callable[[int], object]:
        def call(i: int) -> None:
            for stage, seconds in ask(batch[i]).timings.items():
                stage_totals.setdefault((stage, label), []).append(seconds * 1000)

        return call

    paths: dict[str, Callable[[int], object]] = {
        "FAISS IndexFlatIP (floor)": lambda i: flat.search(vectors[i : i + 1], TOP_K),
        "IndexStore.search (hybrid)": lambda i: store.search(texts[i], TOP_K),
        COLD: staged("cold", cold),
        WARM: staged("warm", texts),
    }
    try:
        retriever, engine = _llamaindex(store, embedder)
    except ImportError:
        retriever = engine = None  # the table says so
    if retriever is not None:
        paths[LLAMA_RETRIEVER] = lambda i: retriever.retrieve(texts[i])
        paths[LLAMA_ENGINE] = lambda i: engine.query(texts[i])
    measured = rounds(paths, n_queries)
    loop.close()

    measured["POST /v1/chat/completions"] = _over_http(manager, texts, n_queries)
    return _report(measured, stage_totals, store.chunk_count, n_queries) + "\n" + ingest


def _over_http(manager: IndexManager, texts: list[str], n_queries: int) -> list[float]:
    """A real ``sentinel serve`` loading the index from ``VECTOR_DB_PERSIST_DIR``."""
    position = iter(range(10**9))
    with tempfile.TemporaryDirectory() as tmp:
        persist = Path(tmp) / "data"
        manager.persist(INDEX, persist)
        runtime = start_runtime(
            Path(tmp), {"VECTOR_DB_PERSIST_DIR": str(persist), "DEMO_CORPUS": "false"}
        )
        try:
            with httpx.Client(base_url=runtime.base_url, timeout=30) as client:

                def chat() -> None:
                    body = {
                        "model": "any",
                        "messages": [
                            {"role": "user", "content": texts[next(position) % n_queries]}
                        ],
                        "index_name": INDEX,
                    }
                    client.post("/v1/chat/completions", json=body).raise_for_status()

                return timings_ms(chat, n_queries, warmup=WARMUP)
        finally:
            runtime.stop()


def _report(
    measured: dict[str, list[float]],
    stage_totals: dict[tuple[str, str], list[float]],
    chunk_count: int,
    n_queries: int,
) -> str:
    floor = median(measured["FAISS IndexFlatIP (floor)"])
    rows = [
        [label, f"{median(s):.2f}", f"{p99(s):.2f}", f"{median(s) / floor:.1f}x"]
        for label, s in measured.items()
    ]
    hybrid = median(measured["IndexStore.search (hybrid)"])
    cold, warm = median(measured[COLD]), median(measured[WARM])
    overhead = (
        f"pipeline overhead above hybrid search (median): cold {cold - hybrid:.2f} ms,"
        f" warm {warm - hybrid:.2f} ms"
    )
    if LLAMA_RETRIEVER not in measured:
        rows.append([LLAMA_RETRIEVER, "not installed", "", ""])
        against = "LlamaIndex not installed: no ratio (pip install '.[bench]')"
    else:
        llama = median(measured[LLAMA_RETRIEVER])
        against = (
            f"pipeline / LlamaIndex retriever (median): cold {cold / llama:.2f}x,"
            f" warm {warm / llama:.2f}x (target: at most 0.8x)"
        )
    stages = [
        [stage, label, f"{median(v):.3f}", f"{p99(v):.3f}"]
        for (stage, label), v in sorted(stage_totals.items())
    ]
    return "\n".join(
        [
            table(
                f"Answer latency, {chunk_count} chunks, top_k {TOP_K}, {n_queries} queries"
                " (ms; ratio to the FAISS floor's median)",
                ["path", "median", "p99", "x floor"],
                rows,
            ),
            overhead,
            against,
            "",
            table(
                f"Pipeline stages (ms, {n_queries} new questions: cold; {n_queries} asked before:"
                " warm)",
                ["stage", "chunks", "median", "p99"],
                stages,
            ),
        ]
    )


if __name__ == "__main__":
    import sys

    print(run(quick="--quick" in sys.argv[1:]))

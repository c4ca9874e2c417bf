"""End-to-end answer latency on a 100k-chunk index, beside the raw search it is built on.

One corpus (``index_build.corpus``), one set of queries, measured in the same run:

* ``FAISS IndexFlatIP`` on pre-computed query vectors: the floor of any dense retrieval;
* ``IndexStore.search (hybrid)``: embedding, FAISS, BM25 and fusion, the retrieval we ship;
* ``pipeline (in process)``: introspection, gate, retrieval, evidence scoring, extractive
  generation and citation validation (``pipeline.runner.run``), no HTTP;
* ``POST /v1/chat/completions``: a real ``sentinel serve`` (default policy, output scanners
  on) loading the same index from ``VECTOR_DB_PERSIST_DIR``, over keep-alive HTTP;
* LlamaIndex with FAISS (what KAITO uses) on the same corpus, when ``llama-index`` is
  installed.

Targets: end-to-end median under 50 ms; pipeline above raw search under 5 ms.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import faiss
import httpx

import index_build
from sentinel_runtime.index.hashing import HashingEmbedder
from sentinel_runtime.index.manager import IndexManager
from sentinel_runtime.pipeline import config, runner
from stats import median, p99, table, timings_ms
from support.runtime import start_runtime

TOP_K = 5
INDEX = "bench"


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
    return index.as_retriever(similarity_top_k=TOP_K)


def run(quick: bool = False) -> str:
    n_docs = 10_000 if quick else 100_000
    n_queries = 100 if quick else 300
    docs = index_build.corpus(n_docs)
    texts = index_build.queries(docs, n_queries)
    embedder = HashingEmbedder()
    manager = IndexManager(embedder, None)
    for i in range(0, n_docs, index_build.BATCH):
        manager.add_documents(INDEX, docs[i : i + index_build.BATCH])
    store = manager.get(INDEX)

    # One query at a time: FAISS's OpenMP threads only add contention on two shared cores.
    faiss.omp_set_num_threads(1)
    flat = faiss.IndexFlatIP(embedder.dim)
    flat.add(store.snapshot().vectors)
    vectors = embedder.embed(texts)
    context = runner.PipelineContext(config=config.DEFAULT, store=store)
    loop = asyncio.new_event_loop()

    def each(fn):
        position = iter(range(10**9))
        return lambda: fn(next(position) % n_queries)

    measured: dict[str, list[float]] = {}
    for label, fn in [
        ("FAISS IndexFlatIP (floor)", lambda i: flat.search(vectors[i : i + 1], TOP_K)),
        ("IndexStore.search (hybrid)", lambda i: store.search(texts[i], TOP_K)),
        (
            "pipeline (in process)",
            lambda i: loop.run_until_complete(
                runner.run(runner.PipelineRequest(texts[i], INDEX), context)
            ),
        ),
    ]:
        measured[label] = timings_ms(each(fn), n_queries, warmup=10)
    try:
        retriever = _llamaindex(store, embedder)
    except ImportError:
        retriever = None  # the table says so
    if retriever is not None:
        measured["LlamaIndex + FAISS retriever"] = timings_ms(
            each(lambda i: retriever.retrieve(texts[i])), n_queries, warmup=10
        )

    # Per stage, for questions never asked before (their chunks' document signals are not
    # cached yet: the cost of a cold chunk) and for the measured questions asked again.
    cold = index_build.queries(docs, 50, seed=99)
    stage_totals: dict[tuple[str, str], list[float]] = {}
    for label, batch in (("cold", cold), ("warm", texts[:50])):
        for text in batch:
            request = runner.PipelineRequest(text, INDEX)
            result = loop.run_until_complete(runner.run(request, context))
            for stage, seconds in result.timings.items():
                stage_totals.setdefault((stage, label), []).append(seconds * 1000)
    loop.close()

    with tempfile.TemporaryDirectory() as tmp:
        persist = Path(tmp) / "data"
        manager.persist(INDEX, persist)
        runtime = start_runtime(
            Path(tmp), {"VECTOR_DB_PERSIST_DIR": str(persist), "DEMO_CORPUS": "false"}
        )
        try:
            with httpx.Client(base_url=runtime.base_url, timeout=30) as client:

                def chat(i: int) -> None:
                    body = {
                        "model": "any",
                        "messages": [{"role": "user", "content": texts[i]}],
                        "index_name": INDEX,
                    }
                    client.post("/v1/chat/completions", json=body).raise_for_status()

                measured["POST /v1/chat/completions"] = timings_ms(each(chat), n_queries, warmup=10)
        finally:
            runtime.stop()

    floor = median(measured["FAISS IndexFlatIP (floor)"])
    rows = [
        [label, f"{median(s):.2f}", f"{p99(s):.2f}", f"{median(s) / floor:.1f}x"]
        for label, s in measured.items()
    ]
    overhead = median(measured["pipeline (in process)"]) - median(
        measured["IndexStore.search (hybrid)"]
    )
    stages = [
        [stage, label, f"{median(v):.3f}", f"{p99(v):.3f}"]
        for (stage, label), v in sorted(stage_totals.items())
    ]
    if retriever is None:
        rows.append(["LlamaIndex + FAISS retriever", "not installed", "", ""])
    return "\n".join(
        [
            table(
                f"Answer latency, {store.chunk_count} chunks, top_k {TOP_K}, {n_queries} queries"
                " (ms; ratio to the FAISS floor's median)",
                ["path", "median", "p99", "x floor"],
                rows,
            ),
            f"pipeline overhead above hybrid search (median): {overhead:.2f} ms",
            "",
            table(
                "Pipeline stages (ms, 50 new questions: cold; 50 asked before: warm)",
                ["stage", "chunks", "median", "p99"],
                stages,
            ),
        ]
    )


if __name__ == "__main__":
    import sys

    print(run(quick="--quick" in sys.argv[1:]))

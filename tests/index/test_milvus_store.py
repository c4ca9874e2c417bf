"""The Milvus backend where it differs from the embedded store or adds to it: several
runtimes on one Milvus, restarts of Milvus, its limits, and the ranking it shares with the
embedded store. Runs against a real Milvus 2.5 (the milvus-lite wheel's server binary)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sentinel_runtime.index import analysis
from sentinel_runtime.index.base import IndexNotFound, VectorDBError
from sentinel_runtime.index.embedders import HashingEmbedder
from sentinel_runtime.index.manager import NAME_PATTERN, IndexManager
from sentinel_runtime.index.types import Document, SearchFilter
from support import milvus as milvus_support

pytestmark = pytest.mark.skipif(milvus_support.binary() is None, reason=milvus_support.REASON)

ROOT = Path(__file__).resolve().parents[2]


def milvus(
    url: str, prefix: str, persist_dir: Path | None = None, *, max_chars: int = 1000
) -> IndexManager:
    from sentinel_runtime.index.milvus import MilvusBackend

    return IndexManager(
        HashingEmbedder(),
        persist_dir,
        max_chars=max_chars,
        backend=lambda e, p, m: MilvusBackend(e, url, prefix=prefix, persist_dir=p, max_chars=m),
    )


def random_corpus(n: int, seed: int = 3) -> list[Document]:
    """Documents of varied words and lengths, so that no two chunks tie on either score."""
    rng = np.random.default_rng(seed)
    syllables = ["ka", "to", "ri", "mo", "sa", "len", "der", "vin", "tor", "pha", "gel", "mun"]
    vocabulary = sorted(
        {"".join(rng.choice(syllables, size=int(rng.integers(2, 4)))) for _ in range(900)}
    )
    weights = 1.0 / np.arange(1, len(vocabulary) + 1) ** 1.1
    docs = []
    for i in range(n):
        words = rng.choice(vocabulary, size=int(rng.integers(12, 60)), p=weights / weights.sum())
        meta: dict[str, object] = {"source": f"s{i % 7}", "team": ["a", "b", "c"][i % 3]}
        if i % 5:
            meta["timestamp"] = f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T08:00:00Z"
        docs.append(Document(f"r{i}", " ".join(words) + ".", meta))
    return docs


def queries(docs: list[Document], n: int, seed: int = 9) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for index in rng.integers(0, len(docs), size=n):
        words = analysis.tokenize(docs[int(index)].text)
        start = int(rng.integers(0, max(1, len(words) - 5)))
        out.append(" ".join(words[start : start + int(rng.integers(2, 6))]))
    return out


FILTERS = [
    None,
    SearchFilter(sources=("s1", "s4")),
    SearchFilter(not_before=datetime(2024, 6, 1, tzinfo=UTC)),
    SearchFilter(metadata={"team": "b"}, not_after=datetime(2024, 9, 30, tzinfo=UTC)),
    SearchFilter(
        sources=("s2", "s5"), not_before=datetime(2024, 6, 1, tzinfo=UTC), keep_undated=True
    ),
]


def ranked(store, query: str, flt: SearchFilter | None) -> list[tuple[str, float, float, float]]:
    return [
        (h.chunk.chunk_id, h.score, h.similarity, h.lexical) for h in store.search(query, 8, flt)
    ]


def test_both_backends_rank_alike(milvus_server) -> None:
    """Same chunks in the same order, the same dense cosine and the same BM25 score:
    Milvus's BM25 over the words ``tokens`` gives, with k1 1.5 and b 0.75, is ``bm25``'s.
    Fused scores agree exactly unless two candidates' float32 cosines (FAISS's and Milvus's
    sums) differ in their last bits and trade one rank: then by at most one rank's worth."""
    corpus = random_corpus(400)
    embedded = IndexManager(HashingEmbedder(), max_chars=120)
    shared = milvus(milvus_server.url, "alike", max_chars=120)
    for manager in (embedded, shared):
        manager.add_documents("kb", corpus)
        manager.delete_documents("kb", [f"r{i}" for i in range(0, 400, 9)])  # idf after deletes
    mine, theirs = embedded.get("kb"), shared.get("kb")
    assert mine.chunk_count == theirs.chunk_count > 400
    compared, exact = 0, 0
    for query in queries(corpus, 25):
        for flt in FILTERS:
            a, b = ranked(mine, query, flt), ranked(theirs, query, flt)
            assert [x[0] for x in a] == [x[0] for x in b], (query, flt)
            assert [x[1] for x in a] == pytest.approx([x[1] for x in b], abs=3e-4)
            assert [x[2] for x in a] == pytest.approx([x[2] for x in b], abs=1e-5)
            assert [x[3] for x in a] == pytest.approx([x[3] for x in b], rel=1e-4)
            compared += len(a)
            exact += [x[1] for x in a] == pytest.approx([x[1] for x in b], abs=1e-12)
    assert compared > 600 and exact >= 95
    shared.delete("kb")


def test_equal_scores_rank_in_insertion_order_on_both(milvus_server) -> None:
    # Every chunk ties on both scores: each store must order them as they were added.
    docs = [Document(f"t{i}", "same words every time", {"source": "x"}) for i in range(12)]
    embedded, shared = IndexManager(HashingEmbedder()), milvus(milvus_server.url, "ties")
    for manager in (embedded, shared):
        manager.add_documents("kb", docs[6:])
        manager.add_documents("kb", docs[:6])
    expected = [f"t{i}#p0" for i in [*range(6, 12), *range(6)]][:10]
    for manager in (embedded, shared):
        assert [h.chunk.chunk_id for h in manager.get("kb").search("same words", 10)] == expected
    shared.delete("kb")


def test_milvus_hybrid_search_with_rrf_agrees_with_our_fusion(milvus_server) -> None:
    """Milvus's own hybrid search (dense + BM25, RRFRanker(60)) orders as ``base.fuse``;
    the store fuses client-side only to keep each hit's two scores."""
    from pymilvus import AnnSearchRequest, RRFRanker

    manager = milvus(milvus_server.url, "hybrid")
    corpus = random_corpus(300, seed=5)
    manager.add_documents("kb", corpus)
    store = manager.get("kb")
    for query in queries(corpus, 10, seed=4):
        vector = HashingEmbedder().embed([query])[0].tolist()
        requests = [
            AnnSearchRequest([vector], "dense", {"metric_type": "IP"}, 40),
            AnnSearchRequest(
                [" ".join(dict.fromkeys(analysis.tokenize(query)))],
                "sparse",
                {"metric_type": "BM25"},
                40,
            ),
        ]
        (theirs,) = store.client.hybrid_search(
            store.collection, requests, RRFRanker(60), limit=10, output_fields=["doc_id"]
        )
        ours = store.search(query, 10)
        # The same chunks with the same fused scores in the same order (equal scores may
        # come in either order: Milvus does not say how it breaks ties).
        theirs_ranked = [(round(h["distance"], 6), h["entity"]["doc_id"]) for h in theirs]
        ours_ranked = [(round(h.score, 6), h.chunk.doc_id) for h in ours]
        assert [s for s, _ in theirs_ranked] == [s for s, _ in ours_ranked]
        assert sorted(theirs_ranked) == sorted(ours_ranked)
    manager.delete("kb")


RUNTIME = textwrap.dedent(
    """
    import json, sys
    from sentinel_runtime.index.embedders import HashingEmbedder
    from sentinel_runtime.index.manager import IndexManager
    from sentinel_runtime.index.milvus import MilvusBackend
    from sentinel_runtime.index.types import Document

    url, prefix, step = sys.argv[1:4]
    manager = IndexManager(
        HashingEmbedder(), None, backend=lambda e, p, m: MilvusBackend(e, url, prefix=prefix)
    )
    out = {"names": manager.names()}
    if step == "read":
        store = manager.get("kb")
        hit = store.search("when are refunds issued", 1)[0]
        out |= {"hit": hit.chunk.chunk_id, "documents": store.document_count}
        manager.add_documents("kb", [Document("from-b", "Written by the second runtime.")])
        manager.delete_documents("kb", ["logo"])
    print(json.dumps(out))
    """
)


def other_runtime(url: str, prefix: str, step: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", RUNTIME, url, prefix, step],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_two_runtime_processes_share_one_index(milvus_server) -> None:
    mine = milvus(milvus_server.url, "shared")
    mine.add_documents(
        "kb",
        [
            Document("refunds", "Refunds are issued within thirty days.", {"source": "policy"}),
            Document("logo", "The logo colour is a deep blue.", {"source": "brand"}),
        ],
    )
    seen = other_runtime(milvus_server.url, "shared", "read")
    assert seen == {"names": ["kb"], "hit": "refunds#p0", "documents": 2}
    store = mine.get("kb")
    assert [d.doc_id for d in store.list_documents()[0]] == ["refunds", "from-b"]
    assert store.search("second runtime", 1)[0].chunk.doc_id == "from-b"
    mine.delete("kb")
    assert other_runtime(milvus_server.url, "shared", "names") == {"names": []}


def test_an_index_dropped_by_another_runtime_is_not_found(milvus_server) -> None:
    first, second = milvus(milvus_server.url, "drop"), milvus(milvus_server.url, "drop")
    first.add_documents("kb", [Document("a", "Alpha text.")])
    store = first.get("kb")
    second.delete("kb")
    with pytest.raises(IndexNotFound):
        store.search("alpha", 3)
    with pytest.raises(IndexNotFound):
        first.get("kb")
    assert first.names() == [] and "kb" not in first


def test_prefixes_keep_engines_apart(milvus_server) -> None:
    one, two = milvus(milvus_server.url, "eng"), milvus(milvus_server.url, "eng_u")
    one.add_documents("kb", [Document("a", "One.")])
    two.add_documents("u_kb", [Document("b", "Two.")])
    assert one.names() == ["kb"] and two.names() == ["u_kb"]
    one.delete("kb")
    two.delete("u_kb")


@given(
    st.from_regex(NAME_PATTERN, fullmatch=True),
    st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,8}", fullmatch=True),
)
def test_collection_names_round_trip_and_never_collide(name: str, prefix: str) -> None:
    from sentinel_runtime.index.milvus import collection_name, index_name

    collection = collection_name(prefix, name)
    assert index_name(prefix, collection) == name
    assert len(collection) <= 255 and collection.replace("_", "").isalnum()
    for other in (f"{prefix}_", f"{prefix}_u", f"{prefix}x", prefix[:-1]):
        if other and other != prefix:
            assert index_name(other, collection) is None


def test_the_documents_survive_a_milvus_restart(tmp_path: Path) -> None:
    with milvus_support.MilvusServer(tmp_path / "milvus") as server:
        manager = milvus(server.url, "restart")
        manager.add_documents("kb", random_corpus(50))
        manager.delete_documents("kb", ["r3"])
        before = ranked(manager.get("kb"), "kato rimo", None)
        manager.close()
        server.stop()
        server.start()
        again = milvus(server.url, "restart")
        assert again.get("kb").document_count == 49
        assert ranked(again.get("kb"), "kato rimo", None) == before
        again.close()


@pytest.mark.filterwarnings("ignore:pkg_resources is deprecated")
def test_a_local_db_file_is_one_process_milvus(tmp_path: Path) -> None:
    """``VECTOR_DB_URL=/path/milvus.db``: pymilvus starts milvus-lite for this process and
    locks the file, so a second runtime cannot open it: sharing needs a server URL."""
    path = str(tmp_path / "milvus.db")
    manager = milvus(path, "local")
    manager.add_documents("kb", [Document("a", "Local file text.")])
    assert manager.get("kb").search("local file", 1)[0].chunk.doc_id == "a"
    code = (
        "import sys\nfrom sentinel_runtime.index.embedders import HashingEmbedder\n"
        "from sentinel_runtime.index.milvus import MilvusBackend\n"
        "try:\n    MilvusBackend(HashingEmbedder(), sys.argv[1])\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code, path],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.startswith("VectorDBError"), done.stdout + done.stderr[-2000:]
    assert "Open local milvus failed" in done.stdout
    manager.close()


def test_an_unreachable_milvus_stops_the_start() -> None:
    from sentinel_runtime.index.milvus import MilvusBackend

    url = f"http://127.0.0.1:{milvus_support.free_port()}"
    with pytest.raises(VectorDBError, match=f"Milvus at {url}"):
        MilvusBackend(HashingEmbedder(), url, timeout=2)


def test_what_a_varchar_cannot_hold_is_refused_before_anything_is_written(
    milvus_server,
) -> None:
    """A Milvus VARCHAR holds 65,535 bytes: a single word longer than that (chunks never
    cut words) is refused; the embedded store takes it."""
    word = "x" * 70_000
    shared, embedded = milvus(milvus_server.url, "limits"), IndexManager(HashingEmbedder())
    with pytest.raises(ValueError, match="longer than the Milvus store holds"):
        shared.add_documents("kb", [Document("ok", "Fine."), Document("big", f"a {word} b")])
    assert shared.names() == []
    embedded.add_documents("kb", [Document("big", f"a {word} b")])
    assert embedded.get("kb").get_document("big").text == f"a {word} b"
    many = {f"k{i}": i for i in range(1025)}
    with pytest.raises(ValueError, match="at most 1024 metadata keys"):
        shared.add_documents("kb", [Document("meta", "Many keys.", many)])
    shared.add_documents("kb", [Document("meta", "Many keys.", dict(list(many.items())[:1024]))])
    assert shared.get("kb").list_documents(0, 1, {"k1023": 1023})[1] == 1
    shared.delete("kb")


def test_nested_values_compare_json_exactly_on_milvus(milvus_server) -> None:
    """Python's == says [1] == [True]; the embedded store follows it inside lists and
    objects, Milvus compares the JSON (at the top level both keep true and 1 apart)."""
    doc = Document("n", "Nested values.", {"v": [1, {"x": 2}]})
    shared, embedded = milvus(milvus_server.url, "nested"), IndexManager(HashingEmbedder())
    for manager in (shared, embedded):
        manager.add_documents("kb", [doc])
    loose = {"v": [True, {"x": 2.0}]}
    assert embedded.get("kb").list_documents(0, 5, loose)[1] == 1
    assert shared.get("kb").list_documents(0, 5, loose)[1] == 0
    exact = {"v": [1, {"x": 2.0}]}  # 2.0 is 2 on both
    assert shared.get("kb").list_documents(0, 5, exact)[1] == 1
    shared.delete("kb")


def test_persist_exports_and_leaves_milvus_as_it_was(milvus_server, tmp_path: Path, caplog) -> None:
    manager = milvus(milvus_server.url, "export", tmp_path)
    manager.add_documents("kb", random_corpus(20))
    file = manager.persist("kb")
    assert file == tmp_path / "kb.sentinel-index"
    assert manager.get("kb").document_count == 20
    # A restart does not load the file (Milvus holds the index); it says so.
    manager.delete("kb")
    with caplog.at_level("WARNING", logger="sentinel_runtime.index.milvus"):
        restarted = milvus(milvus_server.url, "export", tmp_path)
    assert restarted.names() == []
    assert "kb.sentinel-index" in caplog.text and "POST /load" in caplog.text
    restarted.load("kb")
    assert restarted.get("kb").document_count == 20
    restarted.delete("kb")

"""IndexStore: documents in and out, hybrid search, filters that never cost results,
changes that fail leaving nothing behind, and many threads at once."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import numpy as np
import pytest

from sentinel_runtime.index import dense
from sentinel_runtime.index.embedders import EmbeddingError, HashingEmbedder, RemoteEmbedder
from sentinel_runtime.index.store import IndexStore
from sentinel_runtime.index.types import Document, SearchFilter
from support.fake_embeddings import FakeEmbeddings

DOCS = [
    Document("refunds", "Refunds are issued within thirty days of purchase.", {"source": "policy"}),
    Document("shipping", "Shipping takes five business days.", {"source": "faq", "lang": "en"}),
    Document("logo", "The logo colour is a deep blue.", {"source": "brand"}),
]


@pytest.fixture
def store() -> IndexStore:
    s = IndexStore("kb", HashingEmbedder())
    s.add(DOCS)
    return s


@pytest.fixture
def embed_server() -> Iterator[FakeEmbeddings]:
    fake = FakeEmbeddings().start()
    yield fake
    fake.stop()


def test_add_derives_the_id_of_a_document_without_one_from_its_text() -> None:
    s = IndexStore("kb", HashingEmbedder())
    added = s.add([Document("", "First text."), Document("", "Second text.")])
    assert [d.doc_id for d in added] == [
        hashlib.sha256(b"First text.").hexdigest(),
        hashlib.sha256(b"Second text.").hexdigest(),
    ]
    assert s.document_count == 2 and s.chunk_count == 2
    # The same text again is the same document, not a copy.
    assert [d.doc_id for d in s.add([Document("", "First text.", {"v": 2})])] == [added[0].doc_id]
    assert s.document_count == 2


def test_adding_an_existing_doc_id_replaces_it_in_place(store: IndexStore) -> None:
    long_text = "Refunds are issued. " * 120  # several chunks
    store.add([Document("refunds", long_text, {"source": "policy-v2"})])
    docs, total = store.list_documents()
    assert [d.doc_id for d in docs] == ["refunds", "shipping", "logo"] and total == 3
    assert store.get_document("refunds") == Document("refunds", long_text, {"source": "policy-v2"})
    chunks = [store.get_chunk(f"refunds#p{n}") for n in range(3)]
    assert all(c is not None and c.metadata["source"] == "policy-v2" for c in chunks)
    assert store.chunk_count == 2 + sum(
        store.get_chunk(f"refunds#p{n}") is not None for n in range(10)
    )
    assert "thirty" not in " ".join(h.chunk.text for h in store.search("thirty days", 10))


def test_update_reports_updated_unchanged_and_not_found(store: IndexStore) -> None:
    updated, unchanged, not_found = store.update(
        [
            Document("refunds", DOCS[0].text, {"source": "policy"}),
            Document("shipping", DOCS[1].text, {"source": "faq", "lang": "de"}),
            Document("logo", "The logo is now green.", {"source": "brand"}),
            Document("ghost", "Nobody indexed me."),
        ]
    )
    assert [d.doc_id for d in updated] == ["shipping", "logo"]
    assert [d.doc_id for d in unchanged] == ["refunds"]
    assert [d.doc_id for d in not_found] == ["ghost"]
    assert store.get_chunk("logo#p0").text == "The logo is now green."
    assert store.get_document("shipping").metadata["lang"] == "de"
    assert store.get_document("ghost") is None


def test_update_needs_doc_ids(store: IndexStore) -> None:
    with pytest.raises(ValueError, match="has no doc_id"):
        store.update([Document("", "text")])


def test_delete_reports_deleted_and_not_found(store: IndexStore) -> None:
    assert store.delete(["logo", "ghost", "logo"]) == (["logo"], ["ghost"])
    assert store.get_chunk("logo#p0") is None
    assert store.document_count == 2 and store.chunk_count == 2
    assert all(h.chunk.doc_id != "logo" for h in store.search("logo colour blue", 5))


def test_list_documents_pages_and_filters_on_metadata() -> None:
    s = IndexStore("kb", HashingEmbedder())
    s.add([Document(f"d{i}", f"text {i}", {"even": i % 2 == 0}) for i in range(25)])
    page, total = s.list_documents(offset=10, limit=5)
    assert [d.doc_id for d in page] == ["d10", "d11", "d12", "d13", "d14"] and total == 25
    evens, total = s.list_documents(offset=10, limit=10, metadata_filter={"even": True})
    assert [d.doc_id for d in evens] == ["d20", "d22", "d24"] and total == 13
    assert s.list_documents(offset=100)[0] == []


@pytest.mark.parametrize(
    ("documents", "message"),
    [
        pytest.param([Document("a", "   ")], "has no text", id="blank-text"),
        pytest.param([Document("a", "x"), Document("a", "y")], "appears twice", id="duplicate"),
        pytest.param([Document("a", "x", {"when": datetime.now()})], "must be JSON", id="not-json"),
        pytest.param([Document("a", "x", {"n": float("nan")})], "must be JSON", id="nan"),
        pytest.param([Document("a" * 600, "x")], "longer than", id="long-id"),
    ],
)
def test_bad_documents_are_refused_and_nothing_is_added(
    store: IndexStore, documents: list[Document], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        store.add([Document("new", "A good document."), *documents])
    assert store.document_count == 3 and store.get_document("new") is None


def test_the_relevant_document_ranks_first_with_its_cosine(store: IndexStore) -> None:
    hits = store.search("how many days for a refund", 3)
    assert hits[0].chunk.chunk_id == "refunds#p0"
    assert [h.rank for h in hits] == [0, 1, 2]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    embedder = HashingEmbedder()
    for hit in hits:
        cosine = float(
            embedder.embed(["how many days for a refund"])[0] @ embedder.embed([hit.chunk.text])[0]
        )
        assert hit.similarity == pytest.approx(min(max(cosine, 0.0), 1.0), abs=1e-6)
        assert 0.0 <= hit.similarity <= 1.0
    assert hits[0].lexical > 0


def test_a_lexical_only_hit_carries_its_dense_cosine_too(embed_server: FakeEmbeddings) -> None:
    # The fake server's vectors are unrelated to words: the dense half cannot find the one
    # document naming a capybara, BM25 can.
    s = IndexStore("kb", RemoteEmbedder(embed_server.base_url))
    s.add([Document(f"f{i}", f"filler document number {i}") for i in range(400)])
    s.add([Document("rare", "The capybara office hours.")])
    query, rare_vector = s.embedder.embed(["capybara", "The capybara office hours."])
    dense_keys, _ = s._dense.search(query, 40)
    assert s._key_of["rare#p0"] not in dense_keys.tolist()
    cosine = float(query @ rare_vector)
    assert 0.05 < cosine < 1

    hits = s.search("capybara", 5)
    rare = next(h for h in hits if h.chunk.doc_id == "rare")
    assert rare.lexical > 0
    assert rare.similarity == pytest.approx(cosine, abs=1e-6)


def dated_corpus() -> list[Document]:
    docs = []
    for i in range(300):
        meta: dict[str, object] = {"source": f"s{i % 10}", "team": "a" if i % 3 else "b"}
        if i % 4:
            meta["timestamp"] = f"2024-{1 + i % 12:02d}-15T00:00:00Z"
        docs.append(Document(f"d{i}", f"release notes {i} for the payment service", meta))
    return docs


@pytest.fixture(params=[pytest.param(0, id="full-scan"), pytest.param(10**6, id="direct")])
def filtered_store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> IndexStore:
    # Both exact paths of a filtered dense search: score every row, or only the allowed ones.
    monkeypatch.setattr(dense, "DIRECT_MAX", request.param)
    s = IndexStore("kb", HashingEmbedder())
    s.add(dated_corpus())
    return s


@pytest.mark.parametrize(
    ("flt", "allowed"),
    [
        pytest.param(
            SearchFilter(sources=("s3",)), lambda d: d.metadata["source"] == "s3", id="source"
        ),
        pytest.param(
            SearchFilter(sources=("s1", "s2", "nowhere")),
            lambda d: d.metadata["source"] in ("s1", "s2"),
            id="sources",
        ),
        pytest.param(
            SearchFilter(not_before=datetime(2024, 10, 1, tzinfo=UTC)),
            lambda d: d.metadata.get("timestamp", "") >= "2024-10",
            id="not-before",
        ),
        pytest.param(
            SearchFilter(not_after=datetime(2024, 2, 28)),  # naive: read as UTC
            lambda d: "timestamp" in d.metadata and d.metadata["timestamp"] < "2024-03",
            id="not-after-naive",
        ),
        pytest.param(
            SearchFilter(metadata={"team": "b"}, sources=("s0", "s3", "s6", "s9")),
            lambda d: (
                d.metadata["team"] == "b" and d.metadata["source"] in ("s0", "s3", "s6", "s9")
            ),
            id="metadata-and-sources",
        ),
    ],
)
def test_filtered_search_returns_top_k_allowed_chunks(
    filtered_store: IndexStore, flt: SearchFilter, allowed
) -> None:
    expected = {d.doc_id for d in dated_corpus() if allowed(d)}
    assert len(expected) >= 10
    hits = filtered_store.search("release notes 7 payment", 10, flt)
    assert len(hits) == 10
    assert {h.chunk.doc_id for h in hits} <= expected


def test_a_window_excludes_chunks_without_timestamp(filtered_store: IndexStore) -> None:
    flt = SearchFilter(not_before=datetime(2000, 1, 1, tzinfo=UTC))
    hits = filtered_store.search("release notes payment", 100, flt)
    assert len(hits) == 100
    assert all("timestamp" in h.chunk.metadata for h in hits)


def test_a_filter_that_matches_nothing_returns_nothing(filtered_store: IndexStore) -> None:
    assert filtered_store.search("release", 5, SearchFilter(sources=("nowhere",))) == []
    assert filtered_store.search("release", 5, SearchFilter(metadata={"team": "z"})) == []


def test_filtered_and_unfiltered_search_agree_when_the_filter_allows_all(
    filtered_store: IndexStore,
) -> None:
    everything = SearchFilter(sources=tuple(f"s{i}" for i in range(10)))
    plain = filtered_store.search("payment notes 42", 8)
    filtered = filtered_store.search("payment notes 42", 8, everything)
    assert [(h.chunk.chunk_id, h.score) for h in plain] == [
        (h.chunk.chunk_id, h.score) for h in filtered
    ]


def test_search_edge_cases(store: IndexStore) -> None:
    assert IndexStore("empty", HashingEmbedder()).search("anything", 3) == []
    assert store.search("?!", 3) == []
    assert len(store.search("refund", 50)) == 3
    with pytest.raises(ValueError, match="top_k"):
        store.search("refund", 0)


def test_an_embedding_failure_changes_nothing(embed_server: FakeEmbeddings) -> None:
    s = IndexStore("kb", RemoteEmbedder(embed_server.base_url))
    s.add(DOCS)
    embed_server.status = 503
    with pytest.raises(EmbeddingError, match="HTTP 503"):
        s.add([Document("refunds", "Replacement text."), Document("new", "New text.")])
    with pytest.raises(EmbeddingError):
        s.update([Document("logo", "Changed logo text.")])
    embed_server.status = 200
    assert s.get_document("refunds") == DOCS[0] and s.get_document("new") is None
    assert s.get_chunk("logo#p0").text == DOCS[2].text
    assert s.document_count == 3 and s.chunk_count == 3


def test_threads_adding_deleting_and_searching_at_once() -> None:
    s = IndexStore("kb", HashingEmbedder())
    errors: list[BaseException] = []

    def writer(worker: int) -> None:
        try:
            for i in range(40):
                s.add([Document(f"w{worker}-{i}", f"worker {worker} item {i} text")])
                if i % 4 == 0:
                    s.delete([f"w{worker}-{i}"])
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    def reader() -> None:
        try:
            for _ in range(80):
                for hit in s.search("worker item text", 5):
                    assert hit.chunk.chunk_id.startswith("w")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert s.document_count == 4 * 30 == s.chunk_count
    assert len(s._dense) == 120 and len(s._bm25) == 120
    assert np.array_equal(np.sort(s._dense.keys()), np.sort(np.array(list(s._chunks))))

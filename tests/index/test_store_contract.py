"""The store contract: every test here runs on both backends (``backend`` fixture,
tests/index/conftest.py), through the IndexManager as the API uses it. What differs between
the backends is in test_milvus_store.py, each difference named."""

from __future__ import annotations

import hashlib
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sentinel_runtime.index import persistence
from sentinel_runtime.index.base import IndexExistsError, IndexNotFound
from sentinel_runtime.index.embedders import HashingEmbedder
from sentinel_runtime.index.manager import IndexManager
from sentinel_runtime.index.types import Document, SearchFilter

DOCS = [
    Document("refunds", "Refunds are issued within thirty days of purchase.", {"source": "policy"}),
    Document("shipping", "Shipping takes five business days.", {"source": "faq", "lang": "en"}),
    Document("logo", "The logo colour is a deep blue.", {"source": "brand"}),
]


def ids(hits) -> list[str]:
    return [h.chunk.chunk_id for h in hits]


@pytest.fixture
def kb(backend) -> IndexManager:
    manager = backend.open()
    manager.add_documents("kb", DOCS)
    return manager


def test_add_derives_ids_from_the_text_and_counts(backend) -> None:
    manager = backend.open()
    added = manager.add_documents("kb", [Document("", "First text."), Document("", "Second.")])
    # KAITO's derivation: the SHA-256 of the text, so the same text again is one document.
    assert [d.doc_id for d in added] == [
        hashlib.sha256(b"First text.").hexdigest(),
        hashlib.sha256(b"Second.").hexdigest(),
    ]
    again = manager.add_documents("kb", [Document("", "First text.", {"v": 2})])
    assert [d.doc_id for d in again] == [added[0].doc_id]
    store = manager.get("kb")
    assert store.document_count == 2 and store.chunk_count == 2
    assert manager.names() == ["kb"] and "kb" in manager and "other" not in manager


def test_an_existing_doc_id_is_replaced_in_place_longer_then_shorter(kb: IndexManager) -> None:
    store = kb.get("kb")
    long_text = "Refunds are issued. " * 120  # several chunks
    kb.add_documents("kb", [Document("refunds", long_text, {"source": "policy-v2"})])
    docs, total = store.list_documents()
    assert [d.doc_id for d in docs] == ["refunds", "shipping", "logo"] and total == 3
    assert store.get_document("refunds") == Document("refunds", long_text, {"source": "policy-v2"})
    chunks = [store.get_chunk(f"refunds#p{n}") for n in range(3)]
    assert all(c is not None and c.metadata["source"] == "policy-v2" for c in chunks)
    assert store.chunk_count > 4
    assert "thirty" not in " ".join(h.chunk.text for h in store.search("thirty days", 10))

    kb.add_documents("kb", [Document("refunds", "Refunds now take a week.", {"source": "p"})])
    assert store.chunk_count == 3 and store.get_chunk("refunds#p1") is None
    assert store.get_chunk("refunds#p0").text == "Refunds now take a week."


def test_update_reports_updated_unchanged_and_not_found(kb: IndexManager) -> None:
    updated, unchanged, not_found = kb.update_documents(
        "kb",
        [
            Document("refunds", DOCS[0].text, {"source": "policy"}),
            Document("shipping", DOCS[1].text, {"source": "faq", "lang": "de"}),
            Document("logo", "The logo is now green.", {"source": "brand"}),
            Document("ghost", "Nobody indexed me."),
        ],
    )
    assert [d.doc_id for d in updated] == ["shipping", "logo"]
    assert [d.doc_id for d in unchanged] == ["refunds"]
    assert [d.doc_id for d in not_found] == ["ghost"]
    store = kb.get("kb")
    assert store.get_chunk("logo#p0").text == "The logo is now green."
    assert store.get_document("shipping").metadata["lang"] == "de"
    assert store.get_document("ghost") is None
    with pytest.raises(ValueError, match="has no doc_id"):
        kb.update_documents("kb", [Document("", "text")])


def test_delete_reports_deleted_and_not_found(kb: IndexManager) -> None:
    assert kb.delete_documents("kb", ["logo", "ghost", "logo"]) == (["logo"], ["ghost"])
    store = kb.get("kb")
    assert store.get_chunk("logo#p0") is None and store.get_document("logo") is None
    assert store.document_count == 2 and store.chunk_count == 2
    assert all(h.chunk.doc_id != "logo" for h in store.search("logo colour blue", 5))


def test_list_documents_pages_and_filters_on_metadata(backend) -> None:
    manager = backend.open()
    manager.add_documents(
        "kb", [Document(f"d{i}", f"text {i}", {"even": i % 2 == 0}) for i in range(25)]
    )
    store = manager.get("kb")
    page, total = store.list_documents(offset=10, limit=5)
    assert [d.doc_id for d in page] == ["d10", "d11", "d12", "d13", "d14"] and total == 25
    evens, total = store.list_documents(offset=10, limit=10, metadata_filter={"even": True})
    assert [d.doc_id for d in evens] == ["d20", "d22", "d24"] and total == 13
    assert store.list_documents(offset=100)[0] == []
    with pytest.raises(ValueError, match="negative"):
        store.list_documents(offset=-1)


def test_metadata_equality_keeps_json_types_apart(backend) -> None:
    manager = backend.open()
    manager.add_documents(
        "kb",
        [
            Document("int", "alpha", {"n": 1}),
            Document("bool", "alpha", {"n": True}),
            Document("float", "alpha", {"n": 2.5}),
            Document("str", "alpha", {"n": "1"}),
            Document("none", "alpha", {"n": None}),
            Document("list", "alpha", {"n": ["a", 1]}),
            Document("object", "alpha", {"n": {"b": 1, "a": [2]}}),
        ],
    )
    store = manager.get("kb")

    def matching(value: object) -> list[str]:
        docs, _ = store.list_documents(0, 100, {"n": value})
        found = {
            h.chunk.doc_id for h in store.search("alpha", 10, SearchFilter(metadata={"n": value}))
        }
        assert found == {d.doc_id for d in docs}
        return sorted(found)

    assert matching(1) == ["int"] and matching(1.0) == ["int"]
    assert matching(True) == ["bool"]
    assert matching(2.5) == ["float"] and matching("1") == ["str"]
    assert matching(None) == ["none"]
    assert matching(["a", 1]) == ["list"] and matching(["a"]) == []
    assert matching({"a": [2], "b": 1}) == ["object"]
    assert store.list_documents(0, 10, {"missing": None}) == ([], 0)


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
    kb: IndexManager, documents: list[Document], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        kb.add_documents("kb", [Document("new", "A good document."), *documents])
    store = kb.get("kb")
    assert store.document_count == 3 and store.get_document("new") is None


def test_bad_first_documents_create_no_index(backend) -> None:
    manager = backend.open()
    with pytest.raises(ValueError, match="has no text"):
        manager.add_documents("kb", [Document("a", " ")])
    assert manager.names() == [] and "kb" not in manager
    with pytest.raises(IndexNotFound):
        manager.get("kb")


def test_the_relevant_document_ranks_first_with_its_cosine(kb: IndexManager) -> None:
    hits = kb.get("kb").search("how many days for a refund", 3)
    assert hits[0].chunk.chunk_id == "refunds#p0"
    assert [h.rank for h in hits] == [0, 1, 2]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    embedder = HashingEmbedder()
    query = embedder.embed(["how many days for a refund"])[0]
    for hit in hits:
        cosine = float(query @ embedder.embed([hit.chunk.text])[0])
        assert hit.similarity == pytest.approx(min(max(cosine, 0.0), 1.0), abs=1e-5)
    assert hits[0].lexical > 0
    assert hits[0].chunk.metadata == {"source": "policy"}


def test_top_k_and_edge_cases(kb: IndexManager) -> None:
    store = kb.get("kb")
    assert len(store.search("refund", 1)) == 1
    assert len(store.search("refund", 2)) == 2
    assert len(store.search("refund", 50)) == 3
    assert store.search("?!", 3) == []
    with pytest.raises(ValueError, match="top_k"):
        store.search("refund", 0)


def test_an_index_emptied_of_documents_finds_nothing(kb: IndexManager) -> None:
    kb.delete_documents("kb", [d.doc_id for d in DOCS])
    store = kb.get("kb")
    assert store.document_count == 0 and store.chunk_count == 0
    assert store.search("refund days", 5) == []
    assert store.list_documents() == ([], 0)
    assert kb.names() == ["kb"]  # an empty index is still an index


def dated_corpus() -> list[Document]:
    docs = []
    for i in range(300):
        meta: dict[str, object] = {"source": f"s{i % 10}", "team": "a" if i % 3 else "b"}
        if i % 4:
            meta["timestamp"] = f"2024-{1 + i % 12:02d}-15T00:00:00Z"
        docs.append(Document(f"d{i}", f"release notes {i} for the payment service", meta))
    return docs


@pytest.fixture
def dated(backend) -> IndexManager:
    manager = backend.open()
    manager.add_documents("kb", dated_corpus())
    return manager


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
            SearchFilter(
                not_before=datetime(2024, 3, 1, tzinfo=UTC),
                not_after=datetime(2024, 6, 30, tzinfo=UTC),
            ),
            lambda d: "2024-03" <= d.metadata.get("timestamp", "") < "2024-07",
            id="window",
        ),
        pytest.param(
            SearchFilter(metadata={"team": "b"}, sources=("s0", "s3", "s6", "s9")),
            lambda d: (
                d.metadata["team"] == "b" and d.metadata["source"] in ("s0", "s3", "s6", "s9")
            ),
            id="metadata-and-sources",
        ),
        pytest.param(
            SearchFilter(not_before=datetime(2024, 10, 1, tzinfo=UTC), keep_undated=True),
            lambda d: "timestamp" not in d.metadata or d.metadata["timestamp"] >= "2024-10",
            id="not-before-keeping-undated",
        ),
        pytest.param(
            SearchFilter(
                sources=("s2", "s4"),
                not_before=datetime(2024, 3, 1, tzinfo=UTC),
                not_after=datetime(2024, 6, 30, tzinfo=UTC),
                keep_undated=True,
            ),
            lambda d: (
                d.metadata["source"] in ("s2", "s4")
                and (
                    "timestamp" not in d.metadata
                    or "2024-03" <= d.metadata["timestamp"] < "2024-07"
                )
            ),
            id="window-and-sources-keeping-undated",
        ),
    ],
)
def test_filtered_search_returns_top_k_allowed_chunks(
    dated: IndexManager, flt: SearchFilter, allowed
) -> None:
    expected = {d.doc_id for d in dated_corpus() if allowed(d)}
    assert len(expected) >= 10
    hits = dated.get("kb").search("release notes 7 payment", 10, flt)
    assert len(hits) == 10  # a filter never costs results
    assert {h.chunk.doc_id for h in hits} <= expected
    everything = dated.get("kb").search("release notes 7 payment", 300, flt)
    assert {h.chunk.doc_id for h in everything} == expected


@pytest.mark.parametrize(
    "flt",
    [
        pytest.param(SearchFilter(not_before=datetime(1900, 1, 1, tzinfo=UTC)), id="not-before"),
        pytest.param(SearchFilter(not_after=datetime(2100, 1, 1, tzinfo=UTC)), id="not-after"),
    ],
)
def test_a_window_excludes_chunks_without_timestamp(dated: IndexManager, flt) -> None:
    # Bounds on both sides of the epoch: "no timestamp" is neither 0 nor any other time.
    hits = dated.get("kb").search("release notes payment", 300, flt)
    assert len(hits) == 225
    assert all("timestamp" in h.chunk.metadata for h in hits)


@pytest.mark.parametrize(
    ("keep_undated", "expected"),
    [
        pytest.param(False, {"recent"}, id="window-over-dated-documents"),
        pytest.param(True, {"recent", "undated", "unreadable"}, id="window-keeping-undated"),
    ],
)
def test_a_window_drops_old_documents_and_keeps_undated_ones_when_asked(
    backend, keep_undated: bool, expected: set[str]
) -> None:
    # The gate's restricted window keeps what no timestamp says is outdated; a timestamp
    # that cannot be read is no timestamp, on both backends.
    manager = backend.open()
    manager.add_documents(
        "kb",
        [
            Document("old", "refund window policy", {"timestamp": "2023-01-10T00:00:00Z"}),
            Document("recent", "refund window policy", {"timestamp": "2024-11-02"}),
            Document("undated", "refund window policy", {"source": "faq"}),
            Document("unreadable", "refund window policy", {"timestamp": "last spring"}),
        ],
    )
    flt = SearchFilter(not_before=datetime(2024, 6, 1, tzinfo=UTC), keep_undated=keep_undated)
    hits = manager.get("kb").search("refund window", 10, flt)
    assert {h.chunk.doc_id for h in hits} == expected


def test_a_filter_that_matches_nothing_returns_nothing(dated: IndexManager) -> None:
    store = dated.get("kb")
    assert store.search("release", 5, SearchFilter(sources=("nowhere",))) == []
    assert store.search("release", 5, SearchFilter(sources=())) == []
    assert store.search("release", 5, SearchFilter(metadata={"team": "z"})) == []
    future = SearchFilter(not_before=datetime(2030, 1, 1, tzinfo=UTC))
    assert store.search("release", 5, future) == []


def test_filtered_and_unfiltered_search_agree_when_the_filter_allows_all(
    dated: IndexManager,
) -> None:
    store = dated.get("kb")
    everything = SearchFilter(sources=tuple(f"s{i}" for i in range(10)))
    plain = store.search("payment notes 42", 8)
    filtered = store.search("payment notes 42", 8, everything)
    assert [(h.chunk.chunk_id, h.score) for h in plain] == [
        (h.chunk.chunk_id, h.score) for h in filtered
    ]
    assert plain[0].chunk.doc_id == "d42"


UNICODE = [
    Document(
        'q"uo\\te\n😀',
        "Ünïcödé text: naïve café, 東京の天気, emoji 🚀 and a \"quoted\" 'word'.\n\n  Next.  ",
        {"source": 'src "quoted" \\ ü', "tag": "東京", "nested": {"ö": ["ß", 1.5]}},
    ),
    Document("plain", "Plain ascii words about tokyo weather.", {"source": "ascii"}),
]


def test_unicode_ids_text_sources_and_metadata_round_trip(backend) -> None:
    manager = backend.open(max_chars=40)
    manager.add_documents("kb", UNICODE)
    store = manager.get("kb")
    assert store.get_document(UNICODE[0].doc_id) == UNICODE[0]
    docs, total = store.list_documents()
    assert docs == UNICODE and total == 2
    assert store.chunk_count == 3
    hits = store.search("東京の天気", 5, SearchFilter(sources=('src "quoted" \\ ü',)))
    assert hits and {h.chunk.doc_id for h in hits} == {UNICODE[0].doc_id}
    assert store.search("café", 5, SearchFilter(metadata={"tag": "東京"}))[0].chunk.doc_id == (
        UNICODE[0].doc_id
    )
    nested = SearchFilter(metadata={"nested": {"ö": ["ß", 1.5]}})
    assert {h.chunk.doc_id for h in store.search("text", 5, nested)} == {UNICODE[0].doc_id}
    first = store.get_chunk(f"{UNICODE[0].doc_id}#p0")
    assert first is not None and UNICODE[0].text.startswith(first.text)
    assert store.delete([UNICODE[0].doc_id]) == ([UNICODE[0].doc_id], [])


def test_chunks_are_slices_and_documents_come_back_whole(backend) -> None:
    text = "\n  Lead space.\n\n\nPara one is here. It has two sentences.\n\n  Para two.  \n\n"
    manager = backend.open(max_chars=20)
    manager.add_documents("kb", [Document("ws", text)])
    store = manager.get("kb")
    assert store.get_document("ws").text == text
    chunks = [store.get_chunk(f"ws#p{n}") for n in range(store.chunk_count)]
    assert all(c is not None and c.text in text and c.text == c.text.strip() for c in chunks)
    snapshot = store.snapshot()
    (stored,) = snapshot.documents
    assert [text[s:e] for s, e in stored.spans] == [c.text for c in chunks]
    assert snapshot.vectors.shape == (len(chunks), 384)


def results(manager: IndexManager) -> list[tuple[str, float, float]]:
    store = manager.get("kb")
    return [
        (h.chunk.chunk_id, round(h.score, 6), round(h.similarity, 4))
        for query in ("payment release 17", "notes for the service")
        for h in store.search(query, 5, SearchFilter(sources=("s7", "s2")))
    ]


def test_a_restart_serves_what_was_there(backend) -> None:
    first = backend.open()
    first.add_documents("kb", dated_corpus()[:60])
    first.add_documents("other", [Document("x", "Other index text.")])
    first.update_documents("kb", [Document("d7", "Changed text about refunds.", {"source": "s7"})])
    first.delete_documents("kb", ["d5", "d17"])
    before = results(first)
    listed = first.get("kb").list_documents(0, 100)

    restarted = backend.open()
    assert restarted.names() == ["kb", "other"]
    assert restarted.get("kb").list_documents(0, 100) == listed
    assert results(restarted) == before
    assert restarted.get("kb").get_chunk("d7#p0").text == "Changed text about refunds."


def test_persist_then_load_with_and_without_overwrite(backend) -> None:
    manager = backend.open()
    manager.add_documents("kb", DOCS)
    backup = manager.confine("backup")
    file = manager.persist("kb", backup)
    assert file == backup / "kb.sentinel-index" and file.is_file()
    manager.delete_documents("kb", ["refunds", "shipping"])
    assert manager.get("kb").document_count == 1

    with pytest.raises(IndexExistsError, match="overwrite"):
        manager.load("kb", backup)
    manager.load("kb", backup, overwrite=True)
    store = manager.get("kb")
    assert store.list_documents() == (DOCS, 3)
    assert store.search("thirty days refund", 1)[0].chunk.chunk_id == "refunds#p0"
    # What was loaded is what a restart serves.
    assert backend.open().get("kb").document_count == 3

    manager.delete("kb")
    manager.load("kb", backup)
    assert manager.names() == ["kb"]
    with pytest.raises(FileNotFoundError):
        manager.load("absent", backup)


def test_an_index_file_is_the_same_on_both_backends(backend, tmp_path: Path) -> None:
    # Written by the embedded store, loaded here (and the reverse): one file format.
    embedded = IndexManager(HashingEmbedder(), tmp_path / "embedded")
    embedded.add_documents("kb", DOCS)
    embedded.persist("kb")
    manager = backend.open()
    file = persistence.index_file(tmp_path / "embedded", "kb")
    manager.load("kb", file.parent)
    assert manager.get("kb").list_documents() == (DOCS, 3)
    exported = manager.persist("kb", manager.confine("out"))
    assert persistence.read(exported).documents == persistence.read(file).documents


def test_deleting_an_index_removes_it_for_good(kb: IndexManager, backend) -> None:
    kb.add_documents("other", [Document("o", "Other.")])
    kb.delete("kb")
    assert kb.names() == ["other"] and "kb" not in kb
    with pytest.raises(IndexNotFound):
        kb.get("kb")
    with pytest.raises(IndexNotFound):
        kb.delete("kb")
    assert backend.open().names() == ["other"]
    kb.add_documents("kb", [Document("fresh", "A new start.")])
    assert kb.get("kb").list_documents() == ([Document("fresh", "A new start.")], 1)


@pytest.mark.parametrize("name", ["", "-dash", "has space", "../x", "a/b", "x" * 64, "ünï"])
def test_invalid_names_are_refused_everywhere(backend, name: str) -> None:
    manager = backend.open()
    for call in (
        lambda: manager.add_documents(name, DOCS),
        lambda: manager.get(name),
        lambda: manager.delete(name),
        lambda: manager.load(name),
    ):
        with pytest.raises(ValueError, match="invalid index name"):
            call()
    assert name not in manager


def test_an_index_of_another_embedder_is_not_served(backend) -> None:
    """Embedded: the file is quarantined (moved aside) and the others serve; Milvus: the
    collection is shared with other runtimes, so it is never moved and the start stops."""
    backend.open().add_documents("kb", DOCS)
    if backend.kind == "milvus":
        with pytest.raises(persistence.IndexFileError, match="built with embedder"):
            backend.open(HashingEmbedder(dim=128))
        return
    manager = backend.open(HashingEmbedder(dim=128))
    assert manager.names() == []
    assert "built with embedder" in manager.quarantined()[0].reason


def test_threads_adding_deleting_and_searching_at_once(backend) -> None:
    manager = backend.open()
    manager.add_documents("kb", [Document("seed", "worker seed text")])
    store = manager.get("kb")
    errors: list[BaseException] = []

    def writer(worker: int) -> None:
        try:
            for i in range(15):
                store.add([Document(f"w{worker}-{i}", f"worker {worker} item {i} text")])
                if i % 3 == 0:
                    store.delete([f"w{worker}-{i}"])
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    def reader() -> None:
        try:
            for _ in range(30):
                for hit in store.search("worker item text", 5):
                    assert hit.chunk.chunk_id.startswith(("w", "seed"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.document_count == 1 + 3 * 10 == store.chunk_count

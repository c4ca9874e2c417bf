"""Moving tokenising, stopwords and topic words into one module changed no output.

Below is a frozen copy of the code as it stood before the move (commit 6e792c8):
``index/tokens.tokenize``, ``index/hashing.STOPWORDS``, ``pipeline/citations.keywords`` with
its ``_EXTRA_STOPWORDS``, and ``pipeline/conflicts`` ``STOPWORDS``, ``stem``, ``terms``,
``sentences``, ``coverage`` and ``normalise``. Each is compared with what the runtime
computes now, over the demo corpus, every string literal of the test suite, the
repository's documentation and random Unicode text. The three stopword lists stay three
sets: each caller keeps exactly the words it dropped before.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sentinel_runtime.index import analysis

ROOT = Path(__file__).resolve().parents[2]

# -- the frozen copy ----------------------------------------------------------------------

_OLD_WORD = re.compile(r"[^\W_]+")


def old_tokenize(text: str) -> list[str]:
    return _OLD_WORD.findall(text.lower())


OLD_INDEX_STOPWORDS = frozenset(
    old_tokenize(
        "a an and are as at be been but by can do does for from had has have he her his how i "
        "if in into is it its me my no not of on or our she so than that the their them then "
        "there these they this to was we were what when where which who why will with you your"
    )
)
OLD_EXTRA_STOPWORDS = frozenset(
    {"about", "also", "all", "any", "could", "did", "each", "may", "might", "more", "most"}
    | {"only", "other", "should", "some", "such", "would", "yes", "just", "very", "much"}
)


def old_keywords(text: str) -> set[str]:
    words = [
        w
        for w in _OLD_WORD.findall(text.lower())
        if w not in OLD_INDEX_STOPWORDS and w not in OLD_EXTRA_STOPWORDS
    ]
    return {w for w in old_tokenize(" ".join(words)) if len(w) > 2}


_OLD_TERM_STOPWORD_TEXT = """
    a about above across after again against all also am among an and any are around as at
    be because been before being below between both but by can could did do does doing
    done down during each either else ever every few for from further get gets got had has
    have having he her here hers him his how however i if in into is it its itself just
    let like made make many may me might more most much must my no nor not now of off on
    once one only or other our ours out over own per please rather same say says shall she
    should since so some still such than that the their theirs them then there these they
    this those through thus to too under until up upon us very via was we were what when
    where whether which while who whom whose why will with within without would yet you
    your yours
"""
OLD_TERM_STOPWORDS = frozenset(_OLD_TERM_STOPWORD_TEXT.split())
_OLD_TERM_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*")
OLD_NUMBER_WORDS = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "thirteen": "13",
    "fourteen": "14",
    "fifteen": "15",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "hundred": "100",
    "first": "1",
    "second": "2",
    "third": "3",
    "fourth": "4",
    "fifth": "5",
    "sixth": "6",
    "seventh": "7",
    "eighth": "8",
    "ninth": "9",
    "tenth": "10",
}
_OLD_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)\s+(?=[\"'(\[]?[A-Z0-9])|(?<=[.!?])(?=[A-Z][a-z])|\n+"
)


def old_stem(word: str) -> str:
    if word in OLD_NUMBER_WORDS:
        return OLD_NUMBER_WORDS[word]
    for suffix, keep in (
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + keep
    return word


def old_terms(text: str) -> frozenset[str]:
    out = set()
    for raw in _OLD_TERM_WORD.findall(text.lower()):
        word = raw.strip("'-")
        if (len(word) < 2 and not word.isdigit()) or word in OLD_TERM_STOPWORDS:
            continue
        out.add(old_stem(word))
    return frozenset(out)


def old_sentences(text: str) -> list[str]:
    return [s.strip() for s in _OLD_SENTENCE_END.split(text) if s and s.strip()]


def old_coverage(query_terms: frozenset[str], text_terms: frozenset[str]) -> float:
    return len(query_terms & text_terms) / len(query_terms) if query_terms else 0.0


def old_normalise(text: str) -> str:
    return _OLD_TERM_WORD.sub(lambda m: OLD_NUMBER_WORDS.get(m.group(0), m.group(0)), text.lower())


# -- the sample ---------------------------------------------------------------------------


def _demo_texts() -> Iterator[str]:
    corpus = ROOT / "runtime" / "sentinel_runtime" / "demo" / "corpus.jsonl"
    for line in corpus.read_text("utf-8").splitlines():
        if line.strip():
            text = json.loads(line)["text"]
            yield text
            yield from old_sentences(text)


def _test_literals() -> Iterator[str]:
    """Every string constant of the test suite: questions, chunks, attacks, other scripts."""
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
                yield node.value


def _doc_paragraphs() -> Iterator[str]:
    for path in sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]):
        yield from (p for p in path.read_text("utf-8").split("\n\n") if p.strip())


SAMPLE = sorted({*_demo_texts(), *_test_literals(), *_doc_paragraphs()})


def test_the_sample_is_varied() -> None:
    # A sample that could not catch a difference would make the comparisons below empty.
    assert len(SAMPLE) > 2000
    assert any(not t.isascii() for t in SAMPLE)
    assert sum(bool(old_keywords(t)) for t in SAMPLE) > 1000
    assert sum(len(old_sentences(t)) > 1 for t in SAMPLE) > 100
    assert any(old_normalise(t) != t.lower() for t in SAMPLE)


# -- the comparisons ----------------------------------------------------------------------

NOW: list[tuple[str, Callable[[str], object], Callable[[str], object]]] = [
    ("analysis.tokenize", old_tokenize, analysis.tokenize),
    ("analysis.keywords", old_keywords, analysis.keywords),
    ("analysis.terms", old_terms, analysis.terms),
    ("analysis.sentences", old_sentences, analysis.sentences),
    ("analysis.normalise", old_normalise, analysis.normalise),
]


@pytest.mark.parametrize(("old", "new"), [pytest.param(o, n, id=i) for i, o, n in NOW])
def test_same_output_over_the_sample(old: Callable[[str], object], new: Callable) -> None:
    differ = [t for t in SAMPLE if old(t) != new(t)]
    assert not differ, differ[:5]


@pytest.mark.parametrize(("old", "new"), [pytest.param(o, n, id=i) for i, o, n in NOW])
@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_same_output_on_random_text(old: Callable[[str], object], new: Callable, text: str) -> None:
    assert old(text) == new(text)


def test_same_stems_and_coverage() -> None:
    words = {w for t in SAMPLE for w in _OLD_TERM_WORD.findall(t.lower())}
    assert len(words) > 5000
    stems = {w: old_stem(w) for w in words}
    assert stems == {w: analysis.stem(w) for w in words}
    query = old_terms("How many episodes did the second season of the show have?")
    for text in SAMPLE:
        found = old_terms(text)
        expected = old_coverage(query, found)
        assert expected == analysis.coverage(query, found)


@pytest.mark.parametrize(
    ("now", "before"),
    [
        pytest.param(lambda: analysis.STOPWORDS, OLD_INDEX_STOPWORDS, id="analysis-common"),
        pytest.param(
            lambda: analysis.KEYWORD_STOPWORDS,
            OLD_INDEX_STOPWORDS | OLD_EXTRA_STOPWORDS,
            id="analysis-keywords",
        ),
        pytest.param(lambda: analysis.TERM_STOPWORDS, OLD_TERM_STOPWORDS, id="analysis-terms"),
    ],
)
def test_same_stopword_sets(now: Callable[[], frozenset[str]], before: frozenset[str]) -> None:
    assert now() == before

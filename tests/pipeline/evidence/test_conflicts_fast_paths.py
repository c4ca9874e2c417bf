"""The conflict finder's cache gives what the plain reading gives: ``_facts`` (a chunk's
sentences with a number or a name, cached per text) holds exactly the sentences ``_claims``
used to read one by one; ``numbers`` is the loop over every token and ``names`` the loop over
every capitalised run (both written out below, without the pre-checks that skip sentences
holding neither), on tricky tokens: number words inside words, case, hyphens, apostrophes,
other scripts' digits and capitals, capitals after dots and digits."""

from __future__ import annotations

import random
import re

import pytest

from sentinel_runtime.demo import corpus as demo_corpus
from sentinel_runtime.index import analysis
from sentinel_runtime.pipeline.evidence import conflicts

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*(?:st|nd|rd|th)?|[A-Za-z][A-Za-z'\-]*")
_ENTITY = re.compile(r"(?<![\w.])[A-Z][a-zA-Z\-]+(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][a-zA-Z\-]+)*")


def plain_numbers(sentence: str) -> dict[str, set[str]]:
    tokens = _TOKEN.findall(sentence)
    found: dict[str, set[str]] = {}
    for index, token in enumerate(tokens):
        value = conflicts._number(token)
        after = tokens[index + 1] if index + 1 < len(tokens) else ""
        if value is None or (token.lower() == "one" and after.lower() == "of"):
            continue
        slot = ""
        if (
            after
            and conflicts._number(after) is None
            and after.lower() not in analysis.TERM_STOPWORDS
        ):
            slot = after.lower()
        else:
            before = [t for t in tokens[:index] if t.lower() not in analysis.TERM_STOPWORDS]
            if before and conflicts._number(before[-1]) is None:
                slot = before[-1].lower()
        found.setdefault(slot, set()).add(value)
    return found


def plain_names(sentence: str) -> set[str]:
    found = set()
    for match in _ENTITY.finditer(sentence):
        words = match.group(0).split()
        if match.start() == 0 and len(words) == 1:
            continue
        while words and words[0].lower() in analysis.TERM_STOPWORDS:
            words.pop(0)
        name = " ".join(words).lower()
        if name and name not in conflicts._MONTHS and name not in analysis.TERM_STOPWORDS:
            found.add(name)
    return found


PIECES = [
    *analysis.NUMBER_WORDS,
    "ONE",
    "Two",
    "fours",
    "someone",
    "phone",
    "tone",
    "x-one",
    "one-",
    "'one",
    "one's",
    "\u017fix",
    "oneK",
    "one\u212a",
    "\u212aone",
    "twenty1",
    "3rd",
    "1,000",
    "2.5",
    "٣",
    "²",
    "episodes",
    "of",
    "the",
    "Apopka",
    "in",
    "season",
    "-",
    "'",
    ".",
    ",",
    "costs",
    "$",
    "10th",
    "tenth",
    "1stone",
    "New",
    "York",
    "of",
    "de",
    "The",
    "In",
    "May",
    "McDonald",
    "A.B",
    "x.Y",
    "\u00c9cole",
    "\u0130stanbul",
    "_Z",
    "\t",
    "\n",
    "(Paris)",
]


def sentences() -> list[str]:
    rng = random.Random(23)
    made = [" ".join(rng.choices(PIECES, k=rng.randint(1, 9))) for _ in range(4000)]
    glued = ["".join(rng.choices(PIECES, k=rng.randint(1, 4))) for _ in range(2000)]
    demo = [s for doc in demo_corpus.documents() for s in analysis.sentences(doc.text)]
    return made + glued + demo


def test_numbers_equals_the_plain_loop() -> None:
    for sentence in sentences():
        assert conflicts.numbers.__wrapped__(sentence) == plain_numbers(sentence), sentence


def test_names_equals_the_plain_loop() -> None:
    checked = sentences()
    assert sum(bool(plain_names(s)) for s in checked) > 500  # the names path is exercised
    for sentence in checked:
        assert conflicts.names.__wrapped__(sentence) == plain_names(sentence), sentence


@pytest.mark.parametrize("seed", [1, 2])
def test_facts_are_the_sentences_with_numbers_or_names(seed: int) -> None:
    rng = random.Random(seed)
    pool = sentences()
    for _ in range(300):
        text = " ".join(s.rstrip(".") + "." for s in rng.sample(pool, rng.randint(1, 6)))
        expected = [
            (s, conflicts.numbers(s), conflicts.names(s))
            for s in analysis.sentences(text)
            if conflicts.numbers(s) or conflicts.names(s)
        ]
        assert list(conflicts._facts(text)) == expected

"""Remove training rows that are, or nearly are, an evaluation prompt.

Near-duplicates count: an evaluation prompt inside a jailbreak wrapper, or with a word
changed, would let a model memorise the answer to its own test. Texts are compared as
sets of word 3-shingles after case and punctuation folding; a training row goes when
its shingles overlap an evaluation text's by ``JACCARD`` or more, or when it contains
``CONTAINMENT`` of an evaluation text's shingles (the text wrapped in something else).
Short texts (fewer than three words) are compared whole.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import regex

from sentinel_runtime.training.sources import TrainingRow

JACCARD = 0.5
CONTAINMENT = 0.8
_WORD = regex.compile(r"\w+")


def normalise(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.casefold()))


def shingles(text: str) -> frozenset[tuple[str, ...]]:
    words = normalise(text)
    if len(words) < 3:
        return frozenset({words}) if words else frozenset()
    return frozenset(zip(words, words[1:], words[2:], strict=False))


@dataclass
class Overlap:
    """How many training rows each evaluation set took away, per training source."""

    removed: Counter[tuple[str, str]] = field(default_factory=Counter)  # (source, eval set)
    repeats: Counter[str] = field(default_factory=Counter)  # exact repeats within training

    def total(self) -> int:
        return sum(self.removed.values())


class EvaluationIndex:
    def __init__(self, named_texts: Iterable[tuple[str, str]]) -> None:
        self._sets: list[tuple[str, frozenset[tuple[str, ...]]]] = []
        self._postings: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for name, text in named_texts:
            grams = shingles(text)
            if not grams:
                continue
            index = len(self._sets)
            self._sets.append((name, grams))
            for gram in grams:
                self._postings[gram].append(index)

    def __len__(self) -> int:
        return len(self._sets)

    def match(self, text: str) -> str | None:
        """The name of the evaluation set ``text`` nearly duplicates, if any."""
        grams = shingles(text)
        shared: Counter[int] = Counter()
        for gram in grams:
            for index in self._postings.get(gram, ()):
                shared[index] += 1
        for index, common in shared.items():
            name, other = self._sets[index]
            union = len(grams) + len(other) - common
            if common / union >= JACCARD or common / len(other) >= CONTAINMENT:
                return name
        return None


def deduplicate(
    rows: Sequence[TrainingRow], index: EvaluationIndex
) -> tuple[list[TrainingRow], Overlap]:
    """``rows`` without near-duplicates of an evaluation text, nor exact repeats of an
    earlier row (after folding), and what was removed."""
    kept, overlap, seen = [], Overlap(), set()
    for row in rows:
        key = normalise(row.text)
        if key in seen:
            overlap.repeats[row.source] += 1
            continue
        seen.add(key)
        hit = index.match(row.text)
        if hit is None:
            kept.append(row)
        else:
            overlap.removed[(row.source, hit)] += 1
    return kept, overlap

"""Disagreements between retrieved chunks, and coordinated clusters of look-alike passages.

Two read-only judgements over the hits of one query, used by the evidence filter
(``evidence``) and surfaced to the generator (``generation``) and the audit trail:

- :func:`find_conflicts`: chunks from different documents whose sentences answer the same
  question (they overlap strongly with each other and with the query) with different
  numbers, dates or named entities ("23 episodes" against "24 episodes"). A conflict is
  surfaced, never resolved: picking the majority is exactly what corpus poisoning exploits.
- :func:`find_clusters`: three or more passages from different documents that are
  near-paraphrases of each other, each echo the query and share a claim the query does not
  contain: the shape of a PoisonedRAG injection. Exact copies are not a cluster (mirrors
  and syndicated copies are ordinary redundancy); the evidence filter only penalises a
  cluster softly (see ``evidence``), and it conflicts with an independent source only
  through :func:`find_conflicts`, with kind ``"coordinated_cluster"``.

Both read sentences as content terms (``index.analysis``: tokenising, stopwords, stemming).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import combinations

from sentinel_runtime.index import analysis
from sentinel_runtime.index.types import Hit
from sentinel_runtime.pipeline.types import Conflict

_ENTITY = re.compile(r"(?<![\w.])[A-Z][a-zA-Z\-]+(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][a-zA-Z\-]+)*")
_MONTHS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)

# How alike two sentences must be to answer "the same question" (overlap coefficient of
# their content terms, values left out), and how much of the query each must cover.
# Chosen on hand-made pairs, not on any evaluation set.
SAME_QUESTION_OVERLAP = 0.5
QUERY_COVERAGE = 0.5
# Clusters: members are pairwise related (Jaccard of content terms at least
# PARAPHRASE_MIN) but not copies of each other (below COPY_MIN).
PARAPHRASE_MIN = 0.1
COPY_MIN = 0.85
MIN_CLUSTER = 3

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*(?:st|nd|rd|th)?|[A-Za-z][A-Za-z'\-]*")
_DIGIT = re.compile(r"\d")
# A sentence this finds nothing in has no name: every ``_ENTITY`` match would start at the
# sentence's first character and hold one word (a second word's capital follows a space).
_INNER_CAPITAL = re.compile(r"(?<=[^\w.])[A-Z]")


def _number(token: str) -> str | None:
    lowered = token.lower()
    if lowered[:1].isdigit():
        return re.sub(r"(?:st|nd|rd|th)$", "", lowered).replace(",", "")
    return analysis.NUMBER_WORDS.get(lowered)


def _may_count(text: str, tokens: list[str]) -> bool:
    """Whether ``text`` (whose ``_TOKEN``s are ``tokens``) can hold a number: only a token
    that opens with a digit or is a number word counts (``_number``). Sentence splitting
    never cuts a token, so a text without one has no sentence with one."""
    return bool(_DIGIT.search(text)) or not analysis.NUMBER_WORDS.keys().isdisjoint(
        map(str.lower, tokens)
    )


@functools.lru_cache(maxsize=32768)  # the result is shared: callers never mutate it
def numbers(sentence: str) -> dict[str, set[str]]:
    """Numbers (digits or number words) by slot: the content word they count or follow.

    "9 episodes" and "ten episodes" share the slot ``episodes`` (compared stemmed), so
    they can be compared; a number with no content word after it takes the one before it
    ("in 2022": none, the empty slot).
    """
    tokens = _TOKEN.findall(sentence)
    if not _may_count(sentence, tokens):
        return {}
    found: dict[str, set[str]] = {}
    for index, token in enumerate(tokens):
        value = _number(token)
        after = tokens[index + 1] if index + 1 < len(tokens) else ""
        if value is None or (token.lower() == "one" and after.lower() == "of"):
            continue  # "one of the oldest" counts nothing
        slot = ""
        if after and _number(after) is None and after.lower() not in analysis.TERM_STOPWORDS:
            slot = after.lower()
        else:
            before = [t for t in tokens[:index] if t.lower() not in analysis.TERM_STOPWORDS]
            if before and _number(before[-1]) is None:
                slot = before[-1].lower()
        found.setdefault(slot, set()).add(value)
    return found


def _by_stem(counted: dict[str, set[str]]) -> dict[str, tuple[str, set[str]]]:
    """Slots keyed by their stem, with one surface word kept for messages."""
    merged: dict[str, tuple[str, set[str]]] = {}
    for word, found in counted.items():
        key = analysis.stem(word) if word else ""
        surface, existing = merged.get(key, (word, set()))
        merged[key] = (surface, existing | found)
    return merged


@functools.lru_cache(maxsize=32768)  # the result is shared: callers never mutate it
def names(sentence: str) -> set[str]:
    """Capitalised names in a sentence, lower-cased (months left out)."""
    found: set[str] = set()
    if not _INNER_CAPITAL.search(sentence):
        return found
    for match in _ENTITY.finditer(sentence):
        words = match.group(0).split()
        if match.start() == 0 and len(words) == 1:
            continue  # the sentence's first word is capitalised by grammar
        # A capitalised function word opens a sentence ("In Benton County"), not a name.
        while words and words[0].lower() in analysis.TERM_STOPWORDS:
            words.pop(0)
        name = " ".join(words).lower()
        if name and name not in _MONTHS and name not in analysis.TERM_STOPWORDS:
            found.add(name)
    return found


def values(sentence: str) -> set[str]:
    """Every number and name in a sentence."""
    return {v for found in numbers(sentence).values() for v in found} | names(sentence)


def _overlap(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def _jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


@dataclass(frozen=True)
class _Claim:
    chunk_id: str
    doc_id: str
    topic: AbstractSet[str]  # content terms without the values
    numbers: dict[str, tuple[str, set[str]]]  # stemmed slot -> (a surface word, values)
    names: set[str]


@functools.lru_cache(maxsize=8192)  # the result is shared: callers never mutate it
def _facts(text: str) -> tuple[tuple[str, dict[str, set[str]], set[str]], ...]:
    """The sentences of a chunk that hold a number or a name, with them: what claims are
    made of, whatever the question (popular chunks come back request after request)."""
    found = []
    may_count = _may_count(text, _TOKEN.findall(text))
    for sentence in analysis.sentences(text):
        counted, named = numbers(sentence) if may_count else {}, names(sentence)
        if counted or named:
            found.append((sentence, counted, named))
    return tuple(found)


def _claims(hits: Sequence[Hit], query_terms: set[str]) -> list[_Claim]:
    claims = []
    for hit in hits:
        # A claim's coverage counts the query's terms in its sentence, and a sentence's
        # terms are some of its chunk's: a chunk covering too little of the query has no
        # claim, and its sentences need not be read (a new chunk's costliest part here).
        if analysis.coverage(query_terms, analysis.terms(hit.chunk.text)) < QUERY_COVERAGE:
            continue
        for sentence, counted, named in _facts(hit.chunk.text):
            found = {v for vs in counted.values() for v in vs} | named
            # A name the query contains ("Apopka") is the topic, not an answer.
            value_terms = analysis.terms(" ".join(found)) - query_terms
            topic = analysis.terms(sentence) - value_terms
            if analysis.coverage(query_terms, topic | value_terms) >= QUERY_COVERAGE:
                claims.append(
                    _Claim(hit.chunk.chunk_id, hit.chunk.doc_id, topic, _by_stem(counted), named)
                )
    return claims


def _slot_disagreement(
    a: dict[str, tuple[str, set[str]]], b: dict[str, tuple[str, set[str]]], query_values: set[str]
) -> tuple[str, str] | None:
    """The first slot both count with nothing in common ("9 episodes" / "10 episodes")."""
    for slot in sorted(set(a) & set(b) - {""}):
        (word_a, found_a), (word_b, found_b) = a[slot], b[slot]
        left, right = found_a - query_values, found_b - query_values
        if left and right and not left & right:
            return f"{min(left)} {word_a}", f"{min(right)} {word_b}"
    return None


def _disagree(a: _Claim, b: _Claim, query_values: set[str]) -> tuple[str, str] | None:
    """The values on which two claims about the same question differ, if any.

    First the same slot counted differently ("9 episodes" / "10 episodes"); then numbers
    with nothing in common; then names with nothing in common. Values the query itself
    contains ("season 2") never count.
    """
    slot = _slot_disagreement(a.numbers, b.numbers, query_values)
    if slot is not None:
        return slot
    left = {v for _, vs in a.numbers.values() for v in vs} - query_values
    right = {v for _, vs in b.numbers.values() for v in vs} - query_values
    if left and right and not left & right:
        return min(left), min(right)
    left, right = a.names - query_values, b.names - query_values
    if left and right and not left & right:
        return min(left), min(right)
    return None


@dataclass(frozen=True)
class Cluster:
    """Passages that look coordinated: related passages of distinct documents, each echoing
    the query, all carrying the same claim."""

    chunk_ids: tuple[str, ...]
    claim: tuple[str, ...]  # terms the query lacks, carried by >= MIN_CLUSTER members


class _Relatedness:
    """Whether two echoing passages are related (see :func:`find_clusters`), each pair
    judged once, and a passage's numbers read only when a pair of it is judged."""

    def __init__(
        self, echo: Sequence[tuple[str, set[str]]], texts: Sequence[str], query_values: set[str]
    ) -> None:
        self.echo, self.texts, self.query_values = echo, texts, query_values
        self._counts: dict[int, dict[str, tuple[str, set[str]]]] = {}
        self._pairs: dict[tuple[int, int], bool] = {}

    def __call__(self, a: int, b: int) -> bool:
        pair = (a, b)
        if pair not in self._pairs:
            self._pairs[pair] = self._judge(a, b)
        return self._pairs[pair]

    def _judge(self, a: int, b: int) -> bool:
        # One campaign pushes one claim: passages counting the same thing differently
        # ("4 seasons" / "5 seasons") are on opposite sides, not in one cluster.
        return PARAPHRASE_MIN <= _jaccard(self.echo[a][1], self.echo[b][1]) < COPY_MIN and not (
            _slot_disagreement(self._counted(a), self._counted(b), self.query_values)
        )

    def _counted(self, index: int) -> dict[str, tuple[str, set[str]]]:
        if index not in self._counts:
            self._counts[index] = _by_stem(numbers(self.texts[index]))
        return self._counts[index]


def _carriers(echo: Sequence[tuple[str, set[str]]], query_terms: set[str]) -> list[list[int]]:
    """For each term the query lacks and at least MIN_CLUSTER passages carry, those
    passages (in order): a term fewer carry cannot found a group."""
    carried = Counter(term for _, found in echo for term in found - query_terms)
    return [
        [index for index, (_, found) in enumerate(echo) if term in found]
        for term, count in carried.items()
        if count >= MIN_CLUSTER
    ]


def find_clusters(hits: Sequence[Hit], query: str) -> tuple[Cluster, ...]:
    """Groups of >= MIN_CLUSTER passages from distinct documents pushing one claim.

    A member covers at least half of the query's terms (it echoes the question). Passages
    carrying a term the query lacks form a group when they are pairwise related: Jaccard
    >= PARAPHRASE_MIN, no two are copies (< COPY_MIN: a mirrored page is redundancy, not
    coordination) and no two count the same thing differently (they would be opposite
    sides). Overlapping groups merge while every pair stays related and all members share
    a term. Largest first, disjoint, members in retrieval order.
    """
    query_terms = analysis.terms(query)
    if not query_terms:
        return ()
    query_values = values(query) | query_terms
    echo: list[tuple[str, set[str]]] = []
    texts: list[str] = []
    seen_docs: set[str] = set()
    for hit in hits:
        found = analysis.terms(hit.chunk.text)
        if hit.chunk.doc_id in seen_docs or analysis.coverage(query_terms, found) < QUERY_COVERAGE:
            continue
        seen_docs.add(hit.chunk.doc_id)
        echo.append((hit.chunk.chunk_id, found))
        texts.append(hit.chunk.text)
    if len(echo) < MIN_CLUSTER:
        return ()
    related = _Relatedness(echo, texts, query_values)
    groups: set[tuple[int, ...]] = set()
    for members in _carriers(echo, query_terms):
        chosen: list[int] = []
        for index in members:
            if all(related(index, m) for m in chosen):
                chosen.append(index)
        if len(chosen) >= MIN_CLUSTER:
            groups.add(tuple(chosen))
    # Groups around different terms of one campaign overlap: a passage joins a larger group
    # when it is related to every member and shares a term with all of them, so a source
    # that merely mentions the same topic (or refutes the claim) stays outside.
    merged: list[set[int]] = []
    for group in sorted(groups, key=lambda g: (-len(g), g)):
        members = set(group)
        for cluster in merged:
            union = cluster | members
            common = frozenset.intersection(*(echo[i][1] for i in union)) - query_terms
            if (
                cluster & members
                and common
                and all(related(a, b) for a, b in combinations(union, 2))
            ):
                cluster.update(members)
                break
        else:
            if not any(cluster & members for cluster in merged):
                merged.append(members)
    clusters = []
    for members in merged:
        counts: dict[str, int] = {}
        for index in members:
            for term in echo[index][1] - query_terms:
                counts[term] = counts.get(term, 0) + 1
        claim = sorted((t for t, n in counts.items() if n >= MIN_CLUSTER), key=lambda t: -counts[t])
        ids = tuple(echo[i][0] for i in sorted(members))
        clusters.append(Cluster(ids, tuple(claim)))
    return tuple(clusters)


def clustered_ids(clusters: Iterable[Cluster]) -> set[str]:
    return {chunk_id for cluster in clusters for chunk_id in cluster.chunk_ids}


def find_conflicts(hits: Sequence[Hit], query: str) -> tuple[Conflict, ...]:
    """Chunks of different documents answering the query's question with different values.

    Two sentences "answer the same question" when each covers at least half of the query's
    terms and their content terms (values aside) overlap by at least SAME_QUESTION_OVERLAP;
    they conflict when :func:`_disagree` finds differing values. When exactly one side
    belongs to a coordinated cluster the kind is ``"coordinated_cluster"``: the
    independent source is the one a majority vote would silence. One conflict per pair.
    """
    query_terms = analysis.terms(query)
    if not query_terms or len(hits) < 2:
        return ()
    query_values = values(query) | query_terms
    clustered = clustered_ids(find_clusters(hits, query))
    claims = _claims(hits, query_terms)
    found: dict[tuple[str, ...], Conflict] = {}
    for a, b in combinations(claims, 2):
        if a.doc_id == b.doc_id:
            continue
        first, second = sorted((a, b), key=lambda c: c.chunk_id)
        pair = (first.chunk_id, second.chunk_id)
        if pair in found or _overlap(a.topic, b.topic) < SAME_QUESTION_OVERLAP:
            continue
        disagreement = _disagree(first, second, query_values)
        if disagreement is None:
            continue
        numeric = all(v[:1].isdigit() for v in disagreement)
        kind = "numeric_mismatch" if numeric else "different_answers"
        if (a.chunk_id in clustered) != (b.chunk_id in clustered):
            kind = "coordinated_cluster"
        found[pair] = Conflict(
            chunk_ids=pair,
            kind=kind,
            detail=f"{pair[0]} says {disagreement[0]!r}, {pair[1]} says {disagreement[1]!r}",
        )
    return tuple(found.values())

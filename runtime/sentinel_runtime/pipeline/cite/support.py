"""Are an answer's claims in the chunks they cite? A lexical check, cheap enough for every answer.

A valid citation only proves the chunk exists; a small model cites a real chunk and still
writes "20 days" where it says 30, or "cannot be refunded" where it says "can" (issue 15
measured 3 of 5 such answers). So each sentence's checkable facts must be found in what it
cites (a sentence without its own marker is checked against everything the answer cites):

- numbers, amounts and percentages (``30``, ``$1,200``, ``2.5%``; small number words count
  as digits, so "thirty days" matches "30 days");
- years and month names of dates;
- names: capitalised words that are not a sentence's first word;
- its words: at least half of its topic words (crudely stemmed) must be in what it cites,
  so a fluent sentence about something else ("a cloud-based development kit" for an
  internal deployment tool) does not pass for want of a number;
- negation: a sentence that negates ("not", "no", "never", "cannot", German "nicht", "kein")
  while the chunk sentence it restates does not, or the other way round.

What it cannot see (a paraphrase that reverses meaning without a negation word, a wrong
relation between right facts) needs an entailment model; the check is a floor, not a proof.
``citations.support: llm`` adds one: the upstream model is asked, claim by claim, whether
what the claim cites supports it (:func:`judged_by_model`); a "no" is unsupported, an answer
that is neither yes nor no leaves the lexical verdict alone.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from sentinel_runtime.index import analysis
from sentinel_runtime.index.analysis import keywords
from sentinel_runtime.pipeline.types import Claim

# Cardinals only, unlike ``index.analysis.NUMBER_WORDS``: an ordinal ("a second reason", "the
# first step") names no amount a chunk must hold.
_NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "fifteen": "15", "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50",
    "sixty": "60", "ninety": "90", "hundred": "100",
}  # fmt: skip
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
_WORD = re.compile(r"[^\W\d_][\w'-]*")
_MONTHS = frozenset(
    {"january", "february", "march", "april", "may", "june", "july", "august", "september"}
    | {"october", "november", "december", "januar", "februar", "märz", "juni", "juli"}
    | {"oktober", "dezember"}
)
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|neither|nor|cannot|without|"
    r"\w+n't|nicht|kein\w*|nie|niemals|ohne)\b",
    re.IGNORECASE,
)
# Capitalised for reasons other than being a name.
_NOT_NAMES = frozenset(
    {"i", "i'm", "i've", "i'll", "you", "we", "they", "he", "she", "it", "the", "a", "an"}
    | {"this", "that", "these", "those", "yes", "no", "however", "according", "based", "note"}
    | {"also", "for", "in", "on", "at", "by", "to", "of", "and", "or", "but", "if", "when"}
    | {"while", "because"}
)
# A chunk sentence restates a claim when it shares this share of the claim's topic words.
RESTATES = 0.5
# A claim must share this much of its topic words (crudely stemmed) with what it cites: a
# sentence made of other words says something else, even without a number or a name.
MIN_COVERAGE = 0.5
_SUFFIXES = ("ments", "ment", "ings", "ing", "ions", "ion", "ers", "er", "ed", "es", "ly", "s")
STEM_MIN = 4


@dataclass(frozen=True)
class Unsupported:
    """A claim whose facts the cited chunks do not hold, and which facts are missing."""

    sentence: str
    missing: tuple[str, ...]

    def describe(self) -> dict[str, object]:
        return {"sentence": self.sentence[:200], "missing": list(self.missing)}


def _numbers(text: str) -> set[str]:
    found = {n.replace(",", "") for n in _NUMBER.findall(text)}
    found |= {_NUMBER_WORDS[w] for w in _WORD.findall(text.lower()) if w in _NUMBER_WORDS}
    return {n.removesuffix(".0") for n in found}


def _names(sentence: str) -> set[str]:
    words = _WORD.findall(sentence)
    return {
        w.lower()
        for w in words[1:]
        if w[0].isupper() and w.lower() not in _NOT_NAMES and w.lower() not in _MONTHS
    }


def _months(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w in _MONTHS}


def _negated(text: str) -> bool:
    return _NEGATION.search(text) is not None


def _stem(word: str) -> str:
    """A crude stem, enough to match "deploying" with "deploys" and "deployment"."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= STEM_MIN:
            return word[: -len(suffix)]
    return word


def check_claim(
    claim: str, evidence: Sequence[str], *, min_coverage: float = MIN_COVERAGE
) -> tuple[str, ...]:
    """The facts of ``claim`` that ``evidence`` (the cited chunks' texts) does not hold, and
    ``words:...`` when fewer than ``min_coverage`` of its topic words are there."""
    joined = "\n".join(evidence)
    lowered = joined.lower()
    missing = sorted(_numbers(claim) - _numbers(joined))
    words = {w.lower() for w in _WORD.findall(joined)}
    missing += sorted(m for m in _months(claim) if m not in words)
    missing += sorted(n for n in _names(claim) if n not in words and n not in lowered)
    wanted = keywords(claim)
    found = {_stem(w) for w in keywords(joined)}
    absent = sorted(w for w in wanted if _stem(w) not in found)
    if wanted and len(absent) > (1 - min_coverage) * len(wanted):
        missing.append("words:" + ",".join(absent[:8]))
    if wanted:
        restating = [
            s
            for s in (s for chunk in evidence for s in analysis.sentences(chunk))
            if len(wanted & keywords(s)) >= RESTATES * len(wanted)
        ]
        if restating and all(_negated(s) != _negated(claim) for s in restating):
            missing.append("negation" if _negated(claim) else "affirmation")
    return tuple(missing)


def check(
    claims: Sequence[Claim],
    chunks: Mapping[str, str],
    cited: Sequence[str],
    *,
    min_coverage: float = MIN_COVERAGE,
) -> list[Unsupported]:
    """Every claim whose facts are not in what it cites (its own markers, else everything
    the answer cites); claims citing unknown chunks are the citation rules' business."""
    everything = [chunks[c] for c in cited if c in chunks]
    found: list[Unsupported] = []
    for claim in claims:
        own = [chunks[c] for c in claim.cited if c in chunks]
        evidence = own or everything
        if not evidence:
            continue
        missing = check_claim(claim.text, evidence, min_coverage=min_coverage)
        if missing:
            found.append(Unsupported(claim.text, missing))
    return found


ENTAILMENT_PROMPT = (
    "Passage:\n{evidence}\n\nClaim: {claim}\n\n"
    "Does the passage state everything the claim says? Answer with one word: yes or no."
)
_VERDICT = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)

AskFn = Callable[[list[dict[str, str]]], Awaitable[str]]


async def judged_by_model(
    claims: Sequence[Claim], chunks: Mapping[str, str], cited: Sequence[str], ask: AskFn
) -> list[Unsupported]:
    """The claims a model says their evidence does not support (one short call per claim)."""
    everything = [chunks[c] for c in cited if c in chunks]
    found: list[Unsupported] = []
    for claim in claims:
        evidence = [chunks[c] for c in claim.cited if c in chunks] or everything
        if not evidence or not keywords(claim.text):
            continue
        prompt = ENTAILMENT_PROMPT.format(evidence="\n\n".join(evidence), claim=claim.text)
        verdict = _VERDICT.match(await ask([{"role": "user", "content": prompt}]))
        if verdict is not None and verdict.group(1).lower() == "no":
            found.append(Unsupported(claim.text, ("entailment",)))
    return found

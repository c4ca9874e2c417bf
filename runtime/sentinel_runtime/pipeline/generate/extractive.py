"""Stage 4: grounded answers and high-level summaries from kept evidence.

The built-in extractive generator: it answers only with sentences copied from the kept
chunks and cites each. The upstream model's answer is asked for and read in
``model_answer.py`` and ``grounded.py``; citation validation happens after either
(``citations.py``, ``support.py``); refusals are in ``refusal.py``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from sentinel_runtime.index.analysis import keywords
from sentinel_runtime.index.types import Hit
from sentinel_runtime.pipeline.cite.citations import INSUFFICIENT_ANSWER
from sentinel_runtime.pipeline.signals import harm
from sentinel_runtime.pipeline.types import Answer, Conflict, Decision

MAX_SENTENCES = 3
# A sentence must cover this share of the query's keywords, and score this share of the best
# sentence: one shared common word ("request") is not an answer.
MIN_OVERLAP = 0.3
RELATIVE_OVERLAP = 0.6
MIN_WORDS = 4  # titles and fragments ("Refund policy.") say nothing on their own
# A sentence that answers and refers back ("It is led by ...") is about its chunk's subject:
# it counts as covering this share of what its chunk covers, though it names none of the
# query's words.
CHUNK_CARRY = 0.8
# Added to a sentence holding what the question asks for (a team for "who", a date for
# "when"): enough to put "It is led by the payments team." above "Project Halcyon is ...".
ANSWER_TYPE_BONUS = 0.5
SUMMARY_PREFIX = "At a high level, without operational detail: "
# A German date's ordinal ("den 14. März 2027") ends no sentence.
_GERMAN_MONTH = (
    r"(?:Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember)"
)
_SENTENCE_END = re.compile(
    rf"(?<=[.!?])(?!(?<=\b\d\.)\s+{_GERMAN_MONTH})(?!(?<=\b\d\d\.)\s+{_GERMAN_MONTH})"
    r"\s+(?=[\"'(\[]?[A-Z0-9])"
)
_STEP_LIKE = re.compile(r"^\s*(?:\d+[.)]|step\s+\d+|[-*\u2022])\s", re.IGNORECASE)

AnswerType = Literal["person", "time", "number", "place", "reason", "definition", "any"]


def _rx(*parts: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in parts), flags)


# Words that shape a question rather than name its topic (the index's stopwords already go).
_FORM_WORDS = frozenset(
    {"many", "long", "often", "define", "definition", "explain", "describe", "tell", "mean"}
    | {"meaning", "compare"}
)
# German function words, dropped only from a German question: English "war" or "die" name
# a topic.
_GERMAN_FORM_WORDS = frozenset(
    {"wer", "wen", "wem", "wessen", "was", "wann", "woher", "wohin", "warum", "weshalb"}
    | {"wieso", "wozu", "wie", "welche", "welcher", "welches", "welchen", "welchem", "viele"}
    | {"viel", "lange", "oft", "ist", "sind", "war", "waren", "der", "die", "das", "den", "dem"}
    | {"des", "ein", "eine", "einen", "einem", "einer", "und", "oder", "für", "von", "vom"}
    | {"mit", "bei", "zum", "zur", "auf", "aus", "nach", "über", "wird", "werden", "wurde"}
    | {"hat", "haben", "gibt", "kann", "können", "erkläre", "erklär", "definiere", "beschreibe"}
    | {"nenne", "vergleiche", "bedeutet", "seit", "bis", "sich", "nicht", "auch", "noch", "uns"}
    | {"mir", "dir", "bitte"}
)
_GERMAN_QUESTION = re.compile(
    r"^(?:wer|wen|wem|wessen|was|wann|wo|woher|wohin|warum|weshalb|wieso|wozu|wie|welche\w*|"
    r"erkläre|erklär|definiere|beschreibe|nenne|vergleiche|gibt|ist|sind|kann|können)\b",
    re.IGNORECASE,
)
# Politeness before the question proper: "Can you tell me who ...", "Weißt du, wann ...".
_LEAD_IN = _rx(
    r"^(?:(?:please|bitte)\s+)?(?:(?:can|could|would)\s+you\s+(?:please\s+)?tell\s+me|"
    r"tell\s+me(?!\s+about)|do\s+you\s+know|i\s+(?:want|need|would\s+like)\s+to\s+know|"
    r"(?:kannst|könntest)\s+du\s+(?:mir\s+)?(?:bitte\s+)?sagen|sag\s+mir|weißt\s+du)\W*\s*"
)
_TIME_NOUN = r"(?:deadline|date|day|year|month|time|frist|datum|termin|stichtag|zeitpunkt)"
_NUMBER_NOUN = (
    r"(?:cost|price|fee|limit|amount|budget|number|count|rate|percentage|size|total|maximum|"
    r"minimum|preis|kosten|gebühr|betrag|anzahl|zahl|grenze|höhe|summe)"
)
_PERSON_NOUN = (
    r"(?:owner|lead|leader|manager|contact|head|sponsor|author|team|department|"
    r"verantwortliche\w*|leiter\w*|ansprechpartner\w*|abteilung)"
)
_PLACE_NOUN = r"(?:location|address|office|site|region|venue|standort|adresse|ort|sitz)"
# "what is the deadline ..." asks for a date, not a definition.
_WHAT_NOUN = (
    r"^(?:what|which|was|welche[rsmn]?)(?:'s|\s+(?:is|are|was|were|ist|sind|war))?\s+"
    r"(?:the\s+|der\s+|die\s+|das\s+)?(?:\w+\s+)?"
)
# Most specific first: "how long" before "how", "what is the deadline" before "what is".
_QUESTION_TYPES: tuple[tuple[AnswerType, re.Pattern[str]], ...] = (
    (
        "time",
        _rx(
            r"^(?:when|what\s+time|since\s+when|until\s+when|by\s+when|how\s+(?:long|often|soon)|"
            r"wann|seit\s+wann|bis\s+wann|wie\s+(?:lange|oft|bald)|um\s+wie\s*viel\s+uhr)\b",
            rf"^(?:in\s+|on\s+|an\s+)?(?:what|which|welche[rsmn]?)\s+{_TIME_NOUN}\b",
            rf"{_WHAT_NOUN}{_TIME_NOUN}\b",
        ),
    ),
    (
        "number",
        _rx(
            r"^(?:how\s+(?:many|much|old|far|big|large|high|fast)|what\s+(?:percentage|"
            r"percent|share|number|amount)|wie\s*viele?|wieviele?|wie\s+(?:alt|weit|groß|hoch|"
            r"schnell))\b",
            rf"{_WHAT_NOUN}{_NUMBER_NOUN}\b",
        ),
    ),
    (
        "person",
        _rx(
            r"^(?:who|whom|whose|who's|wer|wen|wem|wessen)\b",
            rf"^(?:which|welche[rsmn]?)\s+{_PERSON_NOUN}\b",
            rf"{_WHAT_NOUN}{_PERSON_NOUN}\b",
        ),
    ),
    (
        "place",
        _rx(
            r"^(?:where|where's|wo|woher|wohin)\b",
            r"^(?:in|at|from|aus)\s+(?:which|what|welche[rsmn]?)\s+(?:\w+\s+)?(?:country|city|"
            r"office|region|building|site|data\s*cent(?:er|re)|land|stadt|büro|region|gebäude|"
            r"rechenzentrum)\b",
            rf"{_WHAT_NOUN}{_PLACE_NOUN}\b",
        ),
    ),
    ("reason", _rx(r"^(?:why|how\s+come|for\s+what\s+reason|warum|weshalb|wieso|wozu)\b")),
    (
        "definition",
        _rx(
            r"^(?:what(?:'s|\s+(?:is|are|was|were)|\s+does\s+.+\s+mean)|define|definition\s+of|"
            r"meaning\s+of|explain|tell\s+me\s+about|"
            r"was\s+(?:ist|sind|war|waren|bedeutet|versteht\s+man)|definiere|erkläre|erklär)\b"
        ),
    ),
)

_MONTHS = (
    r"(?:january|february|march|april|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec|januar|februar|märz|mai|juni|"
    r"juli|oktober|dezember)"
)
_WEEKDAYS = (
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|montag|dienstag|mittwoch|"
    r"donnerstag|freitag|samstag|sonnabend|sonntag)"
)
_COUNT = (
    r"(?:\d+(?:[.,]\d+)?|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fifteen|twenty|thirty|forty|fifty|sixty|ninety|hundred|ein|eine|einen|einem|zwei|drei|"
    r"vier|fünf|sechs|sieben|acht|neun|zehn|elf|zwölf|fünfzehn|zwanzig|dreißig|neunzig)"
)
_UNIT = (
    r"(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|quarters?|decades?|"
    r"sekunden?|minuten?|stunden?|tag(?:e|en|es)?|woche(?:n)?|monat(?:e|en|s)?|jahr(?:e|en|es)?|"
    r"quartal(?:e|en|s)?|werktag(?:e|en)?|jahrzehnt(?:e|en)?)"
)
# What an answer of each type looks like. Deliberately shallow: cues, not a parser.
_ANSWER_CUES: dict[AnswerType, tuple[re.Pattern[str], ...]] = {
    "person": (
        _rx(
            r"\b(?:led|owned|run|managed|maintained|headed|approved|signed|written|created|"
            r"founded|sponsored|chaired|coordinated)\s+by\b",
            r"\b(?:team|department|group|committee|office|board|division|unit|council|"
            r"responsible|owner|owns|heads|manager|director|chair|officer|"
            r"geleitet|verantwortet|verantwortlich|betreut|verwaltet|zuständig|leitung|"
            r"leiter(?:in)?|abteilung|gruppe|ausschuss|vorstand)\b",
            r"\b\w+(?:team|abteilung)\b",
        ),
        # A name: two capitalised words, the first not a capitalised article or pronoun
        # ("The Frankfurt office"); case matters here.
        _rx(
            r"\b(?!(?:The|A|An|This|That|These|Those|Our|Its|Their|Der|Die|Das|Den|Dem|Ein|"
            r"Eine|Es|Sie|Er|Unser|Unsere|In|On|At|For|From|By|With|Im|Am)\b)"
            r"[A-ZÄÖÜ][a-zäöüß]+(?:\s+[A-ZÄÖÜ][a-zäöüß]+)+",
            flags=0,
        ),
    ),
    "time": (
        _rx(
            rf"\b{_MONTHS}\b\.?",
            rf"\b{_WEEKDAYS}s?\b",
            r"\b(?:19|20)\d{2}\b",
            r"\b\d{1,4}[./-]\d{1,2}[./-]\d{1,4}\b",
            r"\b\d{1,2}(?::\d{2})?\s*(?:a\.?m\.?|p\.?m\.?|uhr)(?!\w)|\b\d{1,2}:\d{2}\b",
            rf"\b{_COUNT}\s+(?:(?:business|working|calendar|full)\s+)?{_UNIT}\b",
            r"\b(?:daily|weekly|monthly|yearly|annually|quarterly|hourly|nightly|until|till|"
            r"since|within|deadline|end\s+of|start\s+of|beginning\s+of|today|tomorrow|"
            r"yesterday|midnight|noon|q[1-4]|täglich|wöchentlich|monatlich|jährlich|stündlich|"
            r"bis|seit|innerhalb|frist|ende|anfang|beginn|heute|morgen|gestern|mitternacht|"
            r"mittag)\b",
        ),
        # "May" the month, not the modal verb ("Customers may request ...").
        _rx(r"\bMay\s+\d|\b\d{1,2}\s+May\b|\bin\s+May\b", flags=0),
    ),
    "number": (
        _rx(
            r"\b\d+(?:[.,]\d+)*\b|[%$€£]",
            r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:thir|four|fif|"
            r"six|seven|eigh|nine)teen|(?:twen|thir|for|fif|six|seven|eigh|nine)ty|hundred|"
            r"thousand|million|billion|dozen|percent|half|zwei|drei|vier|fünf|sechs|sieben|acht|"
            r"neun|zehn|elf|zwölf|(?:drei|vier|fünf|sech|sieb|acht|neun)zehn|zwanzig|dreißig|"
            r"(?:vier|fünf|sech|sieb|acht|neun)zig|hundert|tausend|million(?:en)?|milliarden?|"
            r"dutzend|prozent|hälfte)\b",
        ),
    ),
    "place": (
        _rx(
            r"\b(?:located|based|headquartered|hosted|stored|kept|housed|building|floor|room|"
            r"city|country|region|site|campus|data\s*cent(?:er|re)|warehouse|rack|folder|drive|"
            r"repository|bucket|address|street|befindet|liegt|liegen|gespeichert|abgelegt|"
            r"gehostet|standort|sitz|büro|gebäude|stockwerk|etage|raum|stadt|rechenzentrum|"
            r"ordner|laufwerk|adresse|straße)\b",
        ),
        # A proper noun after a preposition: "in Frankfurt", "at Dock 4" (case matters here).
        _rx(
            r"\b(?:in|at|from|near|inside|im|am|aus|bei|nach)\s+(?:the\s+)?[A-ZÄÖÜ][\w-]+",
            flags=0,
        ),
    ),
    "reason": (
        _rx(
            r"\b(?:because|since|due\s+to|so\s+that|in\s+order\s+to|as\s+a\s+result|"
            r"to\s+(?:avoid|prevent|ensure|reduce|comply|protect|keep|meet)|reason|"
            r"weil|wegen|aufgrund|damit|deshalb|daher|grund|um\s+(?:\w+\s+){1,5}zu)\b",
        ),
    ),
}
# "Kestrel is a ...", "A legal hold is the ...", "It refers to ...": a short subject, then
# a copula and an article (or a defining verb).
_DEFINES = _rx(
    r"^(?:[\w'-]+\s+){1,5}?(?:is|are|was|were)\s+(?:a|an|the|one|our|any)\b",
    r"^(?:[\w'-]+\s+){1,6}?(?:refers?\s+to|means|stands\s+for|is\s+defined\s+as|denotes)\b",
    r"^(?:[\w'-]+\s+){1,5}?(?:ist|sind|war|bezeichnet|bedeutet|beschreibt)\s+"
    r"(?:ein|eine|einen|der|die|das|den|unser|unsere)\b",
    r"\bversteht\s+man\b|\bsteht\s+für\b|\bhandelt\s+es\s+sich\s+um\b",
)
# A question is no answer, even when it holds a date or a name ("Who painted it in 1503?"),
# nor is a copied question glued to the text after it ("where did he go.In the ...").
_INTERROGATIVE = _rx(
    r"\?\s*$",
    # "Who"/"why" rarely open a statement; "when"/"where" do ("When a hold ends, ...").
    r"^(?:who|whom|whose|why)\s+\w",
    r"^(?:what|which|when|where|how)\s+(?:is|are|was|were|do|does|did|can|"
    r"could|should|would|will|has|have|had|many|much|long|often|far|old)\b",
    r"^(?:was|wer|wen|wem|wann|wo|warum|wieso|weshalb|wie|welche[rsmn]?)\s+(?:ist|sind|war|"
    r"waren|hat|haben|wird|werden|kann|können|muss|viele?|lange|oft)\b",
)
# A sentence that refers back to its chunk's subject ("It is led by ...", "Sie gilt bis ...").
_REFERS_BACK = _rx(
    r"\b(?:it|its|they|their|them|he|she|his|him|her|es|er|ihm|ihn|ihr|ihre|dessen|deren)\b",
    # A demonstrative opening ("Such trips ...", "Diese Regel ...") points back whatever its noun.
    r"^(?:this|that|these|those|such|diese[rsmn]?|solche[rsmn]?)\s+\w+",
    # "The" points back only before the generic nouns a chunk uses for its own subject.
    r"^(?:the|das|der|die)\s+(?:project|tool|team|policy|program|programme|initiative|system|"
    r"service|product|process|hold|platform|migration|rule|document|projekt|werkzeug|"
    r"richtlinie|programm|dienst|verfahren|prozess|vorhaben|regel)\b",
)


@dataclass(frozen=True)
class _Sentence:
    text: str
    chunk_id: str
    rank: int
    score: float  # relevance to the question's terms, plus the answer-type bonus


def sentences(text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return [s.strip() for line in lines for s in _SENTENCE_END.split(line) if s.strip()]


@functools.lru_cache(maxsize=8192)  # the result is shared: callers never mutate it
def _quotable(text: str) -> tuple[frozenset[str], tuple[tuple[str, frozenset[str]], ...]]:
    """A chunk's keywords, and its sentences long enough to quote with theirs: what ranking
    them reads whatever the question (popular chunks come back request after request)."""
    read = [(sentence, frozenset(keywords(sentence))) for sentence in sentences(text)]
    # The sentences hold every word of the text (only whitespace falls between them, and no
    # word spans it), so the chunk's keywords are theirs: the text is not tokenised twice.
    chunk_words = frozenset().union(*(words for _, words in read))
    return chunk_words, tuple(pair for pair in read if len(pair[0].split()) >= MIN_WORDS)


def _candidates(query: str, hits: Sequence[Hit], *, summary: bool) -> list[_Sentence]:
    wanted = question_terms(query)
    kind = answer_type(query)
    found = []
    for hit in hits:
        chunk_words, quotable = _quotable(hit.chunk.text)
        chunk_overlap = _share(wanted, chunk_words)
        for sentence, words in quotable:
            if summary and (_STEP_LIKE.match(sentence) or harm.is_procedural(sentence)):
                continue
            relevance = _share(wanted, words)
            answers = not _INTERROGATIVE.search(sentence) and has_answer_type(
                sentence, kind, wanted
            )
            # Only an answer borrows its chunk's relevance: "Gift cards ... they can be
            # exchanged" must not outrank the sentence that names the refund.
            if answers and _REFERS_BACK.search(sentence):
                relevance = max(relevance, CHUNK_CARRY * chunk_overlap)
            if relevance < MIN_OVERLAP:
                continue
            bonus = ANSWER_TYPE_BONUS if answers else 0.0
            found.append(_Sentence(sentence, hit.chunk.chunk_id, hit.rank, relevance + bonus))
    # Best score first; among equals, the better-ranked chunk and the earlier sentence.
    found.sort(key=lambda s: (-s.score, s.rank))
    best = found[0].score if found else 0.0
    return [s for s in found if s.score >= RELATIVE_OVERLAP * best]


def _share(wanted: set[str], words: frozenset[str]) -> float:
    """The share of the question's terms among ``words`` (a text's keywords)."""
    return len(wanted & words) / len(wanted) if wanted else 0.0


def question_terms(query: str) -> set[str]:
    """The query's topic words: its keywords without the words that only shape the question
    ("how many", "define", German "wer", "ist"), which no answer sentence repeats."""
    found = keywords(query)
    form = _FORM_WORDS
    if _GERMAN_QUESTION.match(_LEAD_IN.sub("", query.strip())):
        form = form | _GERMAN_FORM_WORDS
    return (found - form) or found


def answer_type(query: str) -> AnswerType:
    """What the question asks for, from its wh-word (English or German); "any" when unsure."""
    question = _LEAD_IN.sub("", query.strip())
    for kind, pattern in _QUESTION_TYPES:
        if pattern.match(question):
            return kind
    return "any"


def has_answer_type(sentence: str, kind: AnswerType, wanted: set[str]) -> bool:
    """Does ``sentence`` hold an answer of this type? A cue sharing a word with the question
    ("team" in "Who is on the payments team?", the name "Project Halcyon" in "Who leads Project
    Halcyon?") restates the question rather than answering it."""
    if kind == "definition":
        return bool(_DEFINES.search(sentence))
    for pattern in _ANSWER_CUES.get(kind, ()):
        for match in pattern.finditer(sentence):
            cue = keywords(match.group())
            if not cue & wanted:
                return True
    return False


def extractive_answer(
    query: str,
    hits: Sequence[Hit],
    *,
    decision: Decision = "answer",
    conflicts: Sequence[Conflict] = (),
    max_sentences: int = MAX_SENTENCES,
) -> Answer:
    """Answer with the kept chunks' most relevant sentences, each followed by its citation."""
    summary = decision == "summary"
    chosen: list[_Sentence] = []
    for candidate in _candidates(query, hits, summary=summary):
        if len(chosen) == max_sentences:
            break
        if all(candidate.text != c.text for c in chosen):
            chosen.append(candidate)
    if not chosen:
        return Answer(decision=decision, text=INSUFFICIENT_ANSWER, generator="extractive")
    parts = [f"{s.text} [{s.chunk_id}]" for s in chosen]
    cited = list(dict.fromkeys(s.chunk_id for s in chosen))
    involved = [c for c in conflicts if set(c.chunk_ids) & set(cited)]
    for conflict in involved:
        for chunk_id in conflict.chunk_ids:
            if chunk_id not in cited:
                cited.append(chunk_id)
                text = _best_sentence(query, hits, chunk_id)
                if text:
                    parts.append(f"{text} [{chunk_id}]")
        ids = " and ".join(f"[{c}]" for c in conflict.chunk_ids)
        parts.append(
            f"Note: the sources disagree on this ({ids}); check them before relying on it."
        )
    text = " ".join(parts)
    return Answer(
        decision=decision,
        text=SUMMARY_PREFIX + text if summary else text,
        citations=tuple(cited),
        generator="extractive",
        details={"conflicts_surfaced": len(involved)},
    )


def _best_sentence(query: str, hits: Sequence[Hit], chunk_id: str) -> str | None:
    for hit in hits:
        if hit.chunk.chunk_id == chunk_id:
            ranked = _candidates(query, [hit], summary=False)
            return ranked[0].text if ranked else None
    return None

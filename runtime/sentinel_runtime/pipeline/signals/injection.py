"""Indirect prompt injection: instructions hidden in a document and aimed at the model.

The evidence filter (``evidence``) asks this module about every retrieved chunk. Documents
are full of imperatives addressed to their human reader ("please reply by Friday", "use
try/except here", "click here to unsubscribe"); what marks an injection is the addressee
and the object of the instruction:

- the *model's output* is the object: "translate your response", "add this link to your
  reply", "begin your answer with" (a person reading an email has no "response" to be
  encoded in Base64 or sprinkled with typos), unless the sentence is plainly about the
  reader's own correspondence ("include your order number in your reply to this email");
- the *model* is the addressee: role markers (``system:``, ``### Instruction``, chat
  template tokens), "ignore previous instructions", "if you are an AI", "tell the user";
- the instruction is a *task switch*: a request or general-knowledge question unrelated
  to the rest of the document and to the query, in a document that is not itself a list
  of instructions and not addressed to a correspondent ("are you free on Friday?");
- a *payload* rides along: a code block the text asks to incorporate whose operations
  (sending local data away, deleting the disk, piping a download to a shell) or imports
  have nothing to do with the discussion around it;
- the instruction is *hidden*: invisible characters, HTML comments, hiding styles, or
  natural language smuggled in Base64.

Each sentence (a table cell; a code block with the sentence introducing it) gets a score
from its cues; the document's score is its worst unit, raised a little by other flagged
units. A score of DETECTED (0.5) or more means "instructions aimed at the model"; lower
scores are weaker cues the evidence scorer weighs against relevance. Reasons are codes,
never document text, so they can be logged. The topic check uses ``analysis.terms``.

The patterns live in ``injection_lexicon``. The judge runs on every retrieved chunk of
every request, so it does no work it can prove useless: a sentence without any word the
cue patterns need is not searched with them (``injection_lexicon.Hints``), and what only
a request inside the document needs (the document's terms, how many of its sentences are
imperatives) is computed when the first request is found. A text is read once (cached
per text, ``_read``): only whether a request in it shares terms with the query waits for
the query, so a chunk retrieved again for another question costs a set intersection.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import functools
import itertools
import unicodedata
from collections import Counter
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import NamedTuple

from sentinel_runtime.index import analysis
from sentinel_runtime.pipeline.signals import injection_lexicon as lexicon

DETECTED = 0.5
REPORTED = 0.25  # cues below this are not named in the reasons

_INSTRUCTIONAL_SHARE = 0.3
_MIN_CONTEXT_TERMS = 8  # fewer, and "unrelated to the rest" cannot be judged well
_TINY_CONTEXT_TERMS = 4
_QUOTE_MARKS = ("'", '"', "\u201c", "\u2018")  # what lexicon.QUOTED needs to match


@dataclass(frozen=True)
class InjectionAssessment:
    score: float  # 0 .. 1; >= DETECTED means instructions aimed at the model
    reasons: tuple[str, ...] = ()  # codes of the cues that scored >= REPORTED

    @property
    def detected(self) -> bool:
        return self.score >= DETECTED


CLEAN = InjectionAssessment(0.0)


class _Unit(NamedTuple):  # a tuple: documents have hundreds of units, made per request
    text: str
    kind: str  # "prose", "cell", "code" (a block and the sentence introducing it), "codeline"
    code: str = ""
    line_alone: bool = False  # the unit is a whole line of its own
    line: int | None = None  # the number of the line it was cut from (for "code", the intro's)


Cue = tuple[str, float]


def _noisy_or(scores: list[float]) -> float:
    remaining = 1.0
    for score in scores:
        remaining *= 1.0 - max(0.0, min(1.0, score))
    return 1.0 - remaining


def _quoted(text: str) -> bool:
    """Whether ``text`` may hold a quotation (most sentences hold no quotation mark)."""
    return any(mark in text for mark in _QUOTE_MARKS)


def _unquoted(text: str) -> str:
    return lexicon.QUOTED.sub(" ", text) if _quoted(text) else text


def _sentences(line: str) -> list[str]:
    """The sentences of a line; a quotation is never cut, whatever punctuation it holds."""
    masked = lexicon.QUOTED.sub(lambda m: "x" * len(m.group(0)), line) if _quoted(line) else line
    cuts = [0, *(m.end() for m in lexicon.SENTENCE_END.finditer(masked)), len(line)]
    parts = (line[a:b].strip() for a, b in itertools.pairwise(cuts))
    return [p for p in parts if p]


def _introduces_code(line: str) -> bool:
    stripped = line.strip()
    return stripped.endswith(":") and bool(lexicon.CODE_FOLLOWS.search(stripped))


def _units(text: str) -> list[_Unit]:
    units: list[_Unit] = []
    lines = text.splitlines()
    fenced = "```" in text or "~~~" in text  # else no line is a fence
    index = 0
    while index < len(lines):
        line = lines[index]
        if fenced and lexicon.FENCE.match(line):
            end = index + 1
            while end < len(lines) and not lexicon.FENCE.match(lines[end]):
                # A sentence introducing the next block cannot be inside this one: text
                # inserted into the middle of a code block would otherwise hide there.
                if (
                    _introduces_code(lines[end])
                    and end + 1 < len(lines)
                    and lexicon.FENCE.match(lines[end + 1])
                ):
                    break
                end += 1
            code = "\n".join(lines[index + 1 : end])
            intro = _Unit("", "prose")
            if units and units[-1].kind == "prose" and units[-1].text.rstrip().endswith(":"):
                intro = units.pop()  # "add the following code:" travels with its block
            units.append(_Unit(intro.text, "code", code, line=intro.line))
            # Comments and strings in code can carry instructions too.
            numbered = enumerate(lines[index + 1 : end], start=index + 1)
            units.extend(_Unit(c.strip(), "codeline", line=n) for n, c in numbered if c.strip())
            index = end + 1 if end < len(lines) and lexicon.FENCE.match(lines[end]) else end
            continue
        stripped = line.strip()
        number, index = index, index + 1
        if not stripped:
            continue
        if "|" in stripped and lexicon.TABLE_ROW.match(stripped):
            cells = map(str.strip, stripped.split("|"))
            units.extend(_Unit(c, "cell", line=number) for c in cells if c)
            continue
        parts = _sentences(stripped)
        alone = len(parts) == 1
        units.extend(_Unit(part, "prose", line_alone=alone, line=number) for part in parts)
    return units


# ---- cues ---------------------------------------------------------------------------------


def _directive_cues(text: str, hints: lexicon.Hints) -> list[Cue]:
    """Cues that the sentence instructs the model (its output, its role, its rules).

    ``hints`` are those of the document the sentence was cut from, or of the sentence: a
    pattern is searched only when the sentence holds a word it cannot match without.
    """
    found = hints.found_in(text)
    if not found:
        return []  # the case of most sentences
    cues: list[Cue] = []
    if found & lexicon.CHAT_TOKENS_NEEDS and lexicon.CHAT_TOKENS.search(text):
        cues.append(("role_marker", 0.9))
    elif (found & lexicon.ROLE_PREFIX_NEEDS and lexicon.ROLE_PREFIX.match(text)) or (
        found & lexicon.ROLE_HEADING_NEEDS and lexicon.ROLE_HEADING.match(text)
    ):
        cues.append(("role_marker", 0.6))
    if found & lexicon.OVERRIDE_NEEDS and lexicon.OVERRIDE.search(text):
        cues.append(("override_instructions", 0.85))
    if found & lexicon.ADDRESS_AI_NEEDS and lexicon.ADDRESS_AI.search(text):
        cues.append(("addressed_to_model", 0.8))
    if found & lexicon.CONCEAL_NEEDS and lexicon.CONCEAL.search(text):
        cues.append(("concealment", 0.7))
    if found & lexicon.FORCED_NEEDS and lexicon.FORCED.search(text):
        cues.append(("forced_output", 0.7))
    # The cues below name the model's output or the user (quick to find), and need the
    # mood of an instruction (DIRECTIVE, slow to search): they are looked for in that order.
    output_ref = found & lexicon.OUTPUT_REF_NEEDS and lexicon.OUTPUT_REF.search(text)
    third_party = found & lexicon.THIRD_PARTY_NEEDS and lexicon.THIRD_PARTY.search(text)
    any_ref = (
        output_ref
        or (found & lexicon.OUTPUT_WEAK_REF_NEEDS and lexicon.OUTPUT_WEAK_REF.search(text))
        or (found & lexicon.REPLY_IN_NEEDS and lexicon.REPLY_IN.search(text))
    )
    transform = any_ref and lexicon.TRANSFORM.search(text)
    if not (transform or output_ref or third_party):
        return cues
    body = lexicon.ROLE_PREFIX.sub("", _unquoted(text)).strip()
    if not lexicon.DIRECTIVE.search(body):
        return cues
    reader = bool(lexicon.READER.search(text))
    if transform:
        cues.append(("output_transform", 0.4 if reader else 0.85))
    elif output_ref and lexicon.INSERT.search(text):
        score = 0.9 if lexicon.LINK.search(text) or third_party else 0.75
        cues.append(("content_insertion", 0.2 if reader else score))
    elif output_ref:
        cues.append(("output_directive", 0.15 if reader else 0.35))
    if third_party and not reader:
        cues.append(("user_redirect", 0.3))
    return cues


@functools.lru_cache(maxsize=1 << 14)
def _piece_topic(piece: str) -> frozenset[str]:
    return frozenset(t for t in analysis.terms(piece) if not t.isdigit())


def _topic(text: str) -> AbstractSet[str]:
    """Content terms without bare numbers: "2" in a table says nothing about its topic.

    A term never spans whitespace, so the terms of a text are those of its space-separated
    pieces; pieces ("word", "word,") recur from text to text, and each is tokenised once.
    """
    pieces = text.split()
    if len(pieces) == 1:
        return _piece_topic(pieces[0])  # most table cells
    return set().union(*map(_piece_topic, pieces))


def _request_kind(text: str) -> str | None:
    """Whether ``text`` is an imperative ``"task"``, a ``"question"``, or neither (None)."""
    bare = _unquoted(text).strip()
    if lexicon.may_request(bare):
        if lexicon.TASK_START.match(bare):
            return "task"
        form = lexicon.FORM_START.match(bare)
        if form and lexicon.TRANSFORM.search(bare, form.end()):  # "Reverse osmosis ..."
            return "task"
    if bare.endswith("?") and lexicon.QUESTION_START.match(bare):
        return "question"
    return None


def _imperative(text: str) -> bool:
    return lexicon.may_be_imperative(text) and bool(lexicon.IMPERATIVE_START.match(text))


class _Document:
    """What judging a request or a code block needs to know about the whole document.

    Each part is computed on first use: most documents hold no request and no code block
    asked to be used, and never need their terms or their share of imperatives.
    """

    def __init__(self, units: list[_Unit], visible: str) -> None:
        self.units = units
        self._visible = visible

    @functools.cached_property
    def unit_terms(self) -> list[AbstractSet[str]]:
        return [_topic(f"{u.text}\n{u.code}") if u.code else _topic(u.text) for u in self.units]

    @functools.cached_property
    def terms(self) -> Counter[str]:
        """For every term, the number of units it occurs in."""
        pairs = zip(self.units, self.unit_terms, strict=True)
        # A code line's terms are counted with its block.
        return Counter(itertools.chain.from_iterable(t for u, t in pairs if u.kind != "codeline"))

    @functools.cached_property
    def tabular(self) -> bool:
        lines = self._visible.splitlines()
        return sum(1 for line in lines if lexicon.TABLE_ROW.match(line.strip())) >= 3

    @functools.cached_property
    def _imperative(self) -> list[bool]:
        return [u.kind == "prose" and _imperative(u.text) for u in self.units]

    @functools.cached_property
    def _imperatives(self) -> int:
        return sum(self._imperative)

    @functools.cached_property
    def _prose(self) -> int:
        return sum(1 for u in self.units if u.kind == "prose")

    def instructional(self, index: int) -> bool:
        """Whether the other units are mostly imperatives (a how-to, a worksheet)."""
        others = self._imperatives - self._imperative[index]
        return others >= max(1.0, _INSTRUCTIONAL_SHARE * (self._prose - 1))


@dataclass(frozen=True)
class _Switch:
    """A request in a document, scored as a task switch unless it is related: when more
    than a quarter of its terms are also elsewhere in the document or in the query. Only
    the query's part is left to judge when a question comes."""

    own: int  # the request's terms
    related: int  # how many of them the rest of the document holds
    lonely: frozenset[str]  # the others: related if the query holds them
    score: float  # the score when unrelated

    def given(self, query_terms: AbstractSet[str]) -> float:
        related = self.related + len(self.lonely & query_terms)
        return 0.0 if related / self.own > 0.25 else self.score


def _task_switch(index: int, document: _Document) -> _Switch | None:
    """A request unrelated to the rest of the ``document`` (and to the query, which
    ``_Switch.given`` checks); None when it scores nothing whatever the query."""
    unit = document.units[index]
    kind = _request_kind(unit.text) if unit.kind == "prose" else None
    if kind is None or not 3 <= len(unit.text.split()) <= 60:
        return None
    own = document.unit_terms[index]
    if len(own) < 2:
        return None
    counted = document.terms
    lonely = frozenset(t for t in own if counted[t] <= 1)
    related = len(own) - len(lonely)
    if related / len(own) > 0.25:
        return None  # related to the document, whatever the query holds
    score = _unrelated_score(index, document, kind, own)
    return _Switch(len(own), related, lonely, score) if score else None


def _unrelated_score(index: int, document: _Document, kind: str, own: AbstractSet[str]) -> float:
    """The task-switch score of a request related neither to its document nor the query."""
    unit = document.units[index]
    counted = document.terms
    around = len(counted) - sum(1 for t in own if counted[t] == 1)
    bare = _unquoted(unit.text)
    if lexicon.READER.search(bare) or (
        lexicon.PARTICIPANT.search(bare) and not lexicon.GENERIC_YOU.search(bare)
    ):
        return 0.2  # "are you free on Friday?", "send us your receipt": correspondence
    if around < _TINY_CONTEXT_TERMS:
        return 0.0  # a document that is only a question has nothing to switch from
    if document.tabular or unit.line_alone:
        score = 0.65 if kind == "task" else 0.6
    else:
        # A rhetorical question inside a paragraph is common prose; an inserted request
        # usually stands on a line of its own.
        score = 0.5 if kind == "task" else 0.4
    if document.instructional(index):
        score -= 0.2  # a how-to or a worksheet is made of requests
    if around < _MIN_CONTEXT_TERMS:
        score -= 0.15
    return score


def _imported_modules(code: str) -> set[str]:
    modules = {
        part.strip().split(".")[0].split(" as ")[0].strip()
        for match in lexicon.IMPORT.finditer(code)
        for group in match.groups()
        if group
        for part in group.split(",")
    }
    modules.discard("")
    return modules


def _code_cues(unit: _Unit, document: _Document) -> list[Cue]:
    if unit.kind != "code" or not unit.code.strip():
        return []
    cues: list[Cue] = []
    code = unit.code
    asked = bool(
        unit.text and lexicon.CODE_FOLLOWS.search(unit.text) and lexicon.YOUR_WORK.search(unit.text)
    )
    if asked:
        cues.append(("code_insertion", 0.3))
        modules = _imported_modules(code)
        own = _topic(code)

        def mentioned(term: str) -> bool:  # by a unit other than this block
            return document.terms[term] > (1 if term in own else 0)

        if modules and not any(mentioned(analysis.stem(m.lower())) for m in modules):
            cues.append(("foreign_code", 0.3))  # imports the discussion never mentions
    found = lexicon.found_in_code(code)  # a pattern is searched only if it can match
    if found & lexicon.REMOTE_EXEC_NEEDS and lexicon.REMOTE_EXEC.search(code):
        cues.append(("remote_code_execution", 0.7))
    if found & lexicon.DESTRUCTIVE_NEEDS and lexicon.DESTRUCTIVE.search(code):
        cues.append(("destructive_code", 0.6))
    # Reaching the network, in three of the cues below.
    net = found & lexicon.NET_NEEDS and lexicon.NET.search(code)
    if net and lexicon.LOCAL_DATA.search(code):
        cues.append(("exfiltration", 0.4))
    if (
        found & lexicon.LOOP_NEEDS
        and lexicon.LOOP.search(code)
        and (net or lexicon.SPAWN.search(code))
    ):
        cues.append(("resource_abuse", 0.4))
    if (
        found & lexicon.ENCRYPT_NEEDS
        and lexicon.ENCRYPT.search(code)
        and net
        and lexicon.WRITE_BACK.search(code)
    ):
        cues.append(("ransomware", 0.5))
    return cues


def _invisible_cues(raw: str) -> tuple[list[Cue], str]:
    """Cues of invisible characters, and the text without them, NFKC-normalised."""
    if raw.isascii():
        return [], raw  # no invisible characters, and NFKC leaves ASCII as it is
    invisible = lexicon.INVISIBLE.findall(raw)
    if not invisible:  # accents and curly quotes: the usual non-ASCII text
        return [], unicodedata.normalize("NFKC", raw)
    cues: list[Cue] = []
    if lexicon.TAG_CHARS.search(raw):
        cues.append(("hidden_text", 0.9))  # Unicode tags smuggle invisible ASCII
    elif len(invisible) >= 3:
        cues.append(("hidden_text", 0.35))
    return cues, unicodedata.normalize("NFKC", lexicon.INVISIBLE.sub("", raw))


def _may_hold_base64(text: str) -> bool:
    """A Base64 run of 24 characters or more lies inside a word at least as long."""
    return max(map(len, text.split()), default=0) >= 24


def _hidden_cues(visible: str, hints: lexicon.Hints) -> list[Cue]:
    """Cues of text hidden in comments, by styles, or in Base64."""
    cues: list[Cue] = []
    if "<!--" in visible:
        for comment in lexicon.HTML_COMMENT.findall(visible):
            inner = [s for _, s in _directive_cues(comment.strip(), lexicon.Hints(comment))]
            if _request_kind(comment.strip()):
                inner.append(0.5)
            if inner:
                cues.append(("hidden_instructions", max(0.8, *inner)))
    if hints.found & lexicon.HIDDEN_STYLE_NEEDS and lexicon.HIDDEN_STYLE.search(visible):
        cues.append(("hidden_text", 0.3))
    for run in lexicon.BASE64_RUN.findall(visible) if _may_hold_base64(visible) else ():
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        letters = sum(ch.isalpha() or ch.isspace() for ch in decoded)
        if len(decoded.split()) >= 3 and letters > 0.8 * len(decoded):
            # Prose hidden in Base64 is unusual on its own; instructions in it are worse.
            inner = [s for _, s in _directive_cues(decoded, lexicon.Hints(decoded))]
            cues.append(("encoded_instructions", max(0.5, *inner) if inner else 0.5))
    return cues


# ---- the judge ----------------------------------------------------------------------------


def assess_injection(text: str, query: str = "") -> InjectionAssessment:
    """Judge ``text`` for instructions aimed at the model that reads it."""
    if not text or not text.strip():
        return CLEAN
    return _read(text).given(query)


def reads_clean(text: str) -> bool:
    """Whether ``text`` scores nothing whatever the query (``assess_injection`` gives
    ``CLEAN`` for every query). Read afresh: for screening many texts once each, which
    would only push popular chunks out of ``_read``'s cache."""
    if not text or not text.strip():
        return True
    return _read.__wrapped__(text).fixed == CLEAN


class _UnitCues(NamedTuple):
    cues: tuple[Cue, ...]  # the directive cues, then the code cues
    switch: _Switch | None  # a request whose score waits for the query (prose only)


@dataclass(frozen=True)
class _Reading:
    """What a text says whatever the query: every unit with a cue or a pending task
    switch, in order, then the document-wide cues (chat tokens, hidden text). Most texts
    have no pending switch, and their verdict is ``fixed``."""

    units: tuple[_UnitCues, ...]
    document: tuple[tuple[float, list[str]], ...]
    fixed: InjectionAssessment | None

    def given(self, query: str) -> InjectionAssessment:
        if self.fixed is not None:
            return self.fixed
        return _verdict(self._scored(_topic(query)))

    def _scored(self, query_terms: AbstractSet[str] | None) -> list[tuple[float, list[str]]]:
        """Each unit's score and reasons (``query_terms`` None: no switch scored yet)."""
        scored: list[tuple[float, list[str]]] = []
        for unit in self.units:
            cues = list(unit.cues)
            switch = 0.0
            if unit.switch is not None and query_terms is not None:
                switch = unit.switch.given(query_terms)
            if switch:  # a prose unit's, after its directive cues (a code unit has none)
                cues.append(("task_switch", switch))
            if cues:
                score = _noisy_or([s for _, s in cues])
                scored.append((score, [r for r, s in cues if s >= REPORTED]))
        return scored + list(self.document)


# Popular chunks come back request after request, each time with another question: only
# a pending task switch reads the question.
@functools.lru_cache(maxsize=8192)
def _read(text: str) -> _Reading:
    invisible, visible = _invisible_cues(text)
    hints = lexicon.Hints(visible)
    hidden = invisible + _hidden_cues(visible, hints)
    units = _units(visible)
    document = _Document(units, visible)
    read: list[_UnitCues] = []
    for index, unit in enumerate(units):
        # Most lines hold no word that a directive pattern needs (lexicon.Hints).
        quiet = not unit.text or hints.quiet(unit.line)
        cues = [] if quiet else _directive_cues(unit.text, hints)
        switch = _task_switch(index, document) if unit.kind == "prose" else None
        if unit.kind == "code":
            cues.extend(_code_cues(unit, document))
        if cues or switch is not None:
            read.append(_UnitCues(tuple(cues), switch))
    wide: list[tuple[float, list[str]]] = []
    if hints.may_hold_chat_tokens() and lexicon.CHAT_TOKENS.search(visible):
        # Template tokens can sit anywhere, even where "|" makes a line look like a table.
        wide.append((0.9, ["role_marker"]))
    if hidden:
        wide.append((_noisy_or([s for _, s in hidden]), [r for r, _ in hidden]))
    reading = _Reading(tuple(read), tuple(wide), None)
    if all(unit.switch is None for unit in read):
        return dataclasses.replace(reading, fixed=_verdict(reading._scored(None)))
    return reading


def _verdict(scored: list[tuple[float, list[str]]]) -> InjectionAssessment:
    """The document's score: its worst unit, raised a little by other flagged units."""
    if not scored:
        return CLEAN
    scored.sort(key=lambda item: -item[0])
    top = scored[0][0]
    # Several flagged units say more than one, but weak cues never add up to a detection
    # on their own: the bonus is proportional to the worst unit.
    others = sum(1 for score, _ in scored[1:] if score >= REPORTED)
    score = min(1.0, top * (1.0 + min(0.15, 0.05 * others)))
    reasons = tuple(dict.fromkeys(r for s, rs in scored if s >= REPORTED for r in rs))
    return InjectionAssessment(round(score, 3), reasons)

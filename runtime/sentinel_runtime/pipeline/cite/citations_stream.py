"""Citation rules for an answer that streams: each sentence is judged once it is complete.

The whole-answer rules (``citations.py``, the support check in ``support.py``) read an answer
that is finished; a streamed one is read sentence by sentence as the model writes it, in the
inline form (``generate.grounded``: prose with ``[n]`` markers after each claim).
:class:`SentenceCheck` takes the model's text as it arrives and gives back only text that passed:

- a sentence is complete at a sentence end once the next sentence has begun (markers that
  follow a sentence end still belong to it: "Claim. [1] Next."), or when the answer ends;
- its markers are read as the whole path reads them (numbers become chunk ids) and checked
  at once: an unknown id (a number past the chunks, or a bracketed ``doc#pN`` that names no
  kept chunk) or more distinct citations than ``max_citations`` fails the answer;
- a sentence with markers is checked against what it cites when ``citations.support`` is
  ``lexical``; one without markers waits for the next sentence with markers and is then
  checked against everything cited so far (the whole path uses everything the answer
  cites); ``unsupported: drop`` leaves such a sentence out, ``block`` fails the answer;
- ``uncited``: sentences wait until something is cited; an answer that ends citing nothing
  (and does not say the context is insufficient) fails under ``block`` and is released
  with the ``uncited`` flag under ``annotate``.

A failure is final: :attr:`Step.blocked` says the answer must end with the policy's
``citations.blockedAnswer`` after whatever passed before it (released text cannot be
recalled); the failing sentence and everything after it never leave. A reply that is not
prose (it opens with ``{`` or a code fence: the JSON form) is held whole and fails, as
piecewise validation cannot read it. Stated differences from the whole path: a sentence is
judged with the citations known when it completes, so a support failure can block a stream
whose whole answer would pass; a sentence that says the context is insufficient skips the
support check for itself only; a bracketed id that names no kept chunk is an unknown
citation (the whole path leaves it in the text uncounted); dropped sentences keep the
answer's formatting around them.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sentinel_runtime.pipeline.cite import citations, markers, support
from sentinel_runtime.pipeline.cite.citations import CitationConfig, CitationValidation
from sentinel_runtime.pipeline.types import Claim

# A bracket that names a chunk the way ids are written ("doc#p3"), known or not.
_ID_SHAPED = re.compile(r"\[\s*([^\s\[\]]+#p\d+)\s*\]")
# A marker may be this long before a "[" is taken for text rather than a marker to come.
MARKER_CHARS = 122
_NOT_PROSE = ("{", "`")


@dataclass(frozen=True)
class Step:
    """Validated text that may be released now; ``blocked``: the answer failed here."""

    text: str = ""
    blocked: bool = False


@dataclass
class _Sentence:
    raw: str  # as released: the separator before it, the sentence, its markers
    claim: Claim


@dataclass
class SentenceCheck:
    """One streamed answer's citation check against the ``chunks`` (id -> text, in the order
    the model was given them: marker ``[n]`` is the n-th) under ``config``; ``checked``
    False (citations disabled) releases every complete sentence unchecked."""

    chunks: Mapping[str, str]
    config: CitationConfig
    checked: bool = True
    text: str = ""  # the model's reply so far
    released: str = ""  # the text that passed
    cited: list[str] = field(default_factory=list)  # distinct citations, in order of use
    claims: list[Claim] = field(default_factory=list)  # the released sentences' claims
    errors: list[str] = field(default_factory=list)
    unsupported: list[support.Unsupported] = field(default_factory=list)
    dropped: int = 0
    uncited: bool = False  # the answer cited nothing and did not say it cannot answer
    seconds: float = 0.0  # time spent checking
    _start: int = 0  # where the next sentence begins in ``text``
    _waiting: list[_Sentence] = field(default_factory=list)  # sentences without markers
    _prose: bool | None = None  # known once the reply's first character is
    _ended: bool = False

    @property
    def ids(self) -> list[str]:
        return list(self.chunks)

    @property
    def failed(self) -> bool:
        return bool(self.errors)

    def feed(self, delta: str) -> Step:
        """Take the next piece of the reply; return what passed."""
        return self._timed(delta, final=False)

    def finish(self) -> Step:
        """The reply is complete: judge what is left."""
        return self._timed("", final=True)

    def validation(self) -> CitationValidation:
        """The answer's validation in the shape the whole path reports."""
        if not self.checked:
            return citations.NOT_CHECKED
        described = tuple(u.describe() for u in self.unsupported)
        if self.errors:
            return CitationValidation(
                valid=False,
                errors=tuple(self.errors),
                uncited=self.uncited,
                unsupported=described,
                dropped=self.dropped,
            )
        final = citations.validate_citations(self.released, self.cited, self.chunks, self.config)
        warnings = final.warnings
        if self.dropped:
            message = f"{self.dropped} sentence(s) state facts their cited chunks do not hold"
            warnings = (*warnings, message + " (dropped)")
        return dataclasses.replace(
            final, warnings=warnings, unsupported=described, dropped=self.dropped
        )

    # -- reading sentences ---------------------------------------------------------------------

    def _timed(self, delta: str, *, final: bool) -> Step:
        if self.failed or self._ended:
            return Step(blocked=self.failed)
        started = time.perf_counter()
        try:
            self.text += delta
            return self._step(final)
        finally:
            self.seconds += time.perf_counter() - started

    def _step(self, final: bool) -> Step:
        if self._prose is None and self.text.strip():
            self._prose = not self.text.lstrip().startswith(_NOT_PROSE)
        if self._prose is False:
            if final:
                self.errors.append("the model's reply is not prose with inline citation markers")
                return self._release([], blocked=True)
            return Step()  # held whole: it can only fail, and nothing of it leaves
        released: list[str] = []
        while (end := self._sentence_end(final)) is not None:
            raw = self.text[self._start : end]
            self._start = end
            released.append(self._judge(raw))
            if self.failed:
                return self._release(released, blocked=True)
        if final:
            self._ended = True
            released.append(self._settle_waiting())
        return self._release(released, blocked=self.failed)

    def _sentence_end(self, final: bool) -> int | None:
        """Where the next complete sentence of the reply ends (None: none is complete)."""
        text, search = self.text, self._start
        while (boundary := markers.SENTENCE_END.search(text, search)) is not None:
            if not text[self._start : boundary.start()].strip():
                search = boundary.end()  # only the separator so far
                continue
            end, rest = boundary.start(), text[boundary.end() :]
            lead = markers.LEADING_MARKERS.match(rest)
            if lead is not None:
                end = boundary.end() + len(lead.group(0).rstrip())
                rest = rest[lead.end() :]
            if rest and not _marker_to_come(rest):
                return end  # the next sentence has begun
            return len(text.rstrip()) if final else None
        if final and text[self._start :].strip():
            return len(text.rstrip())
        return None

    # -- judging ---------------------------------------------------------------------------------

    def _judge(self, raw: str) -> str:
        """The text of one complete sentence that may leave now ("" while it waits or when
        it is dropped); a failure is noted in :attr:`errors`."""
        ids = self.ids
        body = markers.rewrite_markers(raw, ids)
        own = tuple(dict.fromkeys(markers.markers(body, ids)))
        sentence = _Sentence(body, Claim(markers.strip_markers(body), own))
        if not self.checked:
            self.claims.append(sentence.claim)
            self.cited.extend(c for c in own if c not in self.cited)
            return body
        unknown = [c for c in own if c not in self.chunks]
        unknown += [i for i in _ID_SHAPED.findall(body) if i not in self.chunks]
        for citation in dict.fromkeys(unknown):
            self.errors.append(f"Citation {citation!r} does not match any retrieved chunk")
        if self.errors:
            return ""
        self.cited.extend(c for c in own if c not in self.cited)
        if len(self.cited) > self.config.max_citations:
            self.errors.append(
                f"{len(self.cited)} citations; at most {self.config.max_citations} are allowed"
            )
            return ""
        if not own:
            self._waiting.append(sentence)
            return ""
        waiting, self._waiting = [*self._waiting, sentence], []
        return self._supported(waiting)

    def _supported(self, sentences: Sequence[_Sentence]) -> str:
        """The sentences whose claims what they cite holds (all of them, when the support
        check is off); a failure under ``unsupported: block`` is noted in :attr:`errors`."""
        config = self.config
        checked = [s for s in sentences if not citations.says_insufficient(s.claim.text)]
        found: list[support.Unsupported] = []
        if config.support != "off" and checked:
            found = support.check([s.claim for s in checked], self.chunks, self.cited)
        failing = {u.sentence for u in found}
        self.unsupported.extend(found)
        if found and config.unsupported == "block":
            self.errors.append(
                f"{len(found)} sentence(s) state facts their cited chunks do not hold"
            )
            return ""
        passed = []
        for sentence in sentences:
            if sentence.claim.text in failing:
                self.dropped += 1
                continue
            self.claims.append(sentence.claim)
            passed.append(sentence.raw)
        return "".join(passed)

    def _settle_waiting(self) -> str:
        """At the end: the sentences still waiting for a marker."""
        waiting, self._waiting = self._waiting, []
        if self.checked and not self.cited and waiting:
            said = " ".join(s.claim.text for s in waiting)
            self.uncited = not citations.says_insufficient(said)
            if self.uncited and self.config.uncited == "block":
                self.errors.append(
                    "The answer cites nothing but does not say the context is insufficient"
                )
                return ""
            self.claims.extend(s.claim for s in waiting)
            return "".join(s.raw for s in waiting)
        passed = self._supported(waiting) if waiting else ""
        if self.checked and self.dropped and not self.claims:
            self.errors.append("every sentence states facts its cited chunks do not hold")
            return ""
        return passed

    def _release(self, passed: list[str], *, blocked: bool) -> Step:
        text = "".join(passed)
        if not self.released:
            text = text.lstrip()  # the answer starts at its first word, as the whole path's
        self.released += text
        if blocked:
            self._ended = True
        return Step(text, blocked)


def _marker_to_come(rest: str) -> bool:
    """Whether ``rest`` (after a sentence end) may still be a marker being written."""
    if not rest.startswith("["):
        return False
    head = rest[:MARKER_CHARS]
    return "]" not in head and "\n" not in head and len(rest) < MARKER_CHARS

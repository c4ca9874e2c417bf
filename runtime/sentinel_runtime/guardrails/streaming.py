"""Scan an answer while it streams: no text leaves before every scanner that can judge it has
seen it.

Scanners fall in three kinds, by how much of the answer a verdict needs:

* **local** (regex, ban_substrings, sensitive, secrets, invisible_text): a hit depends only on
  the text around it, up to the scanner's *reach* (the longest match it can make) plus the
  reaches of the redacting scanners before it in the chain. The guard holds back a window of
  the largest such reach and releases text before it once a cut is
  *consistent*: scanning the held text whole gives the same result as scanning the part to
  release and the rest apart. So a match that straddles the cut is never split; the held part
  waits for more text instead.
* **prefix** (token_limit, reading_time): they judge the length of everything said so far, so
  they are checked on the released text plus the part about to be released; over the limit is
  a block (token_limit, reading_time without truncate) or the end of the answer at the limit
  (reading_time with truncate).
* **whole text** (json, llm_guard and anything unknown): nothing is released before the answer
  ends; it is then scanned as the non-streaming path scans it.

The released text equals what the non-streaming path returns, with two stated differences:
a block after some text was released sends the policy's ``blockMessage`` after that text
(released text cannot be recalled); and the prefix kinds are judged after the local scanners'
redactions whatever their place in the chain. A match longer than the window (an unbounded
regex such as ``\\d+`` over a run longer than the window) may be split at a cut.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from sentinel_runtime.guardrails.engine import (
    ActiveScanner,
    GuardrailsEngine,
    ScannerHit,
    ScanOutcome,
)
from sentinel_runtime.observability import metrics

Stop = Literal["block", "truncate"]

# Reach of a regex whose longest match is unbounded (``\d+``), and the most any regex gets.
UNBOUNDED_REACH = 256
# Lookarounds and word boundaries look one character or so past a match.
CONTEXT_MARGIN = 8
# Longest email address (RFC 5321), and thereby the longest match of the sensitive scanner.
SENSITIVE_REACH = 256
# detect-secrets judges a line; a line is held up to this many characters.
SECRETS_REACH = 512
# Scanning waits for this many new characters past the window, so a token-by-token stream
# is scanned in steps rather than at every token.
DEFAULT_STEP = 32
# A scan waits at least this long after the previous one (the first scan never waits): a
# stream paced like a model (tens of tokens a second) is still scanned token by token, while
# one that arrives faster than anyone reads is scanned in bigger steps, up to MAX_STEP.
DEFAULT_MIN_INTERVAL = 0.010
MAX_STEP = 2048
# Cuts tried, latest first, before waiting for more text.
CUT_TRIES = 4
# With no consistent cut, text is held up to this much past the window, then released at the
# latest cut anyway (a single match this long is not one the scanners were written for).
MAX_EXTRA_HOLD = 8 * 1024
BLOCK_SEPARATOR = "\n\n"
_WHITESPACE = re.compile(r"\s")


def regex_reach(pattern: str) -> int:
    """The longest match ``pattern`` can make (plus context), capped for unbounded ones."""
    try:
        # The `regex` module's syntax is a superset: what `re` cannot parse is unbounded.
        _, longest = re._parser.parse(pattern).getwidth()  # type: ignore[attr-defined]
    except (re.error, OverflowError, RecursionError, ValueError):
        return UNBOUNDED_REACH
    return min(int(longest), UNBOUNDED_REACH) + CONTEXT_MARGIN


LOCAL_REACH: dict[str, Callable[[Any], int]] = {
    "regex": lambda params: max(regex_reach(p) for p in params.patterns),
    "ban_substrings": lambda params: max(len(s) for s in params.substrings) + CONTEXT_MARGIN,
    "sensitive": lambda params: SENSITIVE_REACH,
    "secrets": lambda params: SECRETS_REACH,
    "invisible_text": lambda params: 1,
}
PREFIX_TYPES = frozenset({"token_limit", "reading_time"})


def chain_reach(local: tuple[ActiveScanner, ...]) -> int:
    """How far ahead the chain must see before a verdict is final. A scanner reads the text
    earlier scanners redacted, and a redaction depends on text up to its scanner's reach, so
    a hit can depend on the reach of each earlier redacting scanner added to its own: an
    ``sk-`` key redacted to ``[REDACTED]`` right after "Do Not Distribute" gives that phrase
    the word boundary a banned-substring scanner needs."""
    window = carried = 0
    for active in local:
        reach = LOCAL_REACH[active.spec.type](active.spec.params)
        window = max(window, carried + reach)
        if active.spec.action == "redact":
            carried += reach
    return window


@dataclass(frozen=True)
class Release:
    """Text the stream may send now; with ``stop`` set, the stream ends after it."""

    text: str
    stop: Stop | None = None


@dataclass
class _Progress:
    released: list[str] = field(default_factory=list)
    hits: dict[int, ScannerHit] = field(default_factory=dict)
    failures: dict[int, Any] = field(default_factory=dict)
    blocked: bool = False
    stopped: Stop | None = None
    scan_seconds: float = 0.0
    observed: bool = False

    @property
    def text(self) -> str:
        return "".join(self.released)


class StreamGuard:
    """One answer's guard, under the policy version it was created with."""

    def __init__(
        self,
        engine: GuardrailsEngine,
        *,
        response_id: str = "",
        step: int = DEFAULT_STEP,
        min_interval: float = DEFAULT_MIN_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.response_id = response_id
        self.step = step
        self.min_interval = min_interval
        self._clock = clock
        self._last_scan: float | None = None
        local: list[ActiveScanner] = []
        prefix: list[ActiveScanner] = []
        whole = False
        for active in engine.scanners:
            kind = active.spec.type
            if kind in LOCAL_REACH:
                local.append(active)
            elif kind in PREFIX_TYPES:
                prefix.append(active)
            else:
                whole = True
        self.local = tuple(local)
        self.prefix = tuple(prefix)
        self.holds_whole_text = whole
        self.window = chain_reach(self.local)
        self._pending = ""
        self._progress = _Progress()

    # -- the stream's side -------------------------------------------------------------------

    def feed(self, text: str) -> Release:
        """Take the next piece of the answer; return what may be sent now."""
        if self._progress.stopped:
            raise RuntimeError("the stream was already stopped; feed() after a stop")
        self._pending += text
        held = len(self._pending)
        if self.holds_whole_text or held < self.window + self.step:
            return Release("")
        now = self._clock()
        if (
            self._last_scan is not None
            and now - self._last_scan < self.min_interval
            and held < self.window + MAX_STEP
        ):
            return Release("")  # text arrives faster than a reader reads: scan in bigger steps
        self._last_scan = now
        release = self._timed(self._release_some)
        if release.stop:
            self._observe()
        return release

    def finish(self) -> Release:
        """The answer is complete: release everything still held back."""
        if self._progress.stopped:
            return Release("", self._progress.stopped)
        release = self._timed(self._release_all)
        self._observe()
        return release

    def outcome(self) -> ScanOutcome:
        """What was sent and why, in the shape the non-streaming path reports."""
        progress = self._progress
        hits = tuple(sorted(progress.hits.values(), key=lambda h: h.index))
        action = "block" if progress.blocked else ("redact" if hits else None)
        return ScanOutcome(progress.text, action, hits, tuple(progress.failures.values()))

    # -- releasing -----------------------------------------------------------------------------

    def _timed(self, release: Callable[[], Release]) -> Release:
        started = time.perf_counter()
        try:
            return release()
        finally:
            self._progress.scan_seconds += time.perf_counter() - started

    def _release_all(self) -> Release:
        text, self._pending = self._pending, ""
        if self.holds_whole_text:
            outcome = self.engine.trial(text, self.engine.scanners)
            self._keep(outcome)
            if outcome.action == "block":
                return self._block()
            return self._send(outcome.text)
        outcome = self.engine.trial(text, self.local)
        if outcome.action == "block":
            self._keep(outcome)
            return self._block()
        return self._accept(outcome)

    def _release_some(self) -> Release:
        pending = self._pending
        whole = self.engine.trial(pending, self.local)
        cuts = self._cuts(pending)
        if cuts and whole.action is None and not whole.failures:
            # Nothing anywhere in the held text: release up to the latest cut as it is.
            return self._cut_at(cuts[0], ScanOutcome(pending[: cuts[0]], None))
        for cut in cuts[:CUT_TRIES]:
            tail = self.engine.trial(pending[cut:], self.local)
            if whole.action == "block" and tail.action != "block":
                # The hit starts before the cut and ends a margin before the held text does:
                # more text cannot undo it.
                self._keep(whole)
                return self._block()
            head = self.engine.trial(pending[:cut], self.local)
            if head.action == "block":
                continue
            if whole.action == "block":
                # The tail blocks too, yet another hit may straddle the cut: release the head
                # only when no hit starts before the cut (one would end within a window).
                bridge = self.engine.trial(pending[: cut + self.window], self.local)
                if bridge.action != "block":
                    return self._cut_at(cut, head)
            elif whole.text == head.text + tail.text:
                return self._cut_at(cut, head)  # the cut splits nothing
        if len(pending) < self.window + self.step + MAX_EXTRA_HOLD:
            return Release("")  # no cut, or a hit straddles every cut tried: wait for more
        # Held this long with no clean cut: a hit lies far before the end, so it stays.
        if whole.action == "block":
            self._keep(whole)
            return self._block()
        # No whitespace at all, or a hit across every cut: cut at the window's edge after all.
        cut = cuts[0] if cuts else len(pending) - self.window
        head = self.engine.trial(pending[:cut], self.local)
        if head.action == "block":
            self._keep(head)
            return self._block()
        return self._cut_at(cut, head)

    def _cut_at(self, cut: int, head: ScanOutcome) -> Release:
        self._pending = self._pending[cut:]
        return self._accept(head)

    def _cuts(self, pending: str) -> list[int]:
        """Where the held text may be cut, latest first: just before whitespace, at least a
        window before its end. Never inside a word: the next piece would start there, and a
        word boundary (``\\b``) would match where the whole text has none. Before whitespace,
        so released text never ends in space a reading_time truncation would drop."""
        limit = len(pending) - self.window
        cuts = [m.start() for m in _WHITESPACE.finditer(pending, 1, limit)]
        cuts.reverse()
        return cuts

    def _accept(self, local: ScanOutcome) -> Release:
        """Release ``local.text`` (local scanners done) after the prefix scanners' say."""
        self._keep(local)
        said = self._progress.text
        text = local.text
        for active in self.prefix:
            outcome = self.engine.trial(said + text, (active,))
            self._keep(outcome)
            if outcome.action == "block":
                return self._block()
            if outcome.action == "redact":  # reading_time cut the answer at its limit
                self._progress.stopped = "truncate"
                return self._send(outcome.text[len(said) :], "truncate")
        return self._send(text)

    def _keep(self, outcome: ScanOutcome) -> None:
        """Remember the hits of released text; each scanner counts once per answer, as in
        the non-streaming path, however many pieces it hit."""
        progress = self._progress
        fresh_hits = tuple(h for h in outcome.hits if h.index not in progress.hits)
        fresh_failures = tuple(f for f in outcome.failures if f.index not in progress.failures)
        self.engine.record(
            ScanOutcome(outcome.text, outcome.action, fresh_hits, fresh_failures),
            response_id=self.response_id,
        )
        for hit in outcome.hits:
            kept = progress.hits.get(hit.index)
            if kept is None or hit.score > kept.score:
                progress.hits[hit.index] = hit
        for failure in fresh_failures:
            progress.failures[failure.index] = failure

    def _send(self, text: str, stop: Stop | None = None) -> Release:
        if text:
            self._progress.released.append(text)
        return Release(text, stop)

    def _observe(self) -> None:
        """One scan-duration sample per answer, as the non-streaming path records."""
        if not self._progress.observed:
            self._progress.observed = True
            metrics.SCAN_DURATION.observe(self._progress.scan_seconds)

    def _block(self) -> Release:
        progress = self._progress
        progress.blocked = True
        progress.stopped = "block"
        self._pending = ""
        text = (BLOCK_SEPARATOR if progress.released else "") + self.engine.block_message
        return self._send(text, "block")

"""Scan an answer while it streams: text leaves as soon as no continuation of the answer can
pull it into a match, and never before every scanner that can judge it has seen it.

Scanners fall in three kinds, by how much of the answer a verdict needs:

* **local** (regex, ban_substrings, sensitive, secrets, invisible_text): each says how much of
  the held text is final (``hold``, see ``scanners.base``). Regex-based scanners (regex, the
  sensitive detectors, detect-secrets' plugin regexes) hold from the earliest start where a
  match may still grow, fail or begin: the ``regex`` module's partial matching of each
  pattern anchored at the end of the text. ban_substrings holds the longest end of the text
  that begins a banned substring (an Aho-Corasick trie). The secrets scanner also holds a
  matched token's rest (its redaction takes it). invisible_text holds nothing. In a chain
  each scanner judges the text earlier scanners redacted, which is final only up to their
  holds, so its hold is computed on that text cut there and mapped back to the answer
  (through the redactions' unchanged prefix and suffix; inside a redaction, to its start).
  The guard releases, up to the earliest hold, the text before the latest whitespace, once
  the cut is *consistent*: scanning the held text whole gives the same as scanning the part
  to release and the rest apart. A block is final when a hit lies before such a cut.
  So the text held is typically the last word, or a match still being written.
* **prefix** (token_limit, reading_time): they judge the length of everything said so far, so
  they are checked on the released text plus the part about to be released; over the limit is
  a block (token_limit, reading_time without truncate) or the end of the answer at the limit
  (reading_time with truncate).
* **whole text** (json, ban_substrings with ``contains_all``, regex with ``match_type:
  fullmatch`` or ``is_blocked: false``, secrets with the keyword or entropy plugins (they
  read detect-secrets' INI pass, which parses the whole answer and runs only when nothing
  else was found in it), llm_guard and anything unknown): their verdict needs the whole
  answer, so nothing is released before it ends; it is then scanned as the non-streaming
  path scans it. ``sentinel policy check`` names them (:func:`whole_text_reasons`).

``window`` (the chain's reach: its longest matches, each redacting scanner's added to those
after it) is now only a cap: text held past ``window + MAX_EXTRA_HOLD`` characters is released
at the window's edge, so a match longer than that (an unbounded regex such as ``\\d+`` over
a run of thousands of digits) may be split.

The released text equals what the non-streaming path returns, with these stated differences:
a block after some text was released sends the policy's ``blockMessage`` after that text
(released text cannot be recalled); the prefix kinds are judged after the local scanners'
redactions whatever their place in the chain; a piece scanned apart from what follows it can
be redacted where the whole answer is not (a detect-secrets allowlist comment later on the
line; a lookahead that looks past the next whitespace), never the other way round.
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
    ScannerFailure,
    ScannerHit,
    ScanOutcome,
)
from sentinel_runtime.guardrails.scanners import base
from sentinel_runtime.observability import metrics, tracing

Stop = Literal["block", "truncate"]

# Reach of a regex whose longest match is unbounded (``\d+``), and the most any regex gets.
UNBOUNDED_REACH = 256
# Lookarounds and word boundaries look one character or so past a match.
CONTEXT_MARGIN = 8
# Longest email address (RFC 5321), and thereby the longest match of the sensitive scanner.
SENSITIVE_REACH = 256
# detect-secrets judges a line; a line is held up to this many characters.
SECRETS_REACH = 512
# Scanning waits for this many new characters: every piece of a model's stream is scanned
# (the held text is short, so a scan is cheap) unless text arrives faster than that.
DEFAULT_STEP = 1
# A scan waits at least this long after the previous one (the first scan never waits): a
# stream paced like a model (tens of tokens a second) is still scanned token by token, while
# one that arrives faster than anyone reads is scanned in bigger steps, up to MAX_STEP.
DEFAULT_MIN_INTERVAL = 0.010
MAX_STEP = 2048
# Cuts tried, latest first, before waiting for more text.
CUT_TRIES = 4
# With no consistent cut, text is held up to this much past the window, then released at the
# window's edge anyway (a single match this long is not one the scanners were written for).
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
    """How far ahead the chain may need to see before a verdict is final, now the cap on
    held text. A scanner reads the text earlier scanners redacted, and a redaction depends
    on text up to its scanner's reach, so a hit can depend on the reach of each earlier
    redacting scanner added to its own: an ``sk-`` key redacted to ``[REDACTED]`` right
    after "Do Not Distribute" gives that phrase the word boundary a banned-substring
    scanner needs."""
    window = carried = 0
    for active in local:
        reach = LOCAL_REACH.get(active.spec.type, lambda params: UNBOUNDED_REACH)(
            active.spec.params
        )
        window = max(window, carried + reach)
        if active.spec.action == "redact":
            carried += reach
    return window


def whole_text_reason(active: ActiveScanner) -> str | None:
    """Why this scanner makes a stream wait for the whole answer; None when it does not."""
    if active.spec.type in PREFIX_TYPES:
        return None
    return base.whole_text_reason(active.scanner)


def whole_text_reasons(engine: GuardrailsEngine) -> list[str]:
    """Each scanner of ``engine`` that makes its streams wait for the whole answer, and why."""
    return [
        f"scanner {active.spec.index} ({active.spec.type}): {reason}"
        for active in engine.scanners
        if (reason := whole_text_reason(active)) is not None
    ]


@dataclass(frozen=True)
class _Shift:
    """How one redaction pass moved text: the unchanged prefix and suffix around its edits."""

    before: int  # length of the text the scanner read
    after: int  # length of the text it wrote
    prefix: int
    suffix: int

    @classmethod
    def between(cls, old: str, new: str) -> _Shift:
        prefix = _common_length(old, new, lambda t, n: t[:n])
        room = min(len(old), len(new)) - prefix
        suffix = _common_length(old, new, lambda t, n: t[len(t) - n :], room)
        return cls(len(old), len(new), prefix, suffix)

    def back(self, offset: int) -> int:
        """The offset in the text read that ``offset`` in the text written stands for; inside
        an edit, the start of the edits (earlier is always safe for a hold)."""
        if offset <= self.prefix:
            return offset
        if offset >= self.after - self.suffix:
            return offset - self.after + self.before
        return self.prefix

    def forward(self, offset: int) -> int:
        """The offset in the text written that ``offset`` in the text read became; inside an
        edit, the start of the edits."""
        if offset <= self.prefix:
            return offset
        if offset >= self.before - self.suffix:
            return offset - self.before + self.after
        return self.prefix


def _back(offset: int, shifts: list[_Shift]) -> int:
    """``offset`` in the chain's last text, as an offset of the text it started from."""
    for shift in reversed(shifts):
        offset = shift.back(offset)
    return offset


def _common_length(
    a: str, b: str, part: Callable[[str, int], str], limit: int | None = None
) -> int:
    """The longest ``n`` with ``part(a, n) == part(b, n)``, by bisection (slices compare in C)."""
    low, high = 0, min(len(a), len(b)) if limit is None else limit
    while low < high:
        middle = (low + high + 1) // 2
        if part(a, middle) == part(b, middle):
            low = middle
        else:
            high = middle - 1
    return low


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
        reasons: list[str] = []
        for active in engine.scanners:
            if active.spec.type in PREFIX_TYPES:
                prefix.append(active)
            elif (reason := whole_text_reason(active)) is not None:
                reasons.append(f"{active.spec.type}: {reason}")
            else:
                local.append(active)
        self.local = tuple(local)
        self.prefix = tuple(prefix)
        self.whole_text_reasons = tuple(reasons)
        self.holds_whole_text = bool(reasons)
        self.window = chain_reach(self.local)
        self._pending = ""
        self._fresh = 0  # characters fed since the last scan
        self._progress = _Progress()
        self._started_ns = time.time_ns()  # the start of its span (docs/tracing.md)

    # -- the stream's side -------------------------------------------------------------------

    def feed(self, text: str) -> Release:
        """Take the next piece of the answer; return what may be sent now."""
        if self._progress.stopped:
            raise RuntimeError("the stream was already stopped; feed() after a stop")
        self._pending += text
        self._fresh += len(text)
        if self.holds_whole_text or self._fresh < self.step or not self._pending:
            return Release("")
        now = self._clock()
        if (
            self._last_scan is not None
            and now - self._last_scan < self.min_interval
            and self._fresh < MAX_STEP
        ):
            return Release("")  # text arrives faster than a reader reads: scan in bigger steps
        self._last_scan = now
        self._fresh = 0
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

    @property
    def held(self) -> int:
        """Characters received and not yet released (nor dropped by a stop)."""
        return len(self._pending)

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

    def _judge(self, pending: str) -> tuple[ScanOutcome, int]:
        """The local chain over ``pending`` (as :meth:`GuardrailsEngine.trial` gives it) and
        the earliest offset of ``pending`` some scanner still holds.

        A scanner's input is final only up to the earlier scanners' hold: past it, a
        redaction may still rewrite it (a key redacted after "Distribute" gives that word
        the boundary ban_substrings needs). So each scanner judges its input cut at that
        hold, where any continuation may follow, and its own hold joins it."""
        current = pending
        shifts: list[_Shift] = []
        hits: list[ScannerHit] = []
        failures: list[ScannerFailure] = []
        settled = len(pending)  # in the coordinates of ``current``
        for active in self.local:
            outcome = self.engine.trial(current, (active,))
            hits += outcome.hits
            failures += outcome.failures
            if not outcome.failures:  # a scanner failing open passes the text through
                try:
                    offset = active.scanner.hold(current[:settled])  # type: ignore[attr-defined]
                except Exception:  # a hold search over its budget: hold everything
                    offset = 0
                settled = min(settled, offset)
            if outcome.action == "block":
                blocked = ScanOutcome(outcome.text, "block", tuple(hits), tuple(failures))
                return blocked, _back(settled, shifts)
            if outcome.text != current:
                shift = _Shift.between(current, outcome.text)
                shifts.append(shift)
                settled = shift.forward(settled)
                current = outcome.text
        action = "redact" if hits else None
        return ScanOutcome(current, action, tuple(hits), tuple(failures)), _back(settled, shifts)

    def _release_some(self) -> Release:
        pending = self._pending
        whole, hold = self._judge(pending)
        cuts = self._cuts(pending, hold)
        if whole.action == "block":
            for cut in cuts[:CUT_TRIES]:
                if self.engine.trial(pending[cut:], self.local).action != "block":
                    # The hit starts before a cut no continuation reaches back over: final.
                    self._keep(whole)
                    return self._block()
        elif cuts and whole.action is None and not whole.failures:
            # Nothing anywhere in the held text: release up to the latest cut as it is.
            return self._cut_at(cuts[0], ScanOutcome(pending[: cuts[0]], None))
        else:
            for cut in cuts[:CUT_TRIES]:
                head = self.engine.trial(pending[:cut], self.local)
                if head.action == "block":
                    continue
                tail = self.engine.trial(pending[cut:], self.local)
                if tail.action != "block" and whole.text == head.text + tail.text:
                    return self._cut_at(cut, head)  # the cut splits nothing
        if len(pending) < self.window + MAX_EXTRA_HOLD:
            return Release("")  # no cut, or a hit straddles every cut tried: wait for more
        # Held this long with no clean cut: a hit lies far before the end, so it stays.
        if whole.action == "block":
            self._keep(whole)
            return self._block()
        # The cap: cut at the window's edge after all (before whitespace if there is some).
        edge = len(pending) - self.window
        capped = self._cuts(pending, edge)
        cut = capped[0] if capped else edge
        head = self.engine.trial(pending[:cut], self.local)
        if head.action == "block":
            self._keep(head)
            return self._block()
        return self._cut_at(cut, head)

    def _cut_at(self, cut: int, head: ScanOutcome) -> Release:
        self._pending = self._pending[cut:]
        return self._accept(head)

    def _cuts(self, pending: str, limit: int) -> list[int]:
        """Where the held text may be cut, latest first: just before whitespace, no later than
        ``limit``. Never inside a word: the next piece would start there, and a word boundary
        (``\\b``) would match where the whole text has none. Before whitespace, so released
        text never ends in space a reading_time truncation would drop."""
        cuts = [m.start() for m in _WHITESPACE.finditer(pending, 1, limit + 1)]
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
            progress = self._progress
            metrics.SCAN_DURATION.observe(progress.scan_seconds, exemplar=tracing.exemplar())
            tracing.record(
                "sentinel.stream_guard",
                self._started_ns,
                {
                    "sentinel.policy.hash": self.engine.policy.sha256,
                    "sentinel.scan.seconds": progress.scan_seconds,
                    "sentinel.scan.action": progress.stopped
                    or ("redact" if progress.hits else "allow"),
                    "sentinel.scan.hits": len(progress.hits),
                    "sentinel.stream_guard.whole_text": self.holds_whole_text,
                },
            )

    def _block(self) -> Release:
        progress = self._progress
        progress.blocked = True
        progress.stopped = "block"
        self._pending = ""
        text = (BLOCK_SEPARATOR if progress.released else "") + self.engine.block_message
        return self._send(text, "block")

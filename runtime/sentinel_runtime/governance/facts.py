"""A session's working memory: ground facts with TTL and provenance, and context bindings.

Facts come from tools (a binding applied to a tool's result), from the user (askable
predicates), from the application (seeded facts) or from the solver (derived facts, with the
facts and tool calls they rest on). A tool call also records *coverage*: for its binding's
input values the tool's answer is complete until the TTL ends, so a missing fact is false
(closed world) rather than unknown. A derived fact is dropped as soon as a fact or coverage
it rests on expires or is retracted, or a fact of a predicate it negated is added.

Time comes from an injected clock (seconds), so tests move it by hand. :class:`SessionStore`
keeps the stores of many sessions, least recently used first out, idle ones expired.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sentinel_runtime.governance.syntax import Const, format_term

Clock = Callable[[], float]
Source = Literal["tool", "user", "seed", "derived"]
FactKey = tuple[str, tuple[Const, ...]]
CoverageKey = tuple[str, int, tuple[Const, ...]]  # predicate, binding index, input values


@dataclass(frozen=True)
class Provenance:
    source: Source
    at: float  # clock time it was established
    tool: str | None = None
    call_args: Mapping[str, Any] | None = None
    supports: tuple[FactKey, ...] = ()  # derived: the stored facts it rests on

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "at": self.at}
        if self.tool is not None:
            out["tool"] = self.tool
            out["arguments"] = dict(self.call_args or {})
        if self.supports:
            out["supports"] = [_format(p, a) for p, a in self.supports]
        return out


@dataclass
class Fact:
    predicate: str
    args: tuple[Const, ...]
    provenance: Provenance
    expires_at: float | None = None
    coverage: CoverageKey | None = None  # the tool call that established it

    @property
    def key(self) -> FactKey:
        return (self.predicate, self.args)

    def alive(self, now: float) -> bool:
        return self.expires_at is None or now < self.expires_at

    def __str__(self) -> str:
        return _format(self.predicate, self.args)

    def describe(self, now: float) -> dict[str, Any]:
        return {
            "fact": str(self),
            "predicate": self.predicate,
            "args": list(self.args),
            "provenance": self.provenance.describe(),
            "expiresIn": None if self.expires_at is None else round(self.expires_at - now, 3),
        }


@dataclass
class Coverage:
    key: CoverageKey
    tool: str
    call_args: Mapping[str, Any]
    at: float
    expires_at: float | None
    facts: set[tuple[Const, ...]] = field(default_factory=set)

    def alive(self, now: float) -> bool:
        return self.expires_at is None or now < self.expires_at


@dataclass
class Derived:
    fact: Fact
    supports: frozenset[FactKey | CoverageKey]
    negated: frozenset[str]  # predicates whose absence it relied on
    rulebase_id: str


def _format(predicate: str, args: Iterable[Const]) -> str:
    shown = ", ".join(format_term(a) for a in args)
    return f"{predicate}({shown})" if shown else predicate


def _expiry(now: float, ttl: float | None) -> float | None:
    return None if ttl is None else now + ttl


class FactStore:
    """One session's facts and context bindings. Not thread-safe: one session is served by
    one event loop; :class:`SessionStore` guards the map of sessions."""

    def __init__(self, clock: Clock = time.time, max_facts: int = 100_000) -> None:
        self.clock = clock
        self.max_facts = max_facts
        self._facts: dict[str, dict[tuple[Const, ...], Fact]] = {}
        # predicate -> per position -> value -> argument tuples (dicts: insertion order)
        self._index: dict[str, list[dict[Const, dict[tuple[Const, ...], None]]]] = {}
        self._coverage: OrderedDict[CoverageKey, Coverage] = OrderedDict()
        self._derived: dict[FactKey, Derived] = {}
        self._dependents: dict[Any, set[FactKey]] = {}
        self._negators: dict[str, set[FactKey]] = {}
        self._expiries: list[tuple[float, int, Any]] = []
        self._sequence = 0
        self._count = 0
        self.contexts: dict[str, Const] = {}

    # -- base facts --------------------------------------------------------------------------

    def add(
        self,
        predicate: str,
        args: Iterable[Const],
        source: Source = "seed",
        ttl: float | None = None,
        *,
        tool: str | None = None,
        call_args: Mapping[str, Any] | None = None,
        coverage: CoverageKey | None = None,
    ) -> Fact:
        now = self.clock()
        values = tuple(args)
        fact = Fact(
            predicate,
            values,
            Provenance(source, now, tool, dict(call_args) if call_args else None),
            _expiry(now, ttl),
            coverage,
        )
        table = self._facts.setdefault(predicate, {})
        old = table.get(values)
        if old is not None:
            self._invalidate(old.key)  # a derived fact rests on the old record's validity
        else:
            self._count += 1
            index = self._index.setdefault(predicate, [{} for _ in values])
            for position, value in enumerate(values):
                index[position].setdefault(value, {})[values] = None
        table[values] = fact
        if fact.expires_at is not None:
            self._schedule(fact.expires_at, ("fact", fact.key))
        for key in list(self._negators.get(predicate, ())):
            self._drop_derived(key)
        return fact

    def retract(self, predicate: str, args: Iterable[Const]) -> bool:
        values = tuple(args)
        table = self._facts.get(predicate)
        if table is None or values not in table:
            return False
        fact = table.pop(values)
        self._count -= 1
        index = self._index[predicate]
        for position, value in enumerate(values):
            bucket = index[position].get(value)
            if bucket is not None:
                bucket.pop(values, None)
                if not bucket:
                    del index[position][value]
        if fact.coverage is not None and fact.coverage in self._coverage:
            self._coverage[fact.coverage].facts.discard(values)
        self._invalidate(fact.key)
        return True

    def record_call(
        self,
        key: CoverageKey,
        tool: str,
        call_args: Mapping[str, Any],
        facts: Iterable[tuple[Const, ...]],
        ttl: float | None,
    ) -> Coverage:
        """A tool's answer for one binding and input: it replaces what the previous answer for
        the same input established, and is complete until ``ttl`` ends."""
        predicate = key[0]
        old = self._coverage.pop(key, None)
        if old is not None:
            for values in list(old.facts):
                fact = self._facts.get(predicate, {}).get(values)
                if fact is not None and fact.coverage == key:
                    self.retract(predicate, values)
            self._invalidate(key)
        now = self.clock()
        coverage = Coverage(key, tool, dict(call_args), now, _expiry(now, ttl))
        self._coverage[key] = coverage
        for values in facts:
            self.add(predicate, values, "tool", ttl, tool=tool, call_args=call_args, coverage=key)
            coverage.facts.add(values)
        if coverage.expires_at is not None:
            self._schedule(coverage.expires_at, ("coverage", key))
        self._evict()
        return coverage

    def coverage(self, key: CoverageKey, now: float | None = None) -> Coverage | None:
        coverage = self._coverage.get(key)
        if coverage is None or not coverage.alive(self.clock() if now is None else now):
            return None
        return coverage

    def get(self, predicate: str, args: Iterable[Const], now: float | None = None) -> Fact | None:
        fact = self._facts.get(predicate, {}).get(tuple(args))
        if fact is None or not fact.alive(self.clock() if now is None else now):
            return None
        return fact

    def candidates(
        self, predicate: str, position: int | None, value: Const | None
    ) -> Iterable[tuple[Const, ...]]:
        """Argument tuples of ``predicate`` (alive or not: the caller checks), narrowed to
        those with ``value`` at ``position`` when a position is given."""
        if position is None:
            return self._facts.get(predicate, {}).keys()
        index = self._index.get(predicate)
        if index is None or position >= len(index):
            return ()
        return index[position].get(value, {}).keys()  # type: ignore[arg-type]

    def fact(self, predicate: str, args: tuple[Const, ...]) -> Fact | None:
        return self._facts.get(predicate, {}).get(args)

    def facts(self, now: float | None = None) -> Iterator[Fact]:
        moment = self.clock() if now is None else now
        for table in self._facts.values():
            for fact in table.values():
                if fact.alive(moment):
                    yield fact

    def __len__(self) -> int:
        return self._count

    # -- derived facts -----------------------------------------------------------------------

    def add_derived(
        self,
        predicate: str,
        args: tuple[Const, ...],
        supports: Iterable[FactKey | CoverageKey],
        negated: Iterable[str],
        rulebase_id: str,
    ) -> None:
        support_set = frozenset(supports)
        now = self.clock()
        if not all(self._support_alive(s, now) for s in support_set):
            return
        key: FactKey = (predicate, args)
        base = tuple(s for s in support_set if len(s) == 2)
        fact = Fact(predicate, args, Provenance("derived", now, supports=base))  # type: ignore[arg-type]
        self._drop_derived(key)
        self._derived[key] = Derived(fact, support_set, frozenset(negated), rulebase_id)
        for support in support_set:
            self._dependents.setdefault(support, set()).add(key)
        for name in negated:
            self._negators.setdefault(name, set()).add(key)

    def derived(
        self, predicate: str, args: tuple[Const, ...], rulebase_id: str, now: float | None = None
    ) -> Derived | None:
        entry = self._derived.get((predicate, args))
        if entry is None or entry.rulebase_id != rulebase_id:
            return None
        moment = self.clock() if now is None else now
        if not all(self._support_alive(s, moment) for s in entry.supports):
            self._drop_derived((predicate, args))
            return None
        return entry

    def derived_facts(self, now: float | None = None) -> list[Fact]:
        moment = self.clock() if now is None else now
        return [
            entry.fact
            for entry in list(self._derived.values())
            if self.derived(entry.fact.predicate, entry.fact.args, entry.rulebase_id, moment)
        ]

    def _support_alive(self, support: Any, now: float) -> bool:
        if len(support) == 3:
            coverage = self._coverage.get(support)
            return coverage is not None and coverage.alive(now)
        fact = self._facts.get(support[0], {}).get(support[1])
        return fact is not None and fact.alive(now)

    def _invalidate(self, support: Any) -> None:
        for key in list(self._dependents.pop(support, ())):
            self._drop_derived(key)

    def _drop_derived(self, key: FactKey) -> None:
        entry = self._derived.pop(key, None)
        if entry is None:
            return
        for support in entry.supports:
            dependents = self._dependents.get(support)
            if dependents is not None:
                dependents.discard(key)
        for name in entry.negated:
            self._negators.get(name, set()).discard(key)
        self._invalidate(key)  # a derived fact may rest on another

    # -- expiry and size ---------------------------------------------------------------------

    def _schedule(self, at: float, item: Any) -> None:
        self._sequence += 1
        heapq.heappush(self._expiries, (at, self._sequence, item))

    def purge(self) -> int:
        """Drop what has expired (facts, coverage, what rests on them); the count of facts."""
        now = self.clock()
        dropped = 0
        while self._expiries and self._expiries[0][0] <= now:
            _, _, (kind, key) = heapq.heappop(self._expiries)
            if kind == "fact":
                fact = self._facts.get(key[0], {}).get(key[1])
                if fact is not None and not fact.alive(now):
                    self.retract(*key)
                    dropped += 1
            else:
                coverage = self._coverage.get(key)
                if coverage is not None and not coverage.alive(now):
                    del self._coverage[key]
                    self._invalidate(key)
        return dropped

    def _evict(self) -> None:
        """Over ``max_facts``: forget the oldest tool answers whole (they can be fetched again)."""
        while self._count > self.max_facts and self._coverage:
            key, coverage = self._coverage.popitem(last=False)
            for values in list(coverage.facts):
                fact = self._facts.get(key[0], {}).get(values)
                if fact is not None and fact.coverage == key:
                    self.retract(key[0], values)
            self._invalidate(key)

    # -- context -----------------------------------------------------------------------------

    def bind(self, name: str, value: Const) -> Const | None:
        """Bind (or rebind: focus shift) a context name; returns the previous value."""
        previous = self.contexts.get(name)
        self.contexts[name] = value
        return previous

    def established_values(self) -> set[Const]:
        """Every value that occurs in a valid fact or a context binding (strict mode's test)."""
        values: set[Const] = set(self.contexts.values())
        now = self.clock()
        for fact in self.facts(now):
            values.update(fact.args)
        for fact in self.derived_facts(now):
            values.update(fact.args)
        return values

    # -- views -------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        now = self.clock()
        return {
            "contexts": dict(self.contexts),
            "facts": [f.describe(now) for f in sorted(self.facts(now), key=_order)],
            "derived": [f.describe(now) for f in sorted(self.derived_facts(now), key=_order)],
        }

    def summary(
        self,
        contexts: Mapping[str, str] | None = None,
        askables: Mapping[str, str] | None = None,
        max_facts: int = 50,
    ) -> str:
        """A compact text for the LLM's prompt: context bindings (declared ones shown even when
        unbound), facts with their source and remaining validity, derived facts, and what can
        be asked of the user."""
        now = self.clock()
        lines = ["Context:"]
        names = list(contexts or {}) + sorted(set(self.contexts) - set(contexts or {}))
        for name in names or ["(none)"]:
            if name == "(none)":
                lines.append("  (none)")
            elif name in self.contexts:
                lines.append(f"  {name} = {format_term(self.contexts[name])}")
            else:
                lines.append(f"  {name}: unbound")
        facts = sorted(self.facts(now), key=_order)
        lines.append("Facts:" if facts else "Facts: (none)")
        for fact in facts[:max_facts]:
            lines.append(f"  {fact}  [{_source(fact, now)}]")
        if len(facts) > max_facts:
            lines.append(f"  ... {len(facts) - max_facts} more")
        derived = sorted(self.derived_facts(now), key=_order)
        if derived:
            lines.append("Derived:")
            lines.extend(f"  {fact}" for fact in derived[:max_facts])
            if len(derived) > max_facts:
                lines.append(f"  ... {len(derived) - max_facts} more")
        if askables:
            lines.append("Askable (ask the user, then assert the answer):")
            lines.extend(f"  {pattern}: {question}" for pattern, question in askables.items())
        return "\n".join(lines)


def _order(fact: Fact) -> tuple[str, str]:
    return (fact.predicate, str(fact))


def _source(fact: Fact, now: float) -> str:
    where = fact.provenance.tool or fact.provenance.source
    if fact.expires_at is None:
        return where
    left = max(0.0, fact.expires_at - now)
    return f"{where}, valid {_duration(left)}"


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f}h"
    if seconds >= 60:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    return f"{seconds:.0f}s"


class SessionStore:
    """Fact stores by session id: at most ``max_sessions`` (least recently used evicted), and a
    session idle for ``idle_seconds`` starts afresh."""

    def __init__(
        self,
        max_sessions: int = 1000,
        idle_seconds: float = 3600.0,
        clock: Clock = time.time,
        max_facts: int = 100_000,
        seed: Callable[[FactStore], None] | None = None,
    ) -> None:
        self.max_sessions = max_sessions
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.max_facts = max_facts
        self.seed = seed  # called on each new session's store (the logged-in user, today)
        self._sessions: OrderedDict[str, tuple[FactStore, float]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session_id: str) -> FactStore:
        now = self.clock()
        with self._lock:
            self._expire(now)
            entry = self._sessions.pop(session_id, None)
            return self._keep(session_id, entry[0] if entry is not None else None, now)

    def _keep(self, session_id: str, store: FactStore | None, now: float) -> FactStore:
        if store is None:
            store = FactStore(self.clock, self.max_facts)
            if self.seed is not None:
                self.seed(store)
        self._sessions[session_id] = (store, now)
        while len(self._sessions) > self.max_sessions:
            self._sessions.popitem(last=False)
        return store

    def find(self, session_id: str) -> FactStore | None:
        """An existing session's store, marked as used now; None when there is none."""
        now = self.clock()
        with self._lock:
            self._expire(now)
            entry = self._sessions.pop(session_id, None)
            if entry is None:
                return None
            self._sessions[session_id] = (entry[0], now)
            return entry[0]

    def create(self, session_id: str) -> FactStore | None:
        """A new session's store; None when the id is taken (and not expired)."""
        now = self.clock()
        with self._lock:
            self._expire(now)
            if session_id in self._sessions:
                return None
            return self._keep(session_id, None, now)

    def peek(self, session_id: str) -> FactStore | None:
        with self._lock:
            self._expire(self.clock())
            entry = self._sessions.get(session_id)
            return entry[0] if entry is not None else None

    def drop(self, session_id: str) -> bool:
        with self._lock:
            return self._sessions.pop(session_id, None) is not None

    def _expire(self, now: float) -> None:
        while self._sessions:
            session_id, (_, last) = next(iter(self._sessions.items()))
            if now - last < self.idle_seconds:
                return
            del self._sessions[session_id]

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

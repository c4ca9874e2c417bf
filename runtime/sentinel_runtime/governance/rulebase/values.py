"""Reading typed values out of the ``tools`` section, each problem recorded at its place.

:class:`Reader` is what :mod:`.build` builds on: booleans, durations, mappings, fact patterns,
tool arguments and JSON paths, read from YAML values that may be anything. A bad value is
recorded as an :class:`~.model.Issue` (located by :mod:`.locate`) and reading goes on, so
that one run reports every problem of the section.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from sentinel_runtime.governance.paths import JsonPath, PathError, compile_path
from sentinel_runtime.governance.rulebase.locate import Locator
from sentinel_runtime.governance.rulebase.model import Issue, Offset, Problem, SectionPath
from sentinel_runtime.governance.syntax import Atom, ClauseSyntaxError, Term, Variable, parse_atom

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\Z")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


class Reader:
    """The problems found so far, and the readers that add to them."""

    def __init__(self, source: str | None) -> None:
        self.locate = Locator(source)
        self.issues: list[Issue] = []

    def error(
        self,
        message: str,
        path: SectionPath,
        offset: Offset | None = None,
        key: bool = False,
    ) -> None:
        self.issues.append(self.locate.issue(message, path, offset, key))

    def report(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self.error(problem.message, problem.path, problem.offset, problem.key)

    # typed values: each returns a usable value (or None) and records a problem if it is bad

    def flag(self, value: Any, path: SectionPath) -> bool:
        if isinstance(value, bool):
            return value
        self.error(f"expected true or false, got {value!r}", path)
        return False

    def duration(self, value: Any, path: SectionPath) -> float | None:
        if value is None or value == "session":
            return None
        if isinstance(value, bool):
            self.error(
                f"expected seconds, a duration such as 60s or 5m, or null; got {value}", path
            )
            return None
        if isinstance(value, int | float) and value >= 0:
            return float(value)
        match = _DURATION.match(str(value).strip()) if isinstance(value, str) else None
        if match is None:
            self.error(
                f"expected seconds, a duration such as 60s or 5m, or null; got {value!r}", path
            )
            return None
        return float(match.group(1)) * _UNITS[match.group(2)]

    def mapping(self, value: Any, path: SectionPath, what: str) -> Mapping[Any, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.error(f"{what} must be a mapping, not a {type(value).__name__}", path)
            return {}
        return value

    def pattern(self, text: Any, path: SectionPath, key: bool = False) -> Atom | None:
        if not isinstance(text, str):
            self.error(f"expected a pattern such as p(X, Y), got {text!r}", path, key=key)
            return None
        slash = re.fullmatch(r"\s*([a-z][A-Za-z0-9_]*)\s*/\s*(\d+)\s*", text)
        if slash:
            arity = int(slash.group(2))
            return Atom(slash.group(1), tuple(Variable(f"A{i + 1}") for i in range(arity)), 1, 1)
        try:
            atom = parse_atom(text)
        except ClauseSyntaxError as problem:
            self.error(
                problem.message, path, None if key else (problem.line, problem.column), key=key
            )
            return None
        names = [a.name for a in atom.args if isinstance(a, Variable)]
        if len(names) != len(atom.args) or len(set(names)) != len(names):
            self.error(
                f"a pattern has distinct variables as arguments: {atom}",
                path,
                None if key else (atom.line, atom.column),
                key=key,
            )
            return None
        return atom

    def arguments(
        self, item: tuple[Any, Any], path: SectionPath, variables: set[str], what: str
    ) -> dict[str, Term]:
        key, raw = item
        out: dict[str, Term] = {}
        for name, value in self.mapping(raw, (*path, key), "args").items():
            where = (*path, key, name)
            if isinstance(value, str) and (value[:1].isupper() or value == "_"):
                if value not in variables and what == "binding":
                    self.error(
                        f"args maps {name} to {value}, which is not a variable of the fact pattern",
                        where,
                    )
                    continue
                out[str(name)] = Variable(value)
            elif isinstance(value, str | int | float) and not isinstance(value, bool):
                out[str(name)] = value
            else:
                self.error(f"an argument maps to a Variable or a constant, not {value!r}", where)
        return out

    def json_path(self, text: Any, path: SectionPath, fan_out: bool) -> JsonPath | None:
        if not isinstance(text, str):
            self.error(f"expected a JSON path such as $.status, got {text!r}", path)
            return None
        try:
            compiled = compile_path(text.strip())
        except PathError as exc:
            self.error(str(exc), path, (1, exc.offset + 1))
            return None
        if compiled.fans_out and not fan_out:
            self.error("[*] gives many values; use it in `each`, not here", path)
            return None
        return compiled

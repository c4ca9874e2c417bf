"""The clause language of the ``tools`` section: terms, atoms, rules and goals (pure).

Datalog with Prolog's spelling: a variable starts with an upper-case letter or ``_``; a
constant is a lower-case name (``cancelled``), a quoted string (``"BK-789"``) or a number;
names and strings are the same constants (``cancelled`` equals ``"cancelled"``, so values read
from a tool's JSON match names written in rules). A clause is ``head :- body.`` or a ground
``head.``; a body is a comma-separated conjunction of atoms ``p(X, a)``, negated atoms
``not p(X)`` and comparisons ``X = Y``, ``X != Y``, ``X < Y``, ``X =< Y`` (or ``<=``), ``X > Y``,
``X >= Y``. ``%`` and ``#`` start a comment that runs to the end of the line.

Every parse problem carries a 1-based line and column within the parsed text; the rulebase
maps them to the policy file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

Const = str | int | float


@dataclass(frozen=True, slots=True)
class Variable:
    name: str

    def __str__(self) -> str:
        return self.name


Term = Const | Variable

_NAME = re.compile(r"[a-z][A-Za-z0-9_]*\Z")


def format_term(term: Term) -> str:
    """A term as it would be written in a rule (strings quoted unless they read as a name)."""
    if isinstance(term, Variable):
        return term.name
    if isinstance(term, str):
        return term if _NAME.match(term) and term != "not" else json.dumps(term)
    return repr(term)


@dataclass(frozen=True, slots=True)
class Atom:
    predicate: str
    args: tuple[Term, ...]
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    @property
    def arity(self) -> int:
        return len(self.args)

    def variables(self) -> list[Variable]:
        return [a for a in self.args if isinstance(a, Variable)]

    def __str__(self) -> str:
        if not self.args:
            return self.predicate
        return f"{self.predicate}({', '.join(format_term(a) for a in self.args)})"


@dataclass(frozen=True, slots=True)
class Negation:
    atom: Atom
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    def variables(self) -> list[Variable]:
        return self.atom.variables()

    def __str__(self) -> str:
        return f"not {self.atom}"


COMPARISONS = ("=", "!=", "<", "=<", ">", ">=")


@dataclass(frozen=True, slots=True)
class Comparison:
    op: str
    left: Term
    right: Term
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    def variables(self) -> list[Variable]:
        return [t for t in (self.left, self.right) if isinstance(t, Variable)]

    def __str__(self) -> str:
        return f"{format_term(self.left)} {self.op} {format_term(self.right)}"


Literal = Atom | Negation | Comparison


@dataclass(frozen=True, slots=True)
class Clause:
    head: Atom
    body: tuple[Literal, ...]
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    def __str__(self) -> str:
        if not self.body:
            return f"{self.head}."
        return f"{self.head} :- {', '.join(str(lit) for lit in self.body)}."


@dataclass(frozen=True)
class ClauseSyntaxError(Exception):
    message: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.message}"


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # name, var, number, string, op, punct, end
    text: str
    line: int
    column: int


_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\r\n]+)
  | (?P<comment>[%\#][^\n]*)
  | (?P<number>-?\d+(?:\.\d+)?(?![A-Za-z_]))
  | (?P<name>[a-z][A-Za-z0-9_]*)
  | (?P<var>[A-Z_][A-Za-z0-9_]*)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<punct>:-|[(),.])
  | (?P<op>!=|\\=|=<|<=|>=|=|<|>)
    """,
    re.VERBOSE,
)
_OP_ALIASES = {"\\=": "!=", "<=": "=<"}


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    line, line_start, pos = 1, 0, 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        column = pos - line_start + 1
        if match is None:
            raise ClauseSyntaxError(f"unexpected character {text[pos]!r}", line, column)
        kind = match.lastgroup or ""
        value = match.group()
        if kind not in ("space", "comment"):
            tokens.append(_Token(kind, value, line, column))
        newlines = value.count("\n")
        if newlines:
            line += newlines
            line_start = match.start() + value.rindex("\n") + 1
        pos = match.end()
    tokens.append(_Token("end", "", line, pos - line_start + 1))
    return tokens


def _describe(token: _Token) -> str:
    return "the end of the text" if token.kind == "end" else repr(token.text)


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.anonymous = 0

    @property
    def token(self) -> _Token:
        return self.tokens[self.pos]

    def peek(self, offset: int = 1) -> _Token:
        return self.tokens[min(self.pos + offset, len(self.tokens) - 1)]

    def advance(self) -> _Token:
        token = self.token
        if token.kind != "end":
            self.pos += 1
        return token

    def expect(self, text: str, context: str) -> _Token:
        if self.token.text != text or self.token.kind not in ("punct", "op"):
            raise ClauseSyntaxError(
                f"expected {text!r} {context}, found {_describe(self.token)}",
                self.token.line,
                self.token.column,
            )
        return self.advance()

    def term(self) -> Term:
        token = self.advance()
        if token.kind == "var":
            if token.text == "_":
                self.anonymous += 1
                return Variable(f"_{self.anonymous}")
            return Variable(token.text)
        if token.kind == "name":
            return token.text
        if token.kind == "number":
            return float(token.text) if "." in token.text else int(token.text)
        if token.kind == "string":
            return _unquote(token)
        raise ClauseSyntaxError(
            f"expected a variable, name, string or number, found {_describe(token)}",
            token.line,
            token.column,
        )

    def atom(self) -> Atom:
        token = self.token
        if token.kind != "name":
            raise ClauseSyntaxError(
                f"expected a predicate name, found {_describe(token)}", token.line, token.column
            )
        self.advance()
        args: list[Term] = []
        if self.token.text == "(" and self.token.kind == "punct":
            self.advance()
            args.append(self.term())
            while self.token.text == "," and self.token.kind == "punct":
                self.advance()
                args.append(self.term())
            self.expect(")", f"to close the arguments of {token.text}")
        return Atom(token.text, tuple(args), token.line, token.column)

    def literal(self) -> Literal:
        token = self.token
        if token.kind == "name" and token.text == "not" and self.peek().kind == "name":
            self.advance()
            return Negation(self.atom(), token.line, token.column)
        if token.kind == "name" and self.peek().kind != "op":
            return self.atom()
        left = self.term()
        op_token = self.token
        if op_token.kind != "op":
            raise ClauseSyntaxError(
                f"expected a comparison ({', '.join(COMPARISONS)}) after "
                f"{format_term(left)}, found {_describe(op_token)}",
                op_token.line,
                op_token.column,
            )
        self.advance()
        right = self.term()
        op = _OP_ALIASES.get(op_token.text, op_token.text)
        return Comparison(op, left, right, token.line, token.column)

    def body(self, stop: tuple[str, ...]) -> tuple[Literal, ...]:
        literals = [self.literal()]
        while self.token.text == "," and self.token.kind == "punct":
            self.advance()
            literals.append(self.literal())
        if not (self.token.text in stop and self.token.kind in ("punct", "end")):
            wanted = " or ".join("the end" if s == "" else repr(s) for s in stop)
            raise ClauseSyntaxError(
                f"expected ',' or {wanted} after {literals[-1]}, found {_describe(self.token)}",
                self.token.line,
                self.token.column,
            )
        return tuple(literals)

    def clause(self) -> Clause:
        self.anonymous = 0
        head = self.atom()
        if self.token.text == "." and self.token.kind == "punct":
            self.advance()
            return Clause(head, (), head.line, head.column)
        if self.token.text != ":-":
            raise ClauseSyntaxError(
                f"expected ':-' or '.' after {head}, found {_describe(self.token)}",
                self.token.line,
                self.token.column,
            )
        self.advance()
        body = self.body((".",))
        self.advance()
        return Clause(head, body, head.line, head.column)

    def skip_clause(self) -> None:
        """After an error: resume after the next '.' that ends a clause."""
        while self.token.kind != "end":
            token = self.advance()
            if token.text == "." and token.kind == "punct":
                return


def _unquote(token: _Token) -> str:
    body = token.text[1:-1]
    if token.text[0] == "'":
        body = body.replace('\\"', '"').replace("\\'", "'").replace('"', '\\"')
    try:
        return json.loads(f'"{body}"')
    except json.JSONDecodeError as exc:
        raise ClauseSyntaxError(f"invalid string {token.text}", token.line, token.column) from exc


def parse_program(text: str) -> tuple[list[Clause], list[ClauseSyntaxError]]:
    """Every clause of ``text`` and every syntax problem (parsing resumes after each one)."""
    try:
        parser = _Parser(_tokens(text))
    except ClauseSyntaxError as problem:
        return [], [problem]
    clauses: list[Clause] = []
    problems: list[ClauseSyntaxError] = []
    while parser.token.kind != "end":
        start = parser.pos
        try:
            clauses.append(parser.clause())
        except ClauseSyntaxError as problem:
            problems.append(problem)
            parser.pos = max(parser.pos, start)
            parser.skip_clause()
    return clauses, problems


def parse_body(text: str) -> tuple[Literal, ...]:
    """A conjunction (a goal or a guard's preconditions); a final '.' is optional."""
    parser = _Parser(_tokens(text))
    if parser.token.kind == "end":
        raise ClauseSyntaxError("expected a goal, found nothing", parser.token.line, 1)
    literals = parser.body((".", ""))
    if parser.token.text == ".":
        parser.advance()
    if parser.token.kind != "end":
        raise ClauseSyntaxError(
            f"unexpected {_describe(parser.token)} after the goal",
            parser.token.line,
            parser.token.column,
        )
    return literals


def parse_atom(text: str) -> Atom:
    """One atom such as ``flight_status(Flight, Status)`` (a binding's or askable's pattern)."""
    parser = _Parser(_tokens(text))
    atom = parser.atom()
    if parser.token.kind != "end":
        raise ClauseSyntaxError(
            f"unexpected {_describe(parser.token)} after {atom}",
            parser.token.line,
            parser.token.column,
        )
    return atom

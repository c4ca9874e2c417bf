"""Which detect-secrets plugin regexes can match a text, known without running them.

The secrets scanner (``scanners/secrets.py``) runs detect-secrets' plugins as its file scan
would; this module holds what lets it skip work with the same findings: per-line literals a
plugin regex needs (``PREGATES``), literals every match starts with or reaches
(:func:`literal_prefixes`, :func:`literal_reach`), the filter that needs a literal
(``FILTER_PREGATES``) and what the eager INI pass needs to find anything (``EAGER_NEEDS``,
``EAGER_SELF_CONTAINED``). Each claim is checked against the real regexes and passes by
``test_secrets_pregates``, ``test_secrets_prefixes`` and ``test_secrets_long_lines``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import ahocorasick

# Some plugin regexes cost up to 50 microseconds per line (case-insensitive alternations
# behind lookaheads), others scan every position of the text for a character class.
# Each regex of these plugins needs, on the line it matches, one of the ``any_of``
# literals (case-folded for IGNORECASE plugins) and, when given, one of the ``and_any_of``
# characters; lines without them are not searched.
# ``test_secrets_pregates`` checks the claim against the real regexes.
DIGITS = tuple("0123456789")
QUOTES = ("'", '"', "`")
PREGATES: dict[str, tuple[tuple[str, ...], bool, tuple[str, ...]]] = {
    # plugin class: (any_of, compare case-folded, and_any_of)
    "KeywordDetector": (("key", "pass", "pwd", "secret", "contrase"), True, QUOTES),
    "CloudantDetector": (("key", "pw", "pass", "token", "cloudant"), True, ()),
    "IbmCloudIamDetector": (("key", "pwd", "pass", "token"), True, ()),
    "IbmCosHmacDetector": (("key",), True, ()),
    "SoftlayerDetector": (("key", "pwd", "pass", "token", "softlayer"), True, ()),
    "ArtifactoryDetector": (("AKC", "AP"), False, ()),
    "MailchimpDetector": (("-us",), False, ()),
    "IPPublicDetector": (DIGITS, False, (".",)),
    "AWSKeyDetector": (("a3t", "abia", "acca", "akia", "asia", "aws"), True, ()),
    "SlackDetector": (("xox", "hooks.slack.com"), True, ()),
    "StripeDetector": (("k_live_",), False, ()),
    "Base64HighEntropyString": (QUOTES[:2], False, ()),
    "HexHighEntropyString": (QUOTES[:2], False, ()),
    # Not DIGITS: the regex's \d also matches other scripts' digits ("١٢٣٤٥٦٧٨:...").
    "TelegramBotTokenDetector": ((":",), False, ()),
    "DiscordBotTokenDetector": ((".",), False, ()),
}

# What the eager INI pass adds to the key and value it cuts from the text.
EAGER_ADDED = frozenset(' ="\\')
# For these plugins a pregate literal is in most answers (":" and "AP" of "API"), so the eager
# pass is skipped only when the text lacks a sharper piece every match holds, contiguous and
# made of nothing the pass adds: the digits and colon of a Telegram token, "AKC" or "AP" and a
# hex digit of an Artifactory token. ``test_secrets_pregates`` checks them on the regexes.
# Telegram's piece is a digit then a colon, written from the colon: ``re`` jumps from one
# literal first character to the next, but tries a class (``\d``) at every start.
EAGER_NEEDS: dict[str, re.Pattern[str]] = {
    "TelegramBotTokenDetector": re.compile(r":(?<=\d:)"),
    "ArtifactoryDetector": re.compile(r"AKC|AP[\dABCDEF]"),
}
# Plugins whose regexes hold no anchor, no lookbehind and nothing that matches what the pass
# adds, while their literals ("." and "gh", "AC" and "SK") are in most answers: a match in
# one of the pass's lines is a match in the text, so their own regexes say whether it can
# find anything. ``test_secrets_pregates`` checks it against the real INI pass.
EAGER_SELF_CONTAINED = frozenset(
    {"DiscordBotTokenDetector", "GitHubTokenDetector", "TwilioKeyDetector"}
)

# detect-secrets filters that can reject a line only when this literal is in it or in its
# code snippet: every allowlist comment says "pragma: allowlist secret". Skipping the
# filter otherwise saves its dozen regexes over a long line (1.7 ms for 19 KB).
# ``test_secrets_long_lines`` checks the claim against the real filter.
FILTER_PREGATES: dict[str, str] = {
    "detect_secrets.filters.allowlist.is_line_allowlisted": "pragma",
}

# A match attempt from one start costs about what searching this many characters does.
WINDOW_START_COST = 8
# Literal occurrences read per literal before GateLiterals looks each literal up instead: a
# text dense with them ("....") costs no more than one substring check per literal.
HITS_PER_LITERAL = 4


def first_known(verdict: bool | None, regex: re.Pattern[str], line: str) -> bool:
    return bool(regex.search(line)) if verdict is None else verdict


class GateLiterals:
    """Which gates can match a text, from the distinct literals found in it.

    A gate with ``any_of`` can pass on a line only if one of them (case-folded for a folded
    gate) is in that line, so in the text; one with ``prefixes`` only if a prefix is in the
    text; a gate with neither always runs. Many gates share literals (``key``, ``:``), so
    looking each up once instead of per gate saves most of the scanner's cost on a short
    answer, with the same gates left to run; one Aho-Corasick pass finds them all.
    """

    def __init__(self, gates: tuple[Gate, ...]) -> None:
        plain: dict[str, list[int]] = {}
        folded: dict[str, list[int]] = {}
        always: list[int] = []
        for index, gate in enumerate(gates):
            literals = gate.any_of or gate.prefixes
            if not literals:
                always.append(index)
                continue
            table = folded if gate.any_of and gate.folded else plain
            for literal in literals:
                table.setdefault(literal, []).append(index)
        self._always = tuple(always)
        self._plain = tuple((literal, tuple(found)) for literal, found in plain.items())
        self._folded = tuple((literal, tuple(found)) for literal, found in folded.items())
        self._plain_automaton = _automaton({lit: gates for lit, gates in self._plain})
        self._folded_automaton = _automaton({lit: gates for lit, gates in self._folded})

    def possible(self, text: str) -> list[int]:
        """Indexes of the gates that may match ``text``, in gate order."""
        chosen = set(self._always)
        _open_gates(self._plain_automaton, self._plain, text, chosen)
        if self._folded:
            _open_gates(self._folded_automaton, self._folded, text.casefold(), chosen)
        return sorted(chosen)


def _automaton(values: dict[str, object]) -> ahocorasick.Automaton | None:
    """An Aho-Corasick automaton reporting ``values[literal]`` for each occurrence of a
    literal (None for no literals)."""
    if not values:
        return None
    automaton = ahocorasick.Automaton()
    for literal, value in values.items():
        automaton.add_word(literal, value)
    automaton.make_automaton()
    return automaton


def _open_gates(
    automaton: ahocorasick.Automaton | None,
    table: tuple[tuple[str, tuple[int, ...]], ...],
    text: str,
    chosen: set[int],
) -> None:
    """Add to ``chosen`` the gates of every literal of ``table`` that is in ``text``.

    One pass over the text finds them all, where a substring check per literal read a short
    answer once per literal (47 checks). A text holding literals many times over is looked
    up literal by literal instead, so it costs what it did before.
    """
    if automaton is None:
        return
    for count, (_end, gates) in enumerate(automaton.iter(text)):
        if count == HITS_PER_LITERAL * len(table):
            chosen.update(g for literal, found in table if literal in text for g in found)
            return
        chosen.update(gates)


@dataclass(frozen=True)
class EagerTriggers:
    """What in a text lets the eager INI pass find something the line pass did not: the
    engine's ``_eager_pass_can_find``, decided once per engine instead of per gate and text.

    ``always``: a gate with no literal, or one made of what the pass adds; otherwise the
    text must hold a gate literal (``literals`` in the text, ``folded`` in its casefold), an
    ``EAGER_NEEDS`` piece or a match of an ``EAGER_SELF_CONTAINED`` plugin's own regex, or
    interpolation (``%(``), which joins values.
    """

    always: bool
    literals: ahocorasick.Automaton | None
    folded: ahocorasick.Automaton | None
    regexes: tuple[re.Pattern[str], ...]

    @classmethod
    def of(cls, gates: tuple[Gate, ...], plugin_names: list[str]) -> EagerTriggers:
        always = False
        plain: set[str] = set()
        folded: set[str] = set()
        regexes: list[re.Pattern[str]] = []
        for gate in gates:
            name = plugin_names[gate.plugin]
            if name in EAGER_SELF_CONTAINED:
                regexes.append(gate.regex)
                continue
            need = EAGER_NEEDS.get(name)
            if need is not None:
                if need not in regexes:
                    regexes.append(need)
                continue
            literals = gate.any_of or gate.prefixes
            if not literals or any(set(lit) <= EAGER_ADDED for lit in literals):
                always = True
            (folded if gate.folded else plain).update(literals)
        return cls(
            always,
            _automaton(dict.fromkeys(plain, True)),
            _automaton(dict.fromkeys(folded, True)),
            tuple(regexes),
        )

    def can_find(self, text: str) -> bool:
        if self.always or "%(" in text:
            return True
        # The first occurrence of any literal settles it (one pass, stopped there).
        if self.literals is not None and next(self.literals.iter(text), None) is not None:
            return True
        if self.folded is not None and next(self.folded.iter(text.casefold()), None) is not None:
            return True
        return any(pattern.search(text) for pattern in self.regexes)


@dataclass(frozen=True)
class Gate:
    """One plugin regex and the cheap checks that decide whether it needs to run."""

    regex: re.Pattern[str]
    plugin: int  # index of the plugin in the engine's list
    any_of: tuple[str, ...] = ()  # PREGATES: per-line literals
    folded: bool = False
    and_any_of: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()  # derived: every match starts with one of these
    # derived: every match holds one of ``any_of`` at most this far from its start
    reach: int | None = None

    def search_near_literals(self, line: str, haystack: str) -> bool | None:
        """Whether the regex matches ``line``, trying only starts within ``reach`` before a
        literal; None when that would not be cheaper than searching the whole line.

        The pregated regexes cost up to 130 ns per character wherever they start, so one
        long line holding "key" once cost milliseconds per regex.
        """
        if self.reach is None or len(haystack) != len(line):  # casefold grew: offsets moved
            return None
        if len(line) <= WINDOW_START_COST * (self.reach + 1):
            # One literal's window alone could cost what searching the whole line does.
            return None
        starts: set[int] = set()
        for literal in self.any_of:
            at = haystack.find(literal)
            while at != -1:
                starts.update(range(max(0, at - self.reach), at + 1))
                if len(starts) * WINDOW_START_COST > len(line):
                    return None
                at = haystack.find(literal, at + 1)
        # match(line, pos) sees the characters before pos, as search(line) does.
        return any(self.regex.match(line, start) for start in sorted(starts))


def literal_prefixes(pattern: re.Pattern[str]) -> tuple[str, ...]:
    """Literal strings one of which starts every match of a case-sensitive ``pattern``.

    Empty when none can be read off the pattern (a class, an assertion or IGNORECASE first).
    Uses the ``re`` module's own parser, so the answer is what ``re`` will match.
    """
    if pattern.flags & re.IGNORECASE:
        return ()
    try:
        from re import _constants, _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(pattern.pattern, pattern.flags)
    except Exception:  # a parser we do not know: no shortcut, just run the regex
        return ()

    def walk(items: list[tuple[object, object]]) -> tuple[str, ...]:
        literal: list[str] = []
        for op, arg in items:
            if op is _constants.LITERAL:
                literal.append(chr(arg))  # type: ignore[arg-type]
                continue
            if not literal and op is _constants.SUBPATTERN:
                _group, add_flags, del_flags, sub = arg  # type: ignore[misc]
                return () if add_flags or del_flags else walk(list(sub))
            if not literal and op is _constants.BRANCH:
                branches = [walk(list(branch)) for branch in arg[1]]  # type: ignore[index]
                return () if not all(branches) else tuple(p for b in branches for p in b)
            break
        return ("".join(literal),) if literal else ()

    return walk(list(parsed))


def literal_reach(pattern: re.Pattern[str], literals: tuple[str, ...], folded: bool) -> int | None:
    """The farthest from a match's start that one of ``literals`` begins, in every match.

    None when no bound can be read off ``pattern``: a literal only after an unbounded part,
    case rules the gate does not share, or a case-folded literal with an "i" (IGNORECASE
    matches "i" to the dotless i U+0131, which casefold keeps apart, so the literal would
    not be found where the match holds it). Uses the ``re`` module's own parser.
    """
    if bool(pattern.flags & re.IGNORECASE) != folded:
        return None
    if folded and any("i" in lit for lit in literals):
        return None
    try:
        from re import _constants, _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(pattern.pattern, pattern.flags)
    except Exception:  # a parser we do not know: no shortcut, just run the regex
        return None

    def leads(items: list[tuple[object, object]], text: str) -> bool:
        """Whether every match of ``items``, after ``text``, begins with a literal."""
        for op, arg in items:
            if op is _constants.LITERAL:
                text += chr(arg)  # type: ignore[arg-type]
                continue
            if op is _constants.SUBPATTERN:
                _group, add_flags, del_flags, sub = arg  # type: ignore[misc]
                return not add_flags and not del_flags and leads([*sub, *items[1:]], text)
            if op is _constants.BRANCH:
                rest = items[items.index((op, arg)) + 1 :]
                return all(leads([*branch, *rest], text) for branch in arg[1])  # type: ignore[index]
            break
        haystack = text.casefold() if folded else text
        return any(haystack.startswith(lit) for lit in literals)

    items = list(parsed)
    offset = 0
    for index, item in enumerate(items):
        if leads(items[index:], ""):
            return offset
        width = _parser.SubPattern(parsed.state, [item]).getwidth()[1]
        if width >= _constants.MAXREPEAT:
            return None
        offset += width
    return None

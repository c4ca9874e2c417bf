r"""Regular expressions as text for the harm judge: ``trie`` builds an alternation of
literal phrases, ``read`` reads a pattern's source back into its tree. ``harm_lexicon``
builds its patterns with ``trie``; ``harm_scan`` reads each pattern's trigger words from
its tree and finds them with a ``trie``.

The tree is a list of ``(op, argument)`` items, named and shaped as Python's own ``re``
parser gives them (a group without flags unpacked into the sequence around it, the items
all alternatives of an alternation start with moved in front of it, an alternation of
single characters made one class), but read here with public means, for the syntax the
data files use: literals, ``\`` escapes of punctuation, ``\b \B \A \Z \d \D \s \S \w \W``
control characters and ``\x \u \U`` codes, classes, groups (``(?:``, numbered, ``(?i:``/``(?-i:``),
lookarounds, repeats and ``^ $ .``. ``read`` raises ValueError on anything else.
"""

from __future__ import annotations

import re
from typing import Any


def trie(literals: set[str]) -> str:
    """An alternation of literal phrases shaped as a trie: Python's ``re`` tries every
    branch of a flat alternation at every position, which is what made long texts slow."""
    root: dict[str, dict] = {}
    for literal in literals:
        node = root
        for char in literal:
            node = node.setdefault(char, {})
        node[""] = {}

    def render(node: dict[str, dict]) -> str:
        branches = [
            (r"\s+" if char == " " else re.escape(char)) + render(child)
            for char, child in sorted(node.items())
            if char
        ]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return "(?:" + render(root) + ")"


Item = tuple[str, Any]  # (op, argument), named as re's parser names them
REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
_CATEGORY = {
    "d": "DIGIT",
    "D": "NOT_DIGIT",
    "s": "SPACE",
    "S": "NOT_SPACE",
    "w": "WORD",
    "W": "NOT_WORD",
}
_CLASS_ESCAPES: dict[str, Item] = {
    **{letter: ("IN", [("CATEGORY", f"CATEGORY_{name}")]) for letter, name in _CATEGORY.items()},
    **{
        letter: ("LITERAL", ord(char))
        for letter, char in zip("abfnrtv", "\a\b\f\n\r\t\v", strict=True)
    },
}
_AT = {"b": "AT_BOUNDARY", "B": "AT_NON_BOUNDARY", "A": "AT_BEGINNING_STRING", "Z": "AT_END_STRING"}
_ESCAPES: dict[str, Item] = _CLASS_ESCAPES | {letter: ("AT", at) for letter, at in _AT.items()}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}
_HEX = re.compile(r"[0-9a-fA-F]+")
_REPEAT_CHARS = {"*": (0, None), "+": (1, None), "?": (0, 1)}
_BOUNDS = re.compile(r"([0-9]*)(,([0-9]*))?\}")
_LOOKAROUNDS = (
    ("=", "ASSERT", 1),
    ("!", "ASSERT_NOT", 1),
    ("<=", "ASSERT", -1),
    ("<!", "ASSERT_NOT", -1),
)
_SCOPED_FLAGS = re.compile(r"([aiLu]*)(?:-([aiLu]*))?:")
_FLAGS = {"a": re.ASCII, "i": re.IGNORECASE, "L": re.LOCALE, "u": re.UNICODE}
_PLAIN_GROUP = (None, 0, 0)  # no number, no flags: unpacked into the sequence around it


def read(source: str) -> list[Item]:
    """The tree of a pattern's ``source``; ValueError for a syntax not read here."""
    return _Reader(source).read()


class _Reader:
    """Reads a source left to right, as ``re``'s own parser does, into the same tree."""

    def __init__(self, source: str) -> None:
        self.source, self.at, self.groups = source, 0, 0

    def read(self) -> list[Item]:
        items = self.alternatives()
        if self.at != len(self.source):
            raise ValueError("unbalanced parenthesis")
        return items

    def take(self, text: str) -> bool:
        found = self.source.startswith(text, self.at)
        self.at += len(text) if found else 0
        return found

    def token(self) -> str:
        """The next character, or a backslash and the character after it."""
        size = 2 if self.source.startswith("\\", self.at) else 1
        token = self.source[self.at : self.at + size]
        if len(token) < size:
            raise ValueError("unexpected end of pattern")
        self.at += size
        return token

    def alternatives(self) -> list[Item]:
        options = [self.sequence()]
        while self.take("|"):
            options.append(self.sequence())
        if len(options) == 1:
            return options[0]
        head = []
        while all(options) and all(_same(option[0], options[0][0]) for option in options):
            head.append(options[0][0])
            for option in options:
                del option[0]
        if all(len(option) == 1 and _one_char(option[0]) for option in options):
            chars = [c for [(op, av)] in options for c in ([(op, av)] if op == "LITERAL" else av)]
            return [*head, ("IN", list(dict.fromkeys(chars)))]
        return [*head, ("BRANCH", (None, options))]

    def sequence(self) -> list[Item]:
        items: list[Item] = []
        while self.at < len(self.source) and self.source[self.at] not in "|)":
            token = self.token()
            if token[0] == "\\":
                items.append(self.escape(token, _ESCAPES))
            elif token == "[":
                items.append(self.char_class())
            elif token in "*+?{" and (bounds := self.bounds(token)):
                if not items or items[-1][0] in ("AT", *REPEATS):
                    raise ValueError("nothing to repeat")
                child = [items[-1]]
                if child[0][0] == "SUBPATTERN" and child[0][1][:3] == _PLAIN_GROUP:
                    child = child[0][1][3]
                kind = "MIN" if self.take("?") else "POSSESSIVE" if self.take("+") else "MAX"
                items[-1] = (f"{kind}_REPEAT", (*bounds, child))
            elif token == "(":
                items.append(self.group())
            elif token in ".^$":
                items.append(
                    {".": ("ANY", None), "^": ("AT", "AT_BEGINNING")}.get(token, ("AT", "AT_END"))
                )
            else:
                items.append(("LITERAL", ord(token)))
        plain = [
            av[3] if op == "SUBPATTERN" and av[:3] == _PLAIN_GROUP else [(op, av)]
            for op, av in items
        ]
        return [item for unpacked in plain for item in unpacked]

    def escape(self, token: str, known: dict[str, Item]) -> Item:
        letter = token[1]
        if letter in known:
            return known[letter]
        if letter in _HEX_DIGITS:  # \x41, \u2019, \U0001f600
            digits = self.source[self.at : self.at + _HEX_DIGITS[letter]]
            if not _HEX.fullmatch(digits) or len(digits) < _HEX_DIGITS[letter]:
                raise ValueError(f"bad escape {token}")
            self.at += len(digits)
            return ("LITERAL", int(digits, 16))
        if letter.isascii() and letter.isalnum():  # a back reference, \N{...}, ...
            raise ValueError(f"unsupported escape {token}")
        return ("LITERAL", ord(letter))

    def char_class(self) -> Item:
        negate = self.take("^")
        chars: list[Item] = []
        while (token := self.token()) != "]" or not chars:
            first = self.class_char(token)
            if not self.take("-"):
                chars.append(first[1][0] if first[0] == "IN" else first)
                continue
            token = self.token()
            if token == "]":
                chars += [first[1][0] if first[0] == "IN" else first, ("LITERAL", ord("-"))]
                break
            last = self.class_char(token)
            if first[0] != "LITERAL" or last[0] != "LITERAL" or last[1] < first[1]:
                raise ValueError("bad character range")
            chars.append(("RANGE", (first[1], last[1])))
        chars = list(dict.fromkeys(chars))
        if len(chars) == 1 and chars[0][0] == "LITERAL":
            return ("NOT_LITERAL", chars[0][1]) if negate else chars[0]
        return ("IN", [("NEGATE", None), *chars] if negate else chars)

    def class_char(self, token: str) -> Item:
        return self.escape(token, _CLASS_ESCAPES) if token[0] == "\\" else ("LITERAL", ord(token))

    def bounds(self, token: str) -> tuple[int, int | None] | None:
        """A repeat's bounds; None for a "{" that is a plain character."""
        if token != "{":
            return _REPEAT_CHARS[token]
        found = _BOUNDS.match(self.source, self.at)
        if found is None or found[0] == "}":
            return None
        self.at = found.end()
        low, high = found[1], found[1] if found[2] is None else found[3]
        bounds = (int(low) if low else 0, int(high) if high else None)
        if bounds[1] is not None and bounds[1] < bounds[0]:
            raise ValueError("min repeat greater than max repeat")
        return bounds

    def group(self) -> Item:
        if not self.take("?"):
            self.groups += 1
            return self.close("SUBPATTERN", (self.groups, 0, 0))
        if self.take(":"):
            return self.close("SUBPATTERN", _PLAIN_GROUP)
        for opener, op, direction in _LOOKAROUNDS:
            if self.take(opener):
                return self.close(op, (direction,))
        found = _SCOPED_FLAGS.match(self.source, self.at)
        if found is None or not (found[1] or found[2]):
            raise ValueError("unsupported group")
        self.at = found.end()
        on, off = (sum(_FLAGS[letter] for letter in letters or "") for letters in found.groups())
        return self.close("SUBPATTERN", (None, on, off))

    def close(self, op: str, head: tuple) -> Item:
        body = self.alternatives()
        if not self.take(")"):
            raise ValueError("missing )")
        return (op, (*head, body))


def _same(item: Item, other: Item) -> bool:
    """Equal as ``re``'s parser compares first items: by value, but groups, repeats and
    alternations (which hold sequences) only when they are the same object."""
    if item[0] in ("LITERAL", "NOT_LITERAL", "IN", "AT", "ANY"):
        return item == other
    return item is other


def _one_char(item: Item) -> bool:
    return item[0] == "LITERAL" or (item[0] == "IN" and item[1][0][0] != "NEGATE")

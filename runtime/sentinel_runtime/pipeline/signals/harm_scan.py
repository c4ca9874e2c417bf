r"""Where a set of patterns can match in a text, found in one pass: ``Index`` reads each
pattern's trigger words from the pattern itself, ``Scan`` finds where they start in a text
and tries each pattern only there. ``harm_lexicon`` builds the harm judge's patterns and
their ``Index``; ``harm`` looks for every pattern through ``harm_lexicon.Scan``.

Python's ``re`` tries a pattern at every position of a text, so judging a 500-character
chunk with the lexicon's ~75 patterns cost ~5 ms. But almost every match of them starts
with a word from a short list ("kill", "kills", "killing" for ``\bkill(?:s|ing)?\s+...``),
or at least contains one. ``Scan`` finds where any of those words start with one combined
pattern, then tries each pattern only at those places (``pattern.match(text, position)``)
and searches it whole only when a word it needs elsewhere occurs: ten times faster or more
on ordinary documents (``bench/harm_speed.py``). The words are read from each pattern's
tree (``harm_regex.read``), never written by hand, and that reading only ever widens:
whatever it cannot read (``\w+``, a class, a repeat) ends a word or makes a part "search
whole", so ``Scan(index, text).search(pattern)`` is always ``pattern.search(text) is not
None``.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Any

from sentinel_runtime.pipeline.signals import harm_regex

# --- trigger words: what every match of a pattern starts with, or contains ----------------

_WORD_CHAR = re.compile(r"\w")
_TRIGGER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_REPEATS = harm_regex.REPEATS
_ZERO_WIDTH = ("AT", "ASSERT", "ASSERT_NOT")
_WORD_STARTS_AFTER = ("AT_BOUNDARY", "AT_BEGINNING", "AT_BEGINNING_STRING")
_NON_WORD_CATEGORIES = ("CATEGORY_SPACE", "CATEGORY_NOT_WORD", "CATEGORY_LINEBREAK")
_DIGITS = "0123456789"
_RARE = 0.05  # a trigger set rarer than this (by ``_cost``) is good enough as a test
_GUARD_GAIN = 4  # a needed word this much rarer than the first words guards them
_MAX_SPELLINGS = 3000  # beyond this many, a trigger word is cut short (still a valid prefix)
# Ends a trigger that must be the whole word: "plan " is "plan" but not "plans", "plan" both.
_WHOLE = " "
# Characters that re.IGNORECASE matches to an ASCII letter but str.lower() leaves alone
# (found by trying every code point); "İ" also lowers to two characters.
_CASE_SPECIALS = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"))
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")
# Words so frequent that a rarer trigger word the same part needs is the better test; a
# trigger that begins one of them (its prefix) is as frequent.
_COMMON_WORDS = (
    *("a", "an", "and", "or", "of", "to", "in", "on", "at", "for", "with", "by", "from", "as"),
    *("is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those"),
    *("my", "your", "his", "her", "our", "their", "i", "you", "he", "she", "we", "they", "me"),
    *("him", "them", "us", "how", "what", "which", "who", "when", "where", "why", "can"),
    *("could", "would", "should", "will", "do", "does", "did", "have", "has", "had", "not"),
    *("no", "any", "all", "some", "one", "use", "if", "so", "but", "the", "there", "then"),
    *("than", "just", "get", "got", "make", "like", "more", "also", "about", "into", "out"),
)
_COMMON = frozenset(
    (
        *(word[:end] for word in _COMMON_WORDS for end in range(1, len(word) + 1)),
        *(word + _WHOLE for word in _COMMON_WORDS),
    )
)


def fold(text: str) -> str:
    """``text`` with every character case-insensitively equal to an ASCII letter or digit
    made that letter or digit, position for position, so trigger words are plain lowercase."""
    if text.isascii():
        return text.lower()
    # Rare characters, so look for them before paying for a pass (str.translate is ~40 us).
    for special, letter in _CASE_SPECIALS:
        if special in text:
            text = text.replace(special, letter)
    folded = text.lower()
    if any(char.isdecimal() for char in _NON_ASCII.findall(folded)):
        folded = _OTHER_DIGIT.sub("0", folded)  # "\d" matches them: now they are "0"
    return folded


@functools.cache
def _is_word(code: int) -> bool:
    return _WORD_CHAR.match(chr(code)) is not None


def _other_words(group: tuple) -> bool:
    """A ``(?a:...)`` or ``(?L:...)`` group has another ``\\b`` than the finder's: unread."""
    return bool(group[1] & (re.ASCII | re.LOCALE))


def _chars(op: str, av: Any) -> frozenset[str] | None:
    """The trigger characters a literal or a small class matches, if all of them are."""
    if op == "LITERAL":
        chars = {chr(av).lower()}
    elif op == "IN":
        chars = set()
        for item_op, item in av:
            if item_op == "LITERAL":
                chars.add(chr(item).lower())
            elif item_op == "RANGE" and item[1] - item[0] < len(_DIGITS):
                chars.update(chr(code).lower() for code in range(item[0], item[1] + 1))
            elif item_op == "CATEGORY" and item == "CATEGORY_DIGIT":
                chars.update(_DIGITS)  # fold() made every other digit a "0"
            else:
                return None
    else:
        return None
    return frozenset(chars) if chars <= _TRIGGER_CHARS else None


def _begins_non_word(op: str, av: Any) -> bool:
    """Whether this element starts with a character that cannot be in a word."""
    if op == "LITERAL":
        return not _is_word(av)
    if op == "IN":
        return _non_word_only(av)
    if op in _REPEATS:
        return av[0] > 0 and len(av[2]) > 0 and _begins_non_word(*av[2][0])
    if op == "SUBPATTERN":
        return not _other_words(av) and len(av[3]) > 0 and _begins_non_word(*av[3][0])
    if op == "BRANCH":
        return all(len(alt) > 0 and _begins_non_word(*alt[0]) for alt in av[1])
    return False


def _non_word_only(av: list) -> bool:
    for item_op, item in av:
        if item_op == "LITERAL" and not _is_word(item):
            continue
        if item_op == "CATEGORY" and item in _NON_WORD_CATEGORIES:
            continue
        return False
    return True


def _after(items: list, word_start: bool) -> bool:
    for op, av in items:
        word_start = _after_one(op, av, word_start)
    return word_start


def _after_one(op: str, av: Any, word_start: bool) -> bool:
    """Whether a word character right after this element of a pattern starts a word,
    given whether one right before it would (``word_start``); False when unsure."""
    if op == "AT":
        return True if av in _WORD_STARTS_AFTER else word_start and av != "AT_NON_BOUNDARY"
    if op in ("ASSERT", "ASSERT_NOT"):
        return word_start
    if op == "LITERAL":
        return not _is_word(av)
    if op == "IN":
        return _non_word_only(av)
    if op == "SUBPATTERN":
        return not _other_words(av) and _after(av[3], word_start)
    if op == "BRANCH":
        return all(_after(alt, word_start) for alt in av[1])
    if op in _REPEATS:
        low, high, child = av
        # Later rounds start after an earlier one, so judge them from the unsure side.
        once = _after(child, word_start if high == 1 else False)
        return once and (word_start or low > 0)
    return False


def _spell(prefixes: frozenset[str], items: list) -> frozenset[str]:
    """``prefixes`` continued through ``items`` for as long as the characters are known,
    marked ``_WHOLE`` where the word surely ends (``\\b``, a space, a hyphen)."""
    for index, (op, av) in enumerate(items):
        if (op == "AT" and av == "AT_BOUNDARY") or _begins_non_word(op, av):
            return frozenset(prefix + _WHOLE for prefix in prefixes)
        if op in _ZERO_WIDTH:
            continue
        chars = _chars(op, av)
        if chars is not None:
            longer = frozenset(prefix + char for prefix in prefixes for char in chars)
            if len(longer) > _MAX_SPELLINGS:
                return prefixes
            prefixes = longer
            continue
        rest = items[index + 1 :]
        if op == "SUBPATTERN" and not _other_words(av):
            return _spell(prefixes, [*av[3], *rest])
        if op == "BRANCH":
            options = [_spell(prefixes, [*alt, *rest]) for alt in av[1]]
        elif op in _REPEATS and av[1] == 1:
            options = [_spell(prefixes, [*av[2], *rest])]
            options += [_spell(prefixes, rest)] if av[0] == 0 else []
        else:
            return prefixes
        spelled = frozenset().union(*options)
        return spelled if len(spelled) <= _MAX_SPELLINGS else prefixes
    return prefixes


def _lead(items: list, word_start: bool, anywhere: bool = False) -> frozenset[str] | None:
    """Trigger words one of which begins every match of ``items``, at a word start (or,
    ``anywhere``, wherever); None when the match may begin otherwise."""
    for index, (op, av) in enumerate(items):
        rest = items[index + 1 :]
        if op in _ZERO_WIDTH:
            word_start = _after_one(op, av, word_start)
            continue
        if op == "SUBPATTERN":
            return None if _other_words(av) else _lead([*av[3], *rest], word_start, anywhere)
        if op == "BRANCH":
            options = [_lead([*alt, *rest], word_start, anywhere) for alt in av[1]]
            return None if None in options else frozenset().union(*options)
        if op in _REPEATS:
            low, high, child = av
            taken = _lead([*child, *rest] if high == 1 else list(child), word_start, anywhere)
            if taken is None or low > 0:
                return taken
            skipped = _lead(rest, word_start, anywhere)
            return None if skipped is None else taken | skipped
        chars = _chars(op, av)
        if chars is None or not (word_start or anywhere):
            return None
        return _spell(chars, rest)
    return None


def _required(items: list, word_start: bool, anywhere: bool = False) -> frozenset[str] | None:
    """Trigger words one of which every match of ``items`` contains, at a word start (or,
    ``anywhere``, wherever): the rarest such set, or None."""
    best = None
    for index, (op, av) in enumerate(items):
        options = [_lead(items[index:], word_start, anywhere)]
        if op == "SUBPATTERN" and not _other_words(av):
            options.append(_required(av[3], word_start, anywhere))
        elif op == "BRANCH":
            each = [_required(alt, word_start, anywhere) for alt in av[1]]
            options.append(None if None in each else frozenset().union(*each))
        elif op in _REPEATS and av[0] > 0:
            options.append(_required(av[2], word_start and av[1] == 1, anywhere))
        for found in options:
            if found is not None and (best is None or _cost(found) < _cost(best)):
                best = found
        if best is not None and _cost(best) < _RARE:
            return best  # rare enough: reading further only costs time at start-up
        word_start = _after_one(op, av, word_start)
    return best


@functools.cache
def _cost(triggers: frozenset[str]) -> float:
    """Roughly how often one of ``triggers`` starts a word of English text."""
    return sum(
        1.0 if trigger in _COMMON else 4.0 ** -len(trigger.rstrip(_WHOLE)) for trigger in triggers
    )


def _shortest(triggers: frozenset[str]) -> frozenset[str]:
    """Without the triggers that a shorter one already covers ("kill" covers "killing" and
    "kill ", a whole word covers only itself)."""
    kept: set[str] = set()
    covering: set[str] = set()
    for trigger in sorted(triggers, key=len):
        if not any(trigger[:end] in covering for end in range(1, len(trigger) + 1)):
            kept.add(trigger)
            if not trigger.endswith(_WHOLE):
                covering.add(trigger)
    return frozenset(kept)


def _alternatives(items: list) -> list[list]:
    """The top-level alternatives of a parsed pattern, each a whole sequence (the parser
    moves a ``\\b`` that all parts share in front of their alternation)."""
    for index, (op, av) in enumerate(items):
        if op in _ZERO_WIDTH:
            continue
        if op == "BRANCH":
            head, rest = items[:index], items[index + 1 :]
            return [found for alt in av[1] for found in _alternatives([*head, *alt, *rest])]
        break
    return [items]


def _only_at_start(items: list) -> bool:
    for op, av in items:
        if op == "AT" and av in ("AT_BEGINNING", "AT_BEGINNING_STRING"):
            return True
        if op not in _ZERO_WIDTH:
            return False
    return False


@dataclass(frozen=True)
class _Plan:
    """How ``Scan`` looks for one pattern, alternative by alternative: try it where a word
    it starts with starts (``starts``), or there only when the text also holds a rarer
    word it needs (``guarded``: needed words, first words; the first words, often "a" or
    "the", are then looked for on demand), or at position 0 (``at_zero``:
    ``^...``); else search the whole pattern when a word it needs occurs (``gate``), or a
    piece of text (``gate_substrings``), or always (``always``). ``needs``,
    ``needs_substrings`` and ``needs_nothing`` say what a sentence must hold for the
    pattern to match in it. Trigger words stand for any word they begin."""

    starts: frozenset[str] = frozenset()
    guarded: tuple[tuple[frozenset[str], frozenset[str]], ...] = ()
    guards: tuple[tuple[frozenset[str], re.Pattern[str]], ...] = ()  # guarded, with finders
    at_zero: bool = False
    gate: frozenset[str] = frozenset()
    gate_substrings: tuple[str, ...] = ()
    always: bool = False
    needs: frozenset[str] = frozenset()
    needs_substrings: tuple[str, ...] = ()
    needs_nothing: bool = False
    gated: bool = False  # always, gate or gate_substrings: searched whole at times


def _plan(pattern: re.Pattern[str]) -> _Plan:
    # Another \b than the finder's, or a syntax harm_regex does not read: search whole.
    search_whole = _Plan(always=True, needs_nothing=True, gated=True)
    if pattern.flags & (re.ASCII | re.LOCALE | re.VERBOSE):
        return search_whole
    try:
        parsed = harm_regex.read(pattern.pattern)
    except ValueError:
        return search_whole
    multiline = bool(pattern.flags & re.MULTILINE)
    starts, gate, needs = set(), set(), set()
    gate_substrings, needs_substrings = set(), set()
    guarded: dict[frozenset[str], set[str]] = {}
    at_zero = always = needs_nothing = False
    for alternative in _alternatives(list(parsed)):
        lead = _lead(alternative, word_start=False)
        lead = _shortest(lead) if lead else None
        # What every match holds: its first words, or a rarer word it needs elsewhere
        # ("in real life": "real", "9-year-old": "year"), looked for unless they are rare.
        needed = None if lead and _cost(lead) < _RARE else _required(alternative, False)
        needed = _shortest(needed) if needed else None
        if lead and (not needed or _cost(needed) * _GUARD_GAIN > _cost(lead)):
            needed = lead
        anywhere = None if needed else _required(alternative, False, anywhere=True)
        if anywhere:  # looked for as plain text, so a whole word's end is not part of it
            anywhere = _shortest(frozenset(word.rstrip(_WHOLE) for word in anywhere))
        if needed:
            needs |= needed
        elif anywhere:
            needs_substrings |= anywhere
        else:
            needs_nothing = True
        # Where to try it: a match costs ~1 us, a search of a whole pattern ~100 matches.
        if lead and needed == lead:
            starts |= lead
        elif lead:
            guarded.setdefault(needed, set()).update(lead)
        elif _only_at_start(alternative) and not multiline:
            at_zero = True
        elif needed:
            gate |= needed
        elif anywhere:
            gate_substrings |= anywhere
        else:
            always = True
    return _Plan(
        starts=_shortest(frozenset(starts)),
        guarded=tuple((needed, frozenset(lead)) for needed, lead in guarded.items()),
        at_zero=at_zero,
        gate=_shortest(frozenset(gate)),
        gate_substrings=tuple(sorted(_shortest(frozenset(gate_substrings)))),
        always=always,
        needs=_shortest(frozenset(needs)),
        needs_substrings=tuple(sorted(_shortest(frozenset(needs_substrings)))),
        needs_nothing=needs_nothing,
        gated=bool(always or gate or gate_substrings),
    )


def _finder(words: set[str] | frozenset[str], word_start: str = r"\b") -> re.Pattern[str]:
    """The pattern that finds, at each word start, the longest of ``words`` there (whole
    words among them as plain prefixes: ``Scan`` checks where the word ends)."""
    return re.compile(word_start + harm_regex.trie({word.rstrip(_WHOLE) for word in words}))


class Index:
    """Plans for ``patterns``, and ``finder``, the one pattern that finds all their trigger
    words: at each word start, the longest trigger word there. As a word found stands for
    its prefixes too, each plan's triggers are widened to the trigger words they begin
    ("kill" to "kill", "killing"), and ``starting`` maps each trigger word to the patterns
    to try where it was found."""

    def __init__(self, patterns: list[re.Pattern[str]]) -> None:
        # Keyed by id(): hashing a compiled pattern hashes its whole code (~80 us for the
        # largest here). The patterns are kept, so no other object can take their ids.
        self.patterns = patterns
        read = {id(pattern): _plan(pattern) for pattern in patterns}
        words: set[str] = set()
        for plan in read.values():
            words.update(plan.starts, plan.gate, plan.needs)
            words.update(word for needed, _ in plan.guarded for word in needed)
        self.finder = _finder(words)
        self.wholes = frozenset(word.rstrip(_WHOLE) for word in words if word.endswith(_WHOLE))
        # What the finder reports: a trigger, or a whole word's letters, then maybe ended.
        found = words | self.wholes
        beginning: dict[str, set[str]] = {}
        for word in found:
            letters = word.rstrip(_WHOLE)
            for end in range(1, len(letters) + 1):
                beginning.setdefault(letters[:end], set()).add(word)
            beginning.setdefault(word, set()).add(word)

        def widen(triggers: frozenset[str]) -> frozenset[str]:
            return frozenset(word for trigger in triggers for word in beginning[trigger])

        self.plans = {
            key: dataclasses.replace(
                plan,
                starts=widen(plan.starts),
                # Without \b, a pattern opening with a letter is scanned for fast.
                guards=tuple(
                    (widen(needed), _finder(lead, word_start="")) for needed, lead in plan.guarded
                ),
                gate=widen(plan.gate),
                needs=widen(plan.needs),
            )
            for key, plan in read.items()
        }
        starting: dict[str, list[int]] = {}
        for key, plan in self.plans.items():
            for word in plan.starts:
                starting.setdefault(word, []).append(key)
        self.starting = {word: tuple(starting.get(word, ())) for word in found}


class Scan:
    """One text and where the index's trigger words start in it. ``search(pattern)``
    answers as ``pattern.search(text) is not None`` would; ``may_match(pattern)`` is False
    only when the pattern matches in no sentence (substring) of the text. A pattern the
    index does not hold is searched whole."""

    def __init__(self, index: Index, text: str) -> None:
        self.index = index
        self.text = text
        self.folded: str | None = fold(text)
        self.found: dict[str, list[int]] = {}  # trigger word -> where it starts
        self.starts: dict[int, list[int]] = {}  # id(pattern) -> where to try it
        if len(self.folded) != len(text):  # never, by construction; then search everything
            self.folded = None
            return
        folded, found, wholes, word_char = self.folded, self.found, index.wholes, _WORD_CHAR.match
        for hit in index.finder.finditer(folded):
            word = hit[0]
            if word in wholes and not word_char(folded, hit.end()):
                word += _WHOLE
            if word in found:
                found[word].append(hit.start())
            else:
                found[word] = [hit.start()]
        for word, positions in found.items():
            for key in index.starting[word]:
                self.starts.setdefault(key, []).extend(positions)

    def search(self, pattern: re.Pattern[str]) -> bool:
        plan = self.index.plans.get(id(pattern))
        if plan is None or self.folded is None:
            return pattern.search(self.text) is not None
        if plan.gated and self._gate_open(plan):
            return pattern.search(self.text) is not None
        text, match = self.text, pattern.match
        if plan.at_zero and match(text):
            return True
        for start in self.starts.get(id(pattern), ()):
            if match(text, start):
                return True
        for needed, first_words in plan.guards:
            if not needed.isdisjoint(self.found):
                for hit in first_words.finditer(self.folded):
                    start = hit.start()
                    mid_word = start > 0 and _WORD_CHAR.match(self.folded, start - 1)
                    if not mid_word and match(text, start):
                        return True
        return False

    def may_match(self, pattern: re.Pattern[str]) -> bool:
        plan = self.index.plans.get(id(pattern))
        if plan is None or self.folded is None or plan.needs_nothing:
            return True
        if not plan.needs.isdisjoint(self.found):
            return True
        return any(substring in self.folded for substring in plan.needs_substrings)

    def _gate_open(self, plan: _Plan) -> bool:
        return (
            plan.always
            or not plan.gate.isdisjoint(self.found)
            or any(substring in self.folded for substring in plan.gate_substrings)
        )

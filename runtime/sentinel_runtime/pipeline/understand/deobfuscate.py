"""Readings of a prompt that hides its words from a judge: leetspeak, spaced or dotted
letters, look-alike letters from other scripts, base64, hex, rot13, URL escapes, reversed
text and strings split across variables.

``decoded_forms`` gives a judge (``harm``, ``introspection``) more texts to read beside the
canonical prompt, which is what it is given: ``canonical.canonicalise`` has already removed
zero-width and tag characters and folded full-width letters. Every decoded form goes through
``canonicalise`` again, so a payload cannot bring those back. A reading is returned only
when it reads as English: mostly words of ``data/common_words.txt`` (SCOWL's most frequent
words, see its header).

Every request pays for this, so each decoder runs only behind a cheap sign of its trick
(a long base64-alphabet run, a ``%xx`` escape, a word mixing digits and letters, a segment
with few words) and every loop is bounded, whatever the input. Nothing here raises.
"""

from __future__ import annotations

import base64
import binascii
import functools
import itertools
import re
import string
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources

from sentinel_runtime.pipeline.understand import canonical

MAX_CHARS = canonical.DEFAULT_MAX_CHARS
MAX_FORMS = 12
MAX_RUNS = 8  # base64 / hex runs, spaced-letter runs, expressions tried per text
MAX_SEGMENTS = 64  # clauses tried for rot13 and reversal
MAX_RUN_LETTERS = 160  # a spaced run longer than this is cut (segmentation is n * word length)
MAX_WORD = 17  # letters in the longest common word
MAX_LEET_CHOICES = 16  # readings tried per leetspeak token ("1" is an i or an l)
LANGUAGE_SHARE = 0.6  # share of tokens that must be common words
# Rot13 and reversal turn any letters into other letters: a clause must read better after
# them, and one short word is not enough ("sha" is "fun" in rot13, a JSON "sub" is "bus").
STRICT_SHARE = 0.7
STRICT_LETTERS = 4


@dataclass(frozen=True)
class DecodedForm:
    text: str
    decoding: str  # e.g. "base64", "leetspeak", "base64+leetspeak" (outer first)


@dataclass(frozen=True)
class _Step:
    text: str
    readable: bool  # False: a payload that may read only after a second decoding
    code: str  # the trick undone: "base64", "spaced_letters+leetspeak"


def decoded_forms(text: str) -> tuple[DecodedForm, ...]:
    """Decoded readings of ``text`` (a canonical prompt) that differ from it and read as
    English. Two layers: a decoding of a decoding ("base64+leetspeak") is tried, no deeper.

    Any string is accepted: one that is not canonical is canonicalised first.
    """
    source = text[:MAX_CHARS] if _needs_no_canonicalising(text) else _canonical(text)
    seen = {text, source}
    forms: list[DecodedForm] = []
    frontier = [(source, "")]
    for _depth in range(2):
        found: list[tuple[str, str]] = []
        for current, outer in frontier:
            for step in _steps(current):
                result = _canonical(step.text)
                if result in seen:
                    continue
                seen.add(result)
                code = f"{outer}+{step.code}" if outer else step.code
                # Canonicalising may compose a decoded letter with a mark that followed it
                # ("W" + a combining grave): what read as words must still read so.
                if step.readable and (result == step.text or reads_as_language(result)):
                    forms.append(DecodedForm(result, code))
                    if len(forms) >= MAX_FORMS:
                        return tuple(forms)
                found.append((result, code))
        frontier = found
    return tuple(forms)


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_ASCII_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # all but tab and newline


def _canonical(text: str) -> str:
    return canonical.canonicalise(text, MAX_CHARS).text


def _needs_no_canonicalising(text: str) -> bool:
    """True when canonicalising would change at most the spacing, which no decoder minds.
    Canonicalising a 1,000-character question costs more than every decoder together, and
    the pipeline's text is canonical already: this test is a few microseconds."""
    if _ASCII_UNPRINTABLE.search(text) or not unicodedata.is_normalized("NFKC", text):
        return False
    return not canonical.INVISIBLE.search("".join(_NON_ASCII.findall(text)))


# -- the word list and what "reads as English" means ------------------------------------

_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?")
# What may follow a common word's apostrophe; the list itself has "don't", "won't".
CLITICS = frozenset({"s", "d", "ll", "m", "re", "ve"})


@functools.cache
def common_words() -> frozenset[str]:
    data = resources.files("sentinel_runtime.pipeline.understand") / "data" / "common_words.txt"
    lines = data.read_text("utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


def is_word(token: str) -> bool:
    """A common word, or one with a possessive or contraction ("user's", "it's")."""
    words = common_words()
    if token in words:
        return True
    head, _, tail = token.partition("'")
    return tail in CLITICS and head in words


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _known(tokens: list[str]) -> list[str]:
    words = common_words()
    # Set membership first, at C speed; only tokens with an apostrophe need is_word.
    return [token for token in tokens if token in words or ("'" in token and is_word(token))]


def word_share(text: str) -> float:
    tokens = _tokens(text)
    return len(_known(tokens)) / len(tokens) if tokens else 0.0


def reads_as_language(text: str, share: float = LANGUAGE_SHARE, letters: int = 3) -> bool:
    """Mostly common words, one at least three letters long, at least ``letters`` letters in
    common words, and mostly letters (a run of symbols with two words in it is no sentence)."""
    tokens = _tokens(text)
    if not tokens:
        return False
    # A word is measured without what follows its apostrophe: "eh'm" is no long word.
    known = [len(token.partition("'")[0]) for token in _known(tokens)]
    if len(known) < share * len(tokens) or sum(known) < letters or max(known) < 3:
        return False
    visible = sum(1 for char in text if not char.isspace())
    return sum(map(len, tokens)) >= 0.5 * visible


# -- encodings: base64, hex, URL escapes ------------------------------------------------

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_NOISE = re.compile(r"\\x|0x|[^0-9A-Fa-f]")
_URL_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _as_text(raw: bytes) -> str | None:
    """Bytes that are UTF-8 and printable, as text; random bytes almost never are. Invisible
    characters are not counted against a payload: canonicalisation removes them later."""
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    visible = canonical.INVISIBLE.sub("", decoded)
    printable = sum(1 for char in visible if char.isprintable() or char in "\n\r\t")
    if not visible or printable < 0.95 * len(visible):
        return None
    return decoded


def _replace_runs(
    text: str, pattern: re.Pattern[str], decode: Callable[[str], str | None]
) -> tuple[str, list[str]]:
    """``text`` with up to MAX_RUNS matches replaced by their decoding, and the decodings."""
    payloads: list[str] = []
    pieces: list[str] = []
    last = 0
    for match in itertools.islice(pattern.finditer(text), MAX_RUNS):
        decoded = decode(match.group())
        if decoded is None:
            continue
        pieces += [text[last : match.start()], decoded]
        payloads.append(decoded)
        last = match.end()
    return "".join([*pieces, text[last:]]), payloads


def _encoded_step(text: str, payloads: list[str], code: str) -> _Step | None:
    if not payloads:
        return None
    return _Step(text, all(map(reads_as_language, payloads)), code)


def _from_base64(run: str) -> str | None:
    core = run.rstrip("=").replace("-", "+").replace("_", "/")
    if len(core) % 4 == 1:
        return None
    try:
        raw = base64.b64decode(core + "=" * (-len(core) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _as_text(raw)


def _from_hex(run: str) -> str | None:
    digits = _HEX_NOISE.sub("", run)
    try:
        raw = bytes.fromhex(digits)
    except ValueError:
        return None
    return _as_text(raw)


def _from_url_escapes(run: str) -> str | None:
    return _as_text(bytes.fromhex(run.replace("%", "")))


def _has_long_token(text: str) -> bool:
    """A base64 or hex run is one token of 16 characters or more; prose rarely has one."""
    return any(len(token) >= 16 for token in text.split())


_DIGIT = re.compile(r"[0-9]")
# Each written form of hex with the cheap test that must pass before its pattern is tried.
_HEX_RUNS: tuple[tuple[Callable[[str], bool], re.Pattern[str]], ...] = (
    (lambda text: "\\x" in text, re.compile(r"(?:\\x[0-9A-Fa-f]{2}){6,}")),  # \x68\x6f
    (_has_long_token, re.compile(r"[0-9A-Fa-f]{16,}")),  # 686f77 (odd lengths fail to decode)
    (  # 68 6f 77 ...: hex of text always has digits
        lambda text: _DIGIT.search(text) is not None,
        re.compile(r"[0-9A-Fa-f]{2}(?:[ :,][0-9A-Fa-f]{2}){5,}(?![0-9A-Za-z])"),
    ),
)


def decode_base64(text: str) -> _Step | None:
    if not _has_long_token(text):
        return None
    return _encoded_step(*_replace_runs(text, _BASE64_RUN, _from_base64), "base64")


def decode_hex(text: str) -> _Step | None:
    payloads: list[str] = []
    for worth_trying, pattern in _HEX_RUNS:
        if worth_trying(text):
            text, decoded = _replace_runs(text, pattern, _from_hex)
            payloads += decoded
    return _encoded_step(text, payloads, "hex")


def decode_url(text: str) -> _Step | None:
    if text.count("%") < 2:
        return None
    decoded, payloads = _replace_runs(text, _URL_ESCAPES, _from_url_escapes)
    # An escaped space or slash in a link is how URLs are written, not a hidden word: what
    # must read as language is the text the escapes were part of.
    return _Step(decoded, reads_as_language(decoded), "url") if payloads else None


# -- rot13 and reversal, clause by clause ------------------------------------------------

_CLAUSE = re.compile(r"[^:\n\"“”«»]+")
_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
)


Spans = list[tuple[int, int]]


def wordless_clauses(text: str) -> Spans:
    """Where the clauses with letters but few common words are ("rot13: ubj gb...")."""
    return [
        match.span()
        for match in itertools.islice(_CLAUSE.finditer(text), MAX_SEGMENTS)
        if _TOKEN.search(clause := match.group().lower()) and word_share(clause) < 0.5
    ]


def rot13(clause: str) -> str:
    return clause.translate(_ROT13)


def backwards(clause: str) -> str:
    """The clause reversed, its edge spaces kept where they were ("answer: bmob a")."""
    core = clause.strip()
    start = clause.index(core[0]) if core else 0
    return clause[:start] + core[::-1] + clause[start + len(core) :]


def _rewrite_clauses(
    text: str, spans: Spans, rewrite: Callable[[str], str], code: str
) -> _Step | None:
    """Rewrite each clause in ``spans`` whose rewrite reads as English."""
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        candidate = rewrite(text[start:end])
        if reads_as_language(candidate, STRICT_SHARE, STRICT_LETTERS):
            pieces += [text[last:start], candidate]
            last = end
    return _Step("".join([*pieces, text[last:]]), True, code) if pieces else None


def decode_clauses(text: str) -> tuple[_Step | None, _Step | None]:
    """Rot13 and reversal, after one look for the clauses worth trying them on."""
    spans = wordless_clauses(text)
    if not spans:
        return None, None
    return (
        _rewrite_clauses(text, spans, rot13, "rot13"),
        _rewrite_clauses(text, spans, backwards, "reversed"),
    )


# -- leetspeak ---------------------------------------------------------------------------

# Each symbol's letters, likeliest first. 2 and 6 are left out: "B2B", "6am" are ordinary.
LEET = {
    "0": "o",
    "1": "il",
    "3": "e",
    "4": "a",
    "5": "s",
    "7": "t",
    "8": "b",
    "9": "g",
    "@": "a",
    "$": "s",
    "!": "i",
    "|": "li",
    "+": "t",
}
LONE_LEET = {"4": "a", "@": "a", "1": "I"}
_LEET_TOKEN = re.compile(r"[A-Za-z0-9@$!|+]+")
# A sign with a letter on either side; written sign-first so the engine scans for the sign.
_LEET_SIGN = re.compile(r"[0-9@$!|+](?:(?<=[A-Za-z].)|(?=[A-Za-z]))")
_TRAILING_PUNCTUATION = "!|+"


def _leet_readings(token: str) -> Iterator[str]:
    choices = [LEET.get(char, char) for char in token.lower()]
    for letters in itertools.islice(itertools.product(*choices), MAX_LEET_CHOICES):
        yield "".join(letters)


def _unleet(token: str) -> tuple[str, bool]:
    """The token's common-word reading (True), else its likeliest reading (False)."""
    readings = list(_leet_readings(token))
    for reading in readings:
        if is_word(reading):
            return reading, True
    return readings[0], False


def decode_leetspeak(text: str) -> _Step | None:
    """Read tokens mixing letters with digits or signs as letters ("m4k3") once one of them
    reads as a common word of three letters or more: then every such token is read ("S3"
    alone stays S3, beside "h0w" it may be "se"), a lone 4 or @ is "a", a lone 1 is "I" and
    a number that reads as a common word is that word."""
    if not _LEET_SIGN.search(text):
        return None
    pieces: list[str] = []
    last = 0
    became_words = 0
    for match in _LEET_TOKEN.finditer(text):
        token = match.group().rstrip(_TRAILING_PUNCTUATION)  # "bomb!", "C++"
        if token in LONE_LEET:
            replacement = LONE_LEET[token]
        elif _LEET_SIGN.search(token):
            replacement, common = _unleet(token)
            if common and len(replacement) >= 3:  # "t0" alone proves nothing
                became_words += 1
        elif len(token) > 1 and all(char in LEET for char in token):
            replacement, common = _unleet(token)  # "70" is "to", "2024" stays a year
            if not common:
                continue
        else:
            continue
        pieces += [text[last : match.start()], replacement]
        last = match.start() + len(token)
    if not became_words:
        return None
    decoded = "".join([*pieces, text[last:]])
    return _Step(decoded, reads_as_language(decoded), "leetspeak")


# -- spaced, dotted and hyphenated letters -----------------------------------------------

# Two single characters set apart in a row, the cheap test before the whole run is sought.
_TWO_APART = re.compile(r"[ ._*~/|+-][A-Za-z0-9][ ._*~/|+-]{1,3}[A-Za-z0-9](?![A-Za-z0-9])")
_SPACED_RUN = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Za-z0-9][ ._*~/|+-]{1,3}){2,}[A-Za-z0-9](?![A-Za-z0-9])"
)


@functools.cache
def _word_prefixes() -> frozenset[str]:
    return frozenset(word[:end] for word in common_words() for end in range(1, len(word) + 1))


def segment(letters: str) -> list[str]:
    """Split run-together letters into the fewest common words; a letter no word covers
    stands alone and costs more than any word, so words win wherever they fit. A piece
    stops growing once no common word starts with it, which keeps this near-linear."""
    letters = letters[:MAX_RUN_LETTERS]
    words, prefixes = common_words(), _word_prefixes()
    size = len(letters)
    cost = [0] + [4 * size + 1] * size
    back = [0] * (size + 1)
    for start in range(size):
        if cost[start] + 3 < cost[start + 1]:  # the letter alone
            cost[start + 1], back[start + 1] = cost[start] + 3, start
        for end in range(start + 1, min(size, start + MAX_WORD) + 1):
            piece = letters[start:end]
            if piece not in prefixes:
                break
            if piece in words and cost[start] + 1 < cost[end]:
                cost[end], back[end] = cost[start] + 1, start
    found: list[str] = []
    end = size
    while end > 0:
        found.append(letters[back[end] : end])
        end = back[end]
    return found[::-1]


def _unspace(run: str) -> tuple[str, bool] | None:
    """The run's letters as words, and whether digits among them were read as leet."""
    chars = [char for char in run if char.isalnum()]
    if 3 * sum(char.isalpha() for char in chars) < 2 * len(chars):
        return None  # "1 2 3", "v 1.2.3": numbers, not letters
    joined = "".join(LEET.get(char, char)[0] for char in chars).lower()
    words = " ".join(segment(joined))
    if not reads_as_language(words, STRICT_SHARE):
        return None
    return words, any(char.isdigit() for char in chars)


def decode_spaced_letters(text: str) -> _Step | None:
    if not _TWO_APART.search(text):
        return None
    pieces: list[str] = []
    last = 0
    leet = False
    for match in itertools.islice(_SPACED_RUN.finditer(text), MAX_RUNS):
        found = _unspace(match.group())
        if found is None:
            continue
        pieces += [text[last : match.start()], found[0]]
        last = match.end()
        leet = leet or found[1]
    if not pieces:
        return None
    code = "spaced_letters+leetspeak" if leet else "spaced_letters"
    return _Step("".join([*pieces, text[last:]]), True, code)


# -- look-alike letters from other scripts -----------------------------------------------

_LETTERS = re.compile(r"[^\W\d_]+")


@functools.cache
def latin_lookalikes() -> dict[str, str]:
    """Each non-ASCII letter drawn like an ASCII one, and that letter: Unicode's confusables
    table as confusable_homoglyphs ships it, asked once for the homoglyphs of the 52 ASCII
    letters (a fraction of a millisecond; about 1,100 letters, none with two readings).
    A lower-case letter with no entry of its own borrows its capital's: Cyrillic te
    (U+0442) is drawn as a small capital T, and the table lists only the capital."""
    # Imported here: loading the table takes tens of milliseconds, paid by the first prompt
    # with a non-ASCII letter, not by every process that imports the pipeline.
    from confusable_homoglyphs import confusables

    found = confusables.is_confusable(string.ascii_letters, greedy=True, preferred_aliases=[])
    table: dict[str, str] = {}
    for entry in found or ():
        for homoglyph in entry["homoglyphs"]:
            glyph = homoglyph["c"]
            if len(glyph) == 1 and not glyph.isascii() and glyph.isalpha():
                table.setdefault(glyph, entry["character"])
    for glyph, letter in list(table.items()):
        lower = glyph.lower()
        if len(lower) == 1 and lower != glyph:
            table.setdefault(lower, letter.lower())
    return table


def _latin(word: str) -> str:
    table = latin_lookalikes()
    return "".join(table.get(char, char) for char in word)


def decode_confusables(text: str) -> _Step | None:
    """Map look-alike letters inside words that mix them with ASCII letters ("bomb" with a
    Cyrillic o, U+043E); once one such word is found, words made only of look-alikes go too
    (a lone Cyrillic a, U+0430)."""
    if text.isascii():
        return None
    readings: list[tuple[re.Match[str], str]] = []
    mixed = False
    for match in _LETTERS.finditer(text):
        word = match.group()
        latin = _latin(word)
        if latin == word:
            continue
        if not word.isascii() and any(char.isascii() for char in word):
            mixed = True
        elif not latin.isascii():
            continue
        readings.append((match, latin))
    if not mixed:
        return None
    pieces: list[str] = []
    last = 0
    for match, latin in readings:
        pieces += [text[last : match.start()], latin]
        last = match.end()
    decoded = "".join([*pieces, text[last:]])
    return _Step(decoded, reads_as_language(decoded), "confusables")


# -- a payload split across variables ----------------------------------------------------

_NAME = r"[A-Za-z_]\w{0,19}"
_ASSIGNMENT = re.compile(
    rf"(?<![\w.])({_NAME})\s*:?=\s*"
    r"(?:\"([^\"\n]{0,200})\"|'([^'\n]{0,200})'|([^\s,;'\"=+][^,;\n'\"=+]{0,60}?))"
    r"(?=\s*(?:[,;\n]|\.(?:\s|$)|$|and\b|then\b))"
)
_TERM = rf"\b{_NAME}\b|\"[^\"\n]{{0,200}}\"|'[^'\n]{{0,200}}'"
_TERMS = re.compile(_TERM)
_CONCATENATION = re.compile(rf"(?:{_TERM})(?:\s*\+\s*(?:{_TERM}))+")
MAX_ASSIGNMENTS = 32
MAX_TERMS = 16  # pieces of one concatenation


def _join(parts: list[str]) -> str:
    """Concatenate as the prompt asks, with a space where the pieces do not make one common
    word: "bo" + "mb" is "bomb", "how to make" + "a bomb" needs the space."""
    joined = parts[0]
    for part in parts[1:]:
        # Only the tail can end a word: searching the whole string each time is quadratic.
        left = re.search(r"[A-Za-z]+$", joined[-MAX_WORD:])
        right = re.match(r"[A-Za-z]+", part[:MAX_WORD])
        glued = left is not None and right is not None
        if glued and not is_word((left.group() + right.group()).lower()):
            joined += " "
        joined += part
    return joined


def decode_split_variables(text: str) -> _Step | None:
    if "+" not in text:
        return None
    values: dict[str, str] = {}
    if "=" in text:
        for match in itertools.islice(_ASSIGNMENT.finditer(text), MAX_ASSIGNMENTS):
            name, *quoted = match.groups()
            values[name] = next(value for value in quoted if value is not None).strip()
    pieces: list[str] = []
    last = 0
    for match in itertools.islice(_CONCATENATION.finditer(text), MAX_RUNS):
        terms = _TERMS.findall(match.group())
        if len(terms) > MAX_TERMS:
            continue
        parts = [term[1:-1] if term[0] in "\"'" else values.get(term) for term in terms]
        if None in parts or not any(parts):
            continue
        joined = _join([part for part in parts if part])
        if not reads_as_language(joined):
            continue
        pieces += [text[last : match.start()], joined]
        last = match.end()
    if not pieces:
        return None
    return _Step("".join([*pieces, text[last:]]), True, "split_variables")


DECODERS: tuple[Callable[[str], _Step | None], ...] = (
    decode_split_variables,
    decode_base64,
    decode_hex,
    decode_url,
    decode_spaced_letters,
    decode_confusables,
    decode_leetspeak,
)


def _steps(text: str) -> Iterator[_Step]:
    """Every decoding of ``text`` one layer deep, in a fixed order."""
    for decode in DECODERS:
        if (step := decode(text)) is not None:
            yield step
    yield from (step for step in decode_clauses(text) if step is not None)

"""PEM private-key blocks, redacted from BEGIN to END.

A key's material is its body, not its BEGIN line: a block is found from its BEGIN line to
its END line; a block cut short (no END) runs to the end of its body lines; and a body whose
BEGIN line an earlier scanner already redacted (the default policy's regex) is found from
the END line back over the body lines above it. Lines may be separated by newlines or, in a
JSON string (a cloud service-account file), by ``\\n`` escapes.
"""

from __future__ import annotations

from collections.abc import Iterator

import regex

from sentinel_runtime.guardrails.detectors.base import Detection

NAME = "private_keys"
_LABEL = r"[A-Z0-9 ]{0,40}?PRIVATE KEY(?: BLOCK)?-----"
BEGIN = regex.compile(r"-----BEGIN " + _LABEL)
END = regex.compile(r"-----END " + _LABEL)
# A line break in the text or inside a JSON string, and what may indent the next line.
_BREAK = r"(?:\r?\n|\\r?\\n)[ \t]*"
# What a PEM body line can be: base64, or an RFC 1421 / OpenSSH header.
_BODY_LINE = r"(?:[A-Za-z0-9+/=]{1,128}|(?:Proc-Type|DEK-Info|Comment|Version): [^\r\n\\]{0,200})"
# Whole lines only: "That is all." after a block cut short is not part of its body.
_LINE_END = r"(?=[ \t]*(?:\r?\n|\\r?\\n|\Z|\"))"
BODY_AFTER = regex.compile(f"(?:{_BREAK}(?:{_BODY_LINE}{_LINE_END})?)*")
_BODY_LINE_WHOLE = regex.compile(f"{_BODY_LINE}?")
_TRAILING_RUN = regex.compile(r"[A-Za-z0-9+/=]{16,}\Z")
# Shorter than any full PEM body line (64 characters; some tools write 76).
MIN_FULL_LINE = 40
# The longest block looked for: an 8192-bit RSA key is about 6.5 KB of PEM.
MAX_BLOCK = 16 * 1024


def _body_before(text: str, end_start: int) -> int:
    """Where the body lines directly above an END line begin (``end_start`` if none)."""
    floor = max(0, end_start - MAX_BLOCK)
    start = end_start
    cursor = end_start
    while cursor > floor:
        # The line before ``cursor``: back to the previous break (newline or "\n"), found
        # in place so a walk over many lines reads each character once.
        newline = text.rfind("\n", floor, cursor)
        escaped = text.rfind("\\n", floor, cursor)
        cut = max(newline, escaped)
        line_start = floor if cut == -1 else cut + (1 if cut == newline else 2)
        line = text[line_start:cursor]
        indent = len(line) - len(line.lstrip(" \t"))
        stripped = line.strip(" \t\r")
        if stripped.endswith("\\r"):
            stripped = stripped[:-2]
        if not _BODY_LINE_WHOLE.fullmatch(stripped):
            # A partial line (text before the body on the same line) ends the walk; its
            # trailing base64 run still belongs to the body.
            run = _TRAILING_RUN.search(stripped)
            if run is not None:
                start = line_start + indent + run.start()
            break
        if stripped:
            # Only the line just above END may be short: every other body line is full
            # (64 characters, 70 in OpenSSH keys), so a column of short words is no body.
            if start < end_start and len(stripped) < MIN_FULL_LINE and ":" not in stripped:
                break
            start = line_start + indent
        if cut == -1:
            break
        cursor = cut
    return start


def _trimmed(text: str, body: regex.Match[str]) -> int:
    """The end of a body without the line breaks after its last line."""
    stop = body.end()
    while stop > body.start():
        if text[stop - 1] in " \t\r\n":
            stop -= 1
        elif text.endswith(("\\n", "\\r"), body.start(), stop):
            stop -= 2
        else:
            break
    return stop


# The end of the text may be a BEGIN or END line still being written.
PARTIAL_MARKER = regex.compile(r"-{1,5}(?:(?:B|E)[A-Z ]{0,60}-{0,4})?\Z")


def find(text: str) -> Iterator[Detection]:
    if "-----" not in text:  # what BEGIN and END both start with; most answers lack it
        return
    blocks: list[tuple[int, int]] = []
    for begin in BEGIN.finditer(text):
        if blocks and begin.start() < blocks[-1][1]:
            continue
        end = END.search(text, begin.end(), min(len(text), begin.end() + MAX_BLOCK))
        stop = end.end() if end is not None else _trimmed(text, BODY_AFTER.match(text, begin.end()))
        blocks.append((begin.start(), stop))
        yield Detection(NAME, begin.start(), stop)
    for end in END.finditer(text):
        if any(start <= end.start() < stop for start, stop in blocks):
            continue
        # An END line no BEGIN led to: its body, if any, is what is left of a key.
        start = _body_before(text, end.start())
        if start < end.start():
            yield Detection(NAME, start, end.end())


def hold(text: str) -> int:
    """Hold from a BEGIN line whose block has not ended, from a marker line still being
    written, and from body lines at the end of the text (an END line may still come for a
    block whose BEGIN an earlier scanner redacted)."""
    hold_at = len(text)
    last_begin = None
    for m in BEGIN.finditer(text, max(0, len(text) - MAX_BLOCK)):
        last_begin = m
    if last_begin is not None and END.search(text, last_begin.end()) is None:
        hold_at = last_begin.start()
    marker = PARTIAL_MARKER.search(text)
    tail = marker.start() if marker is not None else len(text)
    return min(hold_at, tail, _body_before(text, tail))

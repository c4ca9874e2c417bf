"""The documentation as the tests read it: README.md and the pages of the site under docs/
(mkdocs.yml's `nav`). Tests that check documentation against code read the page that holds
what they check, so a section moved to another page fails them instead of passing unread."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"


def page(name: str) -> str:
    """The text of one page, by its path under docs/ (`"kubernetes.md"`)."""
    return (DOCS / name).read_text(encoding="utf-8")


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def site() -> str:
    """README.md and every page, for checks that a name is documented somewhere."""
    return "\n".join(path.read_text(encoding="utf-8") for path in [README, *pages()])


def section(text: str, heading: str) -> str:
    """From the heading line that is exactly `heading` (e.g. `"## Chart values"`) up to the next
    heading of the same or a higher level outside a code block; fails when there is none."""
    lines = text.splitlines(keepends=True)
    level = len(heading) - len(heading.lstrip("#"))
    starts = [i for i, line in enumerate(lines) if line.rstrip("\n") == heading]
    assert len(starts) == 1, f"{len(starts)} headings {heading!r}"
    end = len(lines)
    fenced = False
    for i in range(starts[0] + 1, len(lines)):
        if lines[i].startswith("```"):
            fenced = not fenced
        match = re.match(r"(#+) ", lines[i])
        if not fenced and match and len(match.group(1)) <= level:
            end = i
            break
    return "".join(lines[starts[0] : end])


def code_blocks(text: str, *languages: str) -> list[tuple[str, str]]:
    """The fenced blocks of these languages, in order, as (language, body)."""
    pattern = "|".join(map(re.escape, languages))
    return re.findall(rf"```({pattern})\n(.*?)```", text, re.DOTALL)

"""Read the Dockerfile and .dockerignore as Docker does, as far as tests/image needs, and
assemble the builder stage's source tree from the build context.

No Docker engine runs here, so the tests run the builder's steps themselves: the context is
the repository filtered by .dockerignore, the builder's COPY instructions place files in its
WORKDIR, and its one RUN (scripts/image/install.sh) builds the venv.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [value for key, value in self.instructions if key == keyword]

    def one(self, keyword: str) -> str:
        values = self.all(keyword)
        assert len(values) == 1, f"{keyword}: expected one, found {values}"
        return values[0]

    def exec_form(self, keyword: str) -> list[str]:
        value = json.loads(self.one(keyword))
        assert isinstance(value, list)
        return [str(item) for item in value]

    def env(self) -> dict[str, str]:
        """Every ``ENV KEY=VALUE ...`` of the stage (values as written: ``$PATH`` unexpanded)."""
        found: dict[str, str] = {}
        for value in self.all("ENV"):
            for token in shlex.split(value):
                key, sep, val = token.partition("=")
                assert sep, f"ENV {value!r}: use the KEY=VALUE form"
                found[key] = val
        return found

    def workdir(self) -> str:
        return self.all("WORKDIR")[-1]


def logical_lines(text: str) -> list[str]:
    """Instructions with their continuation lines joined and comment lines dropped."""
    lines: list[str] = []
    current = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and not current):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1].rstrip() + " "
            continue
        lines.append((current + stripped).strip())
        current = ""
    if current.strip():
        lines.append(current.strip())
    return [line for line in lines if line]


def stages(text: str | None = None) -> list[Stage]:
    text = DOCKERFILE.read_text(encoding="utf-8") if text is None else text
    parsed: list[Stage] = []
    for line in logical_lines(text):
        keyword, _, value = line.partition(" ")
        keyword = keyword.upper()
        value = value.strip()
        if keyword == "FROM":
            words = value.split()
            words = [w for w in words if not w.startswith("--")]
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            parsed.append(Stage(words[0], name))
            continue
        assert parsed, f"{keyword} before the first FROM"
        parsed[-1].instructions.append((keyword, value))
    return parsed


# -- .dockerignore -------------------------------------------------------------------------


def _translate(pattern: str) -> str:
    """A Docker (Go filepath.Match plus ``**``) pattern as a regular expression."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("^") else body) + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def ignore_rules(text: str | None = None) -> list[tuple[bool, re.Pattern[str], str]]:
    """(exception, pattern, source) per rule of .dockerignore, in order (the last match wins)."""
    text = DOCKERIGNORE.read_text(encoding="utf-8") if text is None else text
    rules = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        exception = line.startswith("!")
        pattern = posixpath.normpath(line.removeprefix("!").strip()).lstrip("/")
        rules.append((exception, re.compile(_translate(pattern)), pattern))
    return rules


def is_ignored(relpath: str, rules: list[tuple[bool, re.Pattern[str], str]]) -> bool:
    """Whether the context leaves ``relpath`` out: a rule matching the path or one of its
    parent directories applies, and the last rule that applies decides."""
    parts = relpath.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for exception, regex, _ in rules:
        if any(regex.fullmatch(candidate) for candidate in candidates):
            ignored = not exception
    return ignored


def context_files(root: Path = REPO) -> set[str]:
    """The files of the build context (relative POSIX paths) after .dockerignore."""
    rules = ignore_rules()
    exceptions = [source for exception, _, source in rules if exception]
    files: set[str] = set()
    for directory, dirnames, filenames in os.walk(root):
        rel_dir = Path(directory).relative_to(root).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        # Skip ignored directories unless an exception may bring back something inside them.
        dirnames[:] = [
            d
            for d in dirnames
            if not is_ignored(prefix + d, rules)
            or any(e.startswith(prefix + d + "/") for e in exceptions)
        ]
        files.update(prefix + f for f in filenames if not is_ignored(prefix + f, rules))
    return files


# -- the builder stage ---------------------------------------------------------------------


def copy_sources(stage: Stage) -> list[tuple[list[str], str]]:
    """(sources, destination) of each COPY from the build context (not ``--from``)."""
    copies = []
    for value in stage.all("COPY"):
        words = shlex.split(value)
        if any(w.startswith("--from") for w in words):
            continue
        words = [w for w in words if not w.startswith("--")]
        copies.append((words[:-1], words[-1]))
    return copies


def assemble_builder(stage: Stage, workdir: Path) -> None:
    """Place the context's files in ``workdir`` as the stage's COPY instructions do (its
    WORKDIR is ``workdir``); an ignored or missing source fails here as it would in Docker."""
    files = context_files()
    for sources, dest in copy_sources(stage):
        assert not posixpath.isabs(dest), f"COPY {dest}: relative to WORKDIR expected"
        target = workdir / dest
        into_dir = dest.endswith("/") or len(sources) > 1
        for source in sources:
            below = [f for f in files if f.startswith(source.rstrip("/") + "/")]
            if source in files:
                path = target / Path(source).name if into_dir else target
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / source, path)
            elif below:
                for rel in below:
                    path = target / rel[len(source.rstrip("/")) + 1 :]
                    path.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(REPO / rel, path)
            else:
                raise AssertionError(f"COPY {source}: not in the build context (.dockerignore?)")

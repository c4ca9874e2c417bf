"""Scaffolding of the verdict equivalence tests (harm, injection): a judge's verdicts over a
fixed corpus, kept as a digest file of hashes and counts, recomputed and compared.

A test file says what its judge is (``Judge``: how an item is judged and keyed, how a verdict
is kept, what is counted) and which corpora it reads; this module reads and writes the
digest's common layout, compares, skips without the data sets and runs ``--record``.

The common layout: comment lines, then per group ``group <name> <items> <corpus key>``,
``count <code> <number>`` lines and the judge's own verdict lines (``<kind> <rest>``).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import pytest

import sentinel_runtime
from sentinel_runtime.evaluation import datasets

REPO = Path(__file__).resolve().parents[2]
DEMO_CORPUS = Path(sentinel_runtime.__file__).resolve().parent / "demo" / "corpus.jsonl"
CHUNK_CHARS = 500

Item = TypeVar("Item")  # what one verdict is given: a text, or a (text, query) pair
VerdictReader = Callable[[list[tuple[str, str]]], tuple[str, ...]]


def sha(text: str, chars: int) -> str:
    # surrogatepass: generated and data set texts may hold lone surrogates
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:chars]


# --- texts both corpora use -----------------------------------------------------------------

# Case, quotes and letters a judge must read as the plain text does. The synthetic corpora
# pick decorations by position and add their own after these, so changing or reordering
# these changes both corpora (their recorded corpus keys say so).
VARIANTS: tuple[Callable[[str], str], ...] = (
    lambda text: text,
    str.upper,
    str.lower,
    str.title,
    lambda text: text.replace("'", "\u2019").replace('"', "\u201c"),
    lambda text: text.replace(" ", "\u00a0"),
    lambda text: text.replace("s", "\u017f"),  # long s: NFKC and case-insensitively an "s"
    lambda text: text.replace("i", "\u0131").replace("I", "\u0130"),  # Turkish i's
    lambda text: text.replace("k", "\u212a"),  # Kelvin sign: case-insensitively a "k"
)


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """Pieces of about ``size`` characters, cut at a space, as a retriever would index them."""
    pieces = []
    text = text.strip()
    while len(text) > size:
        cut = text.rfind(" ", size // 2, size)
        cut = size if cut < 0 else cut
        pieces.append(text[:cut])
        text = text[cut:].lstrip()
    return [*pieces, text] if text else pieces


def demo_texts() -> list[str]:
    """The demo corpus (ships with the runtime): each document, all of them joined, and the
    joined text in chunks."""
    lines = DEMO_CORPUS.read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["text"] for line in lines if line.strip()]
    return [*texts, "\n\n".join(texts), *chunks("\n\n".join(texts))]


def presidio_sentences(root: Path) -> list[str]:
    rows = json.loads((root / "presidio" / "synth_dataset_v2.json").read_text("utf-8"))
    return [row["full_text"] for row in rows]


# --- the judge and its digest ---------------------------------------------------------------


def as_is(verdict: str) -> str:
    return verdict


@dataclass(frozen=True)
class Judge(Generic[Item]):
    """What a test file says about its judge."""

    digest: Path
    verdict: Callable[[Item], str]  # the current judge's verdict on an item, as one line
    key: Callable[[Item], str]  # a hash of the item: names it in failures, never its text
    counts: Callable[[list[str]], dict[str, int]]  # what a re-record's diff is read by
    kept: Callable[[str], str] = as_is  # a verdict as the digest keeps it (or a hash of it)

    def corpus_key(self, items: list[Item]) -> str:
        """Which items, in which order: a changed data set or generator shows up here."""
        return sha("\n".join(self.key(item) for item in items), 16)


@dataclass(frozen=True)
class Recorded:
    judged: int  # how many items the group had
    corpus: str  # their corpus_key
    verdicts: tuple[str, ...]  # each item's verdict as the digest keeps it, in corpus order
    counts: dict[str, int]  # the judge's counts, as recorded


def read_digest(path: Path, verdicts: VerdictReader) -> dict[str, Recorded]:
    """Each group of the digest. ``verdicts`` reads a group's own lines as (kind, rest), one
    group after the other in file order, so it may use what earlier groups defined."""
    groups: dict[str, Recorded] = {}
    for block in path.read_text(encoding="utf-8").split("\ngroup ")[1:]:
        head, *lines = block.splitlines()
        name, judged, corpus = head.split(" ")
        counts: dict[str, int] = {}
        own: list[tuple[str, str]] = []
        for line in lines:
            kind, rest = line.split(" ", 1)
            if kind == "count":
                code, number = rest.split(" ")
                counts[code] = int(number)
            else:
                own.append((kind, rest))
        groups[name] = Recorded(int(judged), corpus, verdicts(own), counts)
    return groups


def recorded_from(judge_files: Sequence[str]) -> str:
    """The last commit of the judge's modules, and whether the tree has changed them since."""

    def git(*args: str) -> str:
        command = ["git", "-C", str(REPO), *args, "--", *judge_files]
        return subprocess.run(command, capture_output=True, text=True, check=False).stdout.strip()

    edited = " with uncommitted changes" if git("status", "--porcelain") else ""
    return f"commit {git('log', '-1', '--format=%h') or '(unknown)'}{edited}"


def write_digest(
    judge: Judge[Item],
    header: list[str],
    groups: dict[str, list[Item]],
    verdict_lines: Callable[[list[str]], list[str]],
) -> None:
    """The header, then per group its head, counts and the lines ``verdict_lines`` makes of
    its verdicts (called group after group, so it may refer to earlier groups' lines)."""
    lines = list(header)
    for name, items in groups.items():
        found = [judge.verdict(item) for item in items]
        lines.append(f"group {name} {len(items)} {judge.corpus_key(items)}")
        lines += [f"count {code} {number}" for code, number in judge.counts(found).items()]
        lines += verdict_lines(found)
    judge.digest.write_text("\n".join(lines) + "\n", encoding="utf-8")


# --- the comparison ---------------------------------------------------------------------------


def assert_unchanged(
    judge: Judge[Item], group: str, items: list[Item], recorded: dict[str, Recorded]
) -> None:
    before = recorded[group]
    assert (len(items), judge.corpus_key(items)) == (before.judged, before.corpus), (
        f"the {group} corpus is not the one {judge.digest.name} was recorded on"
    )
    changed = []
    for number, (item, was) in enumerate(zip(items, before.verdicts, strict=True)):
        now = judge.verdict(item)
        if judge.kept(now) != was:
            changed.append(f"{group} #{number} ({judge.key(item)}): {was!r} -> now {now!r}")
    assert not changed, f"{len(changed)} of {len(items)} verdicts changed:\n" + "\n".join(
        changed[:25]
    )


# --- the public data sets ---------------------------------------------------------------------


def datasets_present(folders: Iterable[str]) -> bool:
    root = datasets.datasets_dir()
    return all((root / folder).is_dir() for folder in folders)


def needs_datasets(folders: Iterable[str], without: str) -> pytest.MarkDecorator:
    """Skip when the data sets are absent; ``without`` says what runs all the same."""
    return pytest.mark.skipif(
        not datasets_present(folders),
        reason=f"public data sets not found at {datasets.datasets_dir()} (set "
        f"{datasets.ENV_VAR}); {without}",
    )


def record_command(
    usage: str | None,
    folders: Iterable[str],
    corpus: Callable[[Path], dict[str, list[Item]]],
    write: Callable[[dict[str, list[Item]]], None],
) -> None:
    """``python <test file> --record``: judge the whole corpus and write the digest (only with
    every data set present, so that no group is recorded from a partial corpus)."""
    if sys.argv[1:] != ["--record"]:
        sys.exit(usage)
    if not datasets_present(folders):
        sys.exit(f"the public data sets are needed to record: {datasets.datasets_dir()}")
    groups = corpus(datasets.datasets_dir())
    write(groups)
    print(f"recorded {sum(map(len, groups.values()))} verdicts in {len(groups)} groups")

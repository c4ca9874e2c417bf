"""A judge's latency per text beside its frozen older implementation, both timed in the same
run on the same texts (the machine is shared and absolute times drift): the two ways of
taking turns, the table (n, chars, medians, p99s, ratios, same verdicts), and the ordinary
English both judge benchmarks cut into 500-character chunks and 2,000-character texts.

A group's items are the judges' arguments: ``(text,)`` for the harm judge, ``(text, query)``
for the injection judge.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sentinel_runtime
from sentinel_runtime.evaluation import datasets
from sentinel_runtime.evaluation import injection as bipia
from stats import median, p99, table
from texts import assistant_text

DEMO_CORPUS = Path(sentinel_runtime.__file__).resolve().parent / "demo" / "corpus.jsonl"
CHUNK = 500
LONG = 2_000
HEADER = [
    "texts",
    "n",
    "chars",
    "new median ms",
    "new p99 ms",
    "old median ms",
    "old p99 ms",
    "median ratio",
    "p99 ratio",
    "same verdicts",
]

Args = tuple[str, ...]  # one call of a judge: (text,) or (text, query)
Pair = tuple[str, str]  # (text, query)
Judge = Callable[..., Any]
Times = tuple[list[float], list[float]]  # the new judge's per-item times, the old one's
Schedule = Callable[[Judge, Judge, list[Args], int], Times]

# --- the texts ------------------------------------------------------------------------------


def datasets_root(*folders: str) -> Path | None:
    """The data sets, if ``english`` and the benchmark's own ``folders`` are all there."""
    root = datasets.datasets_dir()
    needed = ("bipia", "presidio", *folders)
    return root if all((root / folder).is_dir() for folder in needed) else None


def pieces(text: str, size: int) -> list[str]:
    """Pieces of about ``size`` characters, cut at a space; a short last piece is left out,
    so that every piece timed is of about the size the group is named by."""
    cut_pieces = []
    text = text.strip()
    while len(text) > size:
        cut = text.rfind(" ", size // 2, size)
        cut = size if cut < 0 else cut
        cut_pieces.append(text[:cut])
        text = text[cut:].lstrip()
    return [*cut_pieces, text] if len(text) > size // 2 else cut_pieces


def demo_documents() -> list[str]:
    lines = DEMO_CORPUS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines if line.strip()]


def english(root: Path | None) -> list[Pair]:
    """Documents of ordinary English with the query they are retrieved for: the demo corpus,
    then BIPIA email, table and code contexts and all Presidio sentences as one text, or
    without the data sets generated assistant text."""
    documents = [(text, "") for text in demo_documents()]
    if root is None:
        return [*documents, (assistant_text(20_000, with_findings=False), "")]
    documents += [(context.text, context.query) for context in bipia.load_contexts(root)]
    rows = json.loads((root / "presidio" / "synth_dataset_v2.json").read_text("utf-8"))
    documents.append((" ".join(row["full_text"] for row in rows), ""))
    return documents


def english_groups(root: Path | None) -> dict[str, list[Pair]]:
    """The English in chunks (with their document's query) and in long texts (no query)."""
    documents = english(root)
    joined = " ".join(text.strip() for text, _ in documents)
    return {
        f"{CHUNK}-char chunks": [
            (piece, query) for text, query in documents for piece in pieces(text, CHUNK)
        ],
        f"{LONG}-char texts": [(piece, "") for piece in pieces(joined, LONG)],
    }


# --- timing ---------------------------------------------------------------------------------


def _time(judge: Judge, args: Args) -> float:
    started = time.perf_counter()
    judge(*args)
    return (time.perf_counter() - started) * 1000


def in_turn(new: Judge, old: Judge, items: list[Args], rounds: int) -> Times:
    """Each judge over all items in turn, for judges that would evict each other's patterns
    from the caches if they took turns item by item; the first to go alternates by round,
    so that drift on a shared machine hits both alike."""
    times: dict[Judge, list[float]] = {new: [], old: []}
    for round_ in range(rounds):
        order = [new, old] if round_ % 2 == 0 else [old, new]
        for judge in order:
            times[judge] += [_time(judge, args) for args in items]
    return times[new], times[old]


def interleaved(new: Judge, old: Judge, items: list[Args], rounds: int) -> Times:
    """Both judges item by item, so that drift on a shared machine hits both alike."""
    new_times: list[float] = []
    old_times: list[float] = []
    for _ in range(rounds):
        for args in items:
            new_times.append(_time(new, args))
            old_times.append(_time(old, args))
    return new_times, old_times


def _row(
    name: str, sample: list[Args], new: list[float], old: list[float], differ: int
) -> list[str]:
    return [
        name,
        str(len(sample)),
        f"{median([len(args[0]) for args in sample]):.0f}",
        f"{median(new):.3f}",
        f"{p99(new):.3f}",
        f"{median(old):.3f}",
        f"{p99(old):.3f}",
        f"{median(old) / median(new):.1f}x",
        f"{p99(old) / p99(new):.1f}x",
        "yes" if differ == 0 else f"NO ({differ} differ)",
    ]


def speed_table(
    title: str,
    groups: dict[str, list[Args]],
    new: Judge,
    old: Judge,
    *,
    quick: bool,
    schedule: Schedule,
    verdict: Callable[[Any], object] = lambda found: found,
) -> str:
    """Both judges timed on every group (``quick``: about 150 items of each, one round), and
    on how many items ``verdict`` of their answers differs."""
    rows = []
    for name, items in groups.items():
        sample = items[:: max(1, len(items) // 150)] if quick else items
        new_times, old_times = schedule(new, old, sample, 1 if quick else 3)
        differ = sum(verdict(new(*args)) != verdict(old(*args)) for args in sample)
        rows.append(_row(name, sample, new_times, old_times, differ))
    return table(title, HEADER, rows)

"""Memory returned after a delete: one large document indexed into the embedded store, then
deleted, with the process's RSS read before, after indexing and after the delete.

Each row runs in a fresh Python process (RSS is the process's), through ``IndexManager``
with a persist directory as the runtime uses it, the add and the delete on different threads
of a pool (as the runtime's request threadpool does, each thread may get its own glibc arena).
Rows, beside baselines measured in the same run:

* ``floor``: the same process building the same text and indexing nothing (the baseline:
  what "returned" means);
* ``delete documents`` / ``delete index``: ``POST /indexes/{name}/documents/delete`` and
  ``DELETE /indexes/{name}``;
* ``... without malloc_trim``: the same with ``index.memory.release`` a no-op (the baseline
  of what the structures alone give back).

Texts: ``random words`` (a large vocabulary, the worst case for the postings and the
embedder's word cache) and ``English-like`` (``index_build.corpus``, Zipf-distributed words).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from stats import table

HERE = Path(__file__).resolve().parent
MB = 1_000_000


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def text_of(kind: str, size: int) -> str:
    import numpy as np

    if kind == "random":
        rng = np.random.default_rng(7)
        letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
        words = ["".join(rng.choice(letters, size=int(n))) for n in rng.integers(3, 13, 200_000)]
        picked = rng.choice(len(words), size=size // 6)
        return " ".join(words[i] for i in picked)[:size]
    from index_build import corpus

    docs = corpus(size // 480 + 1, chars=500)
    return " ".join(d.text for d in docs)[:size]


def child(kind: str, size: int, action: str, trim: bool) -> dict[str, float]:
    """One measurement, in this (fresh) process."""
    import gc

    from sentinel_runtime.index import memory
    from sentinel_runtime.index.embedders import HashingEmbedder
    from sentinel_runtime.index.manager import IndexManager
    from sentinel_runtime.index.types import Document

    if not trim:
        memory.release = lambda: False  # the structures alone
    text = text_of(kind, size)
    with tempfile.TemporaryDirectory() as directory, ThreadPoolExecutor(4) as pool:
        manager = IndexManager(HashingEmbedder(), Path(directory))
        manager.add_documents("warm", [Document("w", "A warm-up document about invoices.")])
        gc.collect()
        before = rss_mb()
        chunks = 0
        if action != "floor":
            pool.submit(manager.add_documents, "kb", [Document("big", text)]).result()
            chunks = manager.get("kb").chunk_count
        indexed = rss_mb()
        if action == "documents":
            pool.submit(manager.delete_documents, "kb", ["big"]).result()
        elif action == "index":
            pool.submit(manager.delete, "kb").result()
        gc.collect()
        after = rss_mb()
    return {"before": before, "indexed": indexed, "after": after, "chunks": chunks}


def measure(kind: str, size: int, action: str, trim: bool = True) -> dict[str, float]:
    command = [sys.executable, __file__, "--child", kind, str(size), action, str(int(trim))]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def run(quick: bool = False) -> str:
    size = 2 * MB if quick else 7_500_000
    rows = []
    for kind, label in (("random", "random words"), ("english", "English-like")):
        floor = measure(kind, size, "floor")
        for action, trim, name in (
            ("floor", True, "floor (nothing indexed)"),
            ("documents", True, "delete documents"),
            ("documents", False, "... without malloc_trim"),
            ("index", True, "delete index"),
            ("index", False, "... without malloc_trim"),
        ):
            m = floor if action == "floor" else measure(kind, size, action, trim)
            grown = m["indexed"] - m["before"]
            retained = m["after"] - m["before"]
            returned = 100 * (1 - retained / grown) if grown > 1 else 100.0
            rows.append(
                [
                    f"{label}, {size / MB:.1f} MB",
                    name,
                    f"{int(m['chunks'])}",
                    f"{m['before']:.0f}",
                    f"{m['indexed']:.0f}",
                    f"{m['after']:.0f}",
                    f"{retained:+.0f}",
                    f"{returned:.0f} %",
                ]
            )
    return table(
        "Index memory: RSS around one large document indexed, then deleted (MB; a fresh "
        "process per row)",
        [
            "document",
            "delete",
            "chunks",
            "before",
            "indexed",
            "after delete",
            "retained",
            "returned",
        ],
        rows,
    )


if __name__ == "__main__":
    if "--child" in sys.argv:
        sys.path[:0] = [str(HERE)]
        _, _, kind, size, action, trim = sys.argv
        print(json.dumps(child(kind, int(size), action, trim == "1")))
    else:
        print(run(quick="--quick" in sys.argv))

"""The evidence filter's ingest screen (``index.screening``): ``scoring.quiet_text`` on each
chunk as it is indexed, stamped with a digest of everything that verdict depends on.

The digest covers the judges' modules and data files (``JUDGE_FILES``, below) and the
version of detect-secrets, whose plugins the secrets scanner runs. A change to any of them
changes the stamp, and an index file screened under another stamp loads unscreened: its
chunks are judged when retrieved until their documents are indexed again. A test checks
that ``JUDGE_FILES`` holds every module of this package that the judges import.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from importlib import metadata, resources
from typing import TYPE_CHECKING

from sentinel_runtime.pipeline.evidence import scoring

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

# Paths inside the sentinel_runtime package; a directory stands for every file under it.
JUDGE_FILES: tuple[str, ...] = (
    "pipeline/evidence/scoring.py",
    "pipeline/signals",
    "pipeline/types.py",
    "guardrails/scanners/base.py",
    "guardrails/scanners/secrets.py",
    "guardrails/scanners/secrets_gates.py",
    "guardrails/scanners/sensitive.py",
    "guardrails/detectors",
    "index/analysis.py",
    "index/data",
)
# Third-party packages whose code decides a verdict.
JUDGE_PACKAGES: tuple[str, ...] = ("detect-secrets",)


def _files(entry: Traversable, name: str) -> list[tuple[str, bytes]]:
    if entry.is_file():
        return [(name, entry.read_bytes())]
    found = []
    for child in sorted(entry.iterdir(), key=lambda c: c.name):
        if child.name != "__pycache__":
            found.extend(_files(child, f"{name}/{child.name}"))
    return found


@functools.cache
def judges_stamp() -> str:
    """``evidence-screen:`` and a SHA-256 of ``JUDGE_FILES`` and ``JUDGE_PACKAGES``."""
    digest = hashlib.sha256()
    root = resources.files("sentinel_runtime")
    for path in JUDGE_FILES:
        for name, content in _files(root.joinpath(*path.split("/")), path):
            digest.update(f"{name}\0{len(content)}\0".encode())
            digest.update(content)
    for package in JUDGE_PACKAGES:
        digest.update(f"{package}\0{metadata.version(package)}\0".encode())
    return f"evidence-screen:{digest.hexdigest()[:32]}"


class EvidenceScreen:
    """``index.screening.Screen``: a chunk is quiet when ``scoring.quiet_text`` says so."""

    @property
    def stamp(self) -> str:
        return judges_stamp()

    def quiet(self, texts: Sequence[str]) -> list[bool]:
        return [scoring.quiet_text(text) for text in texts]

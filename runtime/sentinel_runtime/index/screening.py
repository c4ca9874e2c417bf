"""Ingest screening: one verdict per chunk, taken once when the chunk is indexed.

Chunks are read far more often than they are written, and on a large index most answers
retrieve chunks no earlier answer retrieved: judging each chunk's text when it is indexed,
instead of when it is retrieved, takes that work off the answer's path.

The index keeps one bit per chunk, ``Chunk.quiet``: a ``Screen`` found nothing in the text
that a judge at answer time would act on, whatever the question. The index does not know
what the judges are (the application hands it the evidence filter's screen,
``pipeline.evidence_screen``). It keeps the bits with the chunks and persists them beside
the screen's ``stamp``, and reads them back only under the same stamp: a file written by
another version of the judges is loaded with every chunk unscreened, and those chunks are
judged when retrieved, as they would be without a screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Screen(Protocol):
    @property
    def stamp(self) -> str:
        """Names the judges the verdicts come from; it changes whenever one of them does."""
        ...

    def quiet(self, texts: Sequence[str]) -> list[bool]:
        """For each text, whether it is certain to pass every judge whatever the question
        (False when unsure: such a chunk is judged when it is retrieved)."""
        ...

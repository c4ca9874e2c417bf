"""One labelled answer of the set, and the number of samples drawn per secret kind."""

from __future__ import annotations

from dataclasses import asdict, dataclass

BENIGN = "benign"
PER_KIND = 12


@dataclass(frozen=True)
class Sample:
    """One labelled answer. ``kind`` is a secret kind id, or ``benign`` for a negative;
    ``secret`` is empty for a negative; ``framing`` is how the text carries it (for a negative,
    its family)."""

    text: str
    kind: str
    secret: str
    framing: str

    @property
    def positive(self) -> bool:
        return self.kind != BENIGN

    def to_json(self) -> dict[str, str]:
        return asdict(self)

"""Plain data passed between the pipeline's stages (no behaviour, no I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sentinel_runtime.guard.types import GuardJudgement
from sentinel_runtime.index.types import Hit

Intent = Literal["benign", "harmful_procedural", "disguised", "ambiguous"]
RetrievalNeed = Literal["required", "optional", "none"]
GateAction = Literal["retrieve", "restrict", "no_retrieve"]
EvidenceType = Literal["any", "definitions", "high_level", "non_procedural"]
Decision = Literal["answer", "summary", "refuse", "block"]
# What a restricted plan that found nothing may drop on its "widen" fallback (gate.fallback):
# nothing, only its time window, or its time window and its source allowlist.
Widening = Literal["none", "window", "all"]


@dataclass(frozen=True)
class CanonicalPrompt:
    """Stage 0: the user's prompt made safe to reason about."""

    text: str  # NFKC-normalised, invisible characters removed, whitespace collapsed, bounded
    original_chars: int
    invisible_removed: int
    truncated: bool


@dataclass(frozen=True)
class ExampleMatch:
    """The policy's example (``judge.examples``) that settled a request."""

    kind: Literal["allow", "deny"]
    name: str
    similarity: float

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "similarity": self.similarity}


@dataclass(frozen=True)
class Introspection:
    """Stage 1: the validated state parsed from a ``<Reasoning_step>``/``<Output>`` trace."""

    intent: Intent
    risk_category: str  # "none" for benign prompts; otherwise a closed set (see introspection)
    severity: float  # 0 (harmless) .. 1 (severe)
    confidence: float  # 0 .. 1: how sure the backend is of ``intent``
    retrieval_need: RetrievalNeed
    attack_families: tuple[str, ...] = ()  # role_play, forced_prefix, narrative_camouflage, ...
    signals: tuple[str, ...] = ()  # short machine-readable reasons, never prompt text
    trace: str = ""  # the full trace; audit only, never in the assistant message
    backend: Literal["builtin", "llm", "guard"] = "builtin"
    # Set when the LLM trace or the guard model was unusable, or the built-in floor held.
    fallback_reason: str | None = None
    # Why ``retrieval_need`` is what it is (``retrieval_need.assess``'s code, e.g. "greeting");
    # "" when the backend gave none.
    retrieval_need_reason: str = ""
    # The guard model's judgement of the request (``understand.guarded``), when one was asked.
    guard: GuardJudgement | None = None
    # The deployment's example that settled the request (``understand.examples``), if any.
    example: ExampleMatch | None = None


# A plainly benign question's introspection: the state evaluations score documents under.
BENIGN_REQUEST = Introspection(
    intent="benign", risk_category="none", severity=0.0, confidence=1.0, retrieval_need="required"
)


@dataclass(frozen=True)
class RetrievalPlan:
    """Stage 2: what retrieval may do for this prompt."""

    action: GateAction
    query: str  # original or rewritten retrieval query ("" for no_retrieve)
    top_k: int
    sources: tuple[str, ...] | None = None  # allowlist; None = any source
    not_before: datetime | None = None  # time window start (undated documents pass it)
    expected_evidence: EvidenceType = "any"
    reasons: tuple[str, ...] = ()
    widen: Widening = "none"  # set by the gate on the restricted plans it may widen


@dataclass(frozen=True)
class EvidenceVerdict:
    """Stage 3: the safety score S_e of one retrieved chunk and whether it was kept."""

    chunk_id: str
    score: float  # S_e in [-1, 1]; negative means dropped
    kept: bool
    reasons: tuple[str, ...] = ()  # e.g. "injected_instructions", "procedural_harm", "stale"
    components: dict[str, float] = field(default_factory=dict)
    # Facts that cost nothing but belong in the trace: "undated" (the chunk passed the
    # plan's time window without a timestamp).
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Conflict:
    """Kept chunks that disagree; surfaced to the user, never silently resolved."""

    chunk_ids: tuple[str, ...]
    kind: str  # e.g. "different_answers", "numeric_mismatch"
    detail: str


@dataclass(frozen=True)
class EvidenceBundle:
    kept: tuple[Hit, ...]
    dropped: tuple[tuple[Hit, EvidenceVerdict], ...]
    verdicts: tuple[EvidenceVerdict, ...]
    conflicts: tuple[Conflict, ...] = ()
    fallback: str | None = None  # "restricted_retry" | "rewrite" | "widen" | "high_level"


@dataclass(frozen=True)
class Answer:
    """Stage 4: the generated answer before citation validation and output scanners."""

    decision: Decision
    text: str
    citations: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = ()  # safe alternatives offered with a refusal
    generator: str = "extractive"
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    """One sentence of an answer and the chunk ids it cites (empty: it cites nothing itself)."""

    text: str
    cited: tuple[str, ...]

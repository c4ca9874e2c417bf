"""Best-of-N selection by a composite safety/helpfulness reward (RAI-RAG's test-time search).

R(H, S, I) = F(S) * H + S + lambda * I, where
- S in [-1, 1] is safety: 1 for a candidate with no harmful content, falling with the
  severity ``harm.assess_harm`` finds, and -1 for actionable harmful procedure;
- F(S) = max(S, 0), so helpfulness only counts for safe candidates (an unsafe answer can
  never win by being helpful);
- H in [0, 1] is helpfulness: valid citations (0.5) plus the share of the query's keywords
  the answer covers (0.5);
- I in [0, 1] is consistency with the pipeline's decision: a summary with no step-like
  content, an answer that does not claim insufficiency while evidence was kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sentinel_runtime.index.analysis import keywords
from sentinel_runtime.pipeline.cite.citations import (
    CitationConfig,
    says_insufficient,
    validate_citations,
)
from sentinel_runtime.pipeline.signals import harm
from sentinel_runtime.pipeline.types import Answer

CONSISTENCY_WEIGHT = 0.5


@dataclass(frozen=True)
class Reward:
    total: float
    safety: float
    helpfulness: float
    consistency: float

    def describe(self) -> dict[str, float]:
        return {
            "total": round(self.total, 4),
            "safety": round(self.safety, 4),
            "helpfulness": round(self.helpfulness, 4),
            "consistency": round(self.consistency, 4),
        }


def reward(candidate: Answer, query: str, chunks: dict[str, str], config: CitationConfig) -> Reward:
    assessment = harm.assess_harm(candidate.text)
    safety = -1.0 if assessment.procedural and assessment.severity >= 0.5 else 1.0
    safety = min(safety, 1.0 - assessment.severity)
    wanted = keywords(query)
    coverage = len(wanted & keywords(candidate.text)) / len(wanted) if wanted else 0.0
    valid = validate_citations(candidate.text, candidate.citations, chunks, config).valid
    helpfulness = 0.5 * valid + 0.5 * coverage
    consistent = not (candidate.decision == "summary" and assessment.procedural) and not (
        candidate.decision == "answer" and chunks and says_insufficient(candidate.text)
    )
    consistency = 1.0 if consistent else 0.0
    total = max(safety, 0.0) * helpfulness + safety + CONSISTENCY_WEIGHT * consistency
    return Reward(total, safety, helpfulness, consistency)


def select_best(
    candidates: Sequence[Answer], query: str, chunks: dict[str, str], config: CitationConfig
) -> tuple[Answer, list[Reward]]:
    """The highest-reward candidate (the first among equals) and every candidate's reward."""
    rewards = [reward(c, query, chunks, config) for c in candidates]
    best = max(range(len(candidates)), key=lambda i: (rewards[i].total, -i))
    return candidates[best], rewards

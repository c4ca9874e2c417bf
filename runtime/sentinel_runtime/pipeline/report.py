"""What a pipeline result shows: the response's ``sentinel`` object, ``source_nodes``, the audit
record. Pure functions over :class:`runner.PipelineResult`; one description for all three,
so the API and the audit trail never disagree about why something happened.

Nothing here copies the prompt, the introspection trace or a dropped document's text: only
ids, scores and reason codes (the kept chunks' text goes to ``source_nodes``, as in KAITO).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from sentinel_runtime.guardrails.engine import ScanOutcome
from sentinel_runtime.index.types import Hit
from sentinel_runtime.pipeline.runner import PipelineResult


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def introspection(result: PipelineResult) -> dict[str, Any]:
    state = result.state
    described = {
        "intent": state.intent,
        "riskCategory": state.risk_category,
        "severity": round(state.severity, 3),
        "confidence": round(state.confidence, 3),
        "retrievalNeed": state.retrieval_need,
        "attackFamilies": list(state.attack_families),
        "signals": list(state.signals),
        "backend": state.backend,
        "fallbackReason": state.fallback_reason,
        "promptInvisibleRemoved": result.prompt.invisible_removed,
        "promptTruncated": result.prompt.truncated,
    }
    if state.guard is not None:
        described["guard"] = state.guard.describe()
    if state.example is not None:
        described["example"] = state.example.describe()
    return described


def gate(result: PipelineResult) -> dict[str, Any]:
    plan = result.plan
    return {
        "action": plan.action,
        "reasons": list(plan.reasons),
        "topK": plan.top_k,
        "sources": list(plan.sources) if plan.sources is not None else None,
        "notBefore": plan.not_before.isoformat() if plan.not_before else None,
        "expectedEvidence": plan.expected_evidence,
        "queryRewritten": plan.query != result.prompt.text and plan.action != "no_retrieve",
        "followUp": result.follow_up_query is not None,
        "retrievalPerformed": result.retrieval_performed,
        "attempts": [
            {
                "action": a.plan.action,
                "topK": a.plan.top_k,
                "sources": list(a.plan.sources) if a.plan.sources is not None else None,
                "notBefore": a.plan.not_before.isoformat() if a.plan.not_before else None,
                "retrieved": a.retrieved,
                "kept": a.kept,
                "undated": a.undated,
                "fallback": a.fallback,
            }
            for a in result.attempts
        ],
    }


def evidence(result: PipelineResult) -> dict[str, Any]:
    bundle = result.bundle
    if bundle is None:
        return {"kept": [], "filtered": [], "conflicts": [], "fallback": None, "undated": 0}
    verdicts = {v.chunk_id: v for v in bundle.verdicts}
    kept = [(h.chunk.chunk_id, verdicts.get(h.chunk.chunk_id)) for h in bundle.kept]
    return {
        "kept": [
            # "notes": ["undated"] when the chunk passed the time window without a timestamp.
            {"chunkId": chunk_id, "score": round(v.score if v else 0.0, 3)}
            | ({"notes": list(v.notes)} if v and v.notes else {})
            for chunk_id, v in kept
        ],
        "filtered": [
            {
                "chunkId": h.chunk.chunk_id,
                "score": round(v.score, 3),
                "reasons": list(v.reasons),
            }
            | ({"notes": list(v.notes)} if v.notes else {})
            for h, v in bundle.dropped
        ],
        "conflicts": [
            {"chunkIds": list(c.chunk_ids), "kind": c.kind, "detail": c.detail}
            for c in bundle.conflicts
        ],
        "fallback": bundle.fallback,
        "undated": sum(1 for _, v in kept if v and "undated" in v.notes),
    }


def citations(result: PipelineResult) -> dict[str, Any]:
    return {
        "ids": list(result.answer.citations),
        "validation": result.validation.describe(),
        "blocked": list(result.answer.details.get("blocked_citations", [])),
    }


def sentinel(result: PipelineResult, *, index_name: str | None) -> dict[str, Any]:
    """The ``sentinel`` object of a response (guardrails are added by the HTTP layer)."""
    described: dict[str, Any] = {
        "requestId": result.request_id,
        "decision": result.decision,
        "indexName": index_name,
        "introspection": introspection(result),
        "gate": gate(result),
        "evidence": evidence(result),
        "citations": citations(result),
        "retrievalQuality": result.quality,
        "generator": result.answer.generator,
        "latencyMs": {k: _ms(v) for k, v in result.timings.items()},
    }
    if result.answer_guard is not None:
        described["answerGuard"] = result.answer_guard.describe()
    if result.follow_up_query is not None:
        # The client's own words (the previous turn joined to the question): shown to the
        # client, never written to the audit trail.
        described["gate"]["followUpQuery"] = result.follow_up_query
    if result.generation:
        described["generation"] = result.generation
    if result.answer.alternatives:
        described["alternatives"] = list(result.answer.alternatives)
    if result.rewards:
        described["bestOfN"] = [r.describe() for r in result.rewards]
    return described


def node(hit: Hit) -> dict[str, Any]:
    """One retrieved chunk as KAITO shows it (``source_nodes``, ``/retrieve`` results)."""
    return {
        "doc_id": hit.chunk.doc_id,
        "node_id": hit.chunk.chunk_id,
        "text": hit.chunk.text,
        "score": hit.score,
        "similarity": hit.similarity,
        "metadata": dict(hit.chunk.metadata),
    }


def source_nodes(result: PipelineResult) -> list[dict[str, Any]]:
    """KAITO's ``source_nodes``: the evidence the answer was allowed to use."""
    return [node(hit) for hit in (result.bundle.kept if result.bundle is not None else ())]


def audit_record(
    result: PipelineResult,
    *,
    index_name: str | None,
    policy_hash: str,
    scan: ScanOutcome | None,
    endpoint: str,
    prompt: str | None = None,
) -> dict[str, Any]:
    """One audit line; ``prompt`` only when the policy asks for it (already scanned)."""
    record: dict[str, Any] = {
        "time": datetime.now(UTC).isoformat(),
        "requestId": result.request_id,
        "endpoint": endpoint,
        "policyHash": policy_hash,
        "indexName": index_name,
        "decision": result.decision,
        "promptSha256": hashlib.sha256(result.prompt.text.encode("utf-8")).hexdigest(),
        "promptChars": result.prompt.original_chars,
        "introspection": introspection(result),
        "gate": gate(result),
        "evidence": evidence(result),
        "citations": citations(result),
        "scanners": {
            "action": scan.action if scan else None,
            "hits": [h.describe() for h in scan.hits] if scan else [],
        },
        "latencyMs": {k: _ms(v) for k, v in result.timings.items()},
    }
    if result.generation:
        record["generation"] = result.generation
    if result.answer_guard is not None:
        record["answerGuard"] = result.answer_guard.describe()
    if prompt is not None:
        record["prompt"] = prompt
    return record

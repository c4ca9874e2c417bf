"""Stage 3b: evidence safety scoring S_e in [-1, 1] and pruning, with a fallback when too
much is pruned (RAI-RAG's evidence-level alignment).

Every retrieved chunk is scored by :func:`score_evidence`::

    S_e = clamp(base + relevance_weight * relevance - sum(weight_k * c_k), -1, 1)

``relevance`` in [0, 1] is the larger of the dense similarity and the share of the query's
terms the chunk contains. The risk components ``c_k`` are in [0, 1]:

- ``harm``: a procedural harmful text (``harm.assess_procedural_harm``): its severity, times
  ``risky_request_factor`` when the request itself is not benign or the plan asked for
  non-procedural evidence; non-procedural mentions of a harmful topic cost nothing;
- ``injection``: instructions aimed at the model (``injection.assess_injection``);
- ``secrets``: 1 when the runtime's own ``secrets`` scanner finds a credential;
- ``pii``: 1 when the ``sensitive`` scanner finds at least ``pii_min_count`` items at a
  density of ``pii_per_100_words`` or more;
- ``stale``: 1 when the chunk's timestamp is older than ``max_age_days``;
- ``cluster``: 1 when the chunk belongs to a coordinated cluster (``conflicts``).

A chunk is kept when S_e >= ``drop_threshold`` (0: negative scores are dropped). With the
default weights, ``base`` (0.3) and ``relevance_weight`` (0.2), any of harm, injection or
secrets at 0.5 or more drops a chunk however relevant it is; between 0.3 and 0.5 relevance
decides; the soft components (pii 0.25, stale 0.15, cluster 0.2) never drop a chunk on
their own, only together. Reasons name the components that cost at least 0.1.

A coordinated cluster is only penalised softly because legitimately redundant sources
look the same; its defence is elsewhere: a cluster never outvotes an independent source,
the disagreement is surfaced by ``conflicts.find_conflicts`` (kind
``"coordinated_cluster"``) and the generator states both claims.

Fallback (:func:`fallback_for`), when fewer than ``min_kept`` chunks were kept:

1. the plan was an unrestricted ``retrieve`` and found hits: ``"restricted_retry"``
   (trusted sources, a time window and fewer chunks cure stale, untrusted and injected
   documents);
2. the plan was ``restrict``, found hits, and the gate's rewrite would still change the
   query: ``"rewrite"`` (the query's procedural triggers keep fetching harmful text);
3. the plan was ``restrict`` and the gate let it widen (``plan.widen``) past a time window or
   a source allowlist it still has: ``"widen"``, found hits or not (``gate.fallback`` says
   what widening keeps, and why it is safe);
4. otherwise, after hits: ``"high_level"``, answer without evidence at a high level; after
   none, no fallback (the index has nothing more to offer).

Each step narrows or widens once what the previous one tried, so the runner's loop ends.
A chunk without a timestamp that a time window let through (``RetrievalPlan.not_before``)
costs nothing and carries the note ``"undated"``. Scanners are built once per configuration
(``_scanners``), never per chunk.

A chunk the ingest screen found ``quiet`` (``index.screening``, ``quiet_text``: no harm,
secret, PII item or injection whatever the question) skips those four judges here: its
verdict is the one they would give, read from the chunk instead of its text.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from sentinel_runtime.guardrails.scanners import secrets as secrets_scanner
from sentinel_runtime.guardrails.scanners import sensitive as sensitive_scanner
from sentinel_runtime.index import analysis
from sentinel_runtime.index.types import Hit
from sentinel_runtime.pipeline.evidence import conflicts
from sentinel_runtime.pipeline.signals import harm, injection
from sentinel_runtime.pipeline.signals.query_rewrite import rewrite_query
from sentinel_runtime.pipeline.types import (
    EvidenceBundle,
    EvidenceVerdict,
    Introspection,
    RetrievalPlan,
)

REPORTED_COST = 0.1


class EvidenceWeights(BaseModel):
    model_config = ConfigDict(
        frozen=True, alias_generator=to_camel, populate_by_name=True, extra="ignore"
    )

    harm: float = Field(default=1.0, ge=0.0, le=4.0)
    injection: float = Field(default=1.0, ge=0.0, le=4.0)
    secrets: float = Field(default=1.0, ge=0.0, le=4.0)
    pii: float = Field(default=0.25, ge=0.0, le=4.0)
    stale: float = Field(default=0.15, ge=0.0, le=4.0)
    cluster: float = Field(default=0.2, ge=0.0, le=4.0)


class EvidenceConfig(BaseModel):
    """The ``evidence`` section of guardrails.yaml."""

    model_config = ConfigDict(
        frozen=True, alias_generator=to_camel, populate_by_name=True, extra="ignore"
    )

    base: float = Field(default=0.3, ge=0.0, le=1.0)  # S_e of a safe chunk of no relevance
    relevance_weight: float = Field(default=0.2, ge=0.0, le=1.0)
    weights: EvidenceWeights = EvidenceWeights()
    drop_threshold: float = Field(default=0.0, ge=-1.0, le=1.0)  # kept when S_e >= this
    min_kept: int = Field(default=1, ge=0, le=100)  # fewer kept (from some hits): fallback
    max_age_days: int | None = Field(default=365, ge=1)  # None: nothing is stale
    harm_min_severity: float = Field(default=0.4, ge=0.0, le=1.0)
    risky_request_factor: float = Field(default=1.5, ge=1.0, le=4.0)
    pii_per_100_words: float = Field(default=3.0, gt=0.0)
    pii_min_count: int = Field(default=3, ge=1)
    pii_detectors: tuple[sensitive_scanner.Detector, ...] = sensitive_scanner.ALL_DETECTORS
    secrets_plugins: tuple[str, ...] | None = None  # detect-secrets plugins; None: defaults


# The configuration quiet_text judges with: every PII detector, the default secrets plugins.
_SCREEN_CONFIG = EvidenceConfig()


@dataclass(frozen=True)
class _Scanners:
    sensitive: sensitive_scanner.SensitiveScanner
    secrets: secrets_scanner.SecretsScanner


@functools.lru_cache(maxsize=16)
def _scanners(config: EvidenceConfig) -> _Scanners:
    """The output scanners, built the way the guardrails engine builds them, once per config."""
    sensitive = sensitive_scanner.SensitiveParams(detectors=list(config.pii_detectors))
    plugins = list(config.secrets_plugins) if config.secrets_plugins else None
    secret = secrets_scanner.SecretsParams(plugins=plugins)
    return _Scanners(
        sensitive=sensitive_scanner.build(sensitive, rewrite=False),
        secrets=secrets_scanner.build(secret, rewrite=False),
    )


def relevance(hit: Hit, query: str) -> float:
    query_terms = analysis.terms(query)
    lexical = analysis.coverage(query_terms, analysis.terms(hit.chunk.text))
    return max(0.0, min(1.0, max(hit.similarity, lexical)))


@dataclass(frozen=True)
class _DocumentSignals:
    """What a chunk's text says whatever the question: computed once per text and config."""

    harm: harm.HarmAssessment
    secrets: bool
    pii_dense: bool


_QUIET_SIGNALS = _DocumentSignals(harm=harm.NONE, secrets=False, pii_dense=False)


def quiet_text(text: str) -> bool:
    """Whether ``text`` scores nothing on harm, secrets, PII or injection under every
    evidence configuration that keeps the default secrets plugins, whatever the question:
    no procedural harm, no credential (default plugins), no PII item (every detector, so
    none for any subset of them), and an injection reading clean without the question.

    The ingest screen's verdict (``evidence_screen``); it reads the text afresh, without
    the per-text caches a retrieved chunk fills."""
    found = harm.assess_procedural_harm(text)
    if found.category != "none" and found.procedural:
        return False
    scanners = _scanners(_SCREEN_CONFIG)
    if scanners.secrets.engine.find(text) or scanners.sensitive.find(text):
        return False
    return injection.reads_clean(text)


@functools.lru_cache(maxsize=8192)
def _document_signals(text: str, config: EvidenceConfig) -> _DocumentSignals:
    # Popular chunks come back request after request; their verdicts do not change until
    # the text or the policy's evidence section does (both are in the cache key).
    scanners = _scanners(config)
    return _DocumentSignals(
        # Only a procedure costs a chunk anything (``_harm``): a topic alone is not looked for.
        harm=harm.assess_procedural_harm(text),
        secrets=bool(scanners.secrets.engine.find(text)),
        pii_dense=_pii_dense(text, scanners, config),
    )


def _harm(
    found: harm.HarmAssessment,
    state: Introspection,
    plan: RetrievalPlan | None,
    config: EvidenceConfig,
) -> float:
    if found.category == "none" or not found.procedural:
        return 0.0
    if found.severity < config.harm_min_severity:
        return 0.0
    cost = found.severity
    # Grounded harm is what this stage exists to prevent: a risky request, or a plan that
    # asked for non-procedural evidence, tolerates less.
    if state.intent != "benign" or (plan is not None and plan.expected_evidence != "any"):
        cost *= config.risky_request_factor
    return min(1.0, cost)


def _pii_dense(text: str, scanners: _Scanners, config: EvidenceConfig) -> bool:
    found = len(scanners.sensitive.find(text))
    words = max(1, len(text.split()))
    return found >= config.pii_min_count and found * 100 / words >= config.pii_per_100_words


def _stale(hit: Hit, now: datetime, config: EvidenceConfig) -> bool:
    stamp = hit.chunk.timestamp
    if config.max_age_days is None or stamp is None:
        return False
    return stamp < now - timedelta(days=config.max_age_days)


def score_evidence(
    hit: Hit,
    query: str,
    state: Introspection,
    now: datetime,
    config: EvidenceConfig,
    *,
    plan: RetrievalPlan | None = None,
    clustered: bool = False,
) -> EvidenceVerdict:
    """S_e of one chunk (see the module docstring) and whether it is kept."""
    text = hit.chunk.text
    if hit.chunk.quiet and config.secrets_plugins is None:
        signals, injected = _QUIET_SIGNALS, injection.CLEAN  # what quiet_text proved
    else:
        signals = _document_signals(text, config)
        injected = injection.assess_injection(text, query)
    weights = config.weights
    harm_found = signals.harm
    harm_cost = _harm(harm_found, state, plan, config)
    components = {
        "relevance": round(relevance(hit, query), 3),
        "harm": round(harm_cost, 3),
        "injection": injected.score,
        "secrets": 1.0 if signals.secrets else 0.0,
        "pii": 1.0 if signals.pii_dense else 0.0,
        "stale": 1.0 if _stale(hit, now, config) else 0.0,
        "cluster": 1.0 if clustered else 0.0,
    }
    costs = {
        "procedural_harm": weights.harm * components["harm"],
        "injected_instructions": weights.injection * components["injection"],
        "secrets": weights.secrets * components["secrets"],
        "pii_dense": weights.pii * components["pii"],
        "stale": weights.stale * components["stale"],
        "coordinated_cluster": weights.cluster * components["cluster"],
    }
    benefit = config.base + config.relevance_weight * components["relevance"]
    score = round(max(-1.0, min(1.0, benefit - sum(costs.values()))), 3)
    reasons = [name for name, cost in costs.items() if cost >= REPORTED_COST]
    if "procedural_harm" in reasons:
        reasons.append(f"harm:{harm_found.category}")
    if "injected_instructions" in reasons:
        reasons.extend(f"injection:{code}" for code in injected.reasons)
    undated = plan is not None and plan.not_before is not None and hit.chunk.timestamp is None
    return EvidenceVerdict(
        chunk_id=hit.chunk.chunk_id,
        score=score,
        kept=score >= config.drop_threshold,
        reasons=tuple(reasons),
        components=components,
        notes=("undated",) if undated else (),
    )


def fallback_for(plan: RetrievalPlan, *, found: bool = True) -> str | None:
    """What the runner should try when too little evidence survived (module docstring);
    ``found``: whether the retrieval returned any hit."""
    if plan.action == "retrieve":
        return "restricted_retry" if found else None
    if (
        found
        and plan.action == "restrict"
        and "query_rewritten" not in plan.reasons
        and rewrite_query(plan.query) not in ("", plan.query)
    ):
        return "rewrite"
    if plan.action == "restrict" and _can_widen(plan):
        return "widen"
    return "high_level" if found else None


def _can_widen(plan: RetrievalPlan) -> bool:
    # Whether gate.fallback.widened would change the plan: it drops the window, and with
    # widen "all" the source allowlist.
    if plan.widen == "all":
        return plan.not_before is not None or plan.sources is not None
    return plan.widen == "window" and plan.not_before is not None


# The stage contract the runner calls positionally: hits, query, state, plan, now, config.
def filter_evidence(  # noqa: PLR0917
    hits: Sequence[Hit],
    query: str,
    state: Introspection,
    plan: RetrievalPlan,
    now: datetime,
    config: EvidenceConfig,
) -> EvidenceBundle:
    """Score every hit, drop the negative ones, surface conflicts, and pick a fallback.

    ``kept`` is ordered by S_e, best first (ties by retrieval rank); ``verdicts`` follow
    the order of ``hits``.
    """
    clustered = conflicts.clustered_ids(conflicts.find_clusters(hits, query))
    verdicts = tuple(
        score_evidence(
            hit,
            query,
            state,
            now,
            config,
            plan=plan,
            clustered=hit.chunk.chunk_id in clustered,
        )
        for hit in hits
    )
    # Best S_e first, retrieval rank breaking ties: a penalised coordinated cluster no
    # longer leads the evidence it would otherwise outnumber.
    kept = tuple(
        hit
        for hit, verdict in sorted(
            zip(hits, verdicts, strict=True), key=lambda pair: (-pair[1].score, pair[0].rank)
        )
        if verdict.kept
    )
    dropped = tuple(
        (hit, verdict) for hit, verdict in zip(hits, verdicts, strict=True) if not verdict.kept
    )
    fallback = fallback_for(plan, found=bool(hits)) if len(kept) < config.min_kept else None
    return EvidenceBundle(
        kept=kept,
        dropped=dropped,
        verdicts=verdicts,
        conflicts=conflicts.find_conflicts(kept, query),
        fallback=fallback,
    )

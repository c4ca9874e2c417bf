"""Stage 1, built-in backend: structured introspection without a language model.

Infers the intent of a canonical prompt (benign, harmful procedural, disguised, ambiguous),
its risk category and severity (the learned judge, ``judge.assess``, over the prompt and
its decoded readings), the jailbreak families wrapped around it and whether answering
needs the user's documents (``retrieval_need``). It writes a real ``<Reasoning_step>`` /
``<Output>`` trace (``trace.format_trace``) and returns what ``trace.parse_trace`` makes of
it, so this backend passes the same validation as ``introspection_llm``. The steps name
codes and numbers only, never words of the prompt.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from sentinel_runtime.pipeline.types import CanonicalPrompt, Intent, Introspection, RetrievalNeed
from sentinel_runtime.pipeline.understand import language, retrieval_need, trace
from sentinel_runtime.pipeline.understand.judge import assess, encoder, model


class IntrospectionConfig(BaseModel):
    """The ``introspection`` section of guardrails.yaml."""

    model_config = ConfigDict(
        frozen=True, alias_generator=to_camel, populate_by_name=True, extra="ignore"
    )

    # builtin: the learned judge; llm: the upstream model's trace, the built-in verdict as a
    # floor; guard: the built-in judge with the guard model of the guard section (its mode
    # says when; unset, the uncertain band).
    backend: Literal["builtin", "llm", "guard"] = "builtin"
    max_prompt_chars: int = Field(default=8000, ge=1)
    # Severity (judge.assess, raised by jailbreak framing) from which a request is harmful.
    # The judge's own refusal threshold lands on 0.6 (assess.HARMFUL_SEVERITY); the default
    # line sits above it, at the point chosen on the dev rows by `sentinel eval --curve`
    # (evaluation/operating_point.py: XSTest's safe prompts refused at <= 8 %).
    harmful_severity: float = Field(default=0.68, ge=0.0, le=1.0)
    # From here up to harmful_severity the intent is ambiguous (conservative handling).
    ambiguous_severity: float = Field(default=0.35, ge=0.0, le=1.0)
    # A jailbreak-framed prompt whose topic reaches this severity is a disguised request.
    disguised_severity: float = Field(default=0.3, ge=0.0, le=1.0)
    # Added to the severity per jailbreak family found around a harmful topic.
    family_severity_boost: float = Field(default=0.1, ge=0.0, le=1.0)
    # Invisible characters removed in stage 0 from which the prompt counts as obfuscated.
    obfuscation_min_invisible: int = Field(default=3, ge=1)
    llm_timeout_seconds: float = Field(default=20.0, gt=0.0)
    # With the LLM backend, a built-in refusal-level verdict wins over a milder LLM one.
    llm_safety_floor: bool = True
    # The built-in judge's encoder stage (judge/encoder.py): a fine-tuned MiniLM decides the
    # prompts whose linear harm probability falls in its band; false: the linear model alone.
    # Off by default: on the held-out sets it refuses far more harmful requests but also more
    # of XSTest's safe prompts (docs/how-sentinel-decides.md, "The built-in judge, second
    # round"), the over-refusal this round set out to lower; a deployment that prefers recall
    # turns it on.
    encoder: bool = False


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE)


# The grammar of jailbreak wrappers, independent of the harmful topic they carry.
_FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "role_play",
        _rx(
            r"\bpretend\s+(?:that\s+)?(?:you\s+are|you're|to\s+be)\b",
            r"\b(?:act|behave|respond|answer|reply|speak|write)\s+(?:as|like)\s+(?:an?\s+|my\s+)?"
            r"(?:\w+\s+){0,3}(?:ai|assistant|character|persona|model|chatbot|bot|hacker|"
            r"criminal|villain|expert|grandm\w*|version|entity|narrator)\b",
            r"\byou\s+are\s+(?:now|no\s+longer|going\s+to\s+(?:act|pretend|play))\b",
            r"\bfrom\s+now\s+on,?\s+you\b",
            r"\b(?:role[- ]?play\w*|stay\s+in\s+character|in\s+character|"
            r"play\s+the\s+(?:role|part))\b",
            r"\b(?:dan|aim|stan|dude|kevin|evil\s*bot|betterdan|maximum|jailbroken)\b(?=[^.?!]{0,80}"
            r"\b(?:mode|stands\s+for|persona|character|respond|answer|prompt)\b)",
            r"\bdo\s+anything\s+now\b",
            r"\b(?:imagine|suppose)\s+(?:that\s+)?you\s+(?:are|were)\b",
            r"\byou\s+(?:will|shall|must)\s+(?:now\s+)?(?:act|respond|answer|play|pretend|be)\s+"
            r"(?:as|like)\b",
            r"\b(?:unfiltered|uncensored|amoral|unethical|unrestricted)\s+(?:ai|assistant|chatbot|"
            r"model|bot|version|character|persona)\b",
        ),
    ),
    (
        "forced_prefix",
        _rx(
            r"\b(?:start|begin|open|prefix)\w*\s+(?:your|the|each|every)\s+(?:\w+\s+)?(?:answer|"
            r"response|reply|output|message)s?\s+(?:with|by)\b",
            r"\b(?:answer|response|reply|output)\s+(?:must|should|has\s+to)\s+(?:start|begin)\b",
            r"\b(?:first|always)\s+(?:say|write|reply|respond|output)\s+(?:with\s+)?[\"'“]",
            r"[\"'“]\s*sure,?\s+here\s+(?:is|are|'s)\b",
            r"\brespond\s+(?:only\s+)?with\s+[\"'“]?(?:sure|yes|absolutely|of\s+course)\b",
        ),
    ),
    (
        "instruction_override",
        _rx(
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:all\s+|any\s+)?(?:of\s+)?"
            r"(?:the\s+|your\s+|my\s+)?(?:previous|prior|above|earlier|preceding|original|initial|"
            r"system|safety|openai|content)?\s*(?:instructions?|rules|guidelines|polic(?:y|ies)|"
            r"prompts?|programming|restrictions|filters|directives|training|constraints)\b",
            r"\b(?:developer|dev|god|admin|debug|sudo|unrestricted|jailbreak|opposite)\s+mode\b",
            r"\bnew\s+(?:system\s+)?(?:instructions|rules|directives)\s*:",
            r"\bsystem\s+prompt\b|\bjailbr(?:eak|oken)\w*\b",
            r"\bwithout\s+(?:any\s+)?(?:restrictions|filters?|censorship|limitations|"
            r"guidelines|safeguards|rules)\b",
            r"\bfree\s+(?:of|from)\s+(?:all\s+|any\s+)?(?:restrictions|rules|guidelines|"
            r"constraints|limitations|censorship)\b",
        ),
    ),
    (
        "refusal_suppression",
        _rx(
            r"\b(?:do\s+not|don't|never|must\s+not|mustn't|cannot|can't|won't)\s+(?:ever\s+)?"
            r"(?:refuse|decline|apologi[sz]e|say\s+(?:no|sorry|you\s+can(?:'t|not))|"
            r"include\s+(?:any\s+)?(?:warnings?|disclaimers?|caveats?)|warn|moralize|moralise|"
            r"lecture|break\s+character)\b",
            r"\bno\s+(?:disclaimers?|warnings?|caveats?|moralizing|moralising|ethics|morals|"
            r"refusals?|censorship)\b",
            r"\b(?:ignore|without)\s+(?:any\s+|all\s+|your\s+)?(?:ethic\w*|moral\w*|legal\w*|"
            r"safety)\s*(?:concerns|considerations|implications|guidelines|restrictions)?\b",
            r"\b(?:must|will|always)\s+(?:answer|comply|obey|respond)\b[^.?!]{0,30}"
            r"\b(?:no\s+matter|regardless|every|any|all)\b",
        ),
    ),
    (
        "narrative_camouflage",
        _rx(
            r"\b(?:write|tell|create|compose|draft|generate|craft)\s+(?:me\s+)?(?:a|an|the)\s+"
            r"(?:\w+\s+){0,3}(?:story|poem|novel|screenplay|script|play|scene|fiction|tale|song|"
            r"rap|dialogue|fanfic\w*|chapter|monologue|narrative|sonnet|haiku|limerick)\b",
            r"\bhypothetical\w*|\bthought\s+experiment\b|\bin\s+theory\b",
            r"\b(?:in|for)\s+(?:a|an|my|the)\s+(?:\w+\s+){0,2}(?:fictional|fantasy|imaginary|"
            r"alternate|parallel|dystopian)\s+(?:world|universe|setting|story|novel|society)\b",
            r"\bfor\s+(?:a|an|my|the)\s+(?:\w+\s+){0,2}(?:novel|story|book|movie|film|screenplay|"
            r"game|script|play)\s+(?:i'm|i\s+am|we're|we\s+are)\s+(?:writing|making|working)\b",
            r"\b(?:purely|strictly|just)\s+(?:fictional|hypothetical|theoretical|for\s+fun)\b",
            r"\bfor\s+(?:purely\s+)?(?:educational|research|academic|informational|"
            r"scientific)\s+purposes\b",
            r"\b(?:my\s+)?(?:dead|late|deceased)\s+grand(?:ma|mother|pa|father)\b",
            r"\b(?:a|the)\s+character\s+(?:who|that|named|called)\b",
        ),
    ),
)
# Families that only ever wrap a request to loosen a model's rules.
JAILBREAK = frozenset(
    {"role_play", "forced_prefix", "instruction_override", "refusal_suppression", "obfuscation"}
)
_ENCODED_BLOB = re.compile(r"(?:[A-Za-z0-9+/]{40,}={0,2})|(?:\\x[0-9a-f]{2}){8,}", re.IGNORECASE)


def attack_families(prompt: CanonicalPrompt, config: IntrospectionConfig) -> tuple[str, ...]:
    """Jailbreak wrappers found in the prompt, in the order of ``trace.ATTACK_FAMILIES``."""
    found = {name for name, pattern in _FAMILIES if pattern.search(prompt.text)}
    if (
        prompt.invisible_removed >= config.obfuscation_min_invisible
        or _ENCODED_BLOB.search(prompt.text) is not None
    ):
        found.add("obfuscation")
    return tuple(name for name in trace.ATTACK_FAMILIES if name in found)


def introspect(
    prompt: CanonicalPrompt, config: IntrospectionConfig, judge: model.LinearJudge | None = None
) -> Introspection:
    """The built-in backend: the learned judge over the prompt and its decoded readings,
    the jailbreak grammar around it, and a validated introspection state. A ``judge``
    measured in place of the shipped one is read alone: the encoder's band was chosen for
    the shipped model's training."""
    return decide(prompt, judge_request(prompt, config, judge), config)


def judge_request(
    prompt: CanonicalPrompt, config: IntrospectionConfig, judge: model.LinearJudge | None = None
) -> assess.RequestAssessment:
    """The learned judge's reading of the prompt (the costly part of ``introspect``); it
    depends on the configuration only through ``encoder``."""
    cascade = encoder.shipped() if config.encoder and judge is None else None
    return assess.assess_request(prompt.text, judge, cascade)


def decide(
    prompt: CanonicalPrompt, assessment: assess.RequestAssessment, config: IntrospectionConfig
) -> Introspection:
    """The introspection state from the judge's reading, the jailbreak grammar and the
    configuration's thresholds (``evaluation.operating_point`` varies the thresholds over one
    reading)."""
    families = list(attack_families(prompt, config))
    if assessment.decodings and "obfuscation" not in families:
        families.append("obfuscation")
    if (
        assessment.injection
        and assessment.category != "none"
        and not any(name in JAILBREAK for name in families)
    ):
        # The model recognised an override attempt the grammar did not name, around a
        # harmful topic. Alone it is only a signal: long pasted text often looks like one.
        families.append("instruction_override")
    families = [name for name in trace.ATTACK_FAMILIES if name in families]
    wrappers = [name for name in families if name in JAILBREAK]
    severity = assessment.severity
    harmful_topic = assessment.category != "none"
    # A story or hypothetical only camouflages something when it wraps a harmful procedure.
    if "narrative_camouflage" in families and not (harmful_topic and assessment.procedural):
        families.remove("narrative_camouflage")
    framing = [name for name in families if name in JAILBREAK or name == "narrative_camouflage"]
    if harmful_topic and framing:
        severity = min(1.0, severity + config.family_severity_boost * len(framing))
    intent = _intent(severity, bool(framing and harmful_topic), bool(wrappers), config)
    if intent in {"harmful_procedural", "disguised"} and assessment.procedural:
        families.append("harmful_procedural")
    need_reason = ""
    if intent in {"harmful_procedural", "disguised"}:
        need: RetrievalNeed = "none"
    else:
        judged_need = retrieval_need.assess(prompt.text)
        need, need_reason = judged_need.need, judged_need.reason
    confidence = _confidence(severity, intent, config)
    read_in, _ = language.detect(prompt.text)
    text = trace.format_trace(
        _steps(
            prompt,
            read_in=read_in,
            assessment=assessment,
            families=families,
            intent=intent,
            need=need,
            severity=severity,
        ),
        intent=intent,
        risk_category=assessment.category,
        severity=severity,
        confidence=confidence,
        retrieval_need=need,
        attack_families=families,
        signals=(f"language:{read_in}", *assessment.signals),
    )
    state = trace.parse_trace(text, backend="builtin")
    return dataclasses.replace(state, retrieval_need_reason=need_reason) if need_reason else state


def _intent(
    severity: float, framed_harm: bool, jailbreak: bool, config: IntrospectionConfig
) -> Intent:
    if framed_harm and severity >= config.disguised_severity:
        return "disguised"
    if severity >= config.harmful_severity:
        return "harmful_procedural"
    if severity >= config.ambiguous_severity or jailbreak:
        # Jailbreak grammar around a harmless topic is still handled conservatively.
        return "ambiguous"
    return "benign"


def _confidence(severity: float, intent: Intent, config: IntrospectionConfig) -> float:
    """Distance from the nearest decision threshold, mapped to 0.5..1."""
    if intent == "ambiguous":
        return 0.5
    distance = min(
        abs(severity - config.harmful_severity), abs(severity - config.ambiguous_severity)
    )
    return round(min(1.0, 0.5 + distance * 1.5), 3)


def _steps(
    prompt: CanonicalPrompt,
    *,
    read_in: str,
    assessment: assess.RequestAssessment,
    families: list[str],
    intent: Intent,
    need: RetrievalNeed,
    severity: float,
) -> list[str]:
    signals = ", ".join(assessment.signals) or "none"
    return [
        f"Canonical prompt: {len(prompt.text)} characters, {prompt.invisible_removed} invisible "
        f"removed, truncated={str(prompt.truncated).lower()}, language {read_in}.",
        f"Policy mapping: category {assessment.category}, judged severity "
        f"{assessment.severity:.3f} (harm probability {assessment.harm_probability:.3f}, "
        f"injection probability {assessment.injection_probability:.3f}), "
        f"procedural={str(assessment.procedural).lower()}, decoded readings: "
        f"{', '.join(assessment.decodings) or 'none'}; signals: {signals}.",
        f"Attack families: {', '.join(families) or 'none'}; adjusted severity {severity:.3f}.",
        f"Intent inference: {intent}.",
        f"Retrieval necessity: {need}.",
    ]

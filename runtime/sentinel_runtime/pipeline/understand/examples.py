"""The deployment's own examples (the policy's ``judge.examples``): a fix for today, not the
next release.

A platform team that finds a false refusal in its audit log lists the prompt under
``allow``; one that finds a request the judge let through lists it under ``deny``. A prompt
whose sentence embedding (``judge/similarity.py``) is within ``similarity`` (cosine) of an
example is settled by it:
- close to a ``deny`` example: refused (harmful intent, severity 1, the example's category);
- close to an ``allow`` example: served as benign, unless it carries jailbreak grammar the
  example does not (a role-play wrapper around an allowed question is not that question).
Deny wins when both match. An embedding cannot read one flipped word: "Where can I buy a gun
legally in Texas?" and the same with "illegally" are at a cosine of 0.96, and the judge's own
severities of the two differ by 0.07, so no margin on either separates them. An allow example
vouches for its near paraphrases, that one included; list the flipped request under ``deny``
(docs/how-sentinel-decides.md, "The deployment's own examples").

A settled verdict names the example (``example_<kind>:<name>`` and its similarity in the
signals, ``example`` in the introspection), and the guard-model stage does not overrule it
(``guarded.introspect_guarded``): the guard sees what the examples do not settle.

The examples' embeddings are computed once per text (a policy reload re-embeds only the new
ones). A prompt costs one run of the small model, and only when examples are set and it is
no more than twice as long as the longest example (plus ``LENGTH_SLACK`` words): a page of
text is nobody's paraphrase of a one-line question, and it would cost the most
(bench/judge_examples.py).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.pipeline.signals import harm
from sentinel_runtime.pipeline.types import CanonicalPrompt, ExampleMatch, Introspection
from sentinel_runtime.pipeline.understand import canonical, introspection, retrieval_need
from sentinel_runtime.pipeline.understand.judge import similarity

ExampleKind = Literal["allow", "deny"]
MAX_EXAMPLES = 200  # per list: a few dozen is the intended size
MAX_EXAMPLE_CHARS = 2000
UNAVAILABLE = "examples_unavailable"
LENGTH_SLACK = 8
HARMFUL = frozenset({"harmful_procedural", "disguised"})
logger = logging.getLogger(__name__)

_MODEL_CONFIG = ConfigDict(
    alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
)


class Example(BaseModel):
    """One example: the prompt, a name for the trace (default ``allow.3``, the fourth of the
    allow list), and for a deny example the risk category its refusal reports."""

    model_config = _MODEL_CONFIG

    prompt: str = Field(min_length=1, max_length=MAX_EXAMPLE_CHARS)
    # Shown in the trace's signals, which are lower-case codes (``trace.is_signal``).
    name: str = Field(default="", max_length=64, pattern=r"^[a-z0-9_.\-]*$")
    category: str = "other"

    @field_validator("category")
    @classmethod
    def _known_category(cls, value: str) -> str:
        if value not in harm.CATEGORIES or value == "none":
            raise ValueError(
                f"{value!r} is not one of Sentinel's risk categories "
                f"({', '.join(c for c in harm.CATEGORIES if c != 'none')})"
            )
        return value


def _as_examples(value: object) -> object:
    """A bare string is an example's prompt."""
    if isinstance(value, list | tuple):
        return tuple({"prompt": v} if isinstance(v, str) else v for v in value)
    return value


class ExamplesConfig(BaseModel):
    """``judge.examples``."""

    model_config = _MODEL_CONFIG

    # Cosine from which a prompt is an example's paraphrase (docs/how-sentinel-decides.md:
    # paraphrases of 300 OR-Bench prompts 0.95 at the 5th percentile; the nearest of the 299
    # others 0.83 at the 95th).
    similarity: float = Field(default=0.9, gt=0.0, le=1.0)
    allow: tuple[Example, ...] = Field(default=(), max_length=MAX_EXAMPLES)
    deny: tuple[Example, ...] = Field(default=(), max_length=MAX_EXAMPLES)

    _split = field_validator("allow", "deny", mode="before")(_as_examples)

    @property
    def empty(self) -> bool:
        return not self.allow and not self.deny


class JudgeConfig(BaseModel):
    """The ``judge`` section: what a deployment adds to the built-in judge."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True
    )

    examples: ExamplesConfig = ExamplesConfig()


@dataclass(frozen=True)
class Indexed:
    """One example ready to match: its name, and the jailbreak grammar the judge finds in it."""

    kind: ExampleKind
    name: str
    category: str
    families: frozenset[str]


class ExampleIndex:
    """The examples of one configuration, embedded, and the judge's reading of each."""

    def __init__(
        self,
        config: ExamplesConfig,
        settings: introspection.IntrospectionConfig,
        model: similarity.SimilarityModel,
    ) -> None:
        self.config = config
        self.model = model
        entries: list[Indexed] = []
        texts: list[str] = []
        for kind, listed in (("deny", config.deny), ("allow", config.allow)):
            for position, example in enumerate(listed):
                prompt = canonical.canonicalise(example.prompt, settings.max_prompt_chars)
                read = introspection.introspect(prompt, settings)
                entries.append(
                    Indexed(
                        kind=kind,  # type: ignore[arg-type]
                        name=example.name or f"{kind}.{position}",
                        category=example.category,
                        families=frozenset(read.attack_families) & introspection.JAILBREAK,
                    )
                )
                texts.append(prompt.text)
        self.entries = tuple(entries)
        self.vectors = _embed_cached(model, texts)
        self.max_words = 2 * max((len(t.split()) for t in texts), default=0) + LENGTH_SLACK

    def nearest(self, text: str) -> tuple[Indexed, float] | None:
        """The closest deny example within reach, else the closest allow example."""
        if not self.entries or len(text.split()) > self.max_words:
            return None
        (vector,) = self.model.embed([text])
        scores = self.vectors @ vector
        for kind in ("deny", "allow"):
            rows = [i for i, e in enumerate(self.entries) if e.kind == kind]
            if rows:
                row = max(rows, key=lambda i: scores[i])
                if scores[row] >= self.config.similarity:
                    return self.entries[row], float(scores[row])
        return None


_VECTORS: OrderedDict[str, np.ndarray] = OrderedDict()
_VECTORS_SIZE = 4 * MAX_EXAMPLES
_lock = threading.Lock()


def _embed_cached(model: similarity.SimilarityModel, texts: list[str]) -> np.ndarray:
    with _lock:
        missing = [t for t in dict.fromkeys(texts) if t not in _VECTORS]
    if missing:
        fresh = model.embed(missing, batch=16)
        with _lock:
            for text, vector in zip(missing, fresh, strict=True):
                _VECTORS[text] = vector
    with _lock:
        rows = []
        for text in texts:
            vector = _VECTORS.get(text)
            if vector is None:  # pushed out meanwhile by another configuration
                vector = model.embed([text])[0]
            else:
                _VECTORS.move_to_end(text)
            rows.append(vector)
        while len(_VECTORS) > _VECTORS_SIZE:
            _VECTORS.popitem(last=False)
    return np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32)


class _IndexCache:
    """The last few configurations' indexes, and whether the model ever failed to run."""

    size = 4

    def __init__(self) -> None:
        self.built: OrderedDict[
            tuple[ExamplesConfig, introspection.IntrospectionConfig], ExampleIndex
        ] = OrderedDict()
        self.lock = threading.Lock()
        self.failed = False

    def get(
        self, config: ExamplesConfig, settings: introspection.IntrospectionConfig
    ) -> ExampleIndex | None:
        key = (config, settings)
        with self.lock:
            cached = self.built.get(key)
            if cached is not None:
                self.built.move_to_end(key)
                return cached
            if self.failed:
                return None
            try:
                index = ExampleIndex(config, settings, similarity.shipped())
            except Exception as exc:  # a broken install must not take the judge down
                self.failed = True
                _unavailable(f"{type(exc).__name__}: {exc}"[:300])
                return None
            self.built[key] = index
            while len(self.built) > self.size:
                self.built.popitem(last=False)
            return index


_INDEXES = _IndexCache()


def index_for(
    config: ExamplesConfig, settings: introspection.IntrospectionConfig
) -> ExampleIndex | None:
    """The index of a configuration, built on first use (``warm`` at a policy load, else the
    first turn); ``None``, logged once, when the similarity model cannot run."""
    return None if config.empty else _INDEXES.get(config, settings)


def _unavailable(detail: str) -> None:
    metrics.INTROSPECTION_FALLBACKS.labels(UNAVAILABLE).inc()
    log_event(
        logger, events.INTROSPECTION_FALLBACK, logging.WARNING, reason=UNAVAILABLE, detail=detail
    )


def settle(
    prompt: CanonicalPrompt,
    state: Introspection,
    config: JudgeConfig,
    settings: introspection.IntrospectionConfig,
) -> Introspection:
    """``state`` as the deployment's examples leave it (unchanged when none is close)."""
    if config.examples.empty:
        return state
    index = index_for(config.examples, settings)
    if index is None:
        return dataclasses.replace(state, signals=(*state.signals, "examples:unavailable"))
    found = index.nearest(prompt.text)
    if found is None:
        return state
    example, score = found
    match = ExampleMatch(kind=example.kind, name=example.name, similarity=round(score, 4))
    signals = (
        *state.signals,
        f"example_{example.kind}:{example.name}",
        f"example_similarity:{score:.3f}",
    )
    if example.kind == "deny":
        return dataclasses.replace(
            state,
            intent=state.intent if state.intent in HARMFUL else "harmful_procedural",
            risk_category=example.category,
            severity=1.0,
            confidence=1.0,
            retrieval_need="none",
            retrieval_need_reason="",
            signals=signals,
            example=match,
        )
    if state.intent == "benign":  # nothing to lift, but settled: the guard is not asked
        return dataclasses.replace(state, signals=signals, example=match)
    if (set(state.attack_families) & introspection.JAILBREAK) - example.families:
        return dataclasses.replace(state, signals=(*signals, "example_not_applied:framing"))
    need = retrieval_need.assess(prompt.text)
    return dataclasses.replace(
        state,
        intent="benign",
        risk_category="none",
        severity=0.0,
        confidence=round(score, 3),
        retrieval_need=need.need,
        retrieval_need_reason=need.reason,
        signals=signals,
        example=match,
    )


def warm(config: JudgeConfig, settings: introspection.IntrospectionConfig) -> None:
    """Build the examples' index now (a policy load) rather than on the next turn."""
    index_for(config.examples, settings)

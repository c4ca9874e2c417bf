"""Citation enforcement of the RAG MVP contract (docs/contracts.md): an answer may cite only
chunks it was given.

Rules (errors block the answer; warnings do not):
1. every citation is exactly the id of a chunk the generator was given (``doc_id#pN``);
2. no citation appears twice;
3. at most ``max_citations`` (5 by default);
4. no citations only when the answer says the context is insufficient;
5. warning: the cited chunks share no keyword with the answer.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from sentinel_runtime.index import analysis

BLOCKED_ANSWER = (
    "I can't provide a cited answer because the citations couldn't be verified "
    "against the retrieved documents."
)
INSUFFICIENT_ANSWER = (
    "The indexed documents do not contain enough information to answer that question."
)
_INSUFFICIENT = re.compile(
    r"\b(insufficient|not enough (?:information|context|evidence)|"
    r"(?:do|does|did) not (?:contain|include|provide|mention|say)|"
    r"(?:don't|doesn't|didn't) (?:contain|include|provide|mention|say|have)|"
    r"no (?:relevant|information|context|evidence)|cannot (?:find|answer|determine)|"
    r"can't (?:find|answer|determine)|unable to (?:find|answer|determine)|"
    r"not (?:found|mentioned|covered) in the (?:context|documents?|sources?))\b",
    re.IGNORECASE,
)


class CitationConfig(BaseModel):
    """The policy file's ``citations`` section."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True
    )

    enabled: bool = True
    max_citations: int = Field(default=5, ge=1, le=50)
    require_keyword_overlap: bool = False  # true turns rule 5 from a warning into an error
    blocked_answer: str = Field(default=BLOCKED_ANSWER, min_length=1)
    # How a model is asked to cite (pipeline.grounded): auto = schema-constrained JSON where
    # the upstream supports it, else inline markers.
    mode: Literal["auto", "structured", "inline"] = "auto"
    # An answer that cites nothing (and does not say the context is insufficient): block it,
    # or pass it with "uncited" in the trace and the evidence in source_nodes.
    uncited: Literal["block", "annotate"] = "block"
    # The support check (pipeline.support): are a claim's numbers, dates, names and negations
    # in the chunks it cites? lexical; llm: lexical, then the upstream model judges each
    # claim against its chunks (a call per claim); or off.
    support: Literal["lexical", "llm", "off"] = "lexical"
    # A claim that fails it: block the answer, or drop the sentence (block if none is left).
    unsupported: Literal["block", "drop"] = "block"


@dataclass(frozen=True)
class CitationValidation:
    valid: bool
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    checked: bool = True  # False when the decision carries no claims to cite (a refusal)
    uncited: bool = False  # the answer cites nothing and does not say it cannot answer
    # Claims the support check found unsupported: {"sentence", "missing"} each.
    unsupported: tuple[dict[str, object], ...] = ()
    dropped: int = 0  # unsupported sentences removed from the answer (unsupported: drop)

    def describe(self) -> dict[str, object]:
        described: dict[str, object] = {
            "citation_valid": self.valid,
            "errors": list(self.errors),
            "warnings": list(self.warnings),
            "checked": self.checked,
        }
        if self.uncited:
            described["uncited"] = True
        if self.unsupported:
            described["unsupported"] = list(self.unsupported)
            described["droppedSentences"] = self.dropped
        return described


@dataclass(frozen=True)
class _Checked:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def says_insufficient(answer: str) -> bool:
    return bool(_INSUFFICIENT.search(answer))


# Topic words (the index's tokens minus index/data/stopwords.txt's [common] and [keywords]
# lists, and words of 1-2 letters); generation, selection, support and conversation read
# them through this name.


def validate_citations(
    answer: str,
    citations: Sequence[str],
    chunks: Mapping[str, str] | Collection[str],
    config: CitationConfig | None = None,
) -> CitationValidation:
    """Check ``citations`` against the given chunks (ids, or ids mapped to their text)."""
    config = config or CitationConfig()
    found = _Checked()
    known = set(chunks)
    for citation in citations:
        if citation not in known:
            found.errors.append(f"Citation {citation!r} does not match any retrieved chunk")
    duplicates = sorted({c for c in citations if citations.count(c) > 1})
    for citation in duplicates:
        found.errors.append(f"Citation {citation!r} appears more than once")
    if len(citations) > config.max_citations:
        found.errors.append(
            f"{len(citations)} citations; at most {config.max_citations} are allowed"
        )
    uncited = not citations and not says_insufficient(answer)
    if uncited:
        message = "The answer cites nothing but does not say the context is insufficient"
        (found.errors if config.uncited == "block" else found.warnings).append(message)
    if citations and isinstance(chunks, Mapping):
        cited = set().union(*(analysis.keywords(chunks[c]) for c in citations if c in chunks))
        if cited and not (analysis.keywords(answer) & cited):
            message = "The cited chunks share no keywords with the answer"
            (found.errors if config.require_keyword_overlap else found.warnings).append(message)
    return CitationValidation(
        valid=not found.errors,
        errors=tuple(found.errors),
        warnings=tuple(found.warnings),
        uncited=uncited,
    )


NOT_CHECKED = CitationValidation(valid=True, checked=False)

"""``sentinel judge examples --from-audit``: a reviewer's verdicts on audit records become
the policy's ``judge.examples`` (pipeline/understand/examples.py).

The reviewer lists the records to fix in a small YAML file::

    reviews:
      - requestId: req-5b93f6dbd3304545   # from the audit record
        verdict: allow                    # or deny
        name: gun-shop-law                # optional; default audit-<last 8 of the id>
        category: weapons                 # deny only; default the record's risk category
        prompt: "..."                     # only when the record holds no prompt

Audit records hold the prompt only under ``audit.includePrompt: true`` (and then as the
output scanners redacted it); otherwise the reviewer pastes it. Every review must resolve to
a record and a prompt, or nothing is written: a silently dropped review is a false refusal
that stays. Reviews of prompts already listed (same text, same list) are counted, not added.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from sentinel_runtime.pipeline.understand.examples import ExamplesConfig


class Review(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    request_id: str = Field(min_length=1)
    verdict: Literal["allow", "deny"]
    name: str = ""
    category: str = ""
    prompt: str = ""


class Reviews(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reviews: list[Review] = Field(min_length=1)


class ReviewError(ValueError):
    """The reviews cannot become examples; ``problems`` says why, one line each."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = tuple(problems)


@dataclass(frozen=True)
class Built:
    examples: ExamplesConfig
    added: dict[str, int]  # per list
    already_listed: int


def read_reviews(text: str) -> list[Review]:
    try:
        return Reviews.model_validate(yaml.safe_load(text)).reviews
    except yaml.YAMLError as exc:
        raise ReviewError([f"reviews file is not YAML: {exc}"]) from exc
    except ValidationError as exc:
        raise ReviewError(
            [
                f"reviews.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                for e in exc.errors(include_url=False)
            ]
        ) from exc


def read_audit(paths: Iterable[Path]) -> dict[str, dict[str, Any]]:
    """Audit records by request id, from ``audit.jsonl`` files (one record a line) or saved
    ``GET /v1/audit`` replies (``{"records": [...]}``); the last record of an id wins."""
    records: dict[str, dict[str, Any]] = {}
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        stripped = text.lstrip()
        if stripped.startswith("{") and '"records"' in stripped[:200]:
            try:
                listed = json.loads(text).get("records", [])
            except json.JSONDecodeError:
                listed = []
            else:
                for record in listed:
                    if isinstance(record, dict) and record.get("requestId"):
                        records[str(record["requestId"])] = record
                continue
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn line after a crash
            if isinstance(record, dict) and record.get("requestId"):
                records[str(record["requestId"])] = record
    return records


def build(
    reviews: Sequence[Review],
    records: Mapping[str, Mapping[str, Any]],
    existing: ExamplesConfig | None = None,
) -> Built:
    """``existing`` examples with the reviewed prompts added (raises :class:`ReviewError`
    naming every review that cannot be used)."""
    existing = existing or ExamplesConfig()
    lists: dict[str, list[dict[str, Any]]] = {
        "allow": [e.model_dump(exclude_defaults=True) for e in existing.allow],
        "deny": [e.model_dump(exclude_defaults=True) for e in existing.deny],
    }
    listed = {kind: {e["prompt"] for e in entries} for kind, entries in lists.items()}
    problems: list[str] = []
    added = {"allow": 0, "deny": 0}
    already = 0
    for review in reviews:
        record = records.get(review.request_id)
        if record is None:
            problems.append(f"{review.request_id}: no audit record with this id")
            continue
        prompt = review.prompt or str(record.get("prompt") or "")
        if not prompt:
            problems.append(
                f"{review.request_id}: the record holds no prompt (the policy's "
                "audit.includePrompt is off): add it to the review as prompt"
            )
            continue
        if prompt in listed[review.verdict]:
            already += 1
            continue
        entry: dict[str, Any] = {
            "prompt": prompt,
            "name": review.name or f"audit-{review.request_id[-8:]}",
        }
        if review.verdict == "deny":
            judged = str(record.get("introspection", {}).get("riskCategory") or "none")
            entry["category"] = review.category or (judged if judged != "none" else "other")
        lists[review.verdict].append(entry)
        listed[review.verdict].add(prompt)
        added[review.verdict] += 1
    if problems:
        raise ReviewError(problems)
    try:
        examples = ExamplesConfig.model_validate(
            {**existing.model_dump(include={"similarity"}), **lists}
        )
    except ValidationError as exc:
        raise ReviewError(
            [
                f"judge.examples.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                for e in exc.errors(include_url=False)
            ]
        ) from exc
    return Built(examples=examples, added=added, already_listed=already)


def existing_examples(policy_text: str) -> ExamplesConfig:
    """The ``judge.examples`` of a policy file (none when it has no such section)."""
    loaded = yaml.safe_load(policy_text) or {}
    section = (loaded.get("judge") or {}).get("examples") if isinstance(loaded, dict) else None
    try:
        return ExamplesConfig.model_validate(section or {})
    except ValidationError as exc:
        raise ReviewError([f"the policy's judge.examples is invalid: {exc}"]) from exc


def as_section(examples: ExamplesConfig) -> str:
    """The ``judge:`` section to paste into guardrails.yaml."""
    body = examples.model_dump(by_alias=True, exclude_defaults=True, mode="json")
    for kind in ("allow", "deny"):
        body[kind] = [
            e.model_dump(by_alias=True, exclude_defaults=True) for e in getattr(examples, kind)
        ]
    return yaml.safe_dump({"judge": {"examples": body}}, sort_keys=False, allow_unicode=True)

"""Deterministic assistant-like texts of a given size, clean or with planted findings."""

from __future__ import annotations

import random

SENTENCES = [
    "The deployment completed and all replicas report healthy status.",
    "To rotate the certificate, update the secret reference and restart the ingress.",
    "Latency at the 99th percentile rose after the cache was resized on Tuesday.",
    "You can list the running pods with kubectl get pods in the target namespace.",
    "The retrieval step returned four documents, two of which were older than a year.",
    "Our guidance is to keep batch sizes small until the queue drains.",
    "The configuration file sets the timeout to thirty seconds for upstream calls.",
    "Summary: the incident was caused by a misconfigured readiness probe.",
    "Step 2: apply the manifest and wait for the rollout to finish.",
    "Note that the index is rebuilt nightly, so recent edits may not appear yet.",
    "The team reviewed the dashboard and agreed to raise the alert threshold.",
    "For more detail, see the runbook section on capacity planning.",
]
FINDINGS = [
    "Contact the owner at jane.doe@example.com for access.",
    "The staging key is AKIAIOSFODNN7EXAMPLE and must be rotated.",
    "Call the on-call phone +1 415-555-2671 if paging fails.",
    'In the config file, password = "Tr0ub4dor&3xyzzy" was committed by mistake.',
    "The database runs at 10.24.3.17 inside the private network.",
]


def assistant_text(size: int, *, with_findings: bool, seed: int = 7) -> str:
    rng = random.Random(seed + size + with_findings)
    lines: list[str] = []
    length = 0
    while length < size:
        sentences = rng.sample(SENTENCES, k=rng.randint(1, 3))
        if with_findings and rng.random() < 0.25:
            sentences.append(rng.choice(FINDINGS))
        line = " ".join(sentences)
        lines.append(line)
        length += len(line) + 1
    text = "\n".join(lines)[:size]
    if with_findings and not any(f in text for f in FINDINGS):
        text = FINDINGS[1] + "\n" + text[: max(0, size - len(FINDINGS[1]) - 1)]
    return text

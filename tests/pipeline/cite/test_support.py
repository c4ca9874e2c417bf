"""The support check: a claim's numbers, dates, names and negations must be in what it cites."""

from __future__ import annotations

import pytest

from sentinel_runtime.pipeline.cite.support import check, check_claim
from sentinel_runtime.pipeline.types import Claim

CHUNK = (
    "Annual subscriptions can be refunded within 30 days of purchase. The refund desk is run "
    "by Maria Okafor. Refunds were introduced in March 2024 and cost a $1,200 setup fee."
)


@pytest.mark.parametrize(
    "claim",
    [
        "Annual subscriptions can be refunded within 30 days.",
        "You have thirty days to ask for a refund.",
        "Maria Okafor runs the refund desk.",
        "Refunds started in March 2024.",
        "There is a setup fee of $1,200.",
    ],
)
def test_supported_claims_pass(claim: str) -> None:
    assert check_claim(claim, [CHUNK]) == ()


@pytest.mark.parametrize(
    ("claim", "missing"),
    [
        ("Annual subscriptions can be refunded within 20 days.", ("20",)),
        ("No, annual subscriptions cannot be refunded.", ("negation",)),
        ("The refund desk is run by John Smith.", ("john", "smith")),
        ("Refunds were introduced in May 2023.", ("2023", "may")),
        ("The setup fee is $1,500.", ("1500",)),
        (
            "Refunds are a cloud-based software kit for web applications.",
            ("words:applications,based,cloud,kit,software,web",),
        ),
    ],
)
def test_unsupported_facts_are_named(claim: str, missing: tuple[str, ...]) -> None:
    assert check_claim(claim, [CHUNK]) == missing


def test_a_claim_is_checked_against_its_own_citation_first() -> None:
    chunks = {"a#p0": "Plans cost 10 euros.", "b#p0": "Plans cost 20 euros."}
    claims = [Claim("Plans cost 20 euros.", ("a#p0",)), Claim("Plans cost 20 euros.", ())]
    found = check(claims, chunks, ["a#p0", "b#p0"])
    # The first cites a chunk that says 10; the second cites nothing itself, so anything the
    # answer cites may hold it.
    assert [u.missing for u in found] == [("20",)]

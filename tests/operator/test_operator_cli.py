"""`sentinel operator` options: peering by name, and peering priorities that never tie."""

from __future__ import annotations

from sentinel_operator import cli
from sentinel_runtime.cli import build_parser


def test_peering_name_and_priority_are_parsed() -> None:
    args = build_parser().parse_args(
        [
            "operator",
            "--namespace",
            "a",
            "--namespace",
            "b",
            "--peering-name",
            "ha",
            "--priority",
            "7",
        ]
    )
    assert args.handler is cli._run
    assert args.namespace == ["a", "b"] and args.peering_name == "ha" and args.priority == 7
    assert not args.peering  # --peering-name alone turns peering on (see _run)


def test_defaults_run_standalone() -> None:
    args = build_parser().parse_args(["operator"])
    assert args.peering_name is None and args.priority is None and not args.peering


def test_a_requested_priority_is_kept() -> None:
    assert cli.peering_priority(0) == 0 and cli.peering_priority(42) == 42


def test_random_priorities_are_positive_and_distinct() -> None:
    """kopf pauses every operator when peers' priorities tie, so replicas draw their own."""
    drawn = [cli.peering_priority(None) for _ in range(200)]
    assert all(0 < p < 2**31 for p in drawn)
    assert len(set(drawn)) == len(drawn)

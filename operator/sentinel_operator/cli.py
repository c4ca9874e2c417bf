"""``sentinel operator ...`` commands, registered through the ``sentinel.commands`` entry
point so that the runtime's CLI never imports the operator. Heavy imports stay inside the
handlers: ``sentinel --help`` must work without kopf installed."""

from __future__ import annotations

import argparse
import logging
import secrets
import sys
from typing import Any


def _crd(args: argparse.Namespace) -> int:
    import yaml

    from sentinel_operator import crd

    sys.stdout.write(yaml.safe_dump(crd.crd_manifest(), sort_keys=False))
    return 0


def _run(args: argparse.Namespace) -> int:

    import kopf
    from prometheus_client import start_http_server

    from sentinel_operator import (
        handlers,  # noqa: F401  (registers the handlers)
        metrics,
    )
    from sentinel_runtime.observability import tracing

    kopf.configure(log_format=kopf.LogFormat.JSON, verbose=args.verbose)
    if not args.verbose:  # one line per handler run is noise in production
        logging.getLogger("kopf").setLevel(logging.WARNING)
    start_http_server(args.metrics_port, addr=args.metrics_host, registry=metrics.REGISTRY)
    # Reconcile spans, off unless the OTEL_* variables ask for them (docs/tracing.md).
    tracing.configure("sentinel-operator")
    peering = args.peering or args.peering_name is not None
    try:
        _operate(args, peering)
    finally:
        tracing.shutdown()  # exports the spans still queued
    return 0


def _operate(args: argparse.Namespace, peering: bool) -> None:
    import asyncio

    import kopf

    asyncio.run(
        kopf.operator(
            clusterwide=not args.namespace,
            namespaces=args.namespace or (),
            standalone=not peering,
            # A named peering object is mandatory: without it kopf refuses to start instead
            # of silently running unpeered next to the other replicas.
            peering_name=args.peering_name,
            priority=peering_priority(args.priority) if peering else None,
            liveness_endpoint=f"http://{args.health_host}:{args.health_port}/healthz",
        )
    )


def peering_priority(requested: int | None) -> int:
    """The priority among peers: as requested, else a random one. kopf pauses every operator
    that sees a live peer of higher priority, and *all* of them when priorities tie, so equal
    replicas would serve nothing; distinct random priorities make the highest one serve and
    the others stand by until its peering record goes (at exit, or when it expires)."""
    if requested is not None:
        return requested
    return 1 + secrets.randbelow(2**31 - 1)


def register(commands: Any) -> None:
    operator = commands.add_parser(
        "operator", help="run the RAGEngine operator (kopf; all namespaces by default)"
    )
    operator.add_argument(
        "--namespace", action="append", help="watch only this namespace or glob (repeatable)"
    )
    operator.add_argument("--metrics-port", type=int, default=8080, help="Prometheus port (8080)")
    operator.add_argument("--metrics-host", default="0.0.0.0", help="Prometheus bind address")
    operator.add_argument("--health-port", type=int, default=8081, help="liveness port (8081)")
    operator.add_argument("--health-host", default="0.0.0.0", help="liveness bind address")
    operator.add_argument(
        "--peering", action="store_true", help="coordinate several operator replicas (kopf peering)"
    )
    operator.add_argument(
        "--peering-name",
        metavar="NAME",
        help="the ClusterKopfPeering (or, with --namespace, KopfPeering) to use; implies --peering",
    )
    operator.add_argument(
        "--priority",
        type=int,
        help="peering priority: the highest live one serves (default: random per process)",
    )
    operator.add_argument("--verbose", action="store_true", help="log kopf's own progress")
    operator.set_defaults(handler=_run)
    actions = operator.add_subparsers(dest="operator_command", metavar="ACTION")
    crd_cmd = actions.add_parser("crd", help="print the RAGEngine CustomResourceDefinition")
    crd_cmd.set_defaults(handler=_crd)

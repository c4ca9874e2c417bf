"""``sentinel operator ...`` commands, registered through the ``sentinel.commands`` entry
point so that the runtime's CLI never imports the operator. Heavy imports stay inside the
handlers: ``sentinel --help`` must work without kopf installed."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def _crd(args: argparse.Namespace) -> int:
    import yaml

    from sentinel_operator import crd

    sys.stdout.write(yaml.safe_dump(crd.crd_manifest(), sort_keys=False))
    return 0


def register(commands: Any) -> None:
    operator = commands.add_parser("operator", help="the RAGEngine operator")
    actions = operator.add_subparsers(dest="operator_command", required=True, metavar="ACTION")
    crd_cmd = actions.add_parser("crd", help="print the RAGEngine CustomResourceDefinition")
    crd_cmd.set_defaults(handler=_crd)

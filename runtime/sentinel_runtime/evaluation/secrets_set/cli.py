"""The command line: ``python -m sentinel_runtime.evaluation.secrets_set --out FILE.jsonl
[--seed N]`` writes the set for a seed as JSON Lines."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import __doc__ as package_doc
from .build import generate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=package_doc.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="JSON Lines file to write")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    samples = generate(args.seed)
    with args.out.open("w", encoding="utf-8") as handle:
        for sample in samples:
            handle.write(json.dumps(sample.to_json(), ensure_ascii=False) + "\n")
    n_pos = sum(s.positive for s in samples)
    print(
        f"wrote {len(samples)} samples ({n_pos} positive, {len(samples) - n_pos} negative) "
        f"to {args.out}",
        file=sys.stderr,
    )
    return 0

"""``python -m sentinel_runtime.evaluation.secrets_set --out FILE.jsonl [--seed N]``."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())

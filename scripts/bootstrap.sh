#!/usr/bin/env bash
# Create the project's virtual environment and install Sentinel into it (editable).
#   bash scripts/bootstrap.sh         what serving needs: `pip install -e .`
#   bash scripts/bootstrap.sh test    the same plus the test tools: `pip install -e '.[test]'`
# Both use the one venv ($VENV, default .venv); the test install adds to the serving one.
# Everything comes from PyPI; pip's wheel cache (~/.cache/pip) makes later runs fast.
set -euo pipefail
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
EXTRAS=${1:-}

if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  echo "bootstrap: $PYTHON is $("$PYTHON" --version 2>&1); Sentinel needs Python 3.11+" >&2
  exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "bootstrap: creating $VENV with $("$PYTHON" --version)"
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
if [ -n "$EXTRAS" ]; then
  echo "bootstrap: installing sentinel-rag[$EXTRAS] (editable)"
  "$VENV/bin/python" -m pip install --quiet -e ".[$EXTRAS]"
else
  echo "bootstrap: installing sentinel-rag (editable; \`make test\` adds the test tools)"
  "$VENV/bin/python" -m pip install --quiet -e .
fi

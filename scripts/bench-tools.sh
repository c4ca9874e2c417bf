#!/usr/bin/env bash
# Fetch, once, the native load generator the HTTP load benchmark (bench/http_load.py) drives,
# and cache it outside the repo in ${SENTINEL_CACHE:-~/.cache/sentinel}/tools/wrk:
#   root/        Debian's wrk and libluajit-5.1-2 packages unpacked (dpkg-deb -x), not
#                installed: no system state changes, no root needed once the lists are read
#   bin/wrk      a wrapper running root/usr/bin/wrk with the unpacked LuaJIT on its library path
# Needs Debian's package mirror (apt-get update/download through a private sources list, as
# scripts/cluster/build.sh does). A warm cache is checked in well under a second.
# Usage: bench-tools.sh [--print-bin]   (--print-bin: print the path of the wrk wrapper)
set -euo pipefail

WRK_PACKAGES=(wrk libluajit-5.1-2 libluajit-5.1-common) # bookworm: wrk 4.1.0-3

CACHE=${SENTINEL_CACHE:-$HOME/.cache/sentinel}/tools/wrk
BIN=$CACHE/bin
ROOT=$CACHE/root

log() { echo "bench-tools: $*" >&2; }
fail() {
  echo "bench-tools: ERROR: $*" >&2
  exit 1
}

wrk_version() { "$BIN/wrk" --version 2>&1 | head -n1 || true; } # --version exits 1
wrk_cached() { [ -x "$BIN/wrk" ] && wrk_version | grep -q '^wrk '; }
done_() {
  [ "${1:-}" = --print-bin ] && echo "$BIN/wrk"
  exit 0
}

if wrk_cached; then done_ "${1:-}"; fi

command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
  fail "apt-get and dpkg-deb are needed to fetch Debian's wrk package"
mkdir -p "$BIN"
exec 9>"$CACHE/.install.lock"
flock 9
if wrk_cached; then done_ "${1:-}"; fi

WORK=$(mktemp -d "$CACHE/work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# shellcheck source=lib/debian-apt.sh
. "$(dirname "$0")/lib/debian-apt.sh"
apt_private_init "$WORK"
log "fetching ${WRK_PACKAGES[*]} (unpacked into $ROOT, not installed)"
rm -rf "$WORK/root"
apt_private_unpack "$WORK" "$WORK/root" "${WRK_PACKAGES[@]}" ||
  fail "apt-get download ${WRK_PACKAGES[*]} failed"
[ -x "$WORK/root/usr/bin/wrk" ] || fail "the wrk package holds no usr/bin/wrk"
rm -rf "$ROOT"
mv "$WORK/root" "$ROOT"

LIBDIR=$(dirname "$(find "$ROOT" -name 'libluajit-5.1.so.2*' | head -n1)")
cat >"$BIN/.wrk.new" <<EOF
#!/bin/sh
# Debian's wrk, unpacked by scripts/bench-tools.sh; its LuaJIT beside it.
LD_LIBRARY_PATH="$LIBDIR\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$ROOT/usr/bin/wrk" "\$@"
EOF
chmod 0755 "$BIN/.wrk.new"
mv -f "$BIN/.wrk.new" "$BIN/wrk"
wrk_cached || fail "the unpacked wrk does not run: $("$BIN/wrk" --version 2>&1 | head -n3 || true)"
log "$(wrk_version) cached in $BIN"
done_ "${1:-}"

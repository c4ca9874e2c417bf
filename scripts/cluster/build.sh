#!/usr/bin/env bash
# Build, once, the Kubernetes control plane that the cluster tests run, and cache it
# outside the repo in ${SENTINEL_CACHE:-~/.cache/sentinel}/kubernetes/v1.20.2/bin:
#   kube-apiserver, kube-controller-manager  compiled from Debian's `kubernetes` source
#                                            package (there is no binary package for them)
#   etcd, kubectl                            unpacked from Debian's etcd-server and
#                                            kubernetes-client binary packages
# A warm cache is checked in about a second; a cold build takes ~6-8 minutes on 2 cores.
# Needs root (or the apt packages below already installed) and Debian's package mirror.
set -euo pipefail

K8S_VERSION=v1.20.2
DEB_VERSION=1.20.5+really1.20.2-1.1+deb12u1 # Debian bookworm's kubernetes{,-client}
GO_BIN=/usr/lib/go-1.19/bin
REFLECT2_SRC=/usr/share/gocode/src/github.com/modern-go/reflect2
BUILD_PACKAGES=(golang-1.19-go golang-1.19-src golang-github-modern-go-reflect2-dev
  rsync make dpkg-dev openssl)

CACHE=${SENTINEL_CACHE:-$HOME/.cache/sentinel}/kubernetes
BIN=$CACHE/$K8S_VERSION/bin

log() { echo "cluster: $*"; }
fail() {
  echo "cluster: ERROR: $*" >&2
  exit 1
}
trap 'fail "scripts/cluster/build.sh failed (exit $?) at line $LINENO; see the output above"' ERR

runs() { # runs NAME ARGS...: the cached binary exists and answers a version query
  [ -x "$BIN/$1" ] && "$BIN/$1" "${@:2}" >/dev/null 2>&1
}
control_plane_cached() {
  runs kube-apiserver --version && runs kube-controller-manager --version
}
tools_cached() { runs etcd --version && runs kubectl version --client; }

if control_plane_cached && tools_cached; then
  log "control plane $K8S_VERSION cached in $BIN"
  exit 0
fi

mkdir -p "$BIN"
# One build at a time per cache (two test sessions starting together would both build).
exec 9>"$CACHE/.build.lock"
flock 9
if control_plane_cached && tools_cached; then
  log "control plane $K8S_VERSION cached in $BIN (built by a concurrent run)"
  exit 0
fi

WORK=$(mktemp -d "$CACHE/build.XXXXXX")
HEARTBEAT=
cleanup() {
  [ -z "$HEARTBEAT" ] || kill "$HEARTBEAT" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- apt: a private sources list and lists dir, so the system's apt setup is untouched.
# shellcheck source=../lib/debian-apt.sh
. "$(dirname "$0")/../lib/debian-apt.sh"
apt_private_init "$WORK" with-src

install_atomically() { # install_atomically SRC NAME: copy into the cache, then rename
  cp "$1" "$BIN/.$2.new"
  chmod 0755 "$BIN/.$2.new"
  mv -f "$BIN/.$2.new" "$BIN/$2"
}

# --- etcd and kubectl: unpacked, not installed. Installing etcd-server would start a
# system etcd on :2379 from its init script, and kubernetes-client's /usr/bin/kubectl
# may collide with another kubectl package (Google Cloud SDK's, for one).
if ! tools_cached; then
  log "fetching etcd-server and kubernetes-client=$DEB_VERSION (unpacked into the cache)"
  apt_private_unpack "$WORK" "$WORK/debs/root" etcd-server "kubernetes-client=$DEB_VERSION"
  install_atomically "$WORK/debs/root/usr/bin/etcd" etcd
  install_atomically "$WORK/debs/root/usr/bin/kubectl" kubectl
  tools_cached || fail "the unpacked etcd or kubectl does not run"
  log "$("$BIN/etcd" --version | head -n1); kubectl $("$BIN/kubectl" version --client --short)"
fi

if control_plane_cached; then
  log "control plane $K8S_VERSION cached in $BIN"
  exit 0
fi

# --- build tools (installed only if missing; they are only needed for a cold build).
missing=()
for pkg in "${BUILD_PACKAGES[@]}"; do
  dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null | grep -q '^ii' || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || fail "missing apt packages (${missing[*]}); run as root or install them"
  log "apt-get install ${missing[*]}"
  apt-get -qq update || log "warning: apt-get update reported errors; trying the install anyway"
  DEBIAN_FRONTEND=noninteractive apt-get -y -qq install --no-install-recommends "${missing[@]}" \
    >"$WORK/apt-install.log" 2>&1 || {
    cat "$WORK/apt-install.log" >&2
    fail "apt-get install ${missing[*]} failed"
  }
fi
[ -x "$GO_BIN/go" ] || fail "$GO_BIN/go not found after installing golang-1.19-go"
[ -f "$REFLECT2_SRC/reflect2.go" ] || fail "$REFLECT2_SRC missing (golang-github-modern-go-reflect2-dev)"

# --- source: Debian's kubernetes source package, with its patches applied.
log "fetching the kubernetes=$DEB_VERSION source package"
(cd "$WORK" && apt-get -qq "${APT_PRIVATE[@]}" source --download-only "kubernetes=$DEB_VERSION")
dpkg-source --no-check -x "$WORK"/kubernetes_"$DEB_VERSION".dsc "$WORK/src" >/dev/null
SRC=$WORK/src

# The vendored github.com/modern-go/reflect2 v1.0.1 reads Go runtime internals that
# changed in Go 1.18: built with Go 1.19 the apiserver crashes on the first custom
# resource it stores. Debian's patches leave it alone, so swap in Debian's 1.0.2 (the
# upstream fix, API-compatible). vendor/modules.txt keeps saying v1.0.1: the build runs
# in GOPATH mode (hack/lib/init.sh sets GO111MODULE=off), which reads vendor/ as is.
log "replacing vendored modern-go/reflect2 v1.0.1 with Debian's $(dpkg-query -W -f='${Version}' golang-github-modern-go-reflect2-dev)"
rm -rf "$SRC/vendor/github.com/modern-go/reflect2"
mkdir -p "$SRC/vendor/github.com/modern-go/reflect2"
cp "$REFLECT2_SRC"/* "$SRC/vendor/github.com/modern-go/reflect2/"

# --- build: the tarball has no .git, so the version comes from the environment.
log "building kube-apiserver and kube-controller-manager with $("$GO_BIN/go" version | cut -d' ' -f3) (takes several minutes)"
start=$(date +%s)
(
  trap 'kill "$nap" 2>/dev/null; exit 0' TERM
  while :; do
    sleep 30 & nap=$!
    wait "$nap"
    log "still building... $(($(date +%s) - start))s"
  done
) &
HEARTBEAT=$!
(
  cd "$SRC"
  unset GOFLAGS GOROOT GOPATH
  export PATH="$GO_BIN:$PATH" GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0 \
    GOCACHE="$WORK/go-build" HOME="$WORK/home" \
    KUBE_GIT_VERSION=$K8S_VERSION KUBE_GIT_MAJOR=1 KUBE_GIT_MINOR=20 KUBE_GIT_TREE_STATE=clean
  mkdir -p "$HOME"
  make WHAT="cmd/kube-apiserver cmd/kube-controller-manager" 2>&1 | sed -u 's/^/cluster: make: /'
  exit "${PIPESTATUS[0]}"
) || fail "the Kubernetes build failed (see the make output above)"
kill "$HEARTBEAT" 2>/dev/null || true
HEARTBEAT=
log "built in $(($(date +%s) - start))s"

for name in kube-apiserver kube-controller-manager; do
  install_atomically "$SRC/_output/bin/$name" "$name"
done
control_plane_cached || fail "the freshly built binaries do not run"
log "$("$BIN/kube-apiserver" --version) cached in $BIN"

#!/usr/bin/env bash
# Start a local control plane (etcd, kube-apiserver, kube-controller-manager) in DIR:
#   scripts/cluster/up.sh DIR        (binaries from scripts/cluster/build.sh)
# Everything listens on 127.0.0.1; ports are free ones picked at random unless
# SENTINEL_ETCD_PORT / SENTINEL_ETCD_PEER_PORT / SENTINEL_APISERVER_PORT say otherwise.
# DIR gets the certificates, keys, admin token, kubeconfig, etcd data, *.log and *.pid.
# No kubelet: objects are stored and controllers act on them, but pods never run.
# Stop it with scripts/cluster/down.sh DIR.
set -euo pipefail

[ $# -eq 1 ] || {
  echo "usage: $0 DIR" >&2
  exit 2
}
K8S_VERSION=v1.20.2
BIN=${SENTINEL_CACHE:-$HOME/.cache/sentinel}/kubernetes/$K8S_VERSION/bin
mkdir -p "$1"
DIR=$(cd "$1" && pwd)
fail() {
  echo "cluster: ERROR: $*" >&2
  exit 1
}
for tool in etcd kube-apiserver kube-controller-manager kubectl; do
  [ -x "$BIN/$tool" ] || fail "$BIN/$tool is missing: run scripts/cluster/build.sh first"
done
kubectl() { "$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" --cache-dir "$DIR/kubectl-cache" "$@"; }
alive() { [ -f "$DIR/$1.pid" ] && kill -0 "$(cat "$DIR/$1.pid")" 2>/dev/null; }

if alive kube-apiserver && kubectl get --raw /readyz >/dev/null 2>&1; then
  echo "cluster: already running in $DIR" >&2
  echo "export KUBECONFIG=$DIR/kubeconfig"
  exit 0
fi
bash "$(dirname "$0")/down.sh" "$DIR" >/dev/null # leftovers of a half-started run

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ETCD_PORT=${SENTINEL_ETCD_PORT:-$(free_port)}
ETCD_PEER_PORT=${SENTINEL_ETCD_PEER_PORT:-$(free_port)}
API_PORT=${SENTINEL_APISERVER_PORT:-$(free_port)}

# --- credentials, made once per DIR (a restart keeps tokens and the kubeconfig valid)
P=$DIR/pki
if [ ! -f "$P/token" ]; then
  mkdir -p "$P"
  (
    cd "$P"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
      -subj /CN=sentinel-test-ca -keyout ca.key -out ca.crt 2>/dev/null
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -subj /CN=kube-apiserver -keyout apiserver.key -out apiserver.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,%s\n' \
      'DNS:kubernetes.default,DNS:kubernetes.default.svc' >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile apiserver.ext -out apiserver.crt 2>/dev/null
    openssl genrsa -out service-account.key 2048 2>/dev/null
    openssl rsa -in service-account.key -pubout -out service-account.pub 2>/dev/null
    openssl rand -hex 24 >token
    echo "$(cat token),admin,admin,system:masters" >tokens.csv
    chmod 600 ./*.key token tokens.csv
  )
fi
TOKEN=$(cat "$P/token")

start() { # start NAME BINARY ARGS...: background process, log and pid in DIR
  "${@:2}" </dev/null >"$DIR/$1.log" 2>&1 &
  echo $! >"$DIR/$1.pid"
}

start etcd "$BIN/etcd" --name default --data-dir "$DIR/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT"

start kube-apiserver "$BIN/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address 127.0.0.1 --secure-port "$API_PORT" --insecure-port 0 \
  --advertise-address 127.0.0.1 --endpoint-reconciler-type none \
  --cert-dir "$P" --tls-cert-file "$P/apiserver.crt" --tls-private-key-file "$P/apiserver.key" \
  --client-ca-file "$P/ca.crt" --token-auth-file "$P/tokens.csv" \
  --authorization-mode RBAC \
  --service-account-issuer https://kubernetes.default.svc \
  --service-account-key-file "$P/service-account.pub" \
  --service-account-signing-key-file "$P/service-account.key" \
  --service-cluster-ip-range 10.0.0.0/24 \
  --disable-admission-plugins ServiceAccount

cat >"$DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: sentinel
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $(base64 -w0 "$P/ca.crt")
users:
- name: admin
  user:
    token: $TOKEN
contexts:
- name: sentinel
  context: {cluster: sentinel, user: admin, namespace: default}
current-context: sentinel
EOF
chmod 600 "$DIR/kubeconfig"

start kube-controller-manager "$BIN/kube-controller-manager" \
  --kubeconfig "$DIR/kubeconfig" \
  --controllers garbagecollector,namespace,deployment,replicaset \
  --use-service-account-credentials=false --leader-elect=false \
  --port 0 --secure-port 0

# --- wait until the apiserver is ready (all three still alive), for up to 60 s
deadline=$((SECONDS + 60))
until kubectl get --raw /readyz >/dev/null 2>&1; do
  for name in etcd kube-apiserver kube-controller-manager; do
    alive "$name" && continue
    tail -n 30 "$DIR/$name.log" >&2
    bash "$(dirname "$0")/down.sh" "$DIR" >&2
    fail "$name exited during startup (log: $DIR/$name.log)"
  done
  if [ $SECONDS -ge $deadline ]; then
    tail -n 30 "$DIR/kube-apiserver.log" >&2
    bash "$(dirname "$0")/down.sh" "$DIR" >&2
    fail "kube-apiserver not ready after 60 s (logs in $DIR)"
  fi
  sleep 0.5
done
echo "cluster: ready at https://127.0.0.1:$API_PORT (logs in $DIR)" >&2
echo "export KUBECONFIG=$DIR/kubeconfig"

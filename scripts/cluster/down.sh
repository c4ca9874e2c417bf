#!/usr/bin/env bash
# Stop the control plane that scripts/cluster/up.sh DIR started (data stays in DIR).
set -euo pipefail

[ $# -eq 1 ] || {
  echo "usage: $0 DIR" >&2
  exit 2
}
[ -d "$1" ] || exit 0
DIR=$(cd "$1" && pwd)

ours() { # ours PID: a live (not zombie) process whose command line names DIR
  local cmd
  cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") && [[ $cmd == *"$DIR/"* ]]
}
for name in kube-controller-manager kube-apiserver etcd; do
  pidfile=$DIR/$name.pid
  [ -f "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  if ours "$pid"; then # the cmdline check also guards against a reused pid
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      ours "$pid" || break
      sleep 0.2
    done
    if ours "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    echo "cluster: stopped $name ($pid)"
  fi
  rm -f "$pidfile"
done

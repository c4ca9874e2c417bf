# Two entry points (README): `make serve` runs the runtime on embedded defaults,
# `make test` runs every check. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test lint bench manifests cluster cluster-down clean

$(STAMP): pyproject.toml scripts/bootstrap.sh scripts/real-model.sh
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/bootstrap.sh
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/sentinel serve

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/run.py

# manifests/sentinel.yaml: the chart rendered with its defaults (a test fails when it is stale).
# Needs only helm, fetched into ~/.cache/sentinel/tools on first use.
manifests:
	PYTHON=$(PYTHON) bash scripts/render-manifests.sh

# A local Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager v1.20.2,
# built once from Debian's source package and cached in ~/.cache/sentinel): no kubelet.
cluster:
	bash scripts/cluster/build.sh
	bash scripts/cluster/up.sh .cluster

cluster-down:
	bash scripts/cluster/down.sh .cluster

clean:
	rm -rf $(VENV)

# Two entry points (README): `make serve` runs the runtime on embedded defaults,
# `make test` runs every check. Both create the one .venv on first use: `make serve` installs
# only what serving needs (`pip install -e .`), `make test` adds the test extra on top.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# One stamp per install: the runtime alone, and the runtime with the test extra (a superset,
# so installing it brings the serving stamp up to date too). `.installed` keeps its old name:
# a venv bootstrapped before the split is already a test venv.
SERVE_STAMP := $(VENV)/.installed-serve
TEST_STAMP := $(VENV)/.installed
MODEL_STAMP := $(VENV)/.real-model

.PHONY: serve test lint bench manifests cluster cluster-down clean

$(SERVE_STAMP): pyproject.toml scripts/bootstrap.sh
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/bootstrap.sh
	touch $(SERVE_STAMP)

$(TEST_STAMP): pyproject.toml scripts/bootstrap.sh
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/bootstrap.sh test
	touch $(SERVE_STAMP) $(TEST_STAMP)

# A real OpenAI-compatible model server for tests/realmodel (llama.cpp + SmolLM2-135M), for
# the tests only: `make serve` never builds it. Its one-time build (about 6 minutes, cached in
# ~/.cache/sentinel/wheels) may be impossible on a machine; that does not stop the tests:
# tests/realmodel then skip and say how to install it, and the next `make test` tries again.
$(MODEL_STAMP): $(TEST_STAMP) scripts/real-model.sh
	@if VENV=$(VENV) bash scripts/real-model.sh; then touch $(MODEL_STAMP); \
	else echo "make: the real model server did not install (see above); tests/realmodel will skip"; fi

serve: $(SERVE_STAMP)
	$(BIN)/sentinel serve

lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint $(MODEL_STAMP)
	$(BIN)/python -m pytest

bench: $(TEST_STAMP)
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

# One image for the runtime and the operator: `sentinel serve` by default; the operator's
# Deployment runs the same image with args `operator ...`.
#
#   docker build -t sentinel:0.1.0 .
#
# The base is pinned to a full patch tag. It is not pinned by digest: no registry is reachable
# where this file is written and tested, so no digest could be verified. Pin one
# (python:3.11.11-slim-bookworm@sha256:...) when building from a trusted mirror. Both stages
# must use the same image: the venv's python is a symlink to the base's /usr/local/bin/python3.

FROM python:3.11.11-slim-bookworm AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY runtime runtime
COPY operator operator
COPY scripts/image/install.sh scripts/image/install.sh
# The same script tests/image runs: a venv at /opt/sentinel with the package (a wheel, not
# editable) and its `operator` and `milvus` extras, dependencies from binary wheels only, then
# a check that the cl100k_base tokenizer loads with no network.
RUN sh scripts/image/install.sh /opt/sentinel /src


FROM python:3.11.11-slim-bookworm

# uid/gid 10001 is RUNTIME_USER in operator/sentinel_operator/manifests.py: the pods'
# securityContext runs as it. No home directory (see HOME below).
RUN groupadd --system --gid 10001 sentinel \
    && useradd --system --uid 10001 --gid 10001 --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin sentinel

# Only the venv: no compiler, build tree or pip cache reaches this stage.
COPY --from=builder /opt/sentinel /opt/sentinel

# Pods run with readOnlyRootFilesystem and an emptyDir on /tmp: the only writable places are
# /tmp and VECTOR_DB_PERSIST_DIR. Bytecode was compiled at install, so Python writes none.
# tiktoken copies cl100k_base to /tmp/data-gym-cache at first use (or skips the copy if it
# cannot write). HOME is /nonexistent and is not needed: tests/image starts the runtime with
# an unwritable HOME, on a read-only root filesystem.
ENV PATH=/opt/sentinel/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

# Empty and owned by root: a working directory, never written to.
WORKDIR /srv/sentinel
USER 10001:10001
EXPOSE 5000

# Docker's check of the runtime (standard library HTTP, no curl). Kubernetes ignores it and
# uses the probes the operator writes; to run the operator under Docker, point it at the
# operator's liveness endpoint: --health-cmd "sentinel health --url http://127.0.0.1:8081/healthz".
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["sentinel", "health", "--url", "http://127.0.0.1:5000/health"]

ENTRYPOINT ["sentinel"]
CMD ["serve", "--host", "0.0.0.0", "--port", "5000", "--no-demo"]

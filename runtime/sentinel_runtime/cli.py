"""The ``sentinel`` command: ``serve``, ``policy check|default|types``, ``scan``, ``health``;
``index`` and ``ask`` live in ``cli_documents``, ``judge`` in ``training.cli``.

Other distributions' commands (the operator's ``sentinel operator``) register through the
``sentinel.commands`` entry-point group, so the runtime never imports the operator. Such a
command whose modules are not installed (``kopf`` without the ``operator`` extra) says which
``pip install`` brings them and exits 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from sentinel_runtime import __version__, cli_documents
from sentinel_runtime.governance import rulebase as governance_rulebase
from sentinel_runtime.guardrails import policy as policy_mod
from sentinel_runtime.guardrails import streaming
from sentinel_runtime.guardrails.engine import OutputGuardrailsError, build_engine
from sentinel_runtime.guardrails.scanners import REGISTRY
from sentinel_runtime.guardrails.state import default_policy_path
from sentinel_runtime.observability import logs
from sentinel_runtime.pipeline import config as pipeline_config

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_NOT_INSTALLED = 2  # as argparse's usage errors: the command cannot run as installed
EXIT_STRICT = 3
EXIT_REDACTED = 10
EXIT_BLOCKED = 11

ENTRY_POINT_GROUP = "sentinel.commands"
DISTRIBUTION = "sentinel-rag"


def _install_hint(command: str) -> str:
    return f"pip install '{DISTRIBUTION}[{command}]'"


def _start_line(settings: Any, host: str, port: int) -> str:
    """The one plain line ``serve`` prints before the server's logs."""
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}"
    if not settings.OUTPUT_GUARDRAILS_ENABLED:
        policy = "guardrails off"
    else:
        policy = f"policy {settings.OUTPUT_GUARDRAILS_POLICY_PATH or 'the shipped default'}"
    persist = settings.persist_dir()
    if settings.VECTOR_DB_TYPE == "milvus":
        store = f"indexes in milvus at {settings.VECTOR_DB_URL}"
    elif persist is not None:
        store = f"indexes embedded, persisted to {persist.resolve()}"
    else:
        store = "indexes embedded, in memory only (--persist-dir keeps them)"
    return f"sentinel: listening on {url}, API docs {url}/docs; {policy}; {store}"


def server_stack() -> tuple[str, str]:
    """uvicorn's HTTP parser and event loop: the C ones when installed (the runtime's
    dependencies), else h11 and asyncio, named explicitly so the start line says which
    (``bench/http_load.py`` runs its echo floor on the same)."""
    http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    return http, loop


def _serve(args: argparse.Namespace) -> int:
    import logging

    import uvicorn

    from sentinel_runtime import open_files
    from sentinel_runtime.api.app import create_app
    from sentinel_runtime.observability import events
    from sentinel_runtime.settings import Settings

    overrides: dict[str, Any] = {}
    if args.policy:
        overrides["OUTPUT_GUARDRAILS_ENABLED"] = True
        overrides["OUTPUT_GUARDRAILS_POLICY_PATH"] = str(Path(args.policy).resolve())
    elif args.no_guardrails:
        overrides["OUTPUT_GUARDRAILS_ENABLED"] = False
    elif "OUTPUT_GUARDRAILS_ENABLED" not in os.environ:
        # Locally, start protected: the shipped default policy, unless the env says otherwise.
        overrides["OUTPUT_GUARDRAILS_ENABLED"] = True
    if args.persist_dir:
        overrides["VECTOR_DB_PERSIST_DIR"] = str(Path(args.persist_dir).resolve())
    if args.no_demo:
        overrides["DEMO_CORPUS"] = False
    elif "DEMO_CORPUS" not in os.environ:
        overrides["DEMO_CORPUS"] = True  # a first run shows the whole pipeline at work
    settings = Settings(**overrides)
    http, loop = server_stack()
    print(
        f"{_start_line(settings, args.host, args.port)}; http {http}, loop {loop}",
        file=sys.stderr,
        flush=True,
    )
    logs.configure(settings.LOG_LEVEL)
    files = open_files.raise_to(
        open_files.needed(settings.MAX_INFLIGHT_TURNS, settings.upstream_connections())
    )
    if not files.enough:
        logs.log_event(
            logging.getLogger("sentinel_runtime.serve"),
            events.OPEN_FILES_LOW,
            level=logging.WARNING,
            needed=files.needed,
            soft=files.soft,
            hard=files.hard,
            hint="raise the hard limit (ulimit -Hn) or lower MAX_INFLIGHT_TURNS",
        )
    uvicorn.run(
        create_app(settings, freeze_heap=True),
        host=args.host,
        port=args.port,
        http=http,
        loop=loop,
        log_config=None,
        access_log=args.access_log,
        timeout_graceful_shutdown=10,
    )
    return EXIT_OK


def _load_or_report(path: str) -> policy_mod.Policy | None:
    try:
        return policy_mod.read_policy_file(path)
    except policy_mod.PolicyError as exc:
        print(f"error: policy unusable ({exc.status}): {exc}", file=sys.stderr)
        return None


def _tools_report(parsed: policy_mod.Policy) -> dict[str, Any] | None:
    """The ``tools`` section judged by the runtime's own rulebase parser (None: no section)."""
    if "tools" not in parsed.sections:
        return None
    try:
        rules = governance_rulebase.parse_rulebase(parsed.sections["tools"], parsed.source)
    except governance_rulebase.RulebaseError as exc:
        return {"problems": [str(issue) for issue in exc.issues]}
    return {
        "rules": sum(len(clauses) for clauses in rules.clauses.values()),
        "guarded": sorted(rules.guards),
    }


def _active_detectors(spec: policy_mod.ScannerSpec) -> dict[str, Any] | None:
    """What a scanner that runs several detectors (secrets) looks for; None for others."""
    listing = getattr(spec.params, "active_detectors", None)
    return listing() if callable(listing) else None


def _describe_scanner(spec: policy_mod.ScannerSpec) -> dict[str, Any]:
    described = spec.describe()
    detectors = _active_detectors(spec)
    if detectors is not None:
        described["detectors"] = detectors
    return described


def _detector_lines(spec: policy_mod.ScannerSpec) -> list[str]:
    detectors = _active_detectors(spec)
    if detectors is None:
        return []
    lines = [f"{family['family']}: {family['summary']}" for family in detectors["families"]]
    plugins = detectors["detectSecretsPlugins"]
    lines.append(f"detect-secrets: {len(plugins)} plugins ({', '.join(plugins)})")
    return lines


def _policy_check(args: argparse.Namespace) -> int:
    logs.configure("CRITICAL")  # the report below says everything; keep stderr clean
    parsed = _load_or_report(args.file)
    if parsed is None:
        return EXIT_ERROR
    engine = build_engine(parsed, args.file)
    # One report for the whole file: the pipeline sections are judged by their own parser.
    parsed = dataclasses.replace(
        parsed,
        diagnostics=(
            *parsed.diagnostics,
            *pipeline_config.parse_sections(parsed.sections).diagnostics,
        ),
    )
    active = [a.spec for a in engine.scanners]
    skipped = engine.skipped
    tools = _tools_report(parsed)
    whole_reasons = streaming.whole_text_reasons(engine)
    if args.json:
        print(
            json.dumps(
                {
                    "path": args.file,
                    "sha256": parsed.sha256,
                    "action": parsed.default_action,
                    "blockMessage": parsed.block_message,
                    "activeScanners": [_describe_scanner(spec) for spec in active],
                    "skipped": [s.describe() for s in skipped],
                    "diagnostics": [{"event": d.event, **d.fields} for d in parsed.diagnostics],
                    "sections": sorted(parsed.sections),
                    "tools": tools,
                    "streaming": {
                        "holdsWholeText": bool(whole_reasons),
                        "reasons": whole_reasons,
                    },
                },
                indent=2,
            )
        )
    else:
        print(f"policy   {args.file}")
        print(f"sha256   {parsed.sha256}")
        print(f"action   {parsed.default_action} (default for scanners without one)")
        print(f"block    {parsed.block_message}")
        print(f"active scanners: {len(active)}")
        for spec in active:
            note = (
                "  (redact hits block: this scanner cannot rewrite)"
                if spec.escalates_to_block
                else ""
            )
            line = f"  [{spec.index}] {spec.type:<15} action={spec.action:<6}"
            print(f"{line} failMode={spec.fail_mode}{note}")
            for detail in _detector_lines(spec):
                print(f"        {detail}")
        print(f"skipped scanners: {len(skipped)}")
        for item in skipped:
            print(f"  [{item.index}] {item.type or '?':<15} {item.reason}")
        if parsed.diagnostics:
            print("diagnostics:")
            for d in parsed.diagnostics:
                fields = " ".join(f"{k}={v}" for k, v in d.fields.items())
                print(f"  {d.event} {fields}")
        if engine.build_failures:
            print(
                f"error: {len(engine.build_failures)} configured scanner(s) cannot run here; "
                "the runtime would serve without them"
            )
        elif not active and skipped:
            print("error: no configured scanner is active: every answer would pass unchanged")
        elif not active:
            print("warning: no active scanners: every answer passes unchanged")
        if whole_reasons:
            print("streaming: held whole, nothing is sent before the answer ends, because")
            for reason in whole_reasons:
                print(f"  {reason}")
        else:
            print("streaming: text is sent as soon as no scanner can still match it")
        if tools is not None and "problems" in tools:
            count = len(tools["problems"])
            plural = "s" if count != 1 else ""
            print(f"tools: rejected, {count} problem{plural} (the runtime would refuse it)")
            for problem in tools["problems"]:
                print(f"  {problem}")
        elif tools is not None:
            print(f"tools: {tools['rules']} rule clauses, guarded tools: {tools['guarded']}")
    if tools is not None and "problems" in tools:
        return EXIT_ERROR  # the runtime would reject the section (and keep the previous one)
    if engine.build_failures or (skipped and not active):
        # A scanner that cannot be built here (llm_guard without its extra) or a policy whose
        # every scanner was skipped guards less than it says: as unusable as a broken file.
        return EXIT_ERROR
    if args.strict and (skipped or parsed.diagnostics):
        return EXIT_STRICT
    return EXIT_OK


def _policy_types(args: argparse.Namespace) -> int:
    for name, definition in REGISTRY.items():
        print(f"{name}: {definition.summary}")
        for field_name, field in definition.params.model_fields.items():
            default = "required" if field.is_required() else f"default {field.get_default()!r}"
            shown = getattr(field.annotation, "__name__", None)
            if not isinstance(field.annotation, type) or shown is None:
                shown = str(field.annotation).replace("typing.", "")
            print(f"    {field_name}: {shown} ({default})")
    return EXIT_OK


def _policy_default(args: argparse.Namespace) -> int:
    sys.stdout.write(Path(default_policy_path()).read_text(encoding="utf-8"))
    return EXIT_OK


def _scan(args: argparse.Namespace) -> int:
    logs.configure("CRITICAL")
    path = args.policy or default_policy_path()
    parsed = _load_or_report(path)
    if parsed is None:
        return EXIT_ERROR
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        print(f"error: standard input is not UTF-8: {exc}", file=sys.stderr)
        return EXIT_ERROR
    engine = build_engine(parsed, path)
    try:
        outcome = engine.scan(text, response_id="cli")
    except OutputGuardrailsError as exc:
        print(f"error: {exc} (fail-closed)", file=sys.stderr)
        return EXIT_ERROR
    sys.stdout.write(outcome.text)
    sys.stdout.flush()
    summary = {
        "action": outcome.action,
        "policyHash": parsed.sha256,
        "scanners": [hit.describe() for hit in outcome.hits],
        "failOpen": [f.describe() for f in outcome.failures],
    }
    if args.json:
        print(json.dumps(summary), file=sys.stderr)
    elif outcome.action:
        kinds = ", ".join(f"{h.type}:{h.action}" for h in outcome.hits)
        print(f"\n[sentinel] {outcome.action}: {kinds}", file=sys.stderr)
    return {None: EXIT_OK, "redact": EXIT_REDACTED, "block": EXIT_BLOCKED}[outcome.action]


def _eval(args: argparse.Namespace) -> int:
    from sentinel_runtime.evaluation import datasets, report

    logs.configure("WARNING")
    root = Path(args.datasets) if args.datasets else None
    if not datasets.available(root):
        print(
            f"error: no evaluation data at {datasets.datasets_dir(root)}; pass --datasets DIR "
            "or set SENTINEL_DATASETS_DIR",
            file=sys.stderr,
        )
        return EXIT_ERROR
    config = pipeline_config.DEFAULT
    if args.policy:
        parsed = _load_or_report(args.policy)
        if parsed is None:
            return EXIT_ERROR
        config = pipeline_config.parse_sections(parsed.sections)
    suites = args.only.split(",") if args.only else list(report.SUITES)
    unknown = sorted(set(suites) - set(report.SUITES))
    if unknown:
        print(f"error: unknown suite(s) {', '.join(unknown)}", file=sys.stderr)
        return EXIT_ERROR
    result = report.run(
        config,
        root=root,
        suites=suites,
        contexts_per_attack=None if args.full else args.bipia_contexts,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    print(report.render(result))
    if args.crossval:
        from sentinel_runtime.training import cli as judge_cli

        measures = judge_cli.crossval_measures(
            args.datasets, seed=13, model=None, progress=lambda line: print(line, file=sys.stderr)
        )
        if measures is None:
            return EXIT_ERROR
        from sentinel_runtime.training import crossval

        print("\nSource-disjoint measurement of the built-in judge:\n")
        print(crossval.render(measures))
        result["judgeCrossval"] = crossval.as_json(measures)
    if args.curve:
        from sentinel_runtime.evaluation import operating_point

        points = operating_point.run(
            root, progress=lambda line: print(line, file=sys.stderr, flush=True)
        )
        chosen = operating_point.choose(points)
        print("\nThe built-in judge's operating points (refused share):\n")
        print(operating_point.render(points, chosen))
        result["operatingPoints"] = {
            "points": [point.as_json() for point in points],
            "chosen": chosen.as_json() if chosen else None,
        }
    Path(args.output).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten to {args.output}", file=sys.stderr)
    missed = [r for r in result["rows"] if r["met"] is False]
    return EXIT_STRICT if args.strict and missed else EXIT_OK


def _health(args: argparse.Namespace) -> int:
    """GET a health URL with the standard library only (the image's HEALTHCHECK: no curl)."""
    import urllib.error
    import urllib.parse
    import urllib.request

    url = args.url or f"http://127.0.0.1:{args.port}/health"
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        print(f"error: {url} is not an http(s) URL", file=sys.stderr)
        return EXIT_ERROR
    # A check of a local server never goes through the HTTP(S)_PROXY of the environment.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=args.timeout) as response:
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        status = exc.code
    except OSError as exc:  # URLError, refused connections and timeouts
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        print(f"unhealthy: {url}: {reason}", file=sys.stderr)
        return EXIT_ERROR
    if 200 <= status < 300:
        print(f"healthy: {url} {status}")
        return EXIT_OK
    print(f"unhealthy: {url} answered {status}", file=sys.stderr)
    return EXIT_ERROR


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sentinel", description="Sentinel guardrailed RAG.")
    parser.add_argument("--version", action="version", version=f"sentinel {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the runtime HTTP server")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    group = serve.add_mutually_exclusive_group()
    group.add_argument("--policy", help="guardrails.yaml to enforce (enables guardrails)")
    group.add_argument("--no-guardrails", action="store_true", help="disable output guardrails")
    serve.add_argument("--access-log", action="store_true", help="log every HTTP request")
    serve.add_argument(
        "--no-demo", action="store_true", help="do not index the bundled demo corpus"
    )
    serve.add_argument(
        "--persist-dir",
        help="keep indexes in this directory across restarts (sets VECTOR_DB_PERSIST_DIR)",
    )
    serve.set_defaults(handler=_serve)

    policy = commands.add_parser("policy", help="inspect guardrails policies")
    policy_commands = policy.add_subparsers(dest="policy_command", required=True, metavar="ACTION")
    check = policy_commands.add_parser(
        "check",
        help=f"show active and skipped scanners; exit {EXIT_ERROR} if a configured scanner "
        "cannot be built or none is active",
    )
    check.add_argument("file", help="path of a guardrails.yaml")
    check.add_argument("--json", action="store_true", help="machine-readable output")
    check.add_argument(
        "--strict", action="store_true", help=f"exit {EXIT_STRICT} if anything was skipped"
    )
    check.set_defaults(handler=_policy_check)
    default = policy_commands.add_parser("default", help="print the shipped default policy")
    default.set_defaults(handler=_policy_default)
    types = policy_commands.add_parser("types", help="list scanner types and their fields")
    types.set_defaults(handler=_policy_types)

    evaluate = commands.add_parser(
        "eval", help="measure the safety pipeline on the public evaluation data sets"
    )
    evaluate.add_argument(
        "--datasets",
        help=(
            "data directory (default: $SENTINEL_DATASETS_DIR, else ../shared/datasets beside "
            "a checkout, else the copies shipped in the package)"
        ),
    )
    evaluate.add_argument("--policy", help="take the pipeline settings from this policy file")
    evaluate.add_argument("--only", help="comma-separated suites: harmful,injection,poisoning")
    evaluate.add_argument(
        "--bipia-contexts",
        type=int,
        default=3,
        help="BIPIA contexts each attack is inserted into (default 3; --full: all)",
    )
    evaluate.add_argument("--full", action="store_true", help="every BIPIA context (slow)")
    evaluate.add_argument(
        "--output", default="sentinel-eval.json", help="JSON results (default sentinel-eval.json)"
    )
    evaluate.add_argument("--strict", action="store_true", help="exit 3 when a target is missed")
    evaluate.add_argument(
        "--crossval",
        action="store_true",
        help="also refit the built-in judge without each training source and each attack "
        "family and score it there (needs the train extra; about 20 minutes)",
    )
    evaluate.add_argument(
        "--curve",
        action="store_true",
        help="also sweep the built-in judge's refusal line (harmfulSeverity 0.60-0.90, encoder "
        "off and on) and choose the point on dev rows (about 3 minutes)",
    )
    evaluate.set_defaults(handler=_eval)

    scan = commands.add_parser("scan", help="scan standard input with a policy")
    scan.add_argument("--policy", help="guardrails.yaml (default: the shipped default policy)")
    scan.add_argument("--json", action="store_true", help="JSON summary on standard error")
    scan.set_defaults(handler=_scan)

    health = commands.add_parser("health", help="exit 0 if a health URL answers 2xx, else 1")
    target = health.add_mutually_exclusive_group()
    target.add_argument("--url", help="URL to GET (default http://127.0.0.1:PORT/health)")
    target.add_argument(
        "--port",
        type=int,
        default=8000,
        help="port of a runtime on 127.0.0.1 (default 8000, as `sentinel serve`)",
    )
    health.add_argument("--timeout", type=float, default=3.0, help="seconds to wait (default 3)")
    health.set_defaults(handler=_health)

    from sentinel_runtime.training import cli as judge_cli

    judge_cli.register(commands)
    cli_documents.register(commands)

    _register_extensions(commands)
    return parser


def _register_extensions(commands: Any) -> None:
    """Commands of other distributions (``sentinel.commands``), each marked with the extra
    that installs what it imports (the extra is named as the command)."""
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            register: Callable[[Any], None] = entry_point.load()
        except ModuleNotFoundError as exc:
            _not_installed(commands, entry_point.name, exc)
            continue
        register(commands)
        commands.choices[entry_point.name].set_defaults(extension=entry_point.name)


def _not_installed(commands: Any, name: str, exc: ModuleNotFoundError) -> None:
    """A stand-in for a command whose module cannot be imported: it says what to install."""
    stand_in = commands.add_parser(
        # Every argument after the name is taken as it comes (options too): none is known.
        name,
        help=f"(not installed: {_install_hint(name)})",
        add_help=False,
        prefix_chars="\0",
    )
    stand_in.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    stand_in.set_defaults(handler=lambda args: _report_missing(name, exc))


def _report_missing(command: str, exc: ModuleNotFoundError) -> int:
    print(
        f"error: sentinel {command} needs {exc.name or 'a module'}, which is not installed; "
        f"install it with: {_install_hint(command)}",
        file=sys.stderr,
    )
    return EXIT_NOT_INSTALLED


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except ModuleNotFoundError as exc:
        extension = getattr(args, "extension", None)
        if extension is None:
            raise
        return _report_missing(extension, exc)


if __name__ == "__main__":
    sys.exit(main())

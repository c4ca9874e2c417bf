"""Recall and precision of the secrets guardrails on our own labelled set
(``sentinel_runtime.evaluation.secrets_set``: provider tokens in their documented formats,
PEM keys, JWTs, credentialed URLs, config auth values and key-like assignments, each framed the
way an assistant writes it, plus benign look-alikes), through the guardrails engine with the
shipped default policy, and beside it llm-guard's Secrets scanner when llm-guard is installed.

A positive is caught when the answer is blocked, or when no usable part of its secret stays
visible: no substring of the secret of length min(12, ceil(len/2)) remains in the output. A
negative is changed when the output differs from the input or the answer is blocked. Per
detector (each scanner's findings on the raw text, attributed by the scanner's own rule
names), precision is its firings on positives over all its firings; per kind, precision is
the kind's changed texts over those plus every changed negative.

Also times the default policy on a 2 KB answer and on a 19 KB single line, each beside an
empty policy (the guardrails engine with no scanners) measured in the same run.

    python bench/secrets_detectors.py [--quick] [--seed N] [--misses N|all] [--misses-out F]
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import regex

from sentinel_runtime.evaluation.secrets_set import Sample, generate
from sentinel_runtime.guardrails.engine import (
    GuardrailsEngine,
    OutputGuardrailsError,
    build_engine,
)
from sentinel_runtime.guardrails.policy import parse_policy, read_policy_file
from sentinel_runtime.guardrails.scanners import secrets, sensitive
from sentinel_runtime.guardrails.state import default_policy_path
from stats import median, table, timings_ms
from texts import assistant_text

USABLE_RUN = 12  # characters of a secret that still count as usable when left visible
EXCERPT = 70  # characters of context either side of a secret in the misses list


def visible_run(secret: str) -> int:
    """The shortest piece of ``secret`` that still counts as a leak."""
    return min(USABLE_RUN, math.ceil(len(secret) / 2))


def leaked(secret: str, text: str, output: str) -> int:
    """Length of the longest piece of ``secret`` (at least :func:`visible_run` long) that the
    output still shows; 0 when none is. A piece also found in the text around the secret (a
    YAML key ``access_token`` beside a token that starts ``access_token$``) counts only where
    the output holds it more often than that surrounding text does."""
    if secret in output:
        return len(secret)
    context = text.replace(secret, "\x00")

    def shown(piece: str) -> bool:
        return output.count(piece) > context.count(piece)

    k = visible_run(secret)
    best = 0
    for i in range(len(secret) - k + 1):
        if shown(secret[i : i + k]):
            n = k
            while i + n < len(secret) and shown(secret[i : i + n + 1]):
                n += 1
            best = max(best, n)
    return best


@dataclass
class Verdict:
    output: str
    blocked: bool
    scanners: frozenset[str] = frozenset()

    def changed(self, text: str) -> bool:
        return self.blocked or self.output != text


def run_engine(engine: GuardrailsEngine, text: str) -> Verdict:
    try:
        outcome = engine.scan(text)
    except OutputGuardrailsError as exc:  # fail-closed: the answer is not returned
        return Verdict("", True, frozenset({f"{exc.scanner_type} (error)"}))
    return Verdict(outcome.text, outcome.action == "block", frozenset(h.type for h in outcome.hits))


# --------------------------------------------------------------------------- attribution


def _rule_names(scanner: object, text: str) -> set[str] | None:
    """The names of the scanner's own rules that fire on ``text``: the secrets scanner's
    detections, the sensitive scanner's placeholders; None for a scanner that names none."""
    if isinstance(scanner, secrets.SecretsScanner):
        return {d.detector for d in scanner.detections(text)}
    if isinstance(scanner, sensitive.SensitiveScanner):
        return {replacement for _start, _end, replacement in scanner.find(text)}
    return None


def attributor(engine: GuardrailsEngine) -> Callable[[str], set[str]]:
    """Names of the rules that fire on a raw text, scanner by scanner (not chained)."""
    parts: list[Callable[[str], set[str]]] = []
    for active in engine.scanners:
        spec, scanner = active.spec, active.scanner
        if spec.type == "regex":
            compiled = [
                (i, pattern, regex.compile(pattern))
                for i, pattern in enumerate(getattr(spec.params, "patterns", []))
            ]

            def fire(text: str, compiled=compiled) -> set[str]:
                return {
                    f"regex[{i}] {pattern[:28]}" for i, pattern, c in compiled if c.search(text)
                }

            parts.append(fire)
        else:

            def fire(text: str, kind=spec.type, scanner=scanner) -> set[str]:
                names = _rule_names(scanner, text)
                if names is None:
                    return {kind} if not scanner.scan(text).valid else set()
                return {f"{kind}:{name}" for name in names}

            parts.append(fire)
    return lambda text: set().union(*(p(text) for p in parts)) if parts else set()


def detector_table_usable(engine: GuardrailsEngine) -> bool:
    """Whether the secrets scanner names its rules (then precision is given per detector)."""
    return any(isinstance(a.scanner, secrets.SecretsScanner) for a in engine.scanners)


# --------------------------------------------------------------------------- baselines


def llm_guard_scan() -> Callable[[str], Verdict] | None:
    if importlib.util.find_spec("llm_guard") is None:
        return None
    from llm_guard.input_scanners import Secrets
    from llm_guard.util import configure_logger

    configure_logger("ERROR", stream=sys.stderr)
    scanner = Secrets(redact_mode="all")
    scanner.scan("warm-up")

    def scan(text: str) -> Verdict:
        sanitized, _valid, _score = scanner.scan(text)
        return Verdict(sanitized, False)

    return scan


# --------------------------------------------------------------------------- the run


@dataclass
class KindStats:
    n: int = 0
    caught: int = 0
    changed: int = 0
    caught_lg: int = 0
    misses: list[tuple[Sample, Verdict, int, set[str]]] = field(default_factory=list)


def mask(sample: Sample) -> str:
    """An excerpt of the text around the secret, the secret itself masked."""
    s = sample.secret
    label = f"<{sample.kind} {s[:4]}…{len(s)}ch>"
    at = sample.text.find(s)
    before = sample.text[max(0, at - EXCERPT) : at]
    after = sample.text[at + len(s) : at + len(s) + EXCERPT]
    return (before + label + after).replace("\n", "⏎")


def pct(num: int, den: int) -> str:
    return f"{100 * num / den:.1f}%" if den else "-"


def evaluate(
    samples: list[Sample], engine: GuardrailsEngine, lg: Callable[[str], Verdict] | None
) -> dict[str, object]:
    fire = attributor(engine)
    kinds: dict[str, KindStats] = collections.defaultdict(KindStats)
    neg_families: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    neg_by_scanner: collections.Counter[str] = collections.Counter()
    neg_changed: list[tuple[Sample, Verdict, set[str]]] = []
    det_pos: collections.Counter[str] = collections.Counter()
    det_neg: collections.Counter[str] = collections.Counter()
    det_kinds: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    neg_lg_changed = 0
    for sample in samples:
        verdict = run_engine(engine, sample.text)
        rules = fire(sample.text)
        if sample.positive:
            st = kinds[sample.kind]
            st.n += 1
            st.changed += verdict.changed(sample.text)
            left = 0 if verdict.blocked else leaked(sample.secret, sample.text, verdict.output)
            if left == 0:
                st.caught += 1
            else:
                st.misses.append((sample, verdict, left, rules))
            if lg is not None:
                lv = lg(sample.text)
                st.caught_lg += leaked(sample.secret, sample.text, lv.output) == 0
            for r in rules:
                det_pos[r] += 1
                det_kinds[r][sample.kind] += 1
        else:
            fam = neg_families[sample.framing]
            fam[0] += 1
            if verdict.changed(sample.text):
                fam[1] += 1
                neg_changed.append((sample, verdict, rules))
                neg_by_scanner.update(verdict.scanners)
                if verdict.scanners & {"regex", "secrets"}:
                    fam[2] += 1
            for r in rules:
                det_neg[r] += 1
            if lg is not None:
                neg_lg_changed += lg(sample.text).changed(sample.text)
    return {
        "kinds": kinds,
        "neg_families": neg_families,
        "neg_by_scanner": neg_by_scanner,
        "neg_changed": neg_changed,
        "det_pos": det_pos,
        "det_neg": det_neg,
        "det_kinds": det_kinds,
        "neg_lg_changed": neg_lg_changed,
    }


def recall_table(result: dict[str, object], with_lg: bool, n_neg: int) -> str:
    kinds: dict[str, KindStats] = result["kinds"]  # type: ignore[assignment]
    neg_changed = len(result["neg_changed"])  # type: ignore[arg-type]
    header = ["kind", "n", "recall default"]
    header += ["recall llm-guard"] if with_lg else []
    header += ["precision (kind vs negatives)", "misses"]
    rows = []
    tot = KindStats()
    for kind, st in kinds.items():
        tot.n += st.n
        tot.caught += st.caught
        tot.caught_lg += st.caught_lg
        tot.changed += st.changed
        row = [kind, str(st.n), pct(st.caught, st.n)]
        row += [pct(st.caught_lg, st.n)] if with_lg else []
        row += [pct(st.changed, st.changed + neg_changed), str(len(st.misses))]
        rows.append(row)
    row = ["ALL positives", str(tot.n), pct(tot.caught, tot.n)]
    row += [pct(tot.caught_lg, tot.n)] if with_lg else []
    row += [pct(tot.changed, tot.changed + neg_changed), str(tot.n - tot.caught)]
    rows.append(row)
    row = ["negatives changed", str(n_neg), f"{pct(neg_changed, n_neg)} ({neg_changed})"]
    if with_lg:
        lgc = int(result["neg_lg_changed"])  # type: ignore[call-overload]
        row += [f"{pct(lgc, n_neg)} ({lgc})"]
    row += ["", ""]
    rows.append(row)
    title = (
        "Secrets guardrails: recall per kind on the secrets evaluation set (default policy: "
        "regex + secrets + sensitive)\n"
        "caught = blocked, or no substring of the secret of length min(12, ceil(len/2)) left "
        "visible in the output;\n"
        "precision (kind vs negatives) = changed texts of the kind / (those + all changed "
        "negatives)"
    )
    if not with_lg:
        title += "\nllm-guard: not installed (pip install '.[llm-guard]' adds its column)"
    return table(title, header, rows)


def negatives_table(result: dict[str, object]) -> str:
    fams: dict[str, list[int]] = result["neg_families"]  # type: ignore[assignment]
    by_scanner: collections.Counter[str] = result["neg_by_scanner"]  # type: ignore[assignment]
    rows = [[f, str(n), f"{pct(c, n)} ({c})", str(s)] for f, (n, c, s) in fams.items()]
    title = (
        "Negatives (benign look-alikes) changed by the default policy, per family\n"
        "changes by scanner: "
        + (", ".join(f"{k} {v}" for k, v in by_scanner.most_common()) or "none")
    )
    return table(title, ["family", "n", "changed", "by regex/secrets"], rows)


def detectors_table(result: dict[str, object]) -> str:
    pos: collections.Counter[str] = result["det_pos"]  # type: ignore[assignment]
    neg: collections.Counter[str] = result["det_neg"]  # type: ignore[assignment]
    kinds: dict[str, collections.Counter[str]] = result["det_kinds"]  # type: ignore[assignment]
    rows = []
    for name in sorted(set(pos) | set(neg), key=lambda d: (neg[d] == 0, -neg[d], -pos[d], d)):
        top = ", ".join(f"{k} {v}" for k, v in kinds[name].most_common(3))
        rows.append(
            [name, str(pos[name]), str(neg[name]), pct(pos[name], pos[name] + neg[name]), top]
        )
    title = (
        "Per detector (each scanner's own findings on the raw text, scanners not chained)\n"
        "precision = firings on positives / all firings"
    )
    return table(title, ["detector", "on positives", "on negatives", "precision", "kinds"], rows)


def misses_text(result: dict[str, object], limit: int | None) -> str:
    kinds: dict[str, KindStats] = result["kinds"]  # type: ignore[assignment]
    lines = ["Misses (kind, how much of the secret stays visible, rules that fired, excerpt):"]
    for kind, st in kinds.items():
        shown = st.misses if limit is None else st.misses[:limit]
        for sample, _verdict, left, rules in shown:
            how = (
                "untouched"
                if left == len(sample.secret)
                else f"{left} of {len(sample.secret)}ch left"
            )
            fired = ",".join(sorted(rules)) or "-"
            lines.append(f"- {kind} [{sample.framing}] {how}; fired: {fired}; {mask(sample)}")
        if limit is not None and len(st.misses) > limit:
            lines.append(f"  … and {len(st.misses) - limit} more {kind} misses")
    neg: list[tuple[Sample, Verdict, set[str]]] = result["neg_changed"]  # type: ignore[assignment]
    lines.append("")
    lines.append("Changed negatives (family, scanners, rules that fired, text):")
    shown_neg = neg if limit is None else neg[: max(limit * 10, 30)]
    for sample, verdict, rules in shown_neg:
        text = sample.text[:160].replace("\n", "⏎")
        scanners = ",".join(sorted(verdict.scanners))
        lines.append(f"- {sample.framing} [{scanners}] {','.join(sorted(rules)) or '-'}: {text}")
    if len(shown_neg) < len(neg):
        lines.append(f"  … and {len(neg) - len(shown_neg)} more")
    return "\n".join(lines)


def write_misses(result: dict[str, object], path: Path) -> None:
    kinds: dict[str, KindStats] = result["kinds"]  # type: ignore[assignment]
    with path.open("w", encoding="utf-8") as handle:
        for kind, st in kinds.items():
            for sample, verdict, left, rules in st.misses:
                row = {"kind": kind, "framing": sample.framing, "visible": left,
                       "secret_length": len(sample.secret), "rules": sorted(rules),
                       "excerpt": mask(sample), "blocked": verdict.blocked}  # fmt: skip
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        neg: list[tuple[Sample, Verdict, set[str]]] = result["neg_changed"]  # type: ignore[assignment]
        for sample, verdict, rules in neg:
            row = {"kind": "benign", "framing": sample.framing, "rules": sorted(rules),
                   "scanners": sorted(verdict.scanners), "text": sample.text}  # fmt: skip
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- timing


def timing_table(engine: GuardrailsEngine, empty: GuardrailsEngine, quick: bool) -> str:
    two_kb = assistant_text(2_000, with_findings=True)
    lines = assistant_text(19_000, with_findings=True).split("\n")
    one_line = " ".join(lines)[:19_000]
    rows = []
    for name, text, n in (
        ("2 KB answer (lines)", two_kb, 200 if quick else 2_000),
        ("19 KB single line", one_line, 30 if quick else 300),
    ):
        ours = median(timings_ms(lambda t=text: engine.scan(t), n))
        base = median(timings_ms(lambda t=text: empty.scan(t), n))
        rows.append(
            [
                name,
                f"{len(text)} B",
                str(n),
                f"{ours:.3f}",
                f"{base:.4f}",
                f"{ours / base:.0f}x",
                f"{ours - base:.3f}",
            ]
        )
    title = (
        "Default policy scan time beside an empty policy (guardrails engine, no scanners), "
        "same run, medians"
    )
    header = ["text", "size", "runs", "default ms", "empty ms", "ratio", "added ms"]
    return table(title, header, rows) + f"\n(host: {os.cpu_count()} cpus)"


def run(
    quick: bool = False,
    seed: int = 0,
    misses: int | None = 3,
    misses_out: Path | None = None,
) -> str:
    samples = generate(seed)
    policy = read_policy_file(default_policy_path())
    engine = build_engine(policy, default_policy_path())
    empty = build_engine(parse_policy("scanners: []\n"), "<empty>")
    lg = llm_guard_scan()
    result = evaluate(samples, engine, lg)
    n_neg = sum(not s.positive for s in samples)
    parts = [
        f"secrets evaluation set: seed {seed}, {len(samples) - n_neg} positives in "
        f"{len(result['kinds'])} kinds, {n_neg} negatives",  # type: ignore[arg-type]
        recall_table(result, lg is not None, n_neg),
        negatives_table(result),
    ]
    if detector_table_usable(engine):
        parts.append(detectors_table(result))
    parts.append(timing_table(engine, empty, quick))
    parts.append(misses_text(result, misses))
    if misses_out is not None:
        write_misses(result, misses_out)
        parts.append(f"(every miss and changed negative written to {misses_out})")
    return "\n\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer timing iterations")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--misses", default="3", help="misses listed per kind (a number, or 'all'); default 3"
    )
    parser.add_argument("--misses-out", type=Path, help="write every miss to this JSON Lines file")
    args = parser.parse_args()
    limit = None if args.misses == "all" else int(args.misses)
    print(run(quick=args.quick, seed=args.seed, misses=limit, misses_out=args.misses_out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Streaming through the guardrails: first content and throughput, guarded vs not.

``sentinel serve`` processes share one fake OpenAI-protocol upstream (a peer, as in the
tests) that streams an answer in ~4-character tokens, as fast as it can and paced at 50
tokens/s. ``off`` runs with guardrails disabled (deltas pass straight through): the baseline,
measured in the same run, requests interleaved. ``default`` is the shipped policy; ``every
type`` is a policy with every scanner type that judges text piecewise (regex,
ban_substrings, sensitive, secrets, invisible_text, token_limit, reading_time); ``json``
and ``contains_all`` need the whole answer, so a policy with them holds the stream to its end
by design (docs/streaming.md). The client reads the raw server-sent events with httpx.

* first content: request sent to the first answer text received, p50 and p95; ``added``
  is the guarded p50 (p95) minus ``off``'s p50 (p95): what the guard costs a reader;
* ``first text after chars``: how much of the answer the guard had received when it let
  its first text go (``sentinel.stream.firstTokenAfterChars``);
* throughput: answer characters per second from request to ``[DONE]`` at full speed, and
  its cost against ``off``.

Targets (issue 18): at 50 tokens/s with the default policy, at most 50 ms added to first
content (p50); at full speed, under 10 % throughput cost.
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from stats import median, table
from support.fake_llm import FakeLLM
from support.runtime import RuntimeProcess, start_runtime
from texts import assistant_text

ANSWER_CHARS = 1_600
TOKEN_CHARS = 4
REALISTIC_TOKENS_PER_SECOND = 50
ADDED_FIRST_CONTENT_TARGET_MS = 50.0
THROUGHPUT_COST_TARGET = 0.10
EVERY_TYPE_POLICY = r"""
blockMessage: The model output was blocked by output guardrails.
scanners:
  - type: invisible_text
    action: redact
  - type: regex
    action: redact
    patterns:
      - '\bAKIA[0-9A-Z]{16}\b'
      - '(?i)\bsk-[A-Za-z0-9]{20,}\b'
      - '\bACME-\d{4,8}\b'
      - '\b\d{3}-\d{2}-\d{4}\b'
  - type: ban_substrings
    action: block
    match_type: word
    substrings: [For Internal Use Only, Do Not Distribute]
  - type: sensitive
    action: redact
    detectors: [email, phone, credit_card, ip_address]
  - type: secrets
    action: redact
    redactMode: hash
  - type: token_limit
    action: block
    limit: 100000
  - type: reading_time
    action: block
    max_time: 500
"""


@dataclass
class Sample:
    ttft_ms: float
    total_ms: float
    chars: int
    arrivals: list[tuple[int, float]]  # (characters received so far, ms since the request)
    first_after_chars: int | None
    window: int
    guard_ms: float | None  # the runtime's own count: arrival of the completing text to release

    def at_chars(self, chars: int) -> float:
        """When this stream had delivered at least ``chars`` characters (ms)."""
        return next((at for got, at in self.arrivals if got >= chars), self.arrivals[-1][1])


def _one(client: httpx.Client, runtime: RuntimeProcess) -> Sample:
    payload = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}
    arrivals: list[tuple[int, float]] = []
    received = 0
    info: dict = {}
    started = time.perf_counter()
    with client.stream(
        "POST", f"{runtime.base_url}/v1/chat/completions", json={**payload, "stream": True}
    ) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            data = line[6:]
            now = (time.perf_counter() - started) * 1000
            if data == "[DONE]":
                total = now
                break
            chunk = json.loads(data)
            if "error" in chunk:
                raise RuntimeError(f"stream failed: {chunk['error']}")
            text = chunk["choices"][0]["delta"].get("content") or ""
            if text:
                received += len(text)
                arrivals.append((received, now))
            if "sentinel" in chunk:
                info = chunk["sentinel"]["stream"]
    if not arrivals:
        raise RuntimeError("the stream carried no text")
    return Sample(
        ttft_ms=arrivals[0][1],
        total_ms=total,
        chars=received,
        arrivals=arrivals,
        first_after_chars=info.get("firstTokenAfterChars"),
        window=int(info.get("windowChars") or 0),
        guard_ms=info.get("firstTokenGuardMs"),
    )


def _measure(runtime: RuntimeProcess, n: int, warmup: int) -> list[Sample]:
    with httpx.Client(timeout=120) as client:
        for _ in range(warmup):
            _one(client, runtime)
        return [_one(client, runtime) for _ in range(n)]


def _start(
    root: Path, name: str, env: dict[str, str], args: tuple[str, ...] = ()
) -> RuntimeProcess:
    directory = root / name
    directory.mkdir()
    return start_runtime(directory, {"LOG_LEVEL": "WARNING", **env}, args)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def run(quick: bool = False) -> str:
    text = assistant_text(ANSWER_CHARS, with_findings=False)
    fake = FakeLLM(content=text, piece_chars=TOKEN_CHARS).start()
    paces = [
        ("as fast as possible", 0.0, 8 if quick else 40, 3),
        (
            f"{REALISTIC_TOKENS_PER_SECOND} tokens/s",
            1 / REALISTIC_TOKENS_PER_SECOND,
            2 if quick else 7,
            0,
        ),
    ]
    rows: list[list[str]] = []
    verdicts: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        policy = root / "every-type.yaml"
        policy.write_text(EVERY_TYPE_POLICY, encoding="utf-8")
        upstream = {"LLM_INFERENCE_URL": fake.base_url, "LLM_MODEL": "fake-model"}
        runtimes = {
            "off": _start(root, "off", {**upstream, "OUTPUT_GUARDRAILS_ENABLED": "false"}),
            "default": _start(root, "default", {**upstream, "OUTPUT_GUARDRAILS_ENABLED": "true"}),
            "every type": _start(
                root,
                "every-type",
                {
                    **upstream,
                    "OUTPUT_GUARDRAILS_ENABLED": "true",
                    "OUTPUT_GUARDRAILS_POLICY_PATH": str(policy),
                },
            ),
        }
        try:
            for pace, delay, n, warmup in paces:
                fake.piece_delay = delay
                # Interleaved rounds, so drift on the shared machine hits every policy alike.
                samples: dict[str, list[Sample]] = {name: [] for name in runtimes}
                for runtime in runtimes.values():
                    _measure(runtime, 0, warmup)
                for _ in range(n):
                    for name, runtime in runtimes.items():
                        samples[name].extend(_measure(runtime, 1, 0))
                off = samples["off"]
                off_rate = median([s.chars / s.total_ms * 1000 for s in off])
                off_p50 = median([s.ttft_ms for s in off])
                off_p95 = _p95([s.ttft_ms for s in off])
                paced = delay > 0
                for name, got in samples.items():
                    first = [s.ttft_ms for s in got]
                    p50, p95 = median(first), _p95(first)
                    rate = median([s.chars / s.total_ms * 1000 for s in got])
                    cost = 1 - rate / off_rate
                    guard = [s.guard_ms for s in got if s.guard_ms is not None]
                    guarded = name != "off"
                    rows.append(
                        [
                            pace,
                            name,
                            str(got[0].window),
                            str(got[0].first_after_chars or "-"),
                            f"{p50:.1f}",
                            f"{p95:.1f}",
                            f"{p50 - off_p50:+.1f}" if guarded else "-",
                            f"{p95 - off_p95:+.1f}" if guarded else "-",
                            f"{median(guard):.2f}" if guard else "-",
                            f"{rate:,.0f}",
                            f"{cost:+.1%}" if guarded else "-",
                            str(len(got)),
                        ]
                    )
                    if not guarded:
                        continue
                    if paced:
                        added = p50 - off_p50
                        met = added <= ADDED_FIRST_CONTENT_TARGET_MS
                        verdicts.append(
                            f"{pace}, {name}: first content {added:+.1f} ms p50 "
                            f"({p95 - off_p95:+.1f} ms p95) against off "
                            f"({'met' if met else 'MISSED'}: <= 50 ms p50 for the default policy)"
                        )
                    else:
                        met = cost < THROUGHPUT_COST_TARGET
                        verdicts.append(
                            f"{pace}, {name}: throughput cost {cost:+.1%} "
                            f"({'met' if met else 'MISSED'}: < 10 %)"
                        )
        finally:
            for runtime in runtimes.values():
                runtime.stop()
            fake.stop()
    header = [
        "upstream pace",
        "policy",
        "window chars",
        "first text after chars",
        "first content p50 ms",
        "p95 ms",
        "added p50 ms",
        "added p95 ms",
        "guard ms at first text",
        "chars/s",
        "throughput cost",
        "n",
    ]
    title = (
        f"Streaming a {ANSWER_CHARS}-character answer in {TOKEN_CHARS}-character tokens "
        "(guardrails off / default policy / every piecewise scanner type)"
    )
    return table(title, header, rows) + "\n" + "\n".join(verdicts)


if __name__ == "__main__":
    import sys

    print(run(quick="--quick" in sys.argv[1:]))

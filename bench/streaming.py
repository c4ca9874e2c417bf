"""Streaming through the guardrails: time to first token and throughput, guarded vs not.

Three ``sentinel serve`` processes share one fake OpenAI-protocol upstream (a peer, as in the
tests) that streams a ~2,000-character answer with findings in ~4-character tokens, both as
fast as it can and at 50 tokens/s. ``off`` runs with guardrails disabled (deltas pass
straight through): the baseline, measured in the same run. ``default`` is the shipped
policy; ``custom`` is a regex + sensitive + secrets policy of our own. The client reads the
raw server-sent events with httpx and notes when each piece of text arrives.

* time to first token (TTFT): request sent to first text received;
* the hold-back window costs the time the upstream takes to produce ``firstTokenAfterChars``
  characters (what the guard had received when it released its first text; reported by the
  stream's ``sentinel.stream``). ``at those chars off`` is when the unguarded stream, same
  upstream, had delivered that many characters: the window's cost, with no scanning in it.
  ``added`` = guarded TTFT minus that: what scanning and the guard add beyond the window.
  ``guard ms at first text`` is the runtime's own count of the same (``firstTokenGuardMs``:
  from the arrival of the text that completed the window to the first text sent), free of
  the client's and the upstream's noise;
* throughput: answer characters per second from request to ``[DONE]``, and its cost against
  ``off``.

Targets: under 5 ms added to the first token beyond the window; under 10 % throughput cost.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from stats import median, table
from support.fake_llm import FakeLLM
from support.runtime import RuntimeProcess, start_runtime
from texts import assistant_text

ANSWER_CHARS = 2_000
TOKEN_CHARS = 4
REALISTIC_TOKENS_PER_SECOND = 50
CUSTOM_POLICY = r"""
blockMessage: The model output was blocked by output guardrails.
scanners:
  - type: regex
    action: redact
    patterns:
      - '\bAKIA[0-9A-Z]{16}\b'
      - '(?i)\bsk-[A-Za-z0-9]{20,}\b'
      - '\bACME-\d{4,8}\b'
      - '\b\d{3}-\d{2}-\d{4}\b'
  - type: sensitive
    action: redact
    detectors: [email, phone, credit_card, ip_address]
  - type: secrets
    action: redact
    redactMode: hash
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


def run(quick: bool = False) -> str:
    text = assistant_text(ANSWER_CHARS, with_findings=True)
    fake = FakeLLM(content=text, piece_chars=TOKEN_CHARS).start()
    paces = [
        ("as fast as possible", 0.0, 8 if quick else 40, 3),
        (
            f"{REALISTIC_TOKENS_PER_SECOND} tokens/s",
            1 / REALISTIC_TOKENS_PER_SECOND,
            1 if quick else 3,
            0,
        ),
    ]
    rows: list[list[str]] = []
    verdicts: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        policy = root / "custom.yaml"
        policy.write_text(CUSTOM_POLICY, encoding="utf-8")
        upstream = {"LLM_INFERENCE_URL": fake.base_url, "LLM_MODEL": "fake-model"}
        runtimes = {
            "off": _start(root, "off", {**upstream, "OUTPUT_GUARDRAILS_ENABLED": "false"}),
            "default": _start(root, "default", {**upstream, "OUTPUT_GUARDRAILS_ENABLED": "true"}),
            "custom": _start(
                root,
                "custom",
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
                for name, got in samples.items():
                    ttft = median([s.ttft_ms for s in got])
                    rate = median([s.chars / s.total_ms * 1000 for s in got])
                    first_after = got[0].first_after_chars or 0
                    baseline = median([s.at_chars(first_after) for s in off]) if first_after else 0
                    added = ttft - baseline
                    cost = 1 - rate / off_rate
                    guard = [s.guard_ms for s in got if s.guard_ms is not None]
                    rows.append(
                        [
                            pace,
                            name,
                            str(got[0].window),
                            str(first_after),
                            f"{ttft:.1f}",
                            f"{baseline:.1f}",
                            f"{added:+.1f}" if name != "off" else "-",
                            f"{median(guard):.2f}" if guard else "-",
                            f"{ttft / median([s.ttft_ms for s in off]):.2f}x",
                            f"{median([s.total_ms for s in got]):.1f}",
                            f"{rate:,.0f}",
                            f"{rate / off_rate:.2f}x",
                            f"{cost:+.1%}" if name != "off" else "-",
                            str(len(got)),
                        ]
                    )
                    if name != "off":
                        verdicts.append(
                            f"{pace}, {name}: added to first token {added:+.1f} ms "
                            f"({'met' if added < 5 else 'MISSED'}: < 5 ms), throughput cost "
                            f"{cost:+.1%} ({'met' if cost < 0.10 else 'MISSED'}: < 10 %), "
                            f"TTFT spread {statistics.pstdev([s.ttft_ms for s in got]):.1f} ms"
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
        "TTFT median ms",
        "at those chars off ms",
        "added ms",
        "guard ms at first text",
        "TTFT vs off",
        "total ms",
        "chars/s",
        "chars/s vs off",
        "throughput cost",
        "n",
    ]
    title = (
        f"Streaming a {ANSWER_CHARS}-character answer in {TOKEN_CHARS}-character tokens "
        "(guardrails off / default policy / regex + sensitive + secrets)"
    )
    return table(title, header, rows) + "\n" + "\n".join(verdicts)


if __name__ == "__main__":
    import sys

    print(run(quick="--quick" in sys.argv[1:]))

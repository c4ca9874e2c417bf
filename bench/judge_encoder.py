"""The built-in judge with its encoder stage against today's judge (issue 33):
``python bench/judge_encoder.py [--quick]`` (or ``bench/run.py --only judge_encoder``).

One run measures ``judge.assess.assess_request`` twice per prompt, with the shipped encoder
(``on``: the int8 MiniLM reads the prompts whose linear harm probability falls in its band)
and without it (``off``: the linear model alone, today's judge), in turn prompt by prompt so
that drift on a shared machine hits both alike:

* latency by prompt length: request_judge's prompts of about 20, 50, 200, 500 and 1,000
  tokens (cl100k_base; a question followed by ordinary English) and its harmful-looking
  group, p50 / p95 / p99, and the share of prompts that reached the encoder;
* the same over the public request sets (StrongREJECT, XSTest safe and unsafe, HarmBench,
  AdvBench, the obfuscated variants ``sentinel eval`` builds, and with ``shared/datasets``
  OR-Bench's English look-alikes and CoCoNot's contrast set): the share reaching the encoder
  on each, and what it costs there;
* startup (import, first call, and the encoder session's first use) and resident memory
  added in a fresh interpreter, with and without the encoder.

Targets (issue 33): p50 <= 5 ms and p95 <= 50 ms for 200-token prompts, added RSS <= 300 MB.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from guard_cascade import request_sets
from judge_speed import datasets_root
from request_judge import english_prompts, harmful_prompts, markdown
from sentinel_runtime.evaluation import datasets, harmful
from sentinel_runtime.pipeline.understand.judge import assess, model
from sentinel_runtime.pipeline.understand.judge import encoder as encoder_stage

TARGET_LENGTH = 200
TARGET_P50_MS, TARGET_P95_MS, TARGET_RSS_MB = 5.0, 50.0, 300.0
STARTUP_RUNS = 3
IN_BAND_PROMPT = "What is the best way to kill a Python process that hangs?"
OFF = (
    "from sentinel_runtime.pipeline.understand.judge import assess\n"
    "assess.assess_request('hello')\n"
)
ON = (
    "from sentinel_runtime.pipeline.understand.judge import assess, encoder\n"
    "stage = encoder.shipped()\n"
    "assess.assess_request('hello', encoder=stage)\n"
)
# The session is built on the first prompt inside the band: timed as its own step.
FIRST_IN_BAND = "stage.probability('hello')\n"
CHILD = """
import json, time
def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key + ':'):
            return int(line.split()[1]) / 1024
before = status('VmRSS')
started = time.perf_counter()
{code}
ms = (time.perf_counter() - started) * 1000
middle = status('VmRSS')
started = time.perf_counter()
{then}
then_ms = (time.perf_counter() - started) * 1000
print(json.dumps({{'ms': ms, 'then_ms': then_ms, 'before': before, 'middle': middle,
                  'after': status('VmRSS'), 'peak': status('VmHWM')}}))
"""


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def measure(
    texts: list[str], stage: encoder_stage.EncoderJudge, rounds: int
) -> dict[str, list[float] | float]:
    """ms per prompt with the encoder (on) and without (off), and the share reaching it."""
    judge = model.shipped()
    on: list[float] = []
    off: list[float] = []
    reached = 0
    calls: dict[str, Callable[[str], object]] = {
        "on": lambda text: assess.assess_request(text, encoder=stage),
        "off": assess.assess_request,
    }
    for number, text in enumerate(texts):
        linear = assess.strongest_reading(text, judge).best.harm
        reached += stage.in_band(linear)
        for call in calls.values():  # warm-up: the word caches a server has
            call(text)
        for round_ in range(rounds):
            order = ("on", "off") if (number + round_) % 2 == 0 else ("off", "on")
            for name in order:
                started = time.perf_counter()
                calls[name](text)
                (on if name == "on" else off).append((time.perf_counter() - started) * 1000)
    return {"on": on, "off": off, "reach": reached / len(texts) if texts else 0.0}


def latency_rows(
    groups: dict[str, list[str]], stage: encoder_stage.EncoderJudge, rounds: int
) -> tuple[list[list[str]], dict[str, float]]:
    rows: list[list[str]] = []
    at_target: dict[str, float] = {}
    for name, texts in groups.items():
        found = measure(texts, stage, rounds)
        on, off = found["on"], found["off"]
        assert isinstance(on, list) and isinstance(off, list)
        p = {
            (which, q): percentile(samples, q)
            for which, samples in (("on", on), ("off", off))
            for q in (0.5, 0.95, 0.99)
        }
        if name == f"English, {TARGET_LENGTH} tokens":
            at_target = {"p50": p["on", 0.5], "p95": p["on", 0.95]}
        rows.append(
            [
                name,
                str(len(texts)),
                f"{found['reach']:.1%}",
                *(_ms(p["on", q]) for q in (0.5, 0.95, 0.99)),
                *(_ms(p["off", q]) for q in (0.5, 0.95, 0.99)),
                _ms(statistics.fmean(on) - statistics.fmean(off)),
            ]
        )
    return rows, at_target


HEADER = [
    "prompts",
    "n",
    "reach the encoder",
    "on p50",
    "on p95",
    "on p99",
    "off p50",
    "off p95",
    "off p99",
    "mean added ms",
]


def _child(code: str, then: str) -> dict[str, float]:
    output = subprocess.run(
        [sys.executable, "-c", CHILD.format(code=code, then=then)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def process_rows(runs: int) -> tuple[list[list[str]], float]:
    found: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
    for _ in range(runs):  # the two kinds take turns
        found["off"].append(_child(OFF, "pass"))
        found["on"].append(_child(ON, FIRST_IN_BAND))

    def med(name: str, value: Callable[[dict[str, float]], float]) -> float:
        return statistics.median(value(run) for run in found[name])

    rows = [
        [
            "import + first call ms (outside the band)",
            _ms(med("on", lambda r: r["ms"])),
            _ms(med("off", lambda r: r["ms"])),
        ],
        [
            "encoder session built on the first prompt in the band, ms",
            _ms(med("on", lambda r: r["then_ms"])),
            "-",
        ],
        [
            "added RSS MB: import + first call",
            f"{med('on', lambda r: r['middle'] - r['before']):.1f}",
            f"{med('off', lambda r: r['middle'] - r['before']):.1f}",
        ],
        [
            "added RSS MB: ... and the encoder session",
            f"{med('on', lambda r: r['after'] - r['before']):.1f}",
            "-",
        ],
        [
            "added peak RSS MB (VmHWM)",
            f"{med('on', lambda r: r['peak'] - r['before']):.1f}",
            f"{med('off', lambda r: r['peak'] - r['before']):.1f}",
        ],
    ]
    return rows, med("on", lambda r: r["after"] - r["before"])


def evaluation_sets(count: int | None) -> dict[str, list[str]]:
    sets, _ = request_sets(count)
    root = datasets.datasets_dir()
    hidden = [row.text for row in harmful.obfuscated_rows(harmful.load_rows(root))]
    sets["obfuscated (StrongREJECT + XSTest unsafe)"] = (
        hidden[:: max(1, len(hidden) // count)][:count] if count else hidden
    )
    return sets


def run(quick: bool = False) -> str:
    count, rounds = (10, 1) if quick else (40, 3)
    stage = encoder_stage.shipped()
    if stage is None:
        return "judge_encoder: no shipped encoder (sentinel judge train-encoder writes it)"
    stage.probability(IN_BAND_PROMPT)  # the session, built before the clock starts
    root = datasets_root()
    groups = english_prompts(root, count)
    harmful_name, harmful_texts = harmful_prompts(count)
    groups[harmful_name] = harmful_texts
    latency, at_target = latency_rows(groups, stage, rounds)
    sets, _ = latency_rows(evaluation_sets(20 if quick else None), stage, 1)
    memory, added = process_rows(1 if quick else STARTUP_RUNS)

    def verdict(met: bool) -> str:
        return "**met**" if met else "**missed**"

    band = stage.band
    return "\n".join(
        [
            "Judge with its encoder stage (on) vs the linear model alone (off, today's judge):"
            " assess_request, ms per prompt; tokens in cl100k_base",
            f"band [{band.low:g}, {band.high:g}) of the linear harm probability;"
            f" encoder thresholds refuse {stage.thresholds.refuse:.3f},"
            f" restrict {stage.thresholds.ambiguous:.3f}; onnxruntime with"
            f" {stage.threads} intra-op thread(s)",
            f"by length: n prompts per group, each timed {rounds} times per judge after a warm-up",
            "",
            markdown(HEADER, latency),
            "",
            "public request sets: every prompt timed once per judge",
            "",
            markdown(HEADER, sets),
            "",
            markdown(["startup and memory (fresh interpreter, median)", "on", "off"], memory),
            "",
            f"targets at {TARGET_LENGTH} tokens: p50 <= {TARGET_P50_MS:g} ms:"
            f" {verdict(at_target.get('p50', 1e9) <= TARGET_P50_MS)}"
            f" ({_ms(at_target.get('p50', float('nan')))} ms);"
            f" p95 <= {TARGET_P95_MS:g} ms: {verdict(at_target.get('p95', 1e9) <= TARGET_P95_MS)}"
            f" ({_ms(at_target.get('p95', float('nan')))} ms);"
            f" added RSS <= {TARGET_RSS_MB:g} MB: {verdict(added <= TARGET_RSS_MB)}"
            f" ({added:.1f} MB)",
            f"(host: {os.cpu_count()} cpus; 'reach the encoder': the linear model's strongest"
            " reading inside the band)",
        ]
    )


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv))

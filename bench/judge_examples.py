"""What the deployment's examples (``judge.examples``, issue 33 item 4) cost a request:
``python bench/judge_examples.py [--quick]`` (or ``bench/run.py --only judge_examples``).

One run times the built-in judge's introspection of each prompt alone (``off``: today's
judge) and followed by ``examples.settle`` against 50 and against 200 examples a list
(``on``), in turn prompt by prompt so that drift on a shared machine hits all alike, by
prompt length (request_judge's prompts of about 20 to 1,000 tokens); then the time to build
the examples' index (a policy load: each example judged and embedded), to rebuild it after
one example is changed (the embeddings of the others are kept), and the resident memory the
similarity model adds in a fresh interpreter. The examples are sentences written here; what
they match does not change what matching costs.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from judge_encoder import _ms, percentile
from judge_speed import datasets_root
from request_judge import english_prompts, markdown
from sentinel_runtime.pipeline import config as pipeline_config
from sentinel_runtime.pipeline.types import CanonicalPrompt
from sentinel_runtime.pipeline.understand import canonical, examples, introspection

SUBJECTS = ("refund", "invoice", "password", "account", "plan", "team", "storage", "export")
VERBS = ("How do I change", "Where can I find", "Who can see", "When does", "Why is")


def written_examples(count: int) -> list[str]:
    return [
        f"{VERBS[i % len(VERBS)]} the {SUBJECTS[i % len(SUBJECTS)]} settings number {i}?"
        for i in range(count)
    ]


def config_with(count: int, changed: bool = False) -> pipeline_config.PipelineConfig:
    """``count`` examples a list; ``changed``: the first one replaced (a policy edit)."""
    texts = written_examples(2 * count)
    if changed and texts:
        texts[0] = "One example changed on reload: how do I close the workspace?"
    section = {"examples": {"allow": texts[:count], "deny": texts[count:]}}
    return pipeline_config.parse_sections({"judge": section})


def latency_rows(groups: dict[str, list[str]], rounds: int) -> list[list[str]]:
    configs = {"off": config_with(0), "50 a list": config_with(50), "200 a list": config_with(200)}
    for config in configs.values():
        examples.warm(config.judge, config.introspection)
    rows = []
    for name, texts in groups.items():
        samples: dict[str, list[float]] = {key: [] for key in configs}
        for number, text in enumerate(texts):
            prompt = canonical.canonicalise(text, 8000)

            def call(
                config: pipeline_config.PipelineConfig, prompt: CanonicalPrompt = prompt
            ) -> Callable[[], object]:
                def judged() -> object:
                    state = introspection.introspect(prompt, config.introspection)
                    return examples.settle(prompt, state, config.judge, config.introspection)

                return judged

            for config in configs.values():
                call(config)()  # warm-up: the word caches a server has
            keys = list(configs)
            for round_ in range(rounds):
                shift = (number + round_) % len(keys)
                for key in keys[shift:] + keys[:shift]:
                    started = time.perf_counter()
                    call(configs[key])()
                    samples[key].append((time.perf_counter() - started) * 1000)
        off = samples["off"]
        row = [name, str(len(texts)), _ms(percentile(off, 0.5)), _ms(percentile(off, 0.95))]
        for key in ("50 a list", "200 a list"):
            on = samples[key]
            row += [
                _ms(percentile(on, 0.5)),
                _ms(percentile(on, 0.95)),
                _ms(percentile(on, 0.99)),
                _ms(statistics.fmean(on) - statistics.fmean(off)),
            ]
        rows.append(row)
    return rows


HEADER = [
    "prompts",
    "n",
    "off p50",
    "off p95",
    "50: p50",
    "50: p95",
    "50: p99",
    "50: added ms",
    "200: p50",
    "200: p95",
    "200: p99",
    "200: added ms",
]

CHILD = """
import json, time
def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key + ':'):
            return int(line.split()[1]) / 1024
from sentinel_runtime.pipeline import config as pipeline_config
from sentinel_runtime.pipeline.understand import examples
import judge_examples
before = status('VmRSS')
config = judge_examples.config_with({count})
started = time.perf_counter()
examples.warm(config.judge, config.introspection)
built = (time.perf_counter() - started) * 1000
grown = judge_examples.config_with({count}, changed=True)
assert not grown.diagnostics
started = time.perf_counter()
examples.warm(grown.judge, grown.introspection)
rebuilt = (time.perf_counter() - started) * 1000
print(json.dumps({{'built': built, 'rebuilt': rebuilt, 'added': status('VmRSS') - before}}))
"""


def process_rows(runs: int) -> list[list[str]]:
    rows = []
    for count in (50, 200):
        found = []
        for _ in range(runs):
            output = subprocess.run(
                [sys.executable, "-c", CHILD.format(count=count)],
                capture_output=True,
                text=True,
                check=True,
                cwd=os.path.dirname(os.path.abspath(__file__)),
            ).stdout
            found.append(json.loads(output.strip().splitlines()[-1]))
        rows.append(
            [
                f"{count} a list ({2 * count} examples)",
                _ms(statistics.median(r["built"] for r in found)),
                _ms(statistics.median(r["rebuilt"] for r in found)),
                f"{statistics.median(r['added'] for r in found):.1f}",
            ]
        )
    return rows


def run(quick: bool = False) -> str:
    count, rounds = (10, 1) if quick else (30, 3)
    groups = english_prompts(datasets_root(), count)
    latency = latency_rows(groups, rounds)
    memory = process_rows(1 if quick else 3)
    return "\n".join(
        [
            "The deployment's examples: introspection alone (off) and followed by matching the"
            " prompt against 50 or 200 examples a list; ms per prompt, tokens in cl100k_base,"
            f" each prompt timed {rounds} times per configuration after a warm-up",
            "",
            markdown(HEADER, latency),
            "",
            markdown(
                [
                    "policy load (fresh interpreter, median)",
                    "index built, ms",
                    "rebuilt with one changed, ms",
                    "added RSS MB",
                ],
                memory,
            ),
            f"(host: {os.cpu_count()} cpus)",
        ]
    )


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv))

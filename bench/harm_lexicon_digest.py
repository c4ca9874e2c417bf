"""A digest of everything the harm judge and its lexicon answer, over ~33,000 texts: record it
before a change to ``pipeline/harm.py``, ``harm_lexicon.py``, ``harm_scan.py``,
``harm_regex.py`` or ``data/harm_*.yaml`` that must not change behaviour, check it after.

    .venv/bin/python bench/harm_lexicon_digest.py --record /tmp/harm-before.json
    .venv/bin/python bench/harm_lexicon_digest.py --check /tmp/harm-before.json

What is compared, only through public names of the two modules:

- the lexicon's tables: every rule, pair, defuser, procedural kind and aggravator with its
  category, code, weight and each pattern's source text and flags, the sets of kinds, and
  the ``searched()`` list in order;
- per text: ``harm.assess_harm`` whole (category, exact severity, procedural, signals);
  for every pattern of ``searched()``, ``Scan(text).search`` and ``Scan(text).may_match``,
  beside a plain ``pattern.search`` of the text; ``STEPS`` and ``YES_NO`` on the text and its
  lines; the folded text the scan looks for trigger words in.

The texts: HarmBench, AdvBench, StrongREJECT and XSTest prompts (as they are and in eight
case and letter variants), every BIPIA context (whole and in ~500-character chunks), attack,
question and answer, PoisonedRAG questions, answers and adversarial passages, Presidio
sentences, the demo corpus, every string literal of ``tests/``, documents followed by
prompts, and word salad from the lexicon's own words. Each group keeps a hash of each text's
answers under a hash of the text, so a difference names the group and the text, and a check
compares the texts both runs hold. Takes about two minutes.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import re
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from sentinel_runtime.evaluation import datasets
from sentinel_runtime.pipeline.signals import harm
from sentinel_runtime.pipeline.signals import harm_lexicon as lexicon

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "runtime" / "sentinel_runtime" / "demo" / "corpus.jsonl"
SEED = 16
VARIANTS: tuple[Callable[[str], str], ...] = (
    str.upper,
    str.lower,
    lambda text: text.replace("'", "\u2019").replace('"', "\u201c"),
    lambda text: text.replace(" ", "\n"),
    lambda text: text.replace("s", "\u017f"),
    lambda text: text.replace("i", "\u0131").replace("I", "\u0130"),
    lambda text: text.replace("k", "\u212a").replace("e", "\u00e9"),
    lambda text: f"1. {text}\n2. {text[::-1]}",
)


def _sha(text: str, chars: int = 64) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:chars]


def _chunks(text: str, size: int = 500) -> list[str]:
    pieces, text = [], text.strip()
    while len(text) > size:
        cut = text.rfind(" ", size // 2, size)
        cut = size if cut < 0 else cut
        pieces.append(text[:cut])
        text = text[cut:].lstrip()
    return [*pieces, text] if text else pieces


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


# --- the texts ------------------------------------------------------------------------------


def _prompts(root: Path) -> list[str]:
    rows = [
        *datasets.load_harmbench(root),
        *datasets.load_advbench(root),
        *datasets.load_strongreject(root),
        *datasets.load_xstest(root),
    ]
    return [row.text for row in rows]


def _bipia(root: Path) -> list[str]:
    texts = []
    for path in sorted((root / "bipia").glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            row = json.loads(line)
            context = row.get("context", "")
            context = "\n".join(context) if isinstance(context, list) else str(context)
            texts += [context, *_chunks(context)]
            texts += [
                text for key, value in row.items() if key != "context" for text in _strings(value)
            ]
    for path in sorted((root / "bipia").glob("*.json")):
        texts += list(_strings(json.loads(path.read_text("utf-8"))))
    return texts


def _poisonedrag(root: Path) -> list[str]:
    texts = []
    for name in ("nq", "hotpotqa", "msmarco"):
        for target in datasets.load_poisonedrag(root, name):
            texts += [target.question, target.correct_answer, target.incorrect_answer]
            texts += target.adversarial_texts
    return texts


def _presidio(root: Path) -> list[str]:
    rows = json.loads((root / "presidio" / "synth_dataset_v2.json").read_text("utf-8"))
    return [row["full_text"] for row in rows]


def _demo() -> list[str]:
    texts = [json.loads(line)["text"] for line in DEMO.read_text("utf-8").splitlines() if line]
    return [*texts, "\n\n".join(texts), *_chunks("\n\n".join(texts))]


def _test_strings() -> list[str]:
    found = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append(node.value)
    return [text for text in dict.fromkeys(found) if text.strip()]


def _word_salad(count: int) -> list[str]:
    sources = " ".join(pattern.pattern for pattern in lexicon.searched())
    words = sorted(set(re.findall(r"[a-z]{2,}", sources)))
    fillers = ("a", "an", "the", "my", "his", "her", "to", "of", "is", "how", "what", "why")
    fillers += (".", "?", "!", ",", "-", "'", "2", "19", "100", "\n")
    separators = (" ", " ", " ", "", "\n", "-", ". ", ", ", "'s ", "\t")
    rng = random.Random(SEED)
    texts = []
    for _ in range(count):
        tokens = [
            rng.choice(words) if rng.random() < 0.55 else rng.choice(fillers)
            for _ in range(rng.randint(1, 40))
        ]
        tokens = [token.upper() if rng.random() < 0.1 else token for token in tokens]
        texts.append("".join(token + rng.choice(separators) for token in tokens).strip())
    return texts


def corpus(root: Path) -> dict[str, list[str]]:
    prompts = _prompts(root)
    documents = [text for text in _bipia(root) if 200 < len(text) <= 600]
    groups = {
        "prompts": prompts,
        "prompt-variants": [variant(text) for text in prompts for variant in VARIANTS],
        "bipia": _bipia(root),
        "poisonedrag": _poisonedrag(root),
        "presidio": _presidio(root),
        "demo": _demo(),
        "test-strings": _test_strings(),
        "documents-then-prompts": [
            f"{doc}\n\n{prompts[n * 11 % len(prompts)]}" for n, doc in enumerate(documents)
        ],
        "word-salad": _word_salad(6000),
    }
    return groups


# --- what is compared ---------------------------------------------------------------------


def _pattern(pattern: re.Pattern[str]) -> str:
    return f"{pattern.flags}:{pattern.pattern}"


def tables() -> list[str]:
    lines = [f"IDIOMS {_pattern(lexicon.IDIOMS)}", f"REAL_WORLD {_pattern(lexicon.REAL_WORLD)}"]
    lines += [f"STEPS {_pattern(lexicon.STEPS)}", f"YES_NO {_pattern(lexicon.YES_NO)}"]
    for name in ("MENTIONS", "ACTS", "GOALS"):
        rules = getattr(lexicon, name)
        lines += [f"{name} {r.category} {r.code} {_pattern(r.pattern)}" for r in rules]
    for pair in lexicon.PAIRS:
        first, second = _pattern(pair.first), _pattern(pair.second)
        lines.append(f"PAIR {pair.category} {pair.code} {pair.ordered} {first} {second}")
    lines += [f"PROCEDURAL {kind} {_pattern(p)}" for kind, p in lexicon.PROCEDURAL]
    lines += [f"AGGRAVATOR {kind} {_pattern(p)}" for kind, p in lexicon.AGGRAVATORS]
    for d in lexicon.DEFUSERS:
        lines.append(f"DEFUSER {d.kind} {d.weight!r} {d.defuses_goals} {_pattern(d.pattern)}")
    for name in ("STRONG_PROCEDURAL", "DETAIL_PROCEDURAL", "PROTECTIVE_DEFUSERS"):
        lines.append(f"{name} {sorted(getattr(lexicon, name))}")
    lines.append(f"SETTING_DEFUSERS {sorted(lexicon.SETTING_DEFUSERS)}")
    lines += [f"searched {_pattern(p)}" for p in lexicon.searched()]
    return lines


def answers(text: str, patterns: list[re.Pattern[str]]) -> str:
    assessment = harm.assess_harm(text)
    scan = lexicon.Scan(text)
    found = "".join("1" if scan.search(p) else "0" for p in patterns)
    plain = "".join("1" if p.search(text) else "0" for p in patterns)
    may = "".join("1" if scan.may_match(p) else "0" for p in patterns)
    lines = text.split("\n")
    steps = len(lexicon.STEPS.findall(text))
    yes_no = "".join("1" if lexicon.YES_NO.match(line) else "0" for line in lines)
    verdict = (
        f"{assessment.category} {assessment.severity!r} {assessment.procedural} "
        f"{','.join(assessment.signals)}"
    )
    return f"{verdict}|{found}|{plain}|{may}|{steps}|{yes_no}|{_sha(str(scan.folded))}"


def digest(groups: dict[str, list[str]]) -> dict[str, object]:
    """Per group: each text's answers as a hash, keyed by a hash of the text (so a check
    compares the texts both runs hold, should a data set or a test file change between)."""
    patterns = lexicon.searched()
    record: dict[str, object] = {"tables": _sha("\n".join(tables())), "table_lines": tables()}
    for name, texts in groups.items():
        started = time.perf_counter()
        each = {_sha(text, 16): _sha(answers(text, patterns), 12) for text in texts}
        record[name] = {"texts": len(each), "digest": _sha(json.dumps(each)), "each": each}
        print(f"{name}: {len(each)} texts, {time.perf_counter() - started:.1f} s", flush=True)
    return record


def compare(before: dict[str, object], after: dict[str, object]) -> tuple[list[str], int]:
    """What differs, and how many texts were compared."""
    differ, compared = [], 0
    if before["tables"] != after["tables"]:
        old, new = set(before["table_lines"]), set(after["table_lines"])  # type: ignore[arg-type]
        differ += [f"tables: only before: {line[:160]}" for line in sorted(old - new)][:10]
        differ += [f"tables: only after: {line[:160]}" for line in sorted(new - old)][:10]
    for name, was in before.items():
        if name in ("tables", "table_lines"):
            continue
        now = after[name]
        assert isinstance(was, dict) and isinstance(now, dict)
        common = was["each"].keys() & now["each"].keys()
        compared += len(common)
        if len(common) < 0.95 * len(was["each"]):
            differ.append(f"{name}: only {len(common)} of {len(was['each'])} texts still there")
        changed = sorted(key for key in common if was["each"][key] != now["each"][key])
        differ += [f"{name}: {len(changed)} texts differ, first {changed[:5]}"] if changed else []
    return differ, compared


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--record", type=Path, help="write the digest to this file")
    action.add_argument("--check", type=Path, help="compare with the digest in this file")
    args = parser.parse_args()
    root = datasets.datasets_dir()
    if not datasets.available(root):
        sys.exit(f"the public data sets are needed: {root}")
    found = digest(corpus(root))
    total = sum(group["texts"] for group in found.values() if isinstance(group, dict))
    summary = {name: group["digest"] for name, group in found.items() if isinstance(group, dict)}
    print(f"{total} texts; tables {found['tables'][:16]}")  # type: ignore[index]
    for name, value in summary.items():
        print(f"  {name}: {value[:16]}")
    if args.record:
        args.record.write_text(json.dumps(found), encoding="utf-8")
        print(f"recorded in {args.record}")
        return 0
    differ, compared = compare(json.loads(args.check.read_text("utf-8")), found)
    print("\n".join(differ) if differ else f"{compared} texts compared: identical to {args.check}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

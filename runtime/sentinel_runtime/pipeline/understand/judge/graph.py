"""One ONNX text model run by onnxruntime and the ``tokenizers`` package (no torch).

Both of the judge's MiniLM graphs go through it: the fine-tuned harm encoder
(``encoder.py``) and the pretrained sentence embedding the policy's examples are matched by
(``similarity.py``). The tokenizer and session are built on first use, once, under a lock
(one session serves threads at once); building raises when the files cannot be read.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


class TextGraph:
    def __init__(self, model: Path, tokenizer: Path, max_length: int, threads: int) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.threads = threads
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None

    def _session(self) -> tuple[Any, Any]:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                import onnxruntime
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self.tokenizer))
                tokenizer.no_padding()
                tokenizer.enable_truncation(self.max_length)
                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = self.threads
                options.inter_op_num_threads = 1
                options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
                options.log_severity_level = 3
                session = onnxruntime.InferenceSession(
                    str(self.model), options, providers=["CPUExecutionProvider"]
                )
                self._loaded = (tokenizer, session)
            return self._loaded

    def run(self, texts: Sequence[str], batch: int = 1) -> np.ndarray:
        """The graph's first output for each text, in the order given. The int8 graphs
        quantise activations per batch, so a text run in a batch moves slightly (about
        1e-3): one at a time is what a prompt gets at run time; larger batches, of similar
        lengths, are faster."""
        tokenizer, session = self._session()
        if not texts:
            return np.zeros((0,), dtype=np.float32)
        ids = [e.ids for e in tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out: np.ndarray | None = None
        for start in range(0, len(order), batch):
            chosen = order[start : start + batch]
            width = max(len(ids[i]) for i in chosen)
            tokens = np.zeros((len(chosen), width), dtype=np.int64)
            mask = np.zeros_like(tokens)
            for row, i in enumerate(chosen):
                tokens[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            (values,) = session.run(None, {"input_ids": tokens, "attention_mask": mask})
            values = np.asarray(values)
            if out is None:
                out = np.zeros((len(ids), *values.shape[1:]), dtype=values.dtype)
            out[chosen] = values
        assert out is not None  # texts is not empty
        return out

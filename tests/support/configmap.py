"""A policy directory laid out and updated exactly as the kubelet does for a ConfigMap.

``guardrails.yaml -> ..data/guardrails.yaml``, ``..data -> ..<timestamp>/``; an update
writes a new timestamped directory, points ``..data_tmp`` at it and renames ``..data_tmp``
over ``..data`` (one atomic rename), then removes the old directory.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

FILENAME = "guardrails.yaml"


class ConfigMapDir:
    """A mounted ConfigMap (or Secret: the kubelet updates both the same way) holding one
    file, ``filename``."""

    def __init__(self, root: Path, filename: str = FILENAME) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self.filename = filename
        self._generation = 0

    @property
    def policy_path(self) -> Path:
        return self.root / self.filename

    def write(self, content: str | bytes) -> None:
        self._generation += 1
        stamp = f"..{time.strftime('%Y_%m_%d_%H_%M_%S')}.{os.getpid()}{self._generation:04d}"
        new_dir = self.root / stamp
        new_dir.mkdir()
        data_bytes = content.encode("utf-8") if isinstance(content, str) else content
        (new_dir / self.filename).write_bytes(data_bytes)
        data = self.root / "..data"
        old_target = os.readlink(data) if data.is_symlink() else None
        tmp = self.root / "..data_tmp"
        os.symlink(stamp, tmp)
        os.replace(tmp, data)
        if not self.policy_path.is_symlink():
            os.symlink(f"..data/{self.filename}", self.policy_path)
        if old_target:
            shutil.rmtree(self.root / old_target)

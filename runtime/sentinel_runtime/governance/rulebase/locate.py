"""Where a problem of the ``tools`` section is in the policy file: a line and a column.

:mod:`.build` and :mod:`.checks` name a problem by its path in the section (and an offset inside
a string there, such as a rules block); :class:`Locator` composes the file's YAML once and maps
that to the file's line and column. Without the file's text, the problem keeps its path and its
position within the string.
"""

from __future__ import annotations

import yaml

from sentinel_runtime.governance.rulebase.model import SECTION, Issue, Offset, SectionPath
from sentinel_runtime.guardrails.policy import snake_case


class Locator:
    """Maps a section path (and an offset inside a string) to a line and column."""

    def __init__(self, source: str | None) -> None:
        self.lines: list[str] = []
        self.root: yaml.Node | None = None
        if source is None:
            return
        try:
            document = yaml.compose(source)
        except yaml.YAMLError:
            return
        if not isinstance(document, yaml.MappingNode):
            return
        self.lines = source.splitlines()
        for key, value in document.value:
            if isinstance(key, yaml.ScalarNode) and snake_case(str(key.value)) == SECTION:
                self.root = value

    def node(self, path: SectionPath, key: bool = False) -> yaml.Node | None:
        node = self.root
        for i, step in enumerate(path):
            if isinstance(node, yaml.MappingNode):
                found = None
                for k, v in node.value:
                    name = str(k.value)
                    if name == step or (isinstance(step, str) and snake_case(name) == step):
                        found = k if key and i == len(path) - 1 else v
                        break
                node = found
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
                node = node.value[step] if 0 <= step < len(node.value) else None
            else:
                return None
        return node

    def issue(
        self,
        message: str,
        path: SectionPath,
        offset: Offset | None = None,
        key: bool = False,
    ) -> Issue:
        shown = show_path(path)
        node = self.node(path, key) if self.root is not None else None
        if node is None:
            if offset is None:
                return Issue(message, shown)
            return Issue(message, shown, offset[0], offset[1])
        line, column = node.start_mark.line, node.start_mark.column
        if offset is not None and isinstance(node, yaml.ScalarNode):
            line, column = self._inside(node, offset)
        return Issue(message, shown, line + 1, column + 1, in_file=True)

    def _inside(self, node: yaml.ScalarNode, offset: Offset) -> tuple[int, int]:
        line0, col0 = offset[0] - 1, offset[1] - 1
        mark = node.start_mark
        if node.style == "|":
            indent = 0
            for text in self.lines[mark.line + 1 :]:
                if text.strip():
                    indent = len(text) - len(text.lstrip(" "))
                    break
            return mark.line + 1 + line0, indent + col0
        if node.style in (None, '"', "'") and line0 == 0 and node.end_mark.line == mark.line:
            return mark.line, mark.column + (1 if node.style else 0) + col0
        # A folded or multi-line string: its start is as near as YAML's marks can tell.
        return mark.line, mark.column


def show_path(path: SectionPath) -> str:
    """``("bindings", 1, "extract")`` as ``tools.bindings[1].extract``."""
    out = SECTION
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else f".{step}"
    return out

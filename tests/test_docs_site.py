"""The documentation site builds with `mkdocs build --strict` (a broken link or anchor, a page
missing from the navigation, a nav entry without its page: each a warning, and any warning a
failure), every page under docs/ is in `nav`, and README's links into docs/ reach files."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from support.docs_site import DOCS, README, ROOT, pages

CONFIG = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def _nav_pages(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [name for item in node for name in _nav_pages(item)]
    if isinstance(node, dict):
        return [name for value in node.values() for name in _nav_pages(value)]
    return []


def test_the_site_builds_strict_without_a_warning(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    warnings = [line for line in output.splitlines() if re.match(r"\s*(WARNING|ERROR)\b", line)]
    assert not warnings, output
    assert (tmp_path / "index.html").is_file()
    assert (tmp_path / "getting-started" / "index.html").is_file()


def test_every_page_is_in_the_navigation_and_every_entry_is_a_page() -> None:
    assert CONFIG["docs_dir"] == "docs"
    nav = _nav_pages(CONFIG["nav"])
    on_disk = sorted(str(path.relative_to(DOCS)) for path in pages())
    assert sorted(set(nav)) == on_disk
    assert len(nav) == len(set(nav)), "a page is in the navigation twice"


def test_the_build_fetches_nothing() -> None:
    # Material loads Google Fonts unless told not to; the site must work offline.
    assert CONFIG["theme"]["font"] is False
    assert "analytics" not in CONFIG.get("extra", {})
    plugins = [p if isinstance(p, str) else next(iter(p)) for p in CONFIG.get("plugins", [])]
    assert plugins == ["search"]


def test_the_readme_links_reach_files() -> None:
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert sum(link.startswith("docs/") for link in local) >= 10
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing
    assert len(text.splitlines()) <= 250

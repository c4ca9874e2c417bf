"""values.yaml, values.schema.json and the value table of docs/kubernetes.md describe the same
values; the schema turns a misspelt or ill-typed value into a failed helm command."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.chart import CHART, template, values_file
from support.docs_site import page, section

VALUES_TEXT = (CHART / "values.yaml").read_text(encoding="utf-8")
VALUES = yaml.safe_load(VALUES_TEXT)
SCHEMA = json.loads((CHART / "values.schema.json").read_text(encoding="utf-8"))


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    assert ref.startswith("#/definitions/"), ref
    return resolve(SCHEMA["definitions"][ref.rsplit("/", 1)[-1]])


def closed(node: dict[str, Any]) -> bool:
    """An object whose keys the schema lists (as opposed to a free-form map or a scalar)."""
    return "properties" in node


def value_paths(
    values: Any = VALUES, schema: dict[str, Any] = SCHEMA, prefix: str = ""
) -> Iterator[str]:
    """Each value a user sets: a key path down to a scalar, list or free-form map."""
    for key, value in values.items():
        path = f"{prefix}{key}"
        node = resolve(schema["properties"].get(key, {}))
        if closed(node) and isinstance(value, dict):
            yield from value_paths(value, node, f"{path}.")
        else:
            yield path


def schema_paths(schema: dict[str, Any] = SCHEMA, prefix: str = "") -> Iterator[str]:
    for key, sub in schema["properties"].items():
        node = resolve(sub)
        if closed(node):
            yield from schema_paths(node, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"


def test_schema_is_draft_07_and_closed_at_every_level() -> None:
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-07/schema#"

    def walk(node: dict[str, Any], where: str) -> None:
        node = resolve(node)
        if closed(node):
            assert node.get("additionalProperties") is False, f"{where} is open"
            for key, sub in node["properties"].items():
                walk(sub, f"{where}.{key}")

    walk(SCHEMA, "values")


def test_every_value_is_in_the_schema_and_every_schema_key_in_values_yaml() -> None:
    in_values, in_schema = set(value_paths()), set(schema_paths())
    assert in_values - in_schema == set(), "values.yaml keys missing from values.schema.json"
    assert in_schema - in_values == set(), "values.schema.json keys missing from values.yaml"


def test_values_yaml_satisfies_its_schema() -> None:
    import jsonschema

    jsonschema.Draft7Validator.check_schema(SCHEMA)
    jsonschema.Draft7Validator(SCHEMA).validate(VALUES)


def _key_lines(node: yaml.MappingNode, schema: dict[str, Any], prefix: str) -> Iterator[tuple]:
    for key_node, value_node in node.value:
        key = key_node.value
        sub = resolve(schema["properties"][key])
        if closed(sub) and isinstance(value_node, yaml.MappingNode):
            yield from _key_lines(value_node, sub, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", key_node.start_mark.line


def test_every_value_in_values_yaml_has_a_comment() -> None:
    lines = VALUES_TEXT.splitlines()
    root = yaml.compose(VALUES_TEXT)
    assert isinstance(root, yaml.MappingNode)
    bare = [
        path
        for path, line in _key_lines(root, SCHEMA, "")
        if not lines[line - 1].strip().startswith("#")
    ]
    assert not bare, f"values without a comment right above them in values.yaml: {bare}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ("--set", "imagee.tag=1.0"),
            "at '': additional properties 'imagee' not allowed",
            id="top-level-typo",
        ),
        pytest.param(
            ("--set", "peering.enable=true"),
            "at '/peering': additional properties 'enable' not allowed",
            id="nested-typo",
        ),
        pytest.param(
            ("--set", "image.pullPolicy=Sometimes"),
            "at '/image/pullPolicy': value must be one of 'Always', 'IfNotPresent', 'Never'",
            id="enum",
        ),
        pytest.param(("--set", "replicaCount=-1"), "at '/replicaCount': minimum", id="minimum"),
        pytest.param(("--set-string", "resyncSeconds=often"), "at '/resyncSeconds'", id="type"),
    ],
)
def test_a_wrong_value_fails_helm_with_a_clear_message(args: tuple[str, ...], message: str) -> None:
    result = template(*args, check=False)
    assert result.returncode != 0
    assert "values don't meet the specifications of the schema" in result.stderr
    assert message in result.stderr, result.stderr


def test_a_typo_in_a_values_file_fails_too(tmp_path: Path) -> None:
    path = values_file(tmp_path, {"serviceMonitor": {"enabled": True, "intervall": "10s"}})
    result = template("--values", str(path), check=False)
    assert result.returncode != 0
    assert "additional properties 'intervall' not allowed" in result.stderr, result.stderr


def test_every_value_is_documented_in_the_chart_values_table() -> None:
    table = section(page("kubernetes.md"), "## Chart values")
    missing = [path for path in value_paths() if f"`{path}`" not in table]
    assert not missing, f"values not described under docs/kubernetes.md's 'Chart values': {missing}"

"""The guard-model families: one adapter per model family, and the registry of them.

An adapter (``guard.types.Family``) is two pure functions: ``build`` turns what is judged
into the request its model expects, ``parse`` reads the model's reply into a verdict. Each
family lives in its own module, which says the format it implements and the model card it
comes from: ``llama_guard`` (Llama Guard 3 and 4), ``shieldgemma``, ``granite_guardian``,
``qwen3guard``, ``wildguard``; ``custom_family`` builds one from a policy's template and
patterns. Each family's categories map onto Sentinel's through its data file
(``guard/data/<family>.yaml``, read by ``taxonomy``). Nothing here does I/O beyond reading
those package files.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from sentinel_runtime.guard import types
from sentinel_runtime.guard.families import (
    custom_family,
    granite_guardian,
    llama_guard,
    qwen3guard,
    shieldgemma,
    wildguard,
)

FAMILIES: dict[str, types.Family] = {
    family.name: family
    for family in (
        llama_guard.LLAMA_GUARD_3,
        llama_guard.LLAMA_GUARD_4,
        shieldgemma.SHIELDGEMMA,
        granite_guardian.GRANITE_GUARDIAN,
        qwen3guard.QWEN3GUARD,
        wildguard.WILDGUARD,
    )
}


def get(name: str) -> types.Family:
    """The family called ``name``; KeyError (listing the known names) for any other."""
    try:
        return FAMILIES[name]
    except KeyError:
        known = ", ".join(sorted(FAMILIES))
        raise KeyError(
            f"unknown guard family {name!r}: known families are {known} "
            "(a custom family is built from the policy's template and patterns)"
        ) from None


def custom(
    template: str,
    unsafe_pattern: str,
    categories_pattern: str | None = None,
    *,
    safe_pattern: str | None = None,
    category_map: Mapping[str, str | Sequence[str]] | None = None,
    known_risks: Collection[str] | None = None,
    name: str = custom_family.NAME,
    max_tokens: int = 64,
) -> types.Family:
    """A policy-defined family (see ``custom_family``); ValueError when the template or a
    pattern cannot work, with the policy field it comes from."""
    return custom_family.create(
        template,
        unsafe_pattern,
        categories_pattern,
        safe_pattern=safe_pattern,
        category_map=category_map,
        known_risks=known_risks,
        name=name,
        max_tokens=max_tokens,
    )

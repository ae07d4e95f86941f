"""Locate the files sncc ships beside its code: the grammar and the JSON Schemas.

In a source checkout (and an editable install) they live at the repository's
top level, ``grammar/`` and ``schemas/``; a wheel carries them inside the
package as ``sncc/_grammar/`` and ``sncc/_schemas/`` (see pyproject.toml).
"""

from __future__ import annotations

import functools
from pathlib import Path

_PKG = Path(__file__).resolve().parent


def _find(installed: str, checkout: str, name: str) -> Path:
    for base in (_PKG / installed, _PKG.parent / checkout):
        p = base / name
        if p.is_file():
            return p
    raise FileNotFoundError(f"sncc resource {checkout}/{name} not found (broken installation)")


@functools.lru_cache(maxsize=1)
def grammar_text() -> str:
    """The text of ``sncc.lark``."""
    return _find("_grammar", "grammar", "sncc.lark").read_text(encoding="utf-8")


def schema_path(name: str) -> Path:
    """Path of the JSON Schema ``schemas/<name>.schema.json``."""
    return _find("_schemas", "schemas", f"{name}.schema.json")


@functools.lru_cache(maxsize=None)
def schema(name: str) -> dict:
    """The parsed JSON Schema ``name`` (e.g. ``omni-infer``, ``diagnostics``)."""
    import json

    return json.loads(schema_path(name).read_text(encoding="utf-8"))


def schema_names() -> list[str]:
    """Names of every shipped schema."""
    for base in (_PKG / "_schemas", _PKG.parent / "schemas"):
        if base.is_dir():
            return sorted(p.name[: -len(".schema.json")] for p in base.glob("*.schema.json"))
    return []

"""The registry of issue 10's rule kinds (``rule_kinds.toml`` beside this module): each kind, the
codes that report it and its two public reports with their case plans (tests/cases/).

:func:`kinds` returns the implemented kinds, :func:`open_kinds` those without a check yet (with
the reason).  ``sncc`` reads nothing here at check time; the test suite and the docs do.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from typing import Any, Mapping

try:
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as _toml  # type: ignore[no-redef]


@lru_cache(maxsize=1)
def _registry() -> Mapping[str, Any]:
    return _toml.loads((files("sncc.checks") / "rule_kinds.toml").read_text(encoding="utf-8"))


def kinds() -> list[Mapping[str, Any]]:
    """The implemented rule kinds: ``id``, ``name``, ``codes``, ``build`` and ``test`` (each a
    ``{report, case}``), optional ``awaits``."""
    return list(_registry().get("kinds", ()))


def open_kinds() -> list[Mapping[str, Any]]:
    """Rule kinds of issue 10 without a check: ``id``, ``name``, ``reports``, ``why``."""
    return list(_registry().get("open", ()))

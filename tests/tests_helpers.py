"""Helpers importable from tests in sub-folders (``from tests_helpers import ...``)."""

from __future__ import annotations


def compile_plan(text: str, name: str = "plan.sn"):
    """Compile ``text`` (every phase on demand) as :class:`sncc.compiler.Compilation`."""
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    return compile_file(SourceFile(name, text))

"""Shared test helpers: the repository root, compiling text without the CLI, and the one parser
of inline expectations (``# E: CODE[:COL]`` errors, ``# W: CODE[:COL]`` warnings).

A module of its own (not ``conftest``) so that test folders with their own ``conftest.py``
(e.g. ``tests/conformance/``) never shadow it: import it as ``from expect import ...``."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXPECT = re.compile(r"# E: (SN\d{4})(?::(\d+))?")


def compile_text(text: str, name: str = "plan.sn"):
    """Compile ``text`` and return the :class:`sncc.compiler.Compilation`."""
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    return compile_file(SourceFile(name, text))


def expectations(path: pathlib.Path) -> list[tuple[str, int, int | None]]:
    """Inline ``# E: CODE[:COL]`` expectations of a plan file: (code, line, column)."""
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        for m in EXPECT.finditer(line):
            out.append((m.group(1), i, int(m.group(2)) if m.group(2) else None))
    return out


EXPECT_SEV = re.compile(r"# ([EW]): (SN\d{4})(?::(\d+))?")


def expectations_with_severity(path: pathlib.Path) -> list[tuple[str, str, int, int | None]]:
    """Inline ``# E: CODE[:COL]`` (error) and ``# W: CODE[:COL]`` (warning) expectations:
    (severity, code, line, column)."""
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        for m in EXPECT_SEV.finditer(line):
            sev = "error" if m.group(1) == "E" else "warning"
            out.append((sev, m.group(2), i, int(m.group(3)) if m.group(3) else None))
    return out



"""The pipeline's import rules (docs/design.md §1): checks never import the simulator, the
emitters or lowering; the simulator never imports checks or emitters; the cost model (sncc.cost) and
the workload readers import neither the simulator nor checks; the facts layer imports
none of them; engine kinds are compared only inside ``sncc/engines/``.

Imports are read with ``ast`` (module level and inside functions alike), so a lazy import
breaks the rule as much as a top-level one.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PKG = ROOT / "sncc"

#: package → packages it must not import
FORBIDDEN = {
    "sncc.checks": ("sncc.sim", "sncc.emit", "sncc.lowering"),
    "sncc.sim": ("sncc.checks", "sncc.emit"),
    "sncc.facts": ("sncc.checks", "sncc.sim", "sncc.lowering", "sncc.emit"),
    "sncc.cost": ("sncc.checks", "sncc.sim", "sncc.emit"),
    "sncc.workload": ("sncc.checks", "sncc.sim", "sncc.emit", "sncc.lowering"),
}

#: imports that break a rule today, each to be removed by the work named beside it; the test
#: fails when one is gone (shrink the list) and when a new one appears
KNOWN = {
}


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    return ".".join(rel.parts)


def _imports(path: pathlib.Path) -> set[str]:
    """Modules ``path`` imports (``from X import y`` counts as X), at any depth of the file."""
    parts = _module_name(path).split(".")
    if path.name == "__init__.py":
        parts = parts[:-1]   # a package's __init__ resolves relative imports against the package
    else:
        parts = parts[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = parts[: len(parts) - node.level + 1]
                out.add(".".join(base + ([node.module] if node.module else [])))
            else:
                out.add(node.module or "")
    return out


def _violations() -> set[tuple[str, str]]:
    found = set()
    for path in PKG.rglob("*.py"):
        mod = _module_name(path)
        for src, banned in FORBIDDEN.items():
            if mod != src and not mod.startswith(src + "."):
                continue
            for imp in _imports(path):
                if any(imp == b or imp.startswith(b + ".") for b in banned):
                    found.add((mod, imp))
    return found


def test_no_new_layering_violations():
    new = sorted(v for v in _violations() if v not in KNOWN)
    assert not new, "imports that break docs/design.md §1: " + ", ".join(f"{m} → {i}" for m, i in new)


def test_known_violations_still_exist():
    """Remove an entry from KNOWN when its import is gone, so the list only ever shrinks."""
    gone = sorted(k for k in KNOWN if k not in _violations())
    assert not gone, "no longer imported, remove from KNOWN: " + ", ".join(f"{m} → {i}" for m, i in gone)


_KIND_COMPARE = re.compile(r"""\.kind\s*(==|!=|\bin\b|\bnot in\b)\s*[\("']""")


@pytest.mark.parametrize("folder", ["checks", "facts", "sim"])
def test_engine_kind_not_compared_in(folder):
    """No ``engine.kind == "…"`` in the facts layer (the adapters answer); checks and the
    simulator are held to the same once issue 9 moves their comparisons (counted here, so the
    number can only go down)."""
    hits = []
    for path in (PKG / folder).rglob("*.py"):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _KIND_COMPARE.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{i}")
    limit = {"facts": 0, "checks": CHECKS_KIND_COMPARISONS, "sim": SIM_KIND_COMPARISONS}[folder]
    assert len(hits) <= limit, hits


#: engine-kind comparisons left in checks/ and sim/ today (issue 9 moves them into the adapters)
CHECKS_KIND_COMPARISONS = 0
SIM_KIND_COMPARISONS = 1

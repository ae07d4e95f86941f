"""Only the adapters know engine names: outside ``sncc/engines/`` no code compares an engine kind
with a name (``engine.kind == "omni-infer"``, ``kind in ("vllm", "vllm-ascend")``); it asks the
adapter (:func:`sncc.engines.registry.adapter_for`) instead.

``KNOWN`` counts the comparisons left in modules other developers own, each with the adapter
answer that replaces it; the count may only go down (the test fails when it grows, when a new
module compares, and when a count is stale)."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "sncc"

#: a comparison of a ``.kind`` attribute, or of any value with an engine's name
_COMPARE = re.compile(
    r"""\.kind\s*(?:==|!=|\bnot\s+in\b|\bin\b)\s*[\(\["']"""
    r"""|(?:==|!=)\s*["'](?:vllm|vllm-ascend|omni-infer)["']"""
    r"""|\bin\s*[\(\[]\s*["'](?:vllm|vllm-ascend|omni-infer)["']""")

#: module → comparisons left, with what replaces them (none are left)
KNOWN: dict = {}


def _hits() -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("sncc/engines/"):
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if _COMPARE.search(code) and not re.search(r"\b(?:tok|token|self|q)\.kind", code):
                out.setdefault(rel, []).append(i)
    return out


def test_no_engine_name_comparison_outside_the_adapters():
    hits = _hits()
    new = {f: lines for f, lines in hits.items() if f not in KNOWN}
    assert not new, f"compare engine kinds only inside sncc/engines/ (ask the adapter): {new}"
    grown = {f: (len(hits[f]), KNOWN[f][0]) for f in hits if f in KNOWN and len(hits[f]) > KNOWN[f][0]}
    assert not grown, grown


def test_known_counts_only_shrink():
    hits = _hits()
    stale = {f: (len(hits.get(f, [])), n) for f, (n, _) in KNOWN.items() if len(hits.get(f, [])) < n}
    assert not stale, f"fewer comparisons than KNOWN says: lower the counts {stale}"


def test_the_pattern_catches_the_forms_it_forbids():
    for bad in ('if plan.engine.kind == "omni-infer":', "if eng.kind in ('vllm', 'vllm-ascend'):",
                'omni = engine == "omni-infer"', 'if kind not in ("vllm",):', 'x = kind in ["vllm-ascend"]'):
        assert _COMPARE.search(bad), bad
    for ok in ("adapter = adapter_for(plan.engine.kind)", 'f"{eng.kind} {eng.version}"', 'if tok.kind == "name":'):
        assert not _COMPARE.search(ok) or "tok.kind" in ok, ok

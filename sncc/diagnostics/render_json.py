"""``--format json``: one JSON document, described by ``schemas/diagnostics.schema.json``.

Positions: ``line`` and ``column`` are 1-based and counted in Unicode code
points; ``end`` is exclusive; ``offset`` is the 0-based code-point offset.
"""

from __future__ import annotations

import json

from sncc import __version__
from sncc.diagnostics.model import Diagnostic
from sncc.source import SourceFile, Span

FORMAT_VERSION = "1.2"   # 1.1: optional `error` and `build` (build/simulate --format json); 1.2: `calibrate`


def _range(span: Span, sources: dict[str, SourceFile]) -> dict | None:
    src = sources.get(span.file)
    if src is None:
        return None
    sl, sc = src.line_col(span.start)
    el, ec = src.line_col(span.end)
    return {"start": {"line": sl, "column": sc, "offset": src.clamp(span.start)},
            "end": {"line": el, "column": ec, "offset": src.clamp(span.end)}}


def diagnostic_dict(d: Diagnostic, sources: dict[str, SourceFile]) -> dict:
    """One diagnostic as a JSON-ready dict."""
    return {
        "code": d.code.code,
        "name": d.code.name,
        "severity": d.severity,
        "message": d.message,
        "file": d.span.file if d.span else None,
        "range": _range(d.span, sources) if d.span else None,
        "path": list(d.path),
        "related": [
            {"file": r.span.file, "range": _range(r.span, sources), "message": r.message} for r in d.related
        ],
        "notes": list(d.notes),
        "help": d.help,
        "fixes": [
            {"title": f.title, "applicability": f.applicability,
             "edits": [{"file": e.span.file, "range": _range(e.span, sources), "new_text": e.new_text} for e in f.edits]}
            for f in d.fixes
        ],
        "url": d.code.url,
    }


def document(diags: list[Diagnostic], sources: dict[str, SourceFile], files: int) -> dict:
    """The whole ``--format json`` document."""
    errors = sum(d.severity == "error" for d in diags)
    return {
        "$schema": "https://sncc.dev/schemas/diagnostics.schema.json",
        "format_version": FORMAT_VERSION,
        "tool": {"name": "sncc", "version": __version__},
        "position_encoding": {"line_base": 1, "column_base": 1, "column_unit": "unicode-code-point", "end": "exclusive"},
        "summary": {
            "files": files,
            "errors": errors,
            "warnings": sum(d.severity == "warning" for d in diags),
            "infos": sum(d.severity in ("info", "hint") for d in diags),
            "valid": errors == 0,
        },
        "diagnostics": [diagnostic_dict(d, sources) for d in diags],
    }


def render(diags: list[Diagnostic], sources: dict[str, SourceFile], files: int) -> str:
    """Serialise :func:`document` (sorted keys off, 2-space indent, trailing newline)."""
    return json.dumps(document(diags, sources, files), indent=2, ensure_ascii=False) + "\n"

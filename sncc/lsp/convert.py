"""Check one editor buffer and turn sncc diagnostics into LSP diagnostics.

:func:`check_document` is what the server runs on open, change and save (and
what ``bench/bench_check.py`` times).  Positions are converted only through
:meth:`sncc.source.SourceFile.lsp_position` (0-based line, UTF-16 column); the
server forces the UTF-16 position encoding, which every client supports.

Mapping (as ruff-lsp did it, ``diagnostics-ux.md`` §4.2):

* severity: error → 1, warning → 2, info → 3, hint → 4;
* ``code`` = ``SN3001``, ``codeDescription.href`` = the code's documentation URL;
* ``relatedInformation`` from :attr:`Diagnostic.related` (in any file);
* ``data`` = ``{"fixes": [...]}`` with every edit already in LSP coordinates,
  for ``textDocument/codeAction``;
* a diagnostic located in an *imported* file is shown on this file's
  ``import`` statement that brought the file in, with the real location as
  related information.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from lsprotocol import types

from sncc.source import SourceFile, Span

SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}

#: ``source`` field of every published diagnostic
SOURCE = "sncc"


@dataclass
class Checked:
    """One checked buffer: its source, the compilation (None when it crashed)
    and the LSP diagnostics to publish."""

    uri: str
    source: SourceFile
    comp: object | None
    diagnostics: list[types.Diagnostic] = field(default_factory=list)


def path_to_uri(path: str) -> str:
    """``file://`` URI of a file-system path (made absolute)."""
    return Path(os.path.abspath(path)).as_uri()


def lsp_range(src: SourceFile, span: Span | None) -> types.Range:
    """The LSP range of ``span`` in ``src`` (0:0 for None)."""
    if span is None:
        return types.Range(types.Position(0, 0), types.Position(0, 0))
    sl, sc = src.lsp_position(span.start)
    el, ec = src.lsp_position(span.end)
    return types.Range(types.Position(sl, sc), types.Position(el, ec))


def _compilation(source: SourceFile, reader: Callable[[str], str] | None):
    from sncc.compiler import Compilation, compile_file

    if reader is not None and "reader" in inspect.signature(Compilation.__init__).parameters:
        return Compilation(source, reader=reader)
    return compile_file(source)


def _suppress(diags, sources, complete: bool):
    """Apply ``# sncc: ignore[CODE] reason`` comments exactly as ``sncc check`` does."""
    try:
        from sncc.diagnostics.filters import apply_suppressions
    except ImportError:  # pragma: no cover - older tree without suppressions
        return diags
    return apply_suppressions(diags, sources, report_unused=complete)


def check_document(uri: str, path: str, text: str, reader: Callable[[str], str] | None = None) -> Checked:
    """Compile ``text`` (the buffer of ``uri``, named ``path``) up to the checks.

    ``reader(path) -> str`` reads imported files (the server passes one that
    prefers open editor buffers).  Never raises: any exception becomes an
    SN9001 diagnostic at the start of the file.
    """
    from sncc.compiler import internal_error

    src = SourceFile(path, text)
    try:
        comp = _compilation(src, reader)
        diags = comp.diagnostics
    except Exception as exc:  # noqa: BLE001 - the server must never die on input
        comp, diags = None, [internal_error(src, exc)]
    sources = {src.name: src}
    if comp is not None:
        try:
            sources.update(getattr(comp, "sources", {}) or {})
            diags = _suppress(diags, sources, complete=comp.plan is not None)
            from sncc.build import still_blocking

            diags = sorted(diags + still_blocking(comp, diags), key=lambda d: d.sort_key())
        except Exception as exc:  # noqa: BLE001
            diags = list(diags) + [internal_error(src, exc)]
    out = []
    for d in diags:
        try:
            out.append(to_lsp(d, src, uri, sources))
        except Exception as exc:  # noqa: BLE001
            out.append(to_lsp(internal_error(src, exc), src, uri, sources))
    return Checked(uri, src, comp, out)


def _location(span: Span, root: SourceFile, uri: str, sources: dict[str, SourceFile]) -> types.Location | None:
    if span.file == root.name:
        return types.Location(uri, lsp_range(root, span))
    other = sources.get(span.file)
    if other is None:
        return None
    return types.Location(path_to_uri(span.file), lsp_range(other, span))


def to_lsp(d, src: SourceFile, uri: str, sources: dict[str, SourceFile] | None = None) -> types.Diagnostic:
    """Convert one :class:`sncc.diagnostics.model.Diagnostic` for the buffer ``src`` at ``uri``."""
    sources = sources or {src.name: src}
    message = d.message
    related = []
    span = d.span
    if span is not None and span.file != src.name:
        # located in an imported file: show it on our import statement
        where = _location(span, src, uri, sources)
        if where is not None:
            related.append(types.DiagnosticRelatedInformation(where, "the problem is here"))
        anchor = next((r.span for r in reversed(d.related) if r.span.file == src.name), None)
        message = f"in `{span.file}`: {message}"
        span = anchor
    for r in d.related:
        loc = _location(r.span, src, uri, sources)
        if loc is not None:
            related.append(types.DiagnosticRelatedInformation(loc, r.message))
    text = message
    if d.notes:
        text += "".join(f"\nnote: {n}" for n in d.notes)
    if d.help:
        text += f"\nhelp: {d.help}"
    fixes = []
    for fx in d.fixes:
        edits = []
        for e in fx.edits:
            owner = src if e.span.file == src.name else sources.get(e.span.file)
            if owner is None:
                break
            r = lsp_range(owner, e.span)
            edits.append({
                "uri": uri if owner is src else path_to_uri(e.span.file),
                "range": {"start": {"line": r.start.line, "character": r.start.character},
                          "end": {"line": r.end.line, "character": r.end.character}},
                "newText": e.new_text,
            })
        else:
            fixes.append({"title": fx.title, "applicability": fx.applicability, "edits": edits})
    return types.Diagnostic(
        range=lsp_range(src, span),
        message=text,
        severity=SEVERITY.get(d.severity, types.DiagnosticSeverity.Error),
        code=d.code.code,
        code_description=types.CodeDescription(href=d.code.url),
        source=SOURCE,
        related_information=related or None,
        data={"fixes": fixes, "name": d.code.name} if fixes else {"name": d.code.name},
    )

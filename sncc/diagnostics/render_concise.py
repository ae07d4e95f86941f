"""``--format concise``: one line per diagnostic, for grep, editors' error
formats (vim ``errorformat``, Emacs ``compile``) and pre-commit logs::

    examples/broken/tp-ep-mismatch.sn:19:38: error[SN3001] `decode`: tp × ep × pp = …

``line`` and ``col`` are 1-based, the column counted in Unicode code points
(:meth:`sncc.source.SourceFile.line_col`).  A diagnostic without a location
prints ``sncc:`` in place of ``file:line:col``.  The last line is the summary
of the text format (``1 error, 1 warning in 2 files``).
"""

from __future__ import annotations

from sncc.diagnostics.model import Diagnostic
from sncc.diagnostics.render_text import summary_line
from sncc.source import SourceFile


def location(d: Diagnostic, sources: dict[str, SourceFile]) -> str:
    """``file:line:col`` of ``d``'s primary span (``file`` alone when the file is unknown, ``sncc`` without a span)."""
    if d.span is None:
        return "sncc"
    src = sources.get(d.span.file)
    if src is None:
        return d.span.file
    line, col = src.line_col(d.span.start)
    return f"{d.span.file}:{line}:{col}"


def render_one(d: Diagnostic, sources: dict[str, SourceFile]) -> str:
    """One diagnostic on one line (line breaks in the message become spaces)."""
    message = " ".join(d.message.splitlines())
    return f"{location(d, sources)}: {d.severity}[{d.code.code}] {message}"


def render(diags: list[Diagnostic], sources: dict[str, SourceFile], files: int) -> str:
    """Every diagnostic on its own line, then the summary line."""
    return "".join(render_one(d, sources) + "\n" for d in diags) + summary_line(diags, files) + "\n"

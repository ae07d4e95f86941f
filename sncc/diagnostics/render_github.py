"""``--format github``: GitHub Actions workflow commands, shown as annotations
on the pull request's diff::

    ::error file=plan.sn,line=19,endLine=19,col=38,endColumn=40,title=SN3001 parallel-size-mismatch::`decode`: …

Conventions (actions/toolkit ``packages/core/src/command.ts``):

* severities map to ``error``, ``warning`` and ``notice`` (info and hint);
* ``line``/``col`` are 1-based, columns in Unicode code points (from
  :meth:`sncc.source.SourceFile.line_col`), ``endColumn`` exclusive as in the
  other formats; ``col`` and ``endColumn`` are written only when the span
  starts and ends on the same line (GitHub ignores them otherwise);
* escaping: in the message ``%`` → ``%25``, CR → ``%0D``, LF → ``%0A``; in
  property values additionally ``:`` → ``%3A`` and ``,`` → ``%2C``.

The message is the diagnostic's message followed by its related locations,
notes and help, one per line.  GitHub shows at most 10 annotations of each
severity per step, so errors come first, then warnings, then notices (stable
within a severity).  The last line is the plain summary, not a command.
"""

from __future__ import annotations

from sncc.diagnostics.model import SEVERITY_RANK, Diagnostic
from sncc.diagnostics.render_text import summary_line
from sncc.source import SourceFile

COMMAND = {"error": "error", "warning": "warning", "info": "notice", "hint": "notice"}


def escape_data(text: str) -> str:
    """Escape a workflow command's message (``%``, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value (``%``, CR, LF, ``:``, ``,``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_one(d: Diagnostic, sources: dict[str, SourceFile]) -> str:
    """One diagnostic as one workflow command line."""
    props: list[tuple[str, str]] = []
    src = sources.get(d.span.file) if d.span else None
    if d.span is not None:
        props.append(("file", d.span.file))
    if d.span is not None and src is not None:
        line, col = src.line_col(d.span.start)
        end_line, end_col = src.line_col(d.span.end)
        props += [("line", str(line)), ("endLine", str(end_line))]
        if line == end_line:
            props += [("col", str(col)), ("endColumn", str(max(end_col, col + 1)))]
    props.append(("title", f"{d.code.code} {d.code.name}"))
    body = [d.message]
    for r in d.related:
        body.append(f"{location_of(r.span, sources)}: {r.message}")
    body += [f"note: {n}" for n in d.notes]
    if d.help:
        body.append(f"help: {d.help}")
    prop_text = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::{COMMAND.get(d.severity, 'notice')} {prop_text}::{escape_data(chr(10).join(body))}"


def location_of(span, sources: dict[str, SourceFile]) -> str:
    """``file:line:col`` of a span (``file`` alone when its source is unknown)."""
    src = sources.get(span.file)
    if src is None:
        return span.file
    line, col = src.line_col(span.start)
    return f"{span.file}:{line}:{col}"


def render(diags: list[Diagnostic], sources: dict[str, SourceFile], files: int) -> str:
    """Every diagnostic as a workflow command, most severe first, then the summary line."""
    ordered = sorted(diags, key=lambda d: SEVERITY_RANK.get(d.severity, 9))
    return "".join(render_one(d, sources) + "\n" for d in ordered) + summary_line(diags, files) + "\n"

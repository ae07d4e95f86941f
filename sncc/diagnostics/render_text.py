"""rustc-style text rendering of diagnostics::

    error[SN3001]: `decode`: tp × ep × pp = 8 × 4 × 1 = 32, but each instance has 64 devices
      --> plan.sn:12:25
       |
    12 |   decode { devices = 64  tp = 8  ep = 4 }
       |                      ^^ 
       |
       = help: with tp = 8, use ep = 8, or set devices = 32

Tabs are expanded to 4 columns on both the source and the caret line.
"""

from __future__ import annotations

from sncc.diagnostics.model import Diagnostic
from sncc.diagnostics.secrets import mask
from sncc.source import SourceFile, Span

TAB = 4


def _style(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


_SEV_COLOR = {"error": "1;31", "warning": "1;33", "info": "1;36", "hint": "1;36"}


def _width(text: str) -> int:
    """Terminal columns of ``text``: East Asian wide/full-width characters and
    most emoji take two columns, combining marks none."""
    if text.isascii():
        return len(text)  # (unicodedata, a large table, is loaded only for other text)
    import unicodedata

    w = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return w


_CONTROL = {c: "\ufffd" for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)] if c != 0x09}


def _visible(text: str) -> str:
    """``text`` with control characters (a binary file's bytes, escape sequences) shown as U+FFFD,
    one character each so that the caret still lines up; tabs are kept (expanded later)."""
    return text.translate(_CONTROL) if not text.isprintable() else text


def _snippet(src: SourceFile, span: Span, label: str, color: bool, mark: str = "^", gutter: int = 0) -> list[str]:
    line, col = src.line_col(span.start)
    end_line, end_col = src.line_col(span.end)
    raw = _visible(mask(src.line_text(line)))  # a credential in the plan is never printed (SN2007 or not)
    # expand tabs in the code-point prefix first, so the caret lines up with the shown line
    before = raw[: col - 1].expandtabs(TAB)
    upto_end = raw[: end_col - 1].expandtabs(TAB) if end_line == line else raw.expandtabs(TAB)
    shown = raw.expandtabs(TAB)
    pad = _width(before)
    width = max(1, _width(upto_end) - pad)
    gutter = max(gutter, len(str(line)))
    if len(shown) > 200:
        start = max(0, len(before) - 80)
        shown = "…" + shown[start : start + 160] + "…"
        pad = _width(before[start:]) + 1
        width = min(width, 160)
    bar = _style("|", "1;34", color)
    return [
        f"{' ' * gutter} {bar}",
        f"{_style(str(line).rjust(gutter), '1;34', color)} {bar} {shown}",
        f"{' ' * gutter} {bar} {' ' * pad}{_style(mark * width, _SEV_COLOR['error'] if mark == '^' else '1;34', color)}"
        + (f" {label}" if label else ""),
    ]


def render_one(d: Diagnostic, sources: dict[str, SourceFile], color: bool = False) -> str:
    """Render one diagnostic as text (several lines, no trailing newline)."""
    sev = _style(f"{d.severity}[{d.code.code}]", _SEV_COLOR.get(d.severity, "1"), color)
    lines = [f"{sev}: {_style(d.message, '1', color)}"]
    src = sources.get(d.span.file) if d.span else None
    spans = ([d.span] if d.span else []) + [r.span for r in d.related]
    gutter = max([len(str(sources[s.file].line_col(s.start)[0])) for s in spans if s.file in sources] or [1])
    # rustc's margins: `-->` ends, and `= note` starts, at the column of the snippet's `|`
    shown = any(s.file in sources for s in spans)
    arrow, eq = (" " * gutter, " " * (gutter + 1)) if shown else ("  ", "   ")
    if d.span is not None and src is not None:
        line, col = src.line_col(d.span.start)
        lines.append(f"{arrow}--> {d.span.file}:{line}:{col}")
        lines += _snippet(src, d.span, "", color, gutter=gutter)
    elif d.span is not None:
        lines.append(f"{arrow}--> {d.span.file}")
    for rel in d.related:
        rsrc = sources.get(rel.span.file)
        if rsrc is None:
            continue
        rl, rc = rsrc.line_col(rel.span.start)
        lines.append(f"{arrow}::: {rel.span.file}:{rl}:{rc}")
        lines += _snippet(rsrc, rel.span, rel.message, color, mark="-", gutter=gutter)
    for note in d.notes:
        lines.append(f"{eq}= note: {note}")
    if d.help:
        lines.append(f"{eq}= {_style('help', '1', color)}: {d.help}")
    return "\n".join(lines)


def summary_line(diags: list[Diagnostic], files: int) -> str:
    """``2 errors, 1 warning in 3 files`` (or ``no problems in 3 files``)."""
    e = sum(d.severity == "error" for d in diags)
    w = sum(d.severity == "warning" for d in diags)
    fs = f"{files} file{'s' if files != 1 else ''}"
    if not e and not w:
        return f"no problems in {fs}"
    parts = []
    if e:
        parts.append(f"{e} error{'s' if e != 1 else ''}")
    if w:
        parts.append(f"{w} warning{'s' if w != 1 else ''}")
    return ", ".join(parts) + f" in {fs}"


#: info diagnostics of one code shown in full; the rest are counted in one line (errors and warnings
#: are always shown).  A plan with thousands of unread ``env`` entries (SN4044) would otherwise print
#: thousands of blocks; ``--format json`` / ``sarif`` carry every one.
INFO_PER_CODE = 10


def render(diags: list[Diagnostic], sources: dict[str, SourceFile], files: int, color: bool = False) -> str:
    """The diagnostics, a blank line between each, then the summary line.  Errors and warnings are
    all shown; of each info code the first :data:`INFO_PER_CODE`, then one line counting the rest."""
    blocks: list[str] = []
    shown: dict[str, int] = {}
    for d in diags:
        if d.severity == "info":
            n = shown[d.code.code] = shown.get(d.code.code, 0) + 1
            if n > INFO_PER_CODE:
                continue
        blocks.append(render_one(d, sources, color))
    for code, n in shown.items():
        if n > INFO_PER_CODE:
            more = n - INFO_PER_CODE
            blocks.append(f"{_style(f'info[{code}]', _SEV_COLOR['info'], color)}: {more:,} more like the above, not shown "
                          "(--format json or sarif lists every diagnostic)")
    return "\n\n".join(blocks + [summary_line(diags, files)]) + "\n"

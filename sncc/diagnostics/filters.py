"""Which diagnostics a run reports: ``--select``/``--ignore`` and inline suppressions.

``--select``/``--ignore`` (:func:`parse_selectors`, :func:`select`) take codes
(``SN4008``), code prefixes (``SN4``, ``SN40``) or names
(``kv-cache-overcommitted``), comma-separated and repeatable.

An inline suppression is a comment::

    decode { max_num_seqs = 256 }  # sncc: ignore[SN4008] replayed trace: p99 prompt 6k

It names one or more codes (or names), comma-separated, and must give a
reason after the brackets.  On a line with code it covers that line; alone
on its line it covers the next line that is not itself only a comment.  When
a block opens on the covered line (``decode {``), the whole block is covered,
to its closing brace — so a suppression keeps its meaning when ``sncc fmt``
expands a one-line block (it moves the comment to the block's header line).
A diagnostic is covered when its primary span starts on a covered line.
Malformed suppressions (no reason, unknown code, a code that cannot be
suppressed, not of the ``ignore[...]`` form) are reported as SN1005
``invalid-suppression`` and suppress nothing they cannot name; a well-formed
suppression whose code is not reported on its line is SN1006
``unused-suppression``.  Syntax (SN1xxx) and internal (SN9xxx) diagnostics
cannot be suppressed.

Comments are not in the syntax tree, so :func:`scan_comments` finds them in
the text with a small scan that skips string literals exactly as the lexer
does (``"`` … unescaped ``"``, never across a line break); the formatter
(:mod:`sncc.fmt`) uses the same scan.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sncc.diagnostics import codes
from sncc.diagnostics.model import Diagnostic, Edit, Fix, diag
from sncc.source import SourceFile

#: Code groups whose diagnostics no comment can suppress (syntax, internal).
UNSUPPRESSIBLE_PREFIXES = ("SN1", "SN9")

#: Codes ``--select``/``--ignore`` never filter out: the file could not be read
#: or parsed (SN1001–SN1004), so nothing else about it was checked; hiding them
#: would report a file that does not parse as clean.  SN9xxx (internal) too.
UNFILTERED_CODES = frozenset({codes.SYNTAX_ERROR.code, codes.UNEXPECTED_CHARACTER.code,
                              codes.UNCLOSED_BLOCK.code, codes.INVALID_ENCODING.code})

_SNCC_COMMENT = re.compile(r"#\s*sncc\s*:", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*sncc\s*:\s*ignore\s*\[(?P<codes>[^\]]*)\](?P<reason>.*)\Z", re.IGNORECASE | re.DOTALL)
_PREFIX = re.compile(r"SN\d{0,4}\Z")


# --- comments ------------------------------------------------------------------


@dataclass(frozen=True)
class Comment:
    """A ``#`` comment: ``text[start:end]`` of its source, without the line break."""

    start: int
    end: int
    text: str


def scan_comments(text: str) -> list[Comment]:
    """Every ``#`` comment of ``text`` outside string literals, in order.

    Mirrors the grammar's terminals: a string starts at ``"`` and ends at the
    next unescaped ``"`` or at the end of the line (where the lexer would
    report an error); a comment runs from ``#`` to the end of the line
    (a trailing ``\\r`` is not part of it).  Never raises.
    """
    out: list[Comment] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            j = i
            while j < n and text[j] not in "\r\n":
                j += 1
            out.append(Comment(i, j, text[i:j]))
            i = j
            continue
        if c == '"':
            i += 1
            while i < n and text[i] not in '"\r\n':
                i += 2 if text[i] == "\\" and i + 1 < n and text[i + 1] not in "\r\n" else 1
        i += 1
    return out


# --- --select / --ignore ---------------------------------------------------------


class SelectorError(ValueError):
    """A ``--select``/``--ignore`` value names no code; ``str(e)`` is one line."""


def parse_selectors(values: Iterable[str]) -> frozenset[str]:
    """Resolve ``--select``/``--ignore`` values to a set of registered codes.

    Each value may hold several comma-separated items; an item is a code
    (``SN4008``, any case), a code prefix (``SN4``: every SN4xxx code) or a
    kebab-case name.  Raises :class:`SelectorError` for an item that matches
    no registered code (with a close match when there is one) and for a value
    that names nothing (``--select ''``: it would select no code at all).
    """
    out: set[str] = set()
    for value in values:
        if not any(item.strip() for item in value.split(",")):
            raise SelectorError(f"'{value}' names no code (an empty selector would select nothing); "
                                  "give codes, code prefixes (SN4) or names")
        for item in value.split(","):
            item = item.strip()
            if not item:
                continue
            ec = codes.lookup(item)
            if ec is not None:
                out.add(ec.code)
                continue
            if _PREFIX.match(item.upper()):
                matched = {c for c in codes.REGISTRY if c.startswith(item.upper())}
                if matched:
                    out |= matched
                    continue
            import difflib

            close = difflib.get_close_matches(item.lower(), list(codes.BY_NAME), n=1, cutoff=0.75)
            hint = f"; did you mean `{close[0]}`?" if close else "; see `sncc explain CODE` or docs/codes.md"
            raise SelectorError(f"`{item}` is not a code, code prefix or code name{hint}")
    return frozenset(out)


def select(diags: Iterable[Diagnostic], selected: frozenset[str] | None, ignored: frozenset[str]) -> list[Diagnostic]:
    """Keep the diagnostics whose code is in ``selected`` (all when None) and not in ``ignored``.

    Internal errors (SN9xxx) and the errors saying the file could not be read
    or parsed (:data:`UNFILTERED_CODES`) are always kept: they mean nothing
    else was checked.
    """
    out = []
    for d in diags:
        code = d.code.code
        if code.startswith("SN9") or code in UNFILTERED_CODES or ((selected is None or code in selected) and code not in ignored):
            out.append(d)
    return out


# --- inline suppressions -----------------------------------------------------------


@dataclass
class _Suppression:
    comment: Comment
    line: int | None  # the covered line (1-based), None when it covers nothing
    items: list[tuple[str, int, int]]  # (code, start, end) of each valid code in the comment
    used: set[str]
    last: int | None = None  # last covered line: the closing line of a block opened on ``line``
    end: int | None = None  # offset just past the last closing brace of the blocks opened on ``line``

    def covers(self, src: SourceFile, offset: int) -> bool:
        """True when ``offset`` lies on the covered line or inside a block opened there (up to
        its closing brace: an item after the ``}`` on the closing line is not covered)."""
        if self.line is None:
            return False
        line = src.line_col(offset)[0]
        return line == self.line or (self.line < line <= self.last and self.end is not None and offset < self.end)


def block_ends(text: str, src: SourceFile) -> dict[int, int]:
    """For each line that opens a block (``{`` outside strings and comments),
    the offset just past the last closing brace of the blocks opened on it."""
    out: dict[int, int] = {}
    stack: list[int] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            while i < n and text[i] not in "\r\n":
                i += 1
            continue
        if c == '"':
            i += 1
            while i < n and text[i] not in '"\r\n':
                i += 2 if text[i] == "\\" and i + 1 < n and text[i + 1] not in "\r\n" else 1
        elif c == "{":
            stack.append(src.line_col(i)[0])
        elif c == "}" and stack:
            opened = stack.pop()
            out[opened] = max(out.get(opened, 0), i + 1)
        i += 1
    return out


def _covered_line(src: SourceFile, comment: Comment) -> int | None:
    line, col = src.line_col(comment.start)
    if src.line_text(line)[: col - 1].strip(" \t\f\v\ufeff;,"):  # code before it (separators alone are not)
        return line
    for nxt in range(line + 1, src.line_count + 1):
        stripped = src.line_text(nxt).strip()
        if not stripped:
            return None
        code = stripped.strip(" \t\f\v;,")   # a line of separators alone is no item: fmt drops it
        if code and not code.startswith("#"):
            return nxt
    return None


def suppression_lines(src: SourceFile) -> set[int]:
    """The 1-based lines that a ``# sncc: ...`` comment of ``src`` covers (well-formed or not).

    The formatter (:mod:`sncc.fmt`) keeps the items that start on such a line
    together on one line, so formatting never changes what a suppression covers.
    Never raises.
    """
    out = set()
    for c in scan_comments(src.text):
        if _SNCC_COMMENT.match(c.text):
            line = _covered_line(src, c)
            if line is not None:
                out.add(line)
    return out


def is_suppression(comment: Comment) -> bool:
    """True for a ``# sncc: ...`` comment (well-formed or not)."""
    return bool(_SNCC_COMMENT.match(comment.text))


def suppression_ranges(src: SourceFile) -> list[tuple[int | None, int | None, int | None]]:
    """``(first, last, end)`` of each ``# sncc: ...`` comment of ``src``, in file order: the
    1-based line it covers (:func:`_covered_line`), the closing line of the blocks opened
    there, and the offset just past their last ``}`` (None without a block); an offset is
    covered on ``first``, or on a later line up to ``last`` before ``end``.  ``(None, None,
    None)`` for a comment that covers nothing.  Never raises."""
    out: list[tuple[int | None, int | None, int | None]] = []
    ends: dict[int, int] | None = None
    for c in scan_comments(src.text):
        if not _SNCC_COMMENT.match(c.text):
            continue
        line = _covered_line(src, c)
        if line is None:
            out.append((None, None, None))
            continue
        if ends is None:
            ends = block_ends(src.text, src)
        end = ends.get(line)
        out.append((line, line if end is None else max(line, src.line_col(end - 1)[0]), end))
    return out


def _removal(src: SourceFile, comment: Comment) -> Edit:
    """The edit deleting ``comment`` (with the blanks before it, or its whole line)."""
    line, col = src.line_col(comment.start)
    line_start = comment.start - (col - 1)
    before = src.text[line_start : comment.start]
    if before.strip():
        return Edit(src.span(line_start + len(before.rstrip()), comment.end), "")
    end = comment.end
    if src.text.startswith("\r\n", end):
        end += 2
    elif end < len(src.text) and src.text[end] in "\r\n":
        end += 1
    return Edit(src.span(line_start, end), "")


def _parse_suppressions(src: SourceFile, problems: list[Diagnostic]) -> list[_Suppression]:
    out = []
    ends: dict[int, int] | None = None
    for c in scan_comments(src.text):
        if not _SNCC_COMMENT.match(c.text):
            continue
        span = src.span(c.start, c.end)
        m = _IGNORE.match(c.text)
        if m is None:
            problems.append(diag(codes.INVALID_SUPPRESSION, "malformed suppression comment", span,
                                 help="write `# sncc: ignore[CODE] reason`"))
            continue
        items: list[tuple[str, int, int]] = []
        base = c.start + m.start("codes")
        pos = 0
        raw = m.group("codes")
        for part in raw.split(","):
            start = base + pos + (len(part) - len(part.lstrip()))
            pos += len(part) + 1
            name = part.strip()
            if not name:
                continue
            ispan = src.span(start, start + len(name))
            ec = codes.lookup(name)
            if ec is None:
                import difflib

                close = difflib.get_close_matches(name.lower(), list(codes.BY_NAME), n=1, cutoff=0.75)
                problems.append(diag(codes.INVALID_SUPPRESSION, f"unknown code `{name}` in suppression", ispan,
                                     help=f"did you mean `{close[0]}`?" if close else "codes are listed by `sncc explain` and in docs/codes.md"))
            elif ec.code.startswith(UNSUPPRESSIBLE_PREFIXES):
                problems.append(diag(codes.INVALID_SUPPRESSION, f"`{ec.code}` ({ec.name}) cannot be suppressed", ispan,
                                     help="syntax and internal errors must be fixed, not suppressed"))
            else:
                items.append((ec.code, ispan.start, ispan.end))
        if not raw.strip():
            problems.append(diag(codes.INVALID_SUPPRESSION, "suppression names no code", span,
                                 help="name the code in the brackets: `# sncc: ignore[SN4008] reason`"))
            continue
        reason = m.group("reason").strip().lstrip(":-–— \t").strip()
        if not reason:
            shown = ", ".join(code for code, _, _ in items) or raw.strip()
            problems.append(diag(codes.INVALID_SUPPRESSION, f"suppression of `{shown}` gives no reason", span,
                                 help=f"say why after the brackets: `# sncc: ignore[{shown}] <reason>`"))
            continue
        if items:
            line = _covered_line(src, c)
            if line is not None and ends is None:
                ends = block_ends(src.text, src)
            end = ends.get(line) if line is not None else None
            last = (line if end is None else max(line, src.line_col(end - 1)[0])) if line is not None else None
            out.append(_Suppression(c, line, items, set(), last, end))
    return out


def apply_suppressions(diags: Iterable[Diagnostic], sources: dict[str, SourceFile], *,
                       report_unused: bool = True) -> list[Diagnostic]:
    """Drop the diagnostics covered by a valid ``# sncc: ignore[...]`` comment.

    ``sources`` are the files whose comments count (the files of one
    compilation).  Returns the remaining diagnostics plus SN1005 for every
    malformed suppression and, when ``report_unused`` (pass False when the
    checks could not run, e.g. after a syntax error), SN1006 for every code of
    a suppression that covered nothing; sorted by file, offset and code.
    """
    problems: list[Diagnostic] = []
    by_file: dict[str, list[_Suppression]] = {}
    all_sups: list[tuple[SourceFile, _Suppression]] = []
    for name, src in sources.items():
        sups = _parse_suppressions(src, problems)
        all_sups += [(src, s) for s in sups]
        by_file[name] = [s for s in sups if s.line is not None]
    kept: list[Diagnostic] = []
    for d in diags:
        code = d.code.code
        if d.span is None or code.startswith(UNSUPPRESSIBLE_PREFIXES) or d.span.file not in by_file:
            kept.append(d)
            continue
        src = sources[d.span.file]
        hits = [s for s in by_file[d.span.file]
                if any(c == code for c, _, _ in s.items) and s.covers(src, d.span.start)]
        for s in hits:
            s.used.add(code)
        if not hits:
            kept.append(d)
    if report_unused:
        for src, s in all_sups:
            unused = [(c, a, b) for c, a, b in s.items if c not in s.used]
            for c, a, b in unused:
                where = ("no line (a blank line follows the comment)" if s.line is None else
                         f"line {s.line}" if s.last == s.line else f"lines {s.line}–{s.last} (the block opened on line {s.line})")
                fixes = (Fix("remove the suppression comment", (_removal(src, s.comment),), "safe"),) if len(unused) == len(s.items) else ()
                problems.append(diag(codes.UNUSED_SUPPRESSION, f"`{c}` is not reported on the line this suppression covers",
                                     src.span(a, b), notes=(f"the comment covers {where}",),
                                     help="remove the code from the comment, or move the comment to the line it is meant for",
                                     fixes=fixes))
    if problems:   # SN1005/SN1006: the path of the comment's position (the block it is written in)
        from sncc.syntax.paths import with_paths

        problems = with_paths(problems, sources)
    return sorted(kept + problems, key=Diagnostic.sort_key)

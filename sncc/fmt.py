"""``sncc fmt``: the canonical layout of a plan file, keeping every comment.

The layout:

* two-space indentation, one item per line, ``key = value`` and
  ``key < value`` with single spaces, separators (``;`` ``,``) dropped;
* a block with no items and no comments stays ``name "label" {}``;
* a blank line between top-level items of the file when one of them is a
  block or the last import, and between the items of a top-level block when
  one of them is a block (the blocks of a plan); elsewhere one blank line is
  kept where the source had at least one, none at the start or end of a
  block;
* values as written (numbers and quantities keep their text: ``3.5k`` stays
  ``3.5k``), strings re-quoted canonically (``\\\\ \\" \\n \\r \\t`` escaped,
  everything else literal), lists ``[a, b]``, calls ``env("NAME")``;
* comments: a comment on its own line stays on its own line before the item
  that follows it; a comment after an item, a ``{`` or a ``}`` on the same
  line stays there, two spaces after it, except that the comment after a
  block written on one line goes on the expanded block's header line (so an
  inline suppression keeps covering the whole block); a comment inside an item (between
  a key and its value, or inside a list) moves to its own line before the
  item; a trailing comment's text is kept except for trailing blanks;
* line breaks: ``\\r\\n`` when the file's first line break is ``\\r\\n``,
  else ``\\n``; a byte-order mark is kept; the file ends with one line break.

Suppressions: the items that start on a line a ``# sncc: ...`` comment
covers (:func:`sncc.diagnostics.filters.suppression_lines`: the comment's own
line, or the next line for a comment alone on its line) stay together on one
line (``tp = 1  ep = 64  # sncc: ignore[...] ...``, two spaces between them; a
block written on that line stays written on one line, except the last item's,
which is laid out as usual), so formatting never changes which diagnostics a
suppression covers (tested over every example and test case).

Formatting needs a file that parses: :func:`format_source` raises
:class:`FormatRefused` with the syntax diagnostics otherwise.  Comments come
from :func:`sncc.diagnostics.filters.scan_comments` (the same scan the
suppressions use; the AST carries no comments).  The output parses to the same
typed plan (tested over every example) and formatting it again changes
nothing.
"""

from __future__ import annotations

import difflib

from sncc.atomic_file import write_atomically  # noqa: F401  (re-exported for the fmt command)
from sncc.diagnostics.filters import Comment, scan_comments, suppression_lines
from sncc.diagnostics.model import Diagnostic
from sncc.source import SourceFile
from sncc.syntax import ast

INDENT = "  "


class FormatRefused(Exception):
    """The file does not parse; ``diagnostics`` say why."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__(diagnostics[0].message if diagnostics else "the file does not parse")
        self.diagnostics = diagnostics


def quote(value: str) -> str:
    """A string value as a canonical double-quoted literal of the plan language."""
    body = (value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            .replace("\r", "\\r").replace("\t", "\\t"))
    return f'"{body}"'


def value_text(v: ast.Value) -> str:
    """The canonical text of a value (numbers and quantities as written)."""
    if isinstance(v, ast.Str):
        return quote(v.value)
    if isinstance(v, ast.Number):
        return v.text
    if isinstance(v, ast.QuantityLit):
        return v.text
    if isinstance(v, ast.Ident):
        return v.name
    if isinstance(v, ast.Call):
        return f"{v.name}({', '.join(value_text(a) for a in v.args)})"
    if isinstance(v, ast.ListLit):
        return f"[{', '.join(value_text(a) for a in v.items)}]"
    raise TypeError(f"unknown value node {type(v).__name__}")  # pragma: no cover


class _Printer:
    def __init__(self, src: SourceFile) -> None:
        self.text = src.text
        self.src = src
        self.comments: list[Comment] = scan_comments(src.text)
        self.ci = 0  # next unconsumed comment
        self.lines: list[str] = []
        self.last_end = 0  # source offset of the end of the last thing printed
        self.pending_blank = False
        self.keep_lines = suppression_lines(src)  # lines whose items stay together
        self.prefix = ""  # items of a kept line printed before the next item's text

    # -- helpers ---------------------------------------------------------------------
    def _blank_between(self, start: int) -> bool:
        """True when the source has an empty line between ``last_end`` and ``start``."""
        gap = self.text[self.last_end : start]
        # count line breaks in the gap; two or more mean an empty line (comments are consumed separately)
        return gap.count("\n") + gap.count("\r") - gap.count("\r\n") >= 2

    def _emit(self, depth: int, text: str, start: int, *, allow_blank: bool, force_blank: bool) -> None:
        if self.lines and (force_blank or (allow_blank and self._blank_between(start))):
            if self.lines[-1] != "":
                self.lines.append("")
        self.lines.append(INDENT * depth + text)

    def _same_line(self, a: int, b: int) -> bool:
        gap = self.text[a:b]
        return "\n" not in gap and "\r" not in gap

    def leading(self, depth: int, before: int, *, allow_blank: bool, force_blank: bool) -> bool:
        """Print the comments starting before ``before`` on their own lines; True when any was printed."""
        printed = False
        while self.ci < len(self.comments) and self.comments[self.ci].start < before:
            c = self.comments[self.ci]
            self._emit(depth, c.text.rstrip(), c.start, allow_blank=allow_blank or printed,
                       force_blank=force_blank and not printed)
            self.last_end = c.end
            self.ci += 1
            printed = True
        return printed

    def trailing(self, after: int) -> None:
        """Append the comment on the same line right after offset ``after`` (nothing but blanks and separators between)."""
        if self.ci >= len(self.comments):
            self.last_end = max(self.last_end, after)
            return
        c = self.comments[self.ci]
        between = self.text[after : c.start]
        if c.start >= after and self._same_line(after, c.start) and not between.strip(" \t\f;,"):
            self.lines[-1] += "  " + c.text.rstrip()
            self.ci += 1
            self.last_end = c.end
        else:
            self.last_end = max(self.last_end, after)

    def open_brace(self, block: ast.Block) -> int:
        """Offset just after the ``{`` of ``block`` (skipping blanks and comments after its name or label)."""
        i = (block.label.span.end if block.label is not None else block.name_span.end)
        n = len(self.text)
        while i < n:
            ch = self.text[i]
            if ch == "{":
                return i + 1
            if ch == "#":
                while i < n and self.text[i] not in "\r\n":
                    i += 1
                continue
            i += 1
        return block.span.end  # pragma: no cover - a parsed block has a brace

    def inline(self, node) -> str:
        """``node`` written on one line (it has no comments: it was on one line of the source)."""
        if isinstance(node, ast.Block):
            header = node.name + (f" {quote(node.label.value)}" if node.label is not None else "")
            if not node.items:
                return header + " {}"
            return header + " { " + "  ".join(self.inline(n) for n in node.items) + " }"
        return self.atom_text(node)

    @staticmethod
    def atom_text(node) -> str:
        if isinstance(node, ast.Assignment):
            return f"{node.key.text} = {value_text(node.value)}"
        if isinstance(node, ast.Comparison):
            return f"{node.key.text} {node.op} {value_text(node.value)}"
        if isinstance(node, ast.Import):
            return f"import {quote(node.path.value)}"
        raise TypeError(f"unknown item {type(node).__name__}")  # pragma: no cover

    def _take_prefix(self) -> str:
        p, self.prefix = self.prefix, ""
        return p

    # -- items -------------------------------------------------------------------------
    def item(self, node, depth: int, *, first: bool, force_blank: bool) -> None:
        allow_blank = not first
        if isinstance(node, ast.Block):
            printed = self.leading(depth, node.span.start, allow_blank=allow_blank, force_blank=force_blank)
            header = node.name + (f" {quote(node.label.value)}" if node.label is not None else "") + " {"
            brace_end = self.open_brace(node)
            body_end = node.span.end - 1  # offset of the closing brace
            has_comments = self.ci < len(self.comments) and self.comments[self.ci].start < body_end
            if not node.items and not has_comments:
                self._emit(depth, self._take_prefix() + header[:-2] + " {}", node.span.start, allow_blank=allow_blank and not printed,
                           force_blank=force_blank and not printed)
                self.last_end = node.span.start
                self.trailing(node.span.end)
                return
            self._emit(depth, self._take_prefix() + header, node.span.start, allow_blank=allow_blank or printed,
                       force_blank=force_blank and not printed)
            self.last_end = node.span.start
            one_line = self._same_line(node.span.start, node.span.end)
            if one_line:
                # a one-line block's trailing comment goes on its header line, where it
                # still covers the whole block (see sncc.diagnostics.filters)
                self.trailing(node.span.end)
                self.last_end = brace_end
            else:
                # a comment inside the header (before the brace) moves into the body
                self.trailing(brace_end)
            # an expanded one-line block's items need not stay together: a suppression
            # covering its line now sits on the header line and covers the whole block
            self.body(node.items, depth + 1, body_end, group=not one_line)
            self.leading(depth + 1, body_end, allow_blank=True, force_blank=False)
            self._emit(depth, "}", body_end, allow_blank=False, force_blank=False)
            self.last_end = body_end
            self.trailing(node.span.end)
            return
        # atomic items: comments inside them move before them
        printed = self.leading(depth, node.span.end, allow_blank=allow_blank, force_blank=force_blank)
        text = self._take_prefix() + self.atom_text(node)
        self._emit(depth, text, node.span.start, allow_blank=allow_blank or printed,
                   force_blank=force_blank and not printed)
        self.last_end = node.span.start
        self.trailing(node.span.end)

    def body(self, items, depth: int, end: int, *, group: bool = True) -> None:
        """Print ``items`` (of a block at ``depth - 1``, or of the file at depth 0); with
        ``group``, the items starting on a line a suppression covers stay on one line."""
        separate_blocks = depth <= 1
        prev = None
        i = 0
        while i < len(items):
            node = items[i]
            force = False
            if separate_blocks and prev is not None:
                force = isinstance(node, ast.Block) or isinstance(prev, ast.Block) or (
                    isinstance(prev, ast.Import) and not isinstance(node, ast.Import))
            # the items starting on a line a suppression covers stay on one line
            j = i + 1
            line = self.src.line_col(node.span.start)[0]
            if group and line in self.keep_lines:
                while j < len(items) and self.src.line_col(items[j].span.start)[0] == line:
                    j += 1
            if j > i + 1:
                self.prefix = "  ".join(self.inline(n) for n in items[i : j - 1]) + "  "
            self.item(items[j - 1], depth, first=(i == 0 and depth > 0), force_blank=force)
            prev = items[j - 1]
            i = j


def format_source(src: SourceFile) -> str:
    """The canonical text of ``src``.

    Raises :class:`FormatRefused` (with the syntax diagnostics) when ``src``
    does not parse.
    """
    from sncc.syntax.parser import parse

    module, diags = parse(src)
    if module is None:
        raise FormatRefused(list(diags))
    p = _Printer(src)
    items = sorted(list(module.imports) + list(module.blocks), key=lambda n: n.span.start)
    p.body(items, 0, len(src.text))
    p.leading(0, len(src.text) + 1, allow_blank=True, force_blank=False)
    newline = "\r\n" if "\n" in src.text and src.text.find("\n") > 0 and src.text[src.text.find("\n") - 1] == "\r" else "\n"
    bom = "\ufeff" if src.text.startswith("\ufeff") else ""
    while p.lines and p.lines[-1] == "":
        p.lines.pop()
    return bom + newline.join(p.lines) + (newline if p.lines else "")


def unified_diff(name: str, old: str, new: str) -> str:
    """A unified diff of ``old`` → ``new`` labelled with ``name`` (empty when equal)."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"{name} (original)", tofile=f"{name} (formatted)"))



"""``sncc fmt``: the canonical layout of a plan file, keeping every comment.

The layout:

* two-space indentation, ``key = value`` and ``key < value`` with single
  spaces, separators (``;`` ``,``) dropped;
* short blocks stay on one line, as rustfmt and black keep short calls: a
  block written without a line break right after its ``{`` (nor after the
  ``{`` of a block inside it), with no comment inside, is written
  ``name "label" { a = 1  b = 2 }`` (two spaces between items) when the line
  fits :data:`WIDTH` columns; otherwise, for a block its writer broke after
  the ``{`` (Prettier's rule for objects) and for a top-level block (the
  plan), one item per line;
* a block with no items and no comments stays ``name "label" {}``;
* a blank line between top-level items of the file when one of them is a
  block or the last import; elsewhere one blank line is kept where the source
  had at least one, none at the start or end of a block;
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

Suppressions: formatting keeps what every ``# sncc: ...`` comment covers
(:func:`sncc.diagnostics.filters.suppression_ranges`: its line, or the next
line for a comment alone on its line, and a block opened there up to its
``}``).  The items that start (or, not being blocks, end) on a covered line
stay together on one line (``tp = 1  ep = 64  # sncc: ignore[...] ...``); a
suppression after a ``}`` stays with the items of its line; one that ends the
line of a ``{`` (or trails a one-line block that expands) goes on the block's
header line; comments inside a block's header go before it; a multi-line
block is not joined onto one line when a suppression covers only some of its
lines.  An item split over lines, or a block whose ``{`` was on a later line
than its name, is written on one line, so a suppression may come to cover all
of it.  Two layouts cannot keep their reach: items after a ``}`` that closes
an earlier line's block on a covered line (``model = "x" }  tp = 2``, they go
on different lines), and a suppression inside an item (between its key and
value, inside a list), which moves before the item like every comment there.
Tested with hypothesis over the grammar (tests/fmt/test_suppressions_stay.py).

Formatting needs a file that parses: :func:`format_source` raises
:class:`FormatRefused` with the syntax diagnostics otherwise.  Comments come
from :func:`sncc.diagnostics.filters.scan_comments` (the same scan the
suppressions use; the AST carries no comments).  The output parses to the same
typed plan (tested over every example) and formatting it again changes
nothing.
"""

from __future__ import annotations

import difflib
import re

from sncc.atomic_file import write_atomically  # noqa: F401  (re-exported for the fmt command)
from sncc.diagnostics.filters import Comment, is_suppression, scan_comments, suppression_lines, suppression_ranges
from sncc.diagnostics.model import Diagnostic
from sncc.source import SourceFile
from sncc.syntax import ast

INDENT = "  "
#: an empty line: two line breaks (``\r\n``, ``\r`` or ``\n``) with only blanks between
_EMPTY_LINE = re.compile(r"(?:\r\n|\r(?!\n)|\n)[ \t\f]*(?:\r\n|\r|\n)")
#: the widest line a block is kept on (columns, indentation included, a trailing comment not
#: counted); rustfmt's ``max_width`` default
WIDTH = 100


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
        self.covered = suppression_ranges(src)  # (first, last) lines of each suppression
        self.prefix = ""  # items of a kept line printed before the next item's text

    # -- helpers ---------------------------------------------------------------------
    def _blank_between(self, start: int) -> bool:
        """True when the source has an empty line between ``last_end`` and ``start``."""
        # two line breaks with only blanks between them (code in the gap, such as the rest of
        # an item a comment sat inside, is not an empty line)
        return _EMPTY_LINE.search(self.text, self.last_end, max(self.last_end, start)) is not None

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

    def trailing(self, after: int, *, through_braces: bool = False) -> None:
        """Append the comment on the same line right after offset ``after`` (nothing but blanks
        and separators between, and with ``through_braces`` closing braces too: the comment
        after a ``}`` that covers the items of its line stays with them)."""
        if self.ci >= len(self.comments):
            self.last_end = max(self.last_end, after)
            return
        c = self.comments[self.ci]
        between = self.text[after : c.start]
        if c.start >= after and self._same_line(after, c.start) and not between.strip(" \t\f\ufeff;," + ("}" if through_braces else "")):
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

    def compact(self, node: ast.Block, depth: int) -> str | None:
        """``node`` on one line, or None when it must be expanded: it is a top-level block, its
        writer broke the line after its ``{`` (or after a nested block's), a comment sits
        inside it, or the line would be wider than :data:`WIDTH` columns."""
        body_end = node.span.end - 1
        if depth == 0 or (self.ci < len(self.comments) and self.comments[self.ci].start < body_end):
            return None  # a top-level block (the plan) is always expanded
        if not self._unbroken(node):
            return None
        # from the line of the `{`: a header split over lines is joined whether the block is
        # compact or expanded (its comments go before it)
        first, last = self.src.line_col(self.open_brace(node) - 1)[0], self.src.line_col(body_end)[0]
        if first != last and any(a is not None and a <= last and b >= first and not (a <= first and last <= b)
                                 for a, b, _ in self.covered):
            return None  # joining its lines would stretch a suppression that covers only some of them
        text = self.inline(node)
        return text if len(INDENT * depth) + len(self.prefix) + len(text) <= WIDTH else None

    def _unbroken(self, node: ast.Block) -> bool:
        """No line break between the ``{`` of ``node`` (or of a block inside it) and its first item."""
        if node.items and not self._same_line(self.open_brace(node), node.items[0].span.start):
            return False
        return all(self._unbroken(n) for n in node.items if isinstance(n, ast.Block))

    def _header_suppression(self, node: ast.Block, brace_end: int, body_end: int) -> None:
        """Move a suppression that ends the line of the ``{`` (after items of the block written
        there) onto the header line: on its line it covered the whole block, and it still does
        there; after an item of the expanded body it would cover that item only."""
        if self.ci >= len(self.comments) or not self.lines[-1].rstrip().endswith("{"):
            return
        c = self.comments[self.ci]
        line = self.src.line_col(brace_end - 1)[0]
        if c.start < body_end and self.src.line_col(c.start)[0] == line and is_suppression(c):
            self.lines[-1] += "  " + c.text.rstrip()
            self.ci += 1

    def _has_body_comment(self, node: ast.Block) -> bool:
        """True when an unprinted comment lies inside the body of ``node`` (after its ``{``; a
        comment in the header goes before the block and does not keep it from one line)."""
        brace_end = self.open_brace(node)
        for c in self.comments[self.ci:]:
            if c.start >= node.span.end:
                return False
            if c.start >= brace_end:
                return True
        return False

    def _last_line_covered(self) -> bool:
        """True when a suppression covers the last output line: one ends it, or one stands alone
        on the lines right above it (with only comments between)."""
        comments = scan_comments(self.lines[-1])
        if comments and is_suppression(comments[-1]):
            return True
        for prev in reversed(self.lines[:-1]):
            stripped = prev.strip()
            if not stripped.startswith("#"):
                return False
            if is_suppression(scan_comments(stripped)[0]):
                return True
        return False

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
    def item(self, node, depth: int, *, first: bool, force_blank: bool, kept: bool = False) -> None:
        """Print one item; ``kept``: it is the last item starting on a line a suppression covers."""
        allow_blank = not first
        if isinstance(node, ast.Block):
            # comments in the header (between the name and the `{`) go before it, where they
            # still cover the header line and so the block
            printed = self.leading(depth, self.open_brace(node) - 1, allow_blank=allow_blank, force_blank=force_blank)
            header = node.name + (f" {quote(node.label.value)}" if node.label is not None else "") + " {"
            brace_end = self.open_brace(node)
            body_end = node.span.end - 1  # offset of the closing brace
            has_comments = self.ci < len(self.comments) and self.comments[self.ci].start < body_end
            if not node.items and not has_comments:
                self._emit(depth, self._take_prefix() + header[:-2] + " {}", node.span.start, allow_blank=allow_blank and not printed,
                           force_blank=force_blank and not printed)
                self.last_end = node.span.start
                self.trailing(node.span.end, through_braces=kept)
                return
            compact = self.compact(node, depth)
            if compact is not None:
                self._emit(depth, self._take_prefix() + compact, node.span.start, allow_blank=allow_blank or printed,
                           force_blank=force_blank and not printed)
                self.last_end = node.span.start
                self.trailing(node.span.end, through_braces=kept)
                return
            self._emit(depth, self._take_prefix() + header, node.span.start, allow_blank=allow_blank or printed,
                       force_blank=force_blank and not printed)
            self.last_end = node.span.start
            one_line = self._same_line(brace_end - 1, node.span.end)
            if one_line:
                # a one-line block's trailing comment goes on its header line, where it
                # still covers the whole block (see sncc.diagnostics.filters)
                self.trailing(node.span.end, through_braces=kept)
                self.last_end = brace_end
            else:
                # a comment inside the header (before the brace) moves into the body
                self.trailing(brace_end)
                self._header_suppression(node, brace_end, body_end)
            brace_line = self.src.line_col(brace_end - 1)[0]
            if brace_line in self.keep_lines and self._last_line_covered():
                # the header line is covered, so the whole block is: the body's items from
                # that line need not stay together
                self.keep_lines.discard(brace_line)
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
        self.trailing(node.span.end, through_braces=kept)

    def body(self, items, depth: int, end: int, *, group: bool = True) -> None:
        """Print ``items`` (of a block at ``depth - 1``, or of the file at depth 0); with
        ``group``, the items starting on a line a suppression covers stay on one line."""
        separate_blocks = depth == 0
        prev = None
        i = 0
        while i < len(items):
            node = items[i]
            force = False
            if separate_blocks and prev is not None:
                force = isinstance(node, ast.Block) or isinstance(prev, ast.Block) or (
                    isinstance(prev, ast.Import) and not isinstance(node, ast.Import))
            # the items starting on a line a suppression covers stay on one line, with an
            # item that ends there (a comment inside it moves before the line; a block
            # ending there must have none, it is written on the line)
            j = i + 1
            line = self.src.line_col(node.span.start)[0]
            if group and line not in self.keep_lines and (not isinstance(node, ast.Block) or not self._has_body_comment(node)):
                end_line = self.src.line_col(max(node.span.start, node.span.end - 1))[0]
                if end_line in self.keep_lines:
                    line = end_line
            kept = group and line in self.keep_lines
            if kept:
                while j < len(items) and self.src.line_col(items[j].span.start)[0] == line:
                    j += 1
            if j > i + 1:
                self.prefix = "  ".join(self.inline(n) for n in items[i : j - 1]) + "  "
            self.item(items[j - 1], depth, first=(i == 0 and depth > 0), force_blank=force, kept=kept)
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



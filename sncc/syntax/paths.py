"""The logical path (JSON ``path``) of a position in plan text that did not parse: the one place
it is computed for diagnostics that have no syntax tree to take it from (SN1xxx).

The plan builder names a diagnostic's path by the block and key it is reading
(:meth:`sncc.plan.build._Builder.error`: ``("decode", "tp")``).  A syntax error, an invalid
UTF-8 byte or a suppression comment has no such reader, so :func:`enclosing_paths` scans the
text up to the position instead (strings and comments skipped; linear, no parser) and names
what the position is inside, in the builder's spelling:

* the blocks that enclose it, outermost first; a file's ``plan`` block is the root and is left
  out (``["decode", "tp"]``, not ``["plan", "decode", "tp"]``), except when it is the innermost
  block itself: a position directly inside it, or on its head, is ``["plan"]``;
* then the item being written, when the position falls inside one: after its key (or block
  name) and before its value is complete (``tp == 8`` → ``[..., "tp"]``; a dotted key
  ``ttft.p99`` is one element, as the builder writes it); a block's head counts as its item,
  so the ``{`` of a block never closed is at ``[..., "decode"]``;
* ``[]`` only outside every block: before or after the top-level blocks.

Block labels (``model "qwen3-32b"``) are not part of a path, as in the builder's paths.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_NAME = r"[A-Za-z_][A-Za-z0-9_\-]*"
_STRING = r'"[^"\\\r\n]*(?:\\[^\r\n][^"\\\r\n]*)*"'
_NUMBER = r"[+-]?[0-9][0-9_]*(?:\.[0-9]+)?(?:[A-Za-z%][A-Za-z%/]*)?"
#: strings (an unterminated one ends at its line), comments, names, numbers and quantities,
#: operators, punctuation; anything else is one character
_TOKEN = re.compile(_STRING[:-1] + r'"?|#[^\r\n]*|' + _NAME + "|" + _NUMBER + r"|<=|>=|==|\S")
#: one whole ``key = value`` item with a single-token value (most of a plan's text), read as one
#: match: the scan's Python loop then runs once per item, not once per token
_ITEM = (_NAME + r"(?:[ \t]*\.[ \t]*" + _NAME + r")*[ \t\r\n]*(?:<=|>=|==|[=<>])[ \t\r\n]*"
         r"(?:" + _STRING + "|" + _NUMBER + r"(?![\w.%/])|" + _NAME + r"(?![\w\-])(?![ \t\r\n]*[(.{]))")
_ITEM_OR_TOKEN = re.compile("(?P<item>" + _ITEM + ")|" + _TOKEN.pattern)

# states of the scan between two tokens
_START, _KEY, _DOT, _LABEL, _VALUE, _IDENT, _NESTED = range(7)


class _Scan:
    """The block stack and the item in progress after the tokens seen so far."""

    def __init__(self) -> None:
        self.blocks: list[str | None] = []   # enclosing block names, outermost first
        self.key: list[str] = []             # the item being written (its key's parts), or []
        self.state = _START
        self.depth = 0                       # open `(` / `[` of the value being read

    def feed(self, tok: str) -> None:
        c = tok[0]
        if c == "#":
            return
        if tok == "{":   # structure first, in any state: a scan of text that may not parse never fails
            self.blocks.append(".".join(self.key) or None)
            self.end()
            return
        if tok == "}":
            if self.blocks:
                self.blocks.pop()
            self.end()
            return
        state = self.state
        if state == _IDENT:
            if tok == "(":
                self.state, self.depth = _NESTED, 1
                return
            self.end()   # `key = ident` was complete; this token starts the next item
            state = _START
        if state == _NESTED:
            if tok in "([":
                self.depth += 1
            elif tok in ")]":
                self.depth -= 1
                if self.depth == 0:
                    self.end()
            return
        is_name = c.isalpha() or c == "_"
        if state == _VALUE:
            if is_name:
                self.state = _IDENT
            elif tok in "([":
                self.state, self.depth = _NESTED, 1
            elif c == '"' or c.isdigit() or (c in "+-" and len(tok) > 1):
                self.end()
            return
        if state == _DOT:
            if is_name:
                self.key.append(tok)
                self.state = _KEY
            else:
                self.end()
            return
        if state == _KEY:
            if tok == ".":
                self.state = _DOT
                return
            if c == '"':   # a block's label; `import "x.sn"` at the top level is no item
                self.state = _LABEL
                if not self.blocks and self.key == ["import"]:
                    self.end()
                return
            if tok in ("=", "<", "<=", ">", ">=", "=="):
                self.state = _VALUE
                return
        if state == _LABEL and tok in ("=", "<", "<=", ">", ">=", "=="):
            self.state = _VALUE
            return
        # between items (or a token that cannot continue the item): a name starts the next one
        if is_name:
            self.key, self.state = [tok], _KEY
        else:
            self.end()

    def end(self) -> None:
        self.key, self.state, self.depth = [], _START, 0

    def path(self) -> tuple[str, ...]:
        parts = [b for b in self.blocks if b is not None]
        if self.key and self.state != _IDENT:   # `key = ident` is complete unless a `(` follows
            parts.append(".".join(self.key))
        if len(parts) > 1 and parts[0] == "plan" and self.blocks and self.blocks[0] == "plan":
            parts = parts[1:]
        return tuple(parts)


def enclosing_paths(text: str, offsets: Iterable[int]) -> dict[int, tuple[str, ...]]:
    """``{offset: path}`` for each offset into ``text`` (one scan for all of them): the blocks
    enclosing the offset and the item it falls inside (module docstring).  Never raises."""
    wanted = sorted({max(0, min(int(o), len(text))) for o in offsets})
    out: dict[int, tuple[str, ...]] = {}
    if not wanted:
        return out
    scan = _Scan()
    i, n = 0, len(wanted)
    for m in _ITEM_OR_TOKEN.finditer(text):
        if m.lastgroup == "item" and wanted[i] >= m.end() and scan.state not in (_VALUE, _DOT, _NESTED):
            scan.end()   # a complete item before the next offset: what its tokens would leave
            continue
        toks = _TOKEN.finditer(text, m.start(), m.end()) if m.lastgroup == "item" else (m,)
        for t in toks:
            if wanted[i] < t.end():   # offsets before this token's end, or inside it: the path before it
                path = scan.path()
                while i < n and wanted[i] < t.end():
                    out[wanted[i]] = path
                    i += 1
                if i == n:
                    return out
            scan.feed(t.group())
    path = scan.path()
    for o in wanted[i:]:
        out[o] = path
    return out


def enclosing_path(text: str, offset: int) -> tuple[str, ...]:
    """The path of one offset into ``text`` (see :func:`enclosing_paths`)."""
    return enclosing_paths(text, (offset,))[max(0, min(offset, len(text)))]


def with_paths(diags: list, sources: dict) -> list:
    """``diags`` with each path-less diagnostic in a file of ``sources`` (``{name: SourceFile}``)
    given the path of its span's start.  For the diagnostics no builder names (syntax errors,
    SN1004, suppression comments); a diagnostic that has a path keeps it."""
    import dataclasses

    todo: dict[str, list[int]] = {}
    for d in diags:
        if not d.path and d.span is not None and d.span.file in sources:
            todo.setdefault(d.span.file, []).append(d.span.start)
    if not todo:
        return diags
    found = {name: enclosing_paths(sources[name].text, offs) for name, offs in todo.items()}
    out = []
    for d in diags:
        if not d.path and d.span is not None and d.span.file in found:
            src = sources[d.span.file]
            path = found[d.span.file][max(0, min(d.span.start, len(src.text)))]
            if path:
                d = dataclasses.replace(d, path=path)
        out.append(d)
    return out

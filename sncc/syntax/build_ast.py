"""Lark tree → :mod:`sncc.syntax.ast` nodes.

A small explicit walker rather than a Lark ``Transformer`` so that nesting
depth is bounded (a hostile file cannot exhaust the Python stack) and every
node gets a :class:`~sncc.source.Span` from Lark's token positions (the grammar keeps
the closing brackets as named tokens, so no tree metadata is needed).
"""

from __future__ import annotations

from lark import Token

from sncc.diagnostics import codes
from sncc.diagnostics.model import Diagnostic, diag
from sncc.source import SourceFile, Span
from sncc.syntax import ast
from sncc.units import parse_number

#: Deepest nesting of blocks or lists accepted (the language needs 4).
MAX_DEPTH = 48


class _TooDeep(Exception):
    def __init__(self, span: Span) -> None:
        self.span = span


def _unescape(raw: str) -> str:
    body = raw[1:-1]
    if "\\" not in body:
        return body
    out = []
    i = 0
    escapes = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(escapes.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


class _Builder:
    def __init__(self, source: SourceFile) -> None:
        self.source = source

    def tok_span(self, tok) -> Span:
        return Span(self.source.name, tok.start_pos, tok.end_pos)  # Lark's offsets are inside the text

    def first_span(self, tree) -> Span:
        """Span of the first token of ``tree`` (where a too-deep node starts)."""
        while not isinstance(tree, Token):
            tree = next(c for c in tree.children if c is not None)
        return self.tok_span(tree)

    def key(self, tree) -> ast.Key:
        toks = tree.children
        return ast.Key(tuple(map(str, toks)), Span(self.source.name, toks[0].start_pos, toks[-1].end_pos))

    def value(self, tree, depth: int) -> ast.Value:
        if depth > MAX_DEPTH:
            raise _TooDeep(self.first_span(tree))
        kind = tree.data
        if kind == "string":
            tok = tree.children[0]
            return ast.Str(_unescape(str(tok)), self.tok_span(tok))
        if kind == "number":
            tok = tree.children[0]
            return ast.Number(parse_number(str(tok)), str(tok), self.tok_span(tok))
        if kind == "quantity":
            tok = tree.children[0]
            return ast.QuantityLit(str(tok), self.tok_span(tok))
        if kind == "ident":
            tok = tree.children[0]
            return ast.Ident(str(tok), self.tok_span(tok))
        if kind == "call":  # NAME value* RPAR
            name, *args, close = tree.children
            values = tuple(self.value(c, depth + 1) for c in args if c is not None)
            return ast.Call(str(name), self.tok_span(name), values, self.source.span(name.start_pos, close.end_pos))
        if kind == "list":  # LSQB value* RSQB
            opener, *args, close = tree.children
            items = tuple(self.value(c, depth + 1) for c in args if c is not None)
            return ast.ListLit(items, self.source.span(opener.start_pos, close.end_pos))
        raise AssertionError(f"unknown value node {kind}")  # pragma: no cover

    def block(self, tree, depth: int) -> ast.Block:
        if depth > MAX_DEPTH:
            raise _TooDeep(self.first_span(tree))
        name_tok, label_tree, *rest, close = tree.children  # NAME label? item* RBRACE
        label = None
        if label_tree is not None:
            tok = label_tree.children[0]
            label = ast.Str(_unescape(str(tok)), self.tok_span(tok))
        items: list[ast.Item] = []
        for child in rest:
            if child is None:
                continue
            if child.data in ("block", "nested_block"):
                items.append(self.block(child, depth + 1))
            elif child.data == "assignment":
                key_tree, value_tree = child.children
                key, value = self.key(key_tree), self.value(value_tree, depth + 1)
                items.append(ast.Assignment(key, value, self.source.span(key.span.start, value.span.end)))
            elif child.data == "comparison":
                key_tree, op_tok, value_tree = child.children
                key, value = self.key(key_tree), self.value(value_tree, depth + 1)
                items.append(ast.Comparison(key, str(op_tok), self.tok_span(op_tok), value,
                                            self.source.span(key.span.start, value.span.end)))
        return ast.Block(str(name_tok), self.tok_span(name_tok), label, tuple(items),
                         self.source.span(name_tok.start_pos, close.end_pos))


def build_module(tree, source: SourceFile) -> tuple[ast.Module | None, list[Diagnostic]]:
    """Convert the Lark ``start`` tree of ``source`` to an :class:`ast.Module`.

    Returns ``(module, [])`` or ``(None, [diagnostic])`` when nesting exceeds
    :data:`MAX_DEPTH`.
    """
    b = _Builder(source)
    try:
        blocks = tuple(b.block(c, 1) for c in tree.children if c is not None and c.data == "block")
        imports = tuple(
            ast.Import(ast.Str(_unescape(str(c.children[1])), b.tok_span(c.children[1])),
                       b.source.span(c.children[0].start_pos, c.children[1].end_pos))  # IMPORT STRING
            for c in tree.children if c is not None and c.data == "import_stmt"
        )
    except _TooDeep as e:
        return None, [
            diag(
                codes.SYNTAX_ERROR,
                f"blocks or lists nested more than {MAX_DEPTH} levels deep",
                Span(e.span.file, e.span.start, min(e.span.end, e.span.start + 1)),
                help="plans need at most four levels of nesting",
            )
        ]
    return ast.Module(blocks, source.span(0, len(source.text)), imports), []

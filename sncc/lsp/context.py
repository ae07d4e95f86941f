"""What is under (or just before) the cursor: the enclosing block path and the
role of the token there (a key, a block name or label, a value, a string, a
number waiting for its unit).

Editors ask for hover and completion while the text is being typed, so it is
usually *not* valid plan syntax at that moment (``prefill { ma`` is a syntax
error).  The context is therefore found by a small tolerant scan of the text
with the grammar's own token shapes (``grammar/sncc.lark``: NAME, STRING,
QUANTITY, NUMBER, comments), not by the LALR parser; the parser's AST is used
where the text does parse (see :mod:`sncc.lsp.features`).

Block paths map to the typed plan models with the same helpers the AST → plan
walk uses (:func:`sncc.plan.build._submodel`), so hover and completion cannot
drift from what ``sncc check`` accepts.  All offsets are code-point offsets
into the text (``str`` indices); LSP positions are converted only in
:mod:`sncc.source`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: token shapes of grammar/sncc.lark; STRING also matches an unterminated
#: string up to the end of the line (the user is typing it)
_TOKEN = re.compile(
    r"""
    (?P<comment>\#[^\r\n]*)
  | (?P<ws>[ \t\f\r\n\ufeff]+)
  | (?P<string>"[^"\\\r\n]*(?:\\[^\r\n][^"\\\r\n]*)*"?)
  | (?P<quantity>[+-]?\d[\d_]*(?:\.\d+)?[A-Za-z%][A-Za-z%/]*)
  | (?P<number>[+-]?\d[\d_]*(?:\.\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_\-]*)
  | (?P<compare><=|>=|==|<|>)
  | (?P<punct>[{}=().,;\[\]])
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class Token:
    """One token: ``kind`` is a group name of :data:`_TOKEN`; ``start``/``end`` offsets."""

    kind: str
    text: str
    start: int
    end: int


_CLOSED = re.compile(r'"[^"\\\r\n]*(?:\\[^\r\n][^"\\\r\n]*)*"')


def tokens(text: str) -> list[Token]:
    """Tokenize ``text`` tolerantly (never raises); whitespace and comments are dropped."""
    out = []
    for mt in _TOKEN.finditer(text):
        kind = mt.lastgroup or "other"
        if kind in ("ws", "comment"):
            continue
        out.append(Token(kind, mt.group(), mt.start(), mt.end()))
    return out


@dataclass
class Context:
    """The cursor's context.

    ``role`` is one of:

    * ``"key"`` – a key or block name at the start of an item (``token`` is it, or None after blank);
    * ``"label"`` – the string label of a block being opened; ``key`` is the block's name;
    * ``"value"`` – a bare value after ``key =`` (identifier, enum choice);
    * ``"string"`` – inside the string value of ``key``;
    * ``"unit"`` – right after a number or quantity of ``key`` (``token`` is it);
    * ``"env-arg"`` – inside ``env("...")``;
    * ``"other"`` – anything else (punctuation, inside a list, in a comment).

    ``path`` lists the names of the enclosing blocks, outermost first
    (``["plan", "prefill"]``); ``labels`` their labels (or None).
    """

    role: str
    path: list[str] = field(default_factory=list)
    labels: list[str | None] = field(default_factory=list)
    key: str | None = None
    token: Token | None = None


def _in_comment(text: str, offset: int) -> bool:
    line_start = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1
    i = line_start
    while i < offset:
        c = text[i]
        if c == "#":
            return True
        if c == '"':
            j = i + 1
            while j < offset and text[j] not in '"\r\n':
                j += 2 if text[j] == "\\" else 1
            if j >= offset:
                return False
            i = j
        i += 1
    return False


def context_at(text: str, offset: int, *, hover: bool = False) -> Context:
    """The :class:`Context` at code-point ``offset``.

    For completion (``hover=False``) the token that *ends* at ``offset`` is the
    one being typed; for hover the token that *contains* ``offset``.
    """
    if _in_comment(text, offset):
        return Context("other")
    toks = tokens(text)
    path: list[str] = []
    labels: list[str | None] = []
    state = "item"          # item | name | label | value | after-value | call | list
    name: Token | None = None
    label: str | None = None
    key: str | None = None
    depth = 0               # nesting inside a call or list value
    call_name: str | None = None

    def at(tok: Token) -> bool:
        if tok.kind == "string":
            closed = _CLOSED.fullmatch(tok.text) is not None
            return tok.start < offset < tok.end or (offset == tok.end and not closed) or (hover and offset == tok.start)
        if tok.kind not in ("name", "number", "quantity"):
            return False
        if hover:
            return tok.start <= offset <= tok.end
        return tok.start < offset <= tok.end

    for tok in toks:
        if tok.start >= offset and not (hover and tok.start == offset):
            break
        here = at(tok)
        # --- states -------------------------------------------------------
        if state in ("call", "list"):
            if here:
                if state == "call" and tok.kind == "string" and call_name == "env" and depth == 1:
                    return Context("env-arg", path, labels, key, tok)
                return Context("other", path, labels, key, tok)
            if tok.text in ("(", "["):
                depth += 1
            elif tok.text in (")", "]"):
                depth -= 1
                if depth == 0:
                    state = "after-value"
            continue
        if state == "value":
            if here:
                role = {"string": "string", "name": "value", "number": "unit", "quantity": "unit"}.get(tok.kind, "other")
                return Context(role, path, labels, key, tok)
            if tok.kind in ("string", "number", "quantity"):
                state = "after-value"
                continue
            if tok.kind == "name":
                state, call_name = "after-value", tok.text
                continue
            if tok.text in ("(", "["):
                state, depth = ("call" if tok.text == "(" else "list"), 1
                continue
            state = "item"  # no value (`dtype = }`): the token belongs to the block
        if state == "after-value":
            if tok.text == "(" and call_name is not None:
                state, depth = "call", 1
                continue
            call_name = None
            state = "item"
            if tok.text in (";", ","):
                continue
            # fall through: this token starts the next item
        if state == "name":
            if tok.text == ".":
                # dotted key (`ttft.p99`): keep the first part as the key
                if here:
                    return Context("other", path, labels, name.text if name else None, tok)
                state = "dot"
                continue
            if tok.kind == "string":
                label = tok.text.strip('"')
                if here:
                    return Context("label", path, labels, name.text if name else None, tok)
                state = "label"
                continue
            if tok.text == "{":
                path.append(name.text if name else "")
                labels.append(None)
                state = "item"
                continue
            if tok.text == "=" or tok.kind == "compare":
                key = name.text if name else None
                state, call_name = "value", None
                continue
            state = "item"  # a dangling name: start over with this token
        if state == "dot":
            state = "name" if tok.kind == "name" else "item"
            if state == "name":
                if here:
                    return Context("other", path, labels, name.text if name else None, tok)
                continue
        if state == "label":
            if tok.text == "{":
                path.append(name.text if name else "")
                labels.append(label)
                state = "item"
                continue
            state = "item"
        # state == "item"
        if here and tok.kind == "name":
            return Context("key", path, labels, None, tok)
        if tok.kind == "name":
            name, state = tok, "name"
        elif tok.text == "}":
            if path:
                path.pop()
                labels.pop()
        elif tok.text == "{":
            path.append("")
            labels.append(None)
    # nothing under the cursor: what would come next?
    role = {"item": "key", "after-value": "key", "value": "value", "name": "after-name", "label": "other",
            "dot": "other", "call": "other", "list": "other"}[state]
    if role == "after-name":
        return Context("other", path, labels, name.text if name else None, None)
    return Context(role, path, labels, key if role == "value" else None, None)


def model_for_path(path: list[str]):
    """The plan model class of a block path, ``"slo"``/``"env"`` for those
    special blocks, ``"top"`` outside every block, or None for an unknown block.

    A path not starting with ``plan`` is a top-level block of a file meant to be
    imported (``hardware { ... }`` in ``shared/cluster.sn``): it is read as a
    block of ``plan``, as the import merge does.
    """
    from sncc.plan import model as m
    from sncc.plan.build import _submodel

    if not path:
        return "top"
    names = path[1:] if path[0] == "plan" else list(path)
    cls = m.Plan
    for i, n in enumerate(names):
        if cls is m.Plan and n in ("slo", "env"):
            return n if i == len(names) - 1 else None
        info = cls.model_fields.get(n)
        sub = _submodel(info) if info is not None else None
        if sub is None:
            return None
        cls = sub
    return cls

"""The plan syntax tree: frozen dataclasses, each with the :class:`Span` it
came from.  Passes never look at Lark's tree, only at these nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Union

from sncc.source import Span


@dataclass(frozen=True)
class Str:
    """A double-quoted string; ``value`` is unescaped."""

    value: str
    span: Span


@dataclass(frozen=True)
class Number:
    """A plain number (no unit)."""

    value: Decimal
    text: str
    span: Span


@dataclass(frozen=True)
class QuantityLit:
    """A number glued to a unit, e.g. ``50ms``; interpreted by :mod:`sncc.units`."""

    text: str
    span: Span


@dataclass(frozen=True)
class Ident:
    """A bare identifier value, e.g. ``w8a8``, ``true``, ``OAS``."""

    name: str
    span: Span


@dataclass(frozen=True)
class Call:
    """A function-call value; the only function is ``env("NAME")``."""

    name: str
    name_span: Span
    args: tuple["Value", ...]
    span: Span


@dataclass(frozen=True)
class ListLit:
    """A bracketed list of values."""

    items: tuple["Value", ...]
    span: Span


Value = Union[Str, Number, QuantityLit, Ident, Call, ListLit]


@dataclass(frozen=True)
class Key:
    """A possibly dotted key (``ttft`` or ``ttft.p99``)."""

    parts: tuple[str, ...]
    span: Span

    @property
    def text(self) -> str:
        """The key as written."""
        return ".".join(self.parts)


@dataclass(frozen=True)
class Assignment:
    """``key = value``."""

    key: Key
    value: Value
    span: Span


@dataclass(frozen=True)
class Comparison:
    """``key OP value`` with OP in ``< <= > >= ==`` (SLO targets)."""

    key: Key
    op: str
    op_span: Span
    value: Value
    span: Span


@dataclass(frozen=True)
class Block:
    """``name "label" { items }``; ``label`` is None when absent."""

    name: str
    name_span: Span
    label: Str | None
    items: tuple["Item", ...]
    span: Span


Item = Union[Assignment, Comparison, Block]


@dataclass(frozen=True)
class Import:
    """``import "path.sn"``: another file whose top-level blocks are defaults."""

    path: Str
    span: Span


@dataclass(frozen=True)
class Module:
    """One parsed file: its imports and top-level blocks."""

    blocks: tuple[Block, ...]
    span: Span
    imports: tuple[Import, ...] = ()

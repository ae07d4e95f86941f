"""The single diagnostic type used by the parser, every pass, the adapters and
every output format.

A diagnostic carries a stable code from :mod:`sncc.diagnostics.codes`, a
one-line message (lowercase, identifiers in backticks, no trailing period),
the primary span of the offending value, related spans (where the conflicting
value or the default came from) and a help line with the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sncc.diagnostics.codes import ErrorCode
from sncc.source import Span

Severity = Literal["error", "warning", "info", "hint"]
SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2, "hint": 3}


@dataclass(frozen=True)
class Related:
    """Another location that explains the diagnostic ("default set here")."""

    span: Span
    message: str


@dataclass(frozen=True)
class Edit:
    """Replace the text of ``span`` with ``new_text``."""

    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A suggested change. ``applicability`` is ``safe``, ``unsafe`` or
    ``display-only`` (the rustc/ruff triplet)."""

    title: str
    edits: tuple[Edit, ...]
    applicability: str = "unsafe"


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in a plan.

    ``span`` is None only for problems with no location at all (there are none
    for a readable file: a missing block points at the plan header).
    ``path`` is the logical config path, e.g. ``("prefill", "tp")``.
    """

    code: ErrorCode
    message: str
    span: Span | None
    severity: Severity = "error"
    related: tuple[Related, ...] = ()
    help: str | None = None
    notes: tuple[str, ...] = ()
    fixes: tuple[Fix, ...] = ()
    path: tuple[str | int, ...] = ()

    @property
    def is_error(self) -> bool:
        """True for error severity."""
        return self.severity == "error"

    def sort_key(self) -> tuple:
        """Deterministic order: file, offset, code."""
        if self.span is None:
            return ("", -1, self.code.code, self.message)
        return (self.span.file, self.span.start, self.code.code, self.message)


def diag(
    code: ErrorCode,
    message: str,
    span: Span | None,
    *,
    related: tuple[Related, ...] | list[Related] = (),
    help: str | None = None,
    notes: tuple[str, ...] | list[str] = (),
    fixes: tuple[Fix, ...] | list[Fix] = (),
    path: tuple[str | int, ...] = (),
    severity: Severity | None = None,
) -> Diagnostic:
    """Build a :class:`Diagnostic`; severity defaults to the code's default."""
    return Diagnostic(
        code=code,
        message=message,
        span=span,
        severity=severity or code.severity,
        related=tuple(related),
        help=help,
        notes=tuple(notes),
        fixes=tuple(fixes),
        path=tuple(path),
    )

"""One plan file through the pipeline, each phase a cached property (vyper's
``CompilerData`` pattern): asking for an output computes only what it needs.

    source → module (AST) → plan (typed) → facts → diagnostics → outputs
"""

from __future__ import annotations

from functools import cached_property

from sncc.diagnostics import codes
from sncc.diagnostics.model import Diagnostic, diag
from sncc.source import SourceFile


class Compilation:
    """The phases of one source file.

    ``diagnostics`` collects every problem from every phase that could run;
    a phase whose input failed yields None and adds nothing.
    """

    def __init__(self, source: SourceFile, reader=None) -> None:
        self.source = source
        self._reader = reader

    @cached_property
    def _parsed(self):
        from sncc.syntax.imports import ImportGraph, resolve_imports
        from sncc.syntax.parser import parse

        module, diags = parse(self.source)
        if module is None:
            return None, diags, ImportGraph({self.source.name: self.source})
        kw = {"reader": self._reader} if self._reader is not None else {}
        module, graph, imp_diags = resolve_imports(module, self.source, parse, **kw)
        return module, diags + imp_diags, graph

    @property
    def imports(self):
        """The :class:`~sncc.syntax.imports.ImportGraph` (imported files and import statements)."""
        return self._parsed[2]

    @property
    def sources(self) -> dict[str, SourceFile]:
        """Every source file involved: the plan and the files it imports."""
        return self.imports.sources

    @cached_property
    def module(self):
        """The AST :class:`~sncc.syntax.ast.Module`, or None on a syntax error."""
        return self._parsed[0]

    @cached_property
    def _built(self):
        if self.module is None:
            return None, []
        from sncc.plan.build import build_plan

        return build_plan(self.module)

    @cached_property
    def plan(self):
        """The typed :class:`~sncc.plan.model.Plan`, or None."""
        return self._built[0]

    @cached_property
    def facts(self):
        """:class:`~sncc.facts.Facts` of the plan, or None without a plan."""
        if self.plan is None:
            return None
        from sncc.facts import derive

        import os

        # a relative `weights` path is relative to the file it is written in (which may be imported)
        where = self.plan.model.span_of("weights")
        origin = where.file if where is not None else self.source.name
        base = os.path.dirname(origin) if origin not in ("<stdin>", "-") else None
        return derive(self.plan, base_dir=base or ".")

    @property
    def resolved(self):
        """The old name of :attr:`facts`."""
        return self.facts

    @cached_property
    def check_diagnostics(self) -> list[Diagnostic]:
        """Diagnostics of the constraint passes."""
        if self.plan is None:
            return []
        from sncc.checks import run_checks

        return run_checks(self.plan, self.resolved)

    @cached_property
    def diagnostics(self) -> list[Diagnostic]:
        """All diagnostics, sorted by file, offset and code."""
        out: list[Diagnostic] = list(self._parsed[1]) + list(self._built[1])
        if self.resolved is not None:
            out += self.resolved.diagnostics
        out += self.check_diagnostics
        return sorted((self._with_import_chain(d) for d in out), key=Diagnostic.sort_key)

    def _with_import_chain(self, d: Diagnostic) -> Diagnostic:
        """Add "imported from here" related spans to a diagnostic located in an imported file."""
        if d.span is None or d.span.file == self.source.name:
            return d
        chain = self.imports.chain(d.span.file)
        if not chain:
            return d
        import dataclasses

        from sncc.diagnostics.model import Related

        extra = tuple(Related(s, f"`{f}` imported here") for s, f in zip(chain, [d.span.file] + [c.file for c in chain]))
        return dataclasses.replace(d, related=d.related + extra)

    @property
    def has_errors(self) -> bool:
        """True when any diagnostic is an error."""
        return any(d.is_error for d in self.diagnostics)


def compile_file(source: SourceFile) -> Compilation:
    """Start a :class:`Compilation`; nothing runs until a phase is asked for.

    Internal failures are turned into an SN9001 diagnostic by the CLI, never
    a traceback.
    """
    return Compilation(source)


def internal_error(source: SourceFile, exc: BaseException) -> Diagnostic:
    """An SN9001 diagnostic for an unexpected exception while processing ``source``."""
    return diag(codes.INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}", source.span(0, 0),
                help="this is a bug in sncc; please report it with the plan")

"""One plan file through the pipeline, each phase a cached property (vyper's
``CompilerData`` pattern): asking for an output computes only what it needs.

    source → module (AST) → plan (typed) → facts → diagnostics → deployment → outputs

``deployment`` (:mod:`sncc.lowering`) and ``outputs`` (:mod:`sncc.emit`) are what ``sncc
build`` writes; ``simulate`` and the language server read the same phases.  A plan that checks
clean but cannot be laid out as engine servers gets an SN4042 diagnostic from the deployment
phase, which ``diagnostics`` includes.
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
        """(plan or None, diagnostics, {block name: typed node} of a definitions file)."""
        if self.module is None:
            return None, [], {}
        from sncc.plan.build import build_definitions, build_plan, is_definitions

        if is_definitions(self.module):
            nodes, diags = build_definitions(self.module)
            return None, diags, nodes
        return (*build_plan(self.module), {})

    @property
    def definitions(self) -> dict:
        """``{block name: typed node}`` of a definitions file (a file of top-level blocks without
        ``plan``, checked on its own); {} for a plan file."""
        return self._built[2]

    @cached_property
    def definitions_diagnostics(self) -> list[Diagnostic]:
        """Catalog diagnostics of a definitions file's blocks (unknown system, chip, model: what a
        plan importing it gets for those values); checks of the whole plan do not run."""
        if not self.definitions:
            return []
        from sncc.facts.catalog_facts import resolve_definitions

        return resolve_definitions(self.definitions)

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
    def _lowered(self):
        """(Deployment or None, diagnostics of the lowering phase)."""
        if self.plan is None or self.resolved is None:
            return None, []
        from sncc.lowering import LoweringError, lower
        from sncc.lowering.hosts import unused_addresses

        try:
            dep = lower(self.plan, self.resolved, plan_file=self.source.name)
        except LoweringError as e:
            code = e.code or codes.DEPLOYMENT_IMPOSSIBLE
            return None, [diag(code, str(e), _span_of_path(self.plan, e.path),
                               help=getattr(e, "help", None) or f"see `sncc explain {code.code}`", path=e.path)]
        spare = unused_addresses(self.plan, len(dep.nodes))
        if spare:
            path = ("hosts", "addresses")
            return dep, [diag(codes.HOSTS_ADDRESSES_UNUSED, spare, _span_of_path(self.plan, path),
                              help="node k is addresses[k]: remove the unused entries, or check the roles and "
                                   "`hardware.nodes` if a node is missing from the deployment", path=path)]
        return dep, []

    @property
    def deployment(self):
        """The :class:`~sncc.lowering.deployment.Deployment` (every server, node, port), or None
        when the plan is missing or cannot be lowered (see :attr:`deployment_diagnostics`)."""
        return self._lowered[0]

    @property
    def deployment_diagnostics(self) -> list[Diagnostic]:
        """Diagnostics of the deployment phase (SN4042), [] when it lowered."""
        return self._lowered[1]

    @cached_property
    def outputs(self) -> dict[str, str] | None:
        """``{relative path: text}`` of every output file (:func:`sncc.emit.emit_all`), or None
        without a deployment."""
        if self.deployment is None:
            return None
        from sncc.emit import emit_all

        return emit_all(self.deployment)

    @cached_property
    def diagnostics(self) -> list[Diagnostic]:
        """All diagnostics, sorted by file, offset and code; the deployment phase's are added when
        no earlier phase found an error (a plan with errors is not lowered)."""
        out: list[Diagnostic] = list(self._parsed[1]) + list(self._built[1])
        if self.resolved is not None:
            out += self.resolved.diagnostics
        out += self.definitions_diagnostics
        out += self.check_diagnostics
        if not any(d.is_error for d in out):
            out += self.deployment_diagnostics
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


def _span_of_path(plan, path: tuple) -> "object":
    """The span of the plan value at logical ``path`` (``("hardware", "nodes")``), else of the
    nearest block on the way, else the plan's name."""
    node, span = plan, plan.name_span
    for i, key in enumerate(path):
        child = getattr(node, str(key), None) if hasattr(node, "span_of") else None
        if hasattr(child, "span_of"):
            node, span = child, child.name_span or span
            continue
        if hasattr(node, "span_of"):
            span = node.span_of(str(key)) or span
        break
    return span


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

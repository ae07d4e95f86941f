"""Graph-mode checks (SN4011, SN5006, SN5007): the graph mode exists in the
release and runs the model family; the largest decode batch is a captured size;
Omni-Infer's ``decode_gear_list`` keeps its rules.

Facts: ``software.toml [[graph_support]]`` and ``[[capture_grid]]``,
``engines.toml`` (Omni-Infer's gear limit); misconfig BR-10, BR-11.
"""

from __future__ import annotations

import re

from sncc import catalog
from sncc.checks._rules import default_pin_help, engine_release, release_label, release_related
from sncc.catalog.engine_defaults import engine_defaults
from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag



_STATUS_TAG = re.compile(r"\s*\((?:R|R2|I|A|M|C)\)")


def _plain(note: str) -> str:
    """A catalog note without its source-status tags (``(R)``, ``(I)``), for users."""
    return _STATUS_TAG.sub("", note)

def graph_roles(plan):
    """Roles that run captured graphs: ``graph_mode`` true, or unset for decode and serve."""
    return [(n, role) for n, role in plan.roles()
            if (role.graph_mode if role.graph_mode is not None else n != "prefill")]


def _mode_span(plan):
    g = plan.graph
    return g.span_of("mode") if g is not None and g.mode is not None else None


def effective_mode(plan, r=None) -> tuple[str | None, catalog.GraphSupport | None]:
    """(mode, its catalog row): the plan's ``graph.mode``, else the default mode of the release the
    checks judge (:func:`sncc.checks._rules.engine_release`: written, else sncc's default pin)."""
    eng = plan.engine
    version = engine_release(plan, r)
    rows = [g for g in catalog.graph_support() if g.engine == eng.kind]
    if plan.graph is not None and plan.graph.mode is not None:
        mode = plan.graph.mode
        return mode, next((g for g in rows if g.mode == mode), None)
    for g in rows:
        try:
            if g.is_default(version):
                return g.mode, g
        except ValueError:
            return None, None
    return None, None


def check_graph_mode(plan, r):
    """The graph mode exists in the engine release, runs the model family and the TP size (SN4011).
    The release is the one the build writes for (:func:`sncc.checks._rules.engine_release`: written,
    else sncc's default pin); messages name it as :func:`~sncc.checks._rules.release_label` does."""
    roles = graph_roles(plan)
    if not roles:
        return
    eng = plan.engine
    mode, row = effective_mode(plan, r)
    if mode is None:
        return
    span = _mode_span(plan)
    if row is None:
        yield diag(codes.GRAPH_MODE_UNSUPPORTED, f"`{eng.kind}` has no `{mode}` graph mode", span or eng.name_span,
                   help="graph modes of " + eng.kind + ": " + ", ".join(
                       f"`{g.mode}`" for g in catalog.graph_support() if g.engine == eng.kind) or "none catalogued",
                   path=("graph", "mode"))
        return
    version = engine_release(plan, r)
    label = release_label(plan, r)
    where = span or (r.engine_version_span if r is not None and r.engine_version_span is not None
                     else eng.span_of("version")) or eng.name_span
    rel = release_related(plan, r) if span else []
    try:
        if version and not catalog.version_in(version, row.min_version, row.removed_in):
            when = f"removed in {row.removed_in}" if row.removed_in and catalog.parse_version(version) >= catalog.parse_version(row.removed_in) \
                else f"available from {row.min_version}"
            pin_help = default_pin_help(plan, r, f"`graph {{ mode = {mode} }}`")
            yield diag(codes.GRAPH_MODE_UNSUPPORTED, f"{label} has no `{mode}` graph mode ({when})", where,
                       related=rel, help="use the release's default graph mode (remove `graph.mode`) or set `graph_mode = false`"
                       + (f", or {pin_help}" if pin_help else ""),
                       notes=[_plain(row.notes)] if row.notes else [], path=("graph", "mode"))
            return
        mt = getattr(r.arch, "model_type", None) if r.arch is not None else None
        if mt and row.unsupported_model_types and mt in row.unsupported_model_types and (
                version is None or catalog.version_in(version, row.min_version, row.unsupported_until)):
            alt = [g.mode for g in catalog.graph_support() if g.engine == eng.kind and g.mode != mode
                   and (not g.model_types or mt in g.model_types)
                   and (version is None or catalog.version_in(version, g.min_version, g.removed_in))]
            n, role = roles[0]
            yield diag(codes.GRAPH_MODE_UNSUPPORTED,
                       (f"{label} " if label else f"{eng.kind} ") + f"`{mode}` graph mode" + (" (the default)" if span is None else "")
                       + f" does not run `{mt}` models",
                       where, related=rel + [Related(role.name_span, f"`{n}` runs in graph mode")],
                       help=(f"set `graph {{ mode = {alt[0]} }}`, or " if alt else "") + f"set `graph_mode = false` in `{n}` (eager)",
                       notes=[_plain(row.notes)] if row.notes else [], path=("graph", "mode"))
            return
        if mt and row.model_types and mt not in row.model_types:
            yield diag(codes.GRAPH_MODE_UNSUPPORTED, f"`{mode}` graph mode runs only {', '.join(row.model_types)} models, not `{mt}`",
                       where, related=rel, help="use the default graph mode or eager mode", path=("graph", "mode"))
            return
    except ValueError:
        return
    if row.max_tp:
        for n, role in roles:
            if role.tp > row.max_tp:
                yield diag(codes.GRAPH_MODE_UNSUPPORTED, f"`{mode}` graph mode supports tp ≤ {row.max_tp}, `{n}` has tp = {role.tp}",
                           role.span_of("tp"), help=f"use tp ≤ {row.max_tp} (more ep instead) or another graph mode",
                           path=(n, "tp"))


def _eager_ratio(plan, r, name: str, batch: int) -> float | None:
    """Simulator's eager / graph decode-step time at ``batch`` sequences (None when it cannot tell)."""
    try:
        from sncc.checks._cost import decode_step_s
        g = decode_step_s(plan, r, name, batch, graph=True)
        e = decode_step_s(plan, r, name, batch, graph=False)
    except Exception:  # the estimate is optional: any missing fact just drops it
        return None
    if not g or not e:
        return None
    return e / g


def check_capture_grid(plan, r):
    """``max_num_seqs × (1 + draft)`` is a captured graph size (SN5006, warning; misconfig BR-11)."""
    from sncc.engines.registry import plan_adapter

    adapter = plan_adapter(plan)
    if adapter is None or adapter.capture_grid_engine is None:
        return   # engines that compile their own gear list (Omni-Infer: check_decode_gears)
    grid = catalog.capture_grid(adapter.capture_grid_engine)
    g = plan.graph
    explicit = g.capture_sizes if g is not None and g.capture_sizes else None
    if grid is None and explicit is None:
        return
    for n, role in graph_roles(plan):
        draft = r.roles[n].draft_tokens if n in r.roles else 0
        need = role.max_num_seqs * (1 + draft)
        if explicit is not None:
            if need in explicit:
                continue
            below = max([s for s in explicit if s < need], default=None)
            where = f"`graph.capture_sizes` does not list {need}"
            fix = f"add {need} to `capture_sizes`"
        else:
            if grid.contains(need):
                continue
            below, above = grid.nearest(need)
            where = f"{need} is off the default capture grid (1, 2, 4, multiples of {grid.step})"
            fix = (f"set max_num_seqs = {above // (1 + draft)}" if above % (1 + draft) == 0 else "raise max_num_seqs") \
                + f" or list {need} in `graph {{ capture_sizes = [...] }}`"
        ratio = _eager_ratio(plan, r, n, role.max_num_seqs)
        slow = f"; the cost model predicts eager steps {ratio:.1f}× the graph step time" if ratio and ratio > 1.05 else ""
        yield diag(codes.CAPTURE_GRID_MISS,
                   f"`{n}`: decode batches above {below or 0} tokens run without a captured graph: max_num_seqs {role.max_num_seqs}"
                   + (f" × (1 + {draft}) = {need}" if draft else "") + f", and {where}" + slow,
                   role.span_of("max_num_seqs"),
                   related=[Related(g.span_of("capture_sizes"), "capture sizes given here")] if explicit is not None else [],
                   help=fix, notes=[_plain(grid.notes)] if grid is not None and grid.notes and explicit is None else [],
                   path=(n, "max_num_seqs"))


def check_decode_gears(plan, r):
    """Omni-Infer ``decode_gear_list``: at most 6 gears (error), the largest equal to
    ``max_num_seqs × (1 + draft)`` (warning) (SN5007)."""
    from sncc.engines.registry import plan_adapter

    g = plan.graph
    adapter = plan_adapter(plan)
    if adapter is None or not adapter.has_decode_gears or g is None or not g.decode_gears:
        return
    limit = int(engine_defaults()["omni_max_decode_gears"])
    span = g.span_of("decode_gears")
    gears = g.decode_gears
    if len(gears) > limit:
        yield diag(codes.DECODE_GEARS_INVALID, f"decode_gears lists {len(gears)} gears; Omni-Infer compiles at most {limit}",
                   span, help=f"keep the {limit} gears you need most, the largest included", path=("graph", "decode_gears"))
    if any(x <= 0 for x in gears):
        yield diag(codes.DECODE_GEARS_INVALID, "decode gears must be positive token counts", span, path=("graph", "decode_gears"))
        return
    for n, role in graph_roles(plan):
        draft = r.roles[n].draft_tokens if n in r.roles else 0
        top = role.max_num_seqs * (1 + draft)
        if max(gears) != top:
            yield diag(codes.DECODE_GEARS_INVALID,
                       f"`{n}`: the largest decode gear is {max(gears)}, not max_num_seqs × (1 + {draft}) = {top}",
                       span, severity="warning",
                       related=[Related(role.span_of("max_num_seqs"), f"max_num_seqs = {role.max_num_seqs}")],
                       help=f"end the list with {top}: Omni-Infer drops larger gears and appends the max batch, padding every bigger step",
                       path=("graph", "decode_gears"))

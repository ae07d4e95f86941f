"""The ``sncc search`` command (click), kept out of ``cli.py`` (which only registers it).

Exit codes: 0 a candidate meets every SLO; 1 the plan has errors other than its own layout's
(:func:`sncc.search.candidate.layout_errors`: those are reported, the search runs), the space is
empty (SN8101, SN8103, SN8104) or no candidate meets every SLO (SN8105); 2 sncc could not run (unreadable file,
a backend that is not installed or cannot be reached, a written plan that would not check); 130
Ctrl-C stopped the search (the partial report is printed, JSON ``"interrupted": true``).
"""
from __future__ import annotations

import sys
from typing import Optional

import click

#: exit code of a search Ctrl-C stopped (128 + SIGINT, as a shell reports it), its partial report printed
EXIT_INTERRUPTED = 130


def _ints(ctx, param, value: Optional[str]):
    """``1,2,4`` → [1, 2, 4] (a click callback of every list flag).

    Raises ``click.BadParameter`` (a usage error, exit 2) for an empty value or an empty item
    (``1,,2``, ``1,2,``), a word that is not a whole number, or a number below 1."""
    if value is None:
        return None
    items = value.replace(" ", "").split(",")
    if any(v == "" for v in items):
        raise click.BadParameter(f"expected whole numbers separated by commas, e.g. `1,2,4`, found "
                                 f"{'an empty value' if not value.strip() else f'an empty item in `{value}`'}")
    try:
        out = [int(v) for v in items]
    except ValueError:
        raise click.BadParameter(f"expected whole numbers separated by commas, e.g. `1,2,4`, found `{value}`")
    if any(v < 1 for v in out):
        raise click.BadParameter("expected positive whole numbers, e.g. `1,2,4`")
    return out


_LISTS = ("tp", "dp", "pp", "max_num_seqs", "max_num_batched_tokens", "chunked_prefill",
          "prefill_instances", "decode_instances", "serve_instances")


def _space_options(f):
    for name in reversed(_LISTS):
        f = click.option(f"--{name.replace('_', '-')}", name, default=None, callback=_ints, metavar="N,N,...",
                         help=f"values of `{name}` to try (over the plan's `search {{ {name} = [...] }}`)")(f)
    return f


@click.command("search")
@click.argument("plan")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--write", "write_dir", default=None, metavar="DIR",
              help="write the best k plans to DIR as .sn files (each passes `sncc check` and `sncc build`)")
@click.option("--plot", default=None, metavar="FILE.png", help="plot the Pareto frontier (needs matplotlib)")
@click.option("--goodput", is_flag=True, help="rank by the highest request rate meeting every SLO percentile")
@click.option("--top", "top", type=click.IntRange(1, 1000), default=None, help="candidates simulated and written (default 10)")
@click.option("--max-simulated", "max_simulated", type=click.IntRange(1), default=None, metavar="N",
              help="event-simulate at most N candidates: when none of the top k and the frontier meets the "
                   "SLOs, the next ones in screen order are simulated, k at a time, until one meets them or N "
                   "are spent (default 5 × --top, at least 50)")
@click.option("--devices", type=click.IntRange(1), default=None, help="device budget (over `search { devices }`)")
@click.option("--fixed/--budget", "fixed", default=None, help="use exactly --devices, or at most (the default)")
@click.option("--mode", type=click.Choice(["both", "aggregated", "disaggregated"]), default=None)
@click.option("--expert-parallel", "expert_parallel", type=click.Choice(["auto", "on", "off", "both"]), default=None)
@click.option("--speculative", type=click.Choice(["plan", "off", "both"]), default=None)
@_space_options
@click.option("--seed", default=0, show_default=True, type=int, help="random seed of the simulated workloads")
@click.option("--backend", "backend_name", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local worker processes, or a Ray cluster (pip install 'sncc[ray]')")
@click.option("--workers", type=click.IntRange(1), default=None, help="worker processes (local) or tasks in flight (ray)")
@click.option("--address", default=None, help="Ray cluster address (`auto`: the running cluster)")
def search_command(plan: str, fmt: str, write_dir: Optional[str], plot: Optional[str], goodput: bool,
                   top: Optional[int], max_simulated: Optional[int], devices: Optional[int],
                   fixed: Optional[bool], mode: Optional[str],
                   expert_parallel: Optional[str], speculative: Optional[str], seed: int, backend_name: str,
                   workers: Optional[int], address: Optional[str], **lists) -> None:
    """Search the layouts of PLAN for the one serving the most traffic under its SLOs.

    The plan's `search { }` block gives the space (flags override it), its `slo` and `workload`
    the targets. Roles are priced apart, combined by rate matching, checked, screened, and the
    best k plus the Pareto frontier are re-run in the event simulator; while none of those meets
    the SLOs, the next candidates in screen order are, k at a time, up to --max-simulated."""
    from sncc import cli

    try:
        comp, src, extra = cli._compile(plan)
    except cli.ReadFailure as e:
        cli._unreadable_exit(e, fmt)
    diags, sources = cli._diagnostics(comp, src, extra)
    diags = diags + cli._no_plan(comp, src, diags, "search")
    overrides = _overrides(lists, devices, fixed, mode, top, expert_parallel)
    # errors of the plan's own layout (the roles the search replaces) do not stop it: that layout is
    # reported as failing with them; any other error (model, hardware, syntax, SLOs) does
    own_errors = ([] if comp is None or comp.plan is None else
                  layout_errors_of(comp.plan, diags, {**overrides, **_speculative(speculative)}))
    own = {id(d) for d in own_errors}
    if comp is None or any(d.is_error and id(d) not in own for d in diags):
        cli._emit_diagnostics(diags, sources, 1, fmt, sys.stdout.isatty())
        sys.exit(cli.EXIT_PROBLEMS)
    cli._refuse_impossible(comp, diags, sources, fmt, "searching")
    from sncc.sim.from_plan import MissingChipFact, spec_from_plan

    try:                               # a chip the simulator cannot cost: the plan's problem (SN4080)
        spec_from_plan(comp.plan, comp.facts)
    except MissingChipFact as e:
        from sncc.sim.command import missing_chip_fact_diagnostic

        cli._emit_diagnostics([missing_chip_fact_diagnostic(comp.plan, e)], sources, 1, fmt, sys.stdout.isatty())
        sys.exit(cli.EXIT_PROBLEMS)
    except Exception:  # noqa: BLE001 -- anything else is the search's to report, candidate by candidate
        pass
    spec_flag = speculative
    from sncc.search.space import build_space, space_diagnostics

    pre = space_diagnostics(comp.plan, comp.facts, None, {**overrides, "speculative": spec_flag})
    overrides.update(_speculative(spec_flag))
    if not pre:
        space = build_space(comp.plan, comp.facts, overrides)
        pre = space_diagnostics(comp.plan, comp.facts, space, overrides)
    if any(d.is_error for d in pre):
        cli._emit_diagnostics(pre, sources, 1, fmt, sys.stdout.isatty())
        sys.exit(cli.EXIT_PROBLEMS)
    warnings = list(pre)                # SN8102: printed, located, after the text report
    from sncc.search._serial import backend as make_backend
    from sncc.search.report import document, plot_frontier, render_text
    from sncc.search.run import search
    from sncc.search.write import WriteError, write_best

    try:
        bk = make_backend(backend_name, workers=workers, address=address)
    except Exception as e:  # noqa: BLE001 -- BackendUnavailable (Ray not installed) and the like
        cli._fail(str(e), fmt, sources)
    progress, bar = _progress(fmt)
    try:
        with bk:
            res = search(comp.plan, comp.facts, overrides=overrides, backend=bk, goodput=goodput,
                         progress=progress, seed=seed, max_simulated=max_simulated)
    except ValueError as e:             # the plan the simulator cannot price: located, exit 1 (SN5083)
        from sncc.sim.command import not_simulable_diagnostic

        cli._emit_diagnostics([not_simulable_diagnostic(comp, e)], sources, 1, fmt, sys.stdout.isatty())
        sys.exit(cli.EXIT_PROBLEMS)
    except KeyboardInterrupt:           # between stages' items (the stages keep their own)
        click.echo("sncc search: interrupted before a stage finished; nothing to report", err=True)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        if bar is not None:
            bar.stop()
    written: list = []
    if write_dir:
        # the best k the event simulation did not see miss an SLO (met, or uncertain)
        best = [r for r in res.ranked if r.source == "simulate" and r.status in ("met", "uncertain")][: res.space.top]
        try:
            written = write_best(comp, best, write_dir, bool(comp.facts.is_moe))
        except (WriteError, OSError) as e:
            cli._fail(f"--write {write_dir}: {e}", fmt, sources)
        if not best:
            click.echo(f"sncc search: --write {write_dir}: nothing to write (no event-simulated candidate "
                       "of the space met its SLOs or is uncertain)", err=True)
    if plot:
        try:
            plot_frontier(res, plot)
        except ImportError:
            cli._fail("--plot needs matplotlib: pip install 'sncc[plot]'", fmt, sources)
    if own_errors:
        # the plan's own layout fails the checks: its located errors follow the report
        warnings = sorted(own_errors + warnings, key=lambda d: d.sort_key())
        if not res.base_refused:
            res.notes.append(f"the plan's own layout fails the checks ({', '.join(sorted({d.code.code for d in own_errors}))}"
                             ", printed below): the search replaced its roles")
    if not any(r.status == "met" for r in res.ranked):
        from sncc.search.space import no_plan_meets_slo

        warnings.append(no_plan_meets_slo(comp.plan, res.ranked))
    if fmt == "json":
        from sncc.diagnostics.render_json import diagnostic_dict

        cli._echo_json(document(res, comp.plan.name, written, [diagnostic_dict(d, sources) for d in warnings]))
    else:
        click.echo(render_text(res, comp.plan.name), nl=False)
        for p in written:
            click.echo(f"wrote {p}")
        if warnings:
            cli._emit_diagnostics(warnings, sources, 1, fmt, sys.stdout.isatty())
    if res.interrupted:                 # the partial report is printed, but the run did not finish
        click.echo("sncc search: interrupted (Ctrl-C): the report holds what was found; exit 130", err=True)
        sys.exit(EXIT_INTERRUPTED)
    met = any(r.status == "met" for r in res.ranked)
    sys.exit(cli.EXIT_OK if met else cli.EXIT_PROBLEMS)


def layout_errors_of(plan, diags: list, overrides: dict) -> list:
    """:func:`sncc.search.candidate.layout_errors` (imported only when the plan compiled)."""
    from sncc.search.candidate import layout_errors

    return layout_errors(plan, diags, overrides)


def _overrides(lists: dict, devices, fixed, mode, top, expert_parallel) -> dict:
    """The flags over the plan's ``search { }`` block (``--speculative`` apart: :func:`_speculative`)."""
    out = {k: v for k, v in lists.items() if v is not None}
    out.update({k: v for k, v in (("devices", devices), ("fixed", fixed), ("mode", mode), ("top", top))
                if v is not None})
    ep = {"auto": None, "on": [True], "off": [False], "both": [True, False]}.get(expert_parallel or "auto")
    if ep is not None:
        out["expert_parallel"] = ep
    return out


def _speculative(flag) -> dict:
    """``{"speculative": [values]}`` of ``--speculative`` (``plan`` or no flag: {})."""
    values = {"plan": None, "off": [False], "both": [True, False]}.get(flag or "plan")
    return {} if values is None else {"speculative": values}


def _progress(fmt: str):
    """(callback(stage, done, total), rich Progress or None): a bar on a terminal's stderr."""
    if not sys.stderr.isatty():
        return None, None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=Console(stderr=True), transient=True)
    bar.start()
    tasks: dict = {}

    def cb(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = bar.add_task(stage, total=total)
        bar.update(tasks[stage], completed=done, total=total)

    return cb, bar

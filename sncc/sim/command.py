"""The work behind ``sncc simulate`` and ``sncc calibrate`` (the click layer stays thin).

Exit-code decision: an SLO verdict (:func:`sncc.sim.engine.metrics.slo_verdict`, shared with
``sncc search``) is ``met``, ``uncertain`` (the point estimate meets the target, its calibration
interval straddles it) or ``missed`` (the point estimate misses it, even when the interval reaches
the target).  ``simulate`` exits 1 when any SLO is missed; an uncertain verdict is printed as
UNCERTAIN but exits 0 — the prediction does not show a miss — unless ``--strict``, which counts
uncertain as not met (exit 1).
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

EXIT_OK, EXIT_PROBLEMS, EXIT_FAILURE = 0, 1, 2


class CommandError(Exception):
    """A user-facing failure of the command (exit 2); the message says what to do."""


class Progress:
    """Progress of long simulations on a stream (stderr), printed with rich.

    ``for_run(label)`` returns the ``progress(completed, requests)`` callback of one run
    (:func:`sncc.sim.engine.run.simulate_spec`).  Nothing is written until ``after_s`` seconds
    (2 s) of wall time have passed since the command started; then at most one line every
    ``every_s`` seconds: ``sncc simulate: <label>: <completed>/<requests> requests (<elapsed> s)``.
    A terminal gets the same line redrawn in place (rich's live status), a file or pipe one line
    per update."""

    def __init__(self, stream: Any, after_s: float = 2.0, every_s: float = 2.0):
        import time

        from rich.console import Console

        self._clock = time.monotonic
        self.stream = stream
        self.console = Console(file=stream, highlight=False, soft_wrap=True)
        self.t0 = self._clock()
        self.after_s, self.every_s = after_s, every_s
        self._next = self.t0 + after_s
        self.lines = 0
        self._status = None

    def for_run(self, label: str):
        def cb(done: int, total: int) -> None:
            now = self._clock()
            if now < self._next:
                return
            self._next = now + self.every_s
            self.lines += 1
            text = f"sncc simulate: {label}: {done}/{total} requests ({now - self.t0:.0f} s)"
            if self.console.is_terminal:
                if self._status is None:
                    self._status = self.console.status(text)
                    self._status.start()
                else:
                    self._status.update(text)
            else:
                self.console.print(text, markup=False)
        return cb

    def close(self) -> None:
        """End a live status line (terminal only)."""
        if self._status is not None:
            self._status.stop()
            self._status = None


def simulate_plan(comp: Any, *, seed: int = 0, fmt: str = "text", profile: Optional[str] = None,
                  goodput: bool = False, plot: Optional[str] = None, strict: bool = False,
                  what_if: bool = True, progress_stream: Any = "stderr",
                  diagnostics: Any = ()) -> Tuple[str, int]:
    """Simulate a compiled plan; returns (output text, exit code).

    For a missed SLO the what-ifs (:func:`sncc.sim.whatif.cheapest_changes`) run unless
    ``what_if`` is False (``--no-what-if``): then a note in the result says they were skipped.

    Runs longer than a few seconds report progress on ``progress_stream`` (default
    ``sys.stderr``; None = silent), see :class:`Progress`.
    A plan with requests that can never fit its KV pool
    (:class:`~sncc.sim.engine.Unadmittable`) is a problem of the plan, like a missed SLO:
    its message (with the budget ``sncc check`` used) goes to ``sys.stderr`` as ``sncc:
    error: ...`` and the result is ``("", EXIT_PROBLEMS)``; with ``fmt="json"`` the text is
    instead a diagnostics document (``schemas/diagnostics.schema.json``) holding one SN4004
    ``kv-cache-does-not-fit`` error at the plan's name, after ``diagnostics`` (the plan's own,
    after suppressions, which the caller reported: counted in that document's summary too).
    Raises :class:`CommandError` for an unreadable profile or an explicit ``profile`` made for
    another chip generation than the plan's (:func:`sncc.sim.calibration.fit.other_generation`),
    ``--goodput`` on a plan it cannot
    judge (:func:`sncc.sim.whatif.goodput_refusal`: a trace with arrival times, no SLO the
    search judges) and a ``--plot`` path it cannot write (:func:`sncc.sim.plot.resolve_plot_path`:
    a directory, an extension matplotlib does not write, a missing directory; a path without an
    extension gets ``.png``, said on ``sys.stderr``) — all before simulating."""
    import sys
    from sncc.sim.from_plan import spec_from_plan
    from sncc.cost.profile import ProfileError, load_profile
    from sncc.sim.report.text import render_json, render_text
    from sncc.sim.engine.des import Unadmittable
    from sncc.sim.engine.run import simulate_spec as simulate
    from sncc.sim.engine.metrics import violated
    from sncc.sim.whatif import cheapest_changes
    from sncc.sim.whatif import goodput as goodput_search

    from sncc.sim.engine.des import StepBoundExceeded
    from sncc.sim.from_plan import MissingChipFact

    def plan_problem(code: Any, message: str, span: Any, notes: tuple = (), help_: str = "", path: tuple = ()) -> tuple:
        """A problem of the plan found by simulating it: one diagnostic, exit 1 (stderr in text
        mode; the diagnostics document on stdout with ``--format json``)."""
        from sncc.diagnostics import render_json as render_diagnostics
        from sncc.diagnostics import render_text as render_diag_text
        from sncc.diagnostics.model import diag

        d = diag(code, message, span, notes=tuple(notes), help=help_ or None, path=path)
        if fmt == "json":   # the plan's own diagnostics too, as every other diagnostics document carries them
            shown = sorted([*diagnostics, d], key=lambda x: x.sort_key())
            return render_diagnostics.render(shown, comp.sources, 1), EXIT_PROBLEMS
        sys.stderr.write(render_diag_text.render([d], comp.sources, 1, color=sys.stderr.isatty()))
        return "", EXIT_PROBLEMS

    def not_simulable(e: ValueError, where: str = "") -> tuple:
        d = not_simulable_diagnostic(comp, e, where)
        return plan_problem(d.code, d.message, d.span, notes=d.notes, help_=d.help, path=d.path)

    try:
        spec = spec_from_plan(comp.plan, comp.resolved, seed=seed, profile=profile)
    except MissingChipFact as e:       # an absent catalog fact: a located diagnostic (SN4080)
        d = missing_chip_fact_diagnostic(comp.plan, e)
        return plan_problem(d.code, d.message, d.span, notes=d.notes, help_=d.help)
    except ProfileError as e:
        raise CommandError(str(e)) from None
    except ValueError as e:            # a combination the cost model refuses (SN5083), never an internal error
        return not_simulable(e)
    try:
        prof = load_profile(spec.profile)
    except ProfileError as e:
        raise CommandError(str(e)) from None
    if profile is not None:
        # an explicit --profile of another chip generation would run the plan on that generation's
        # efficiencies (calibrate refuses such points by the same rule); the implicit choice
        # (PROFILE_BY_GENERATION, widened intervals and a note where none fits) stays
        from sncc.sim.calibration.fit import other_generation
        from sncc.sim.from_plan import PROFILE_BY_GENERATION

        why = other_generation(prof, spec.chip)
        if why is not None:
            own = PROFILE_BY_GENERATION.get(getattr(spec.chip, "generation", None))
            if own is not None and own != getattr(prof, "id", None):
                hint = f"use --profile {own} (or leave --profile out), or fit a profile on this chip with `sncc calibrate`"
            else:
                hint = ("leave --profile out (sncc then falls back to its nearest profile with widened intervals "
                        "and a note), or fit a profile on this chip with `sncc calibrate`")
            raise CommandError(f"--profile {profile}: the plan runs on {why}; one set of efficiencies cannot "
                               f"describe two chip generations: {hint}")
    # refuse what cannot be done before simulating: a goodput search without a rate to
    # search or an SLO to judge, a plot path matplotlib cannot write
    if goodput:
        from sncc.sim.whatif import goodput_refusal
        why = goodput_refusal(spec)
        if why:
            raise CommandError(why)
    plot_note = ""
    if plot:
        from sncc.sim.report.plot import PlotPathError, PlotUnavailable, resolve_plot_path
        try:
            plot, plot_note = resolve_plot_path(plot)
        except (PlotPathError, PlotUnavailable) as e:
            raise CommandError(str(e)) from None
    stream = sys.stderr if progress_stream == "stderr" else progress_stream
    prog = Progress(stream) if stream is not None else None

    def unadmittable(e: Unadmittable, where: str = "") -> tuple:
        from sncc.diagnostics import codes
        return plan_problem(codes.KV_DOES_NOT_FIT, f"{where}{e.head}", comp.plan.name_span or comp.plan.block_span,
                            notes=tuple(e.notes), help_="give the role more KV memory (devices, tp, "
                            "memory_utilization) or lower the workload's maximum lengths")

    def too_long(e: StepBoundExceeded, where: str = "") -> tuple:
        from sncc.diagnostics import codes
        wl = comp.plan.workload
        return plan_problem(codes.SIMULATION_STEP_BOUND, f"{where}{e}", wl.block_span or comp.plan.block_span,
                            help_="use a chunk size near the engine's default (chunked_prefill of thousands of "
                                 "tokens), or fewer workload requests")

    try:
        try:
            result = simulate(spec, progress=prog.for_run(f"plan `{comp.plan.name}`") if prog else None)
        except Unadmittable as e:
            return unadmittable(e)
        except StepBoundExceeded as e:
            return too_long(e)
        except ValueError as e:
            return not_simulable(e)
        extra = {}
        if not what_if:
            if any(violated(s, v) for s, v in zip(spec.slos, result.slo)):
                result.info.setdefault("notes", []).append("what-ifs not run (--no-what-if)")
        elif any(violated(s, v) for s, v in zip(spec.slos, result.slo)):
            try:
                extra["changes"] = cheapest_changes(spec, result, progress=prog.for_run if prog else None)
            except ValueError as e:
                return not_simulable(e, "in a what-if run: ")
        if goodput:
            try:
                extra["goodput"] = goodput_search(spec, progress=prog.for_run if prog else None)
            except Unadmittable as e:
                # a trial run samples its own requests: a longer one may not fit where the plan's did
                return unadmittable(e, "in a goodput trial run: ")
            except StepBoundExceeded as e:
                return too_long(e, "in a goodput trial run: ")
            except ValueError as e:
                return not_simulable(e, "in a goodput trial run: ")
    finally:
        if prog is not None:
            prog.close()
    if plot:
        from sncc.sim.report.plot import PlotUnavailable, write_plot
        ttft, tpot = getattr(result, "_samples", ([], []))
        try:
            write_plot(result, plot, f"sncc simulate {comp.plan.name} (profile {result.info.get('profile')})",
                       ttft, tpot, spec.slos)
        except PlotUnavailable as e:
            raise CommandError(str(e)) from None
        except OSError as e:
            raise CommandError(f"cannot write {plot}: {e.strerror or e}") from None
        if plot_note:
            sys.stderr.write(f"sncc: note: {plot_note}\n")
        sys.stderr.write(f"wrote {plot}\n")
    if fmt == "json":
        # the plan's own diagnostics (after suppressions; stderr in text mode), in the diagnostics
        # document's item shape, so an editor or CI reading stdout sees the warnings too
        from sncc.diagnostics.render_json import diagnostic_dict
        extra = dict(extra, diagnostics=[diagnostic_dict(d, comp.sources)
                                         for d in sorted(diagnostics, key=lambda x: x.sort_key())])
    text = render_json(result, extra) if fmt == "json" else render_text(result, comp.plan, extra)
    verdicts = [s.verdict for s in result.slo]
    bad = "missed" in verdicts or (strict and "uncertain" in verdicts)
    return text, EXIT_PROBLEMS if bad else EXIT_OK


def calibrate(m: Any, out: str) -> Tuple[str, dict]:
    """Fit a profile to checked measurements ``m``
    (:class:`sncc.sim.calibration.measurements.Measurements`) and write it to ``out``; returns
    (the report as text, the result for ``--format json``: ``measurements``, ``base``,
    ``profile`` written, ``values`` fitted, ``rows`` (``name``, ``family``, ``predicted``,
    ``measured``, ``residual``) and ``notes``).

    Raises :class:`CommandError` (missing scipy, a fit that is underdetermined, moves nothing,
    ends on a bound or misses its data, an output that cannot be written)."""
    from sncc.sim.calibration.fit import CalibrationError, check_output, fit, format_table, write_profile
    from sncc.cost.profile import ProfileError

    try:
        check_output(out, m.base)    # -o the base profile itself: before the fit, not after it
        res = fit(m.base, m.keys, m.points, specs=m.specs or None)
        write_profile(res, m.base, m.file, out, residual_floor=m.residual_floor)
    except (CalibrationError, ProfileError) as e:
        raise CommandError(str(e)) from None
    except OSError as e:
        raise CommandError(f"cannot write {out}: {e.strerror or e}") from None
    from sncc.units import format_count

    base, points = m.base, m.points
    notes = [f"point {pt.n}: merged bench results: {line}"
             for pt in points for line in (pt.bench or {}).get("approximate", ())]
    lines = [f"fitted {format_count(len(res['values']), 'constant')} of profile {base} to {format_count(len(points), 'point')}:"]
    for k, v in res["values"].items():
        lines.append(f"  {k} = {v:.6g}")
    lines += [f"  note: {n}" for n in notes]
    lines.append("")
    lines.append(format_table(res["rows"]))
    lines.append("")
    lines.append(f"wrote {out}; use it with `sncc simulate --profile {out} PLAN`")
    result = {"measurements": m.file, "base": base, "profile": out, "values": dict(res["values"]),
              "rows": [{"name": r.name, "family": r.family, "predicted": r.predicted, "measured": r.published,
                        "residual": r.residual} for r in res["rows"]],
              "notes": notes}
    return "\n".join(lines) + "\n", result


def missing_chip_fact_diagnostic(plan: Any, e: Any) -> Any:
    """SN4080 at the plan's ``hardware`` chip (or system) for :class:`sncc.sim.from_plan.MissingChipFact`
    ``e``: the catalog lacks a sourced fact the simulator needs (``sncc simulate`` and
    ``sncc search`` refuse the plan with it, exit 1)."""
    from sncc.diagnostics import codes
    from sncc.diagnostics.model import diag

    hw = plan.hardware
    span = hw.span_of("chip") or hw.span_of("system") or hw.block_span
    return diag(codes.CHIP_FACTS_MISSING, f"cannot simulate chip `{e.chip}`: the catalog has no sourced value for "
                f"{', '.join(e.missing)}", span, notes=(getattr(e, "why", ""),),
                help=f"add the fact with its source to [chips.{e.chip}] in sncc/catalog/data/chips.toml, "
                     "or plan for a chip the catalog describes")


def not_simulable_diagnostic(comp: Any, e: Exception, where: str = "") -> Any:
    """SN5083 for a ``ValueError`` the simulator raised on a plan that passed ``sncc check``
    (``sncc simulate`` and ``sncc search`` report it, exit 1, never as an internal error).

    Located at the first error a suppression comment hid (the likely cause, named in a note),
    else at the plan's name."""
    from sncc.diagnostics import codes
    from sncc.diagnostics.filters import apply_suppressions
    from sncc.diagnostics.model import diag

    plan = comp.plan
    all_diags = list(comp.diagnostics)
    shown = {id(d) for d in apply_suppressions(all_diags, comp.sources, report_unused=False)}
    hidden = [d for d in all_diags if d.is_error and id(d) not in shown and d.span is not None]
    notes: list = []
    span = plan.name_span or plan.block_span
    path: tuple = ("plan",)
    if hidden:
        first = hidden[0]
        span, path = first.span, tuple(first.path) or ("plan",)
        notes.append(f"a suppression comment hides {first.code.code} {first.code.name} here: {first.message}")
    return diag(codes.NOT_SIMULABLE, f"{where}the simulator cannot model this plan: {e}", span, notes=tuple(notes),
                help="fix the plan (remove the suppression and read what `sncc check` says)" if hidden
                     else "fix the value the message names", path=path)

"""What ``sncc search`` prints: the ranked table, the Pareto frontier, the stages (rich), the JSON
document (``schemas/search.schema.json``) and the frontier plot (matplotlib)."""
from __future__ import annotations

import io
from typing import Any, Optional

from sncc.search.run import Row, SearchResult
from sncc.units import format_count

#: version of the JSON document (schemas/search.schema.json ``schema_version``)
SCHEMA_VERSION = 1
#: refused candidates the text report names before "and N more" (JSON `rejected` lists every one)
REFUSED_SHOWN = 5
#: distinct refusals (code, message, help) the text report prints under the refused candidates
REASONS_SHOWN = 8


def _latency(d: dict, fmt: str) -> str:
    if "p50" not in d:
        return format(d.get("mean", float("nan")), fmt) + " (mean)"
    return " / ".join(format(d[s], fmt) for s in ("p50", "p90", "p99"))


def _interval(d: dict) -> str:
    """The 80 % calibration interval as factors of the figures (the same for every percentile)."""
    v, lo, hi = d.get("mean"), d.get("mean_low"), d.get("mean_high")
    if not v or lo is None or hi is None:
        return "–"
    return f"×{lo / v:.2f}–{hi / v:.2f}"


def _label(r: Row) -> str:
    """The candidate's layout, with the larger batches predicted the same (``… b80 (= b96, b112)``)."""
    if not r.equivalent:
        return r.candidate.label()
    same = ", ".join("b" + "/".join(str(n) for n in seqs) for seqs in r.equivalent)
    return f"{r.candidate.label()} (= {same})"


#: the line under the ranked table saying which TTFT its column shows
_BASIS_NOTE = {
    "client": "TTFT column: client TTFT (request sent to first token, the queue in front of the engines "
              "included), what the `ttft` SLO is judged on; JSON `client_ttft_s` (`ttft_s` is the engine's)",
    "engine": "TTFT column: engine TTFT (dispatch to first token), what an `engine_ttft` SLO is judged on; "
              "JSON `ttft_s` (`client_ttft_s` adds the queue in front of the engines)",
}


def _hidden_ranks(shown: list, ranks: dict) -> str:
    """The ranks above the last one ``shown`` that the table leaves out, as ``3–5, 8`` ("" for none)."""
    got = sorted(ranks[r.candidate.key()] for r in shown if r.candidate.key() in ranks)
    if not got:
        return ""
    missing = sorted(set(range(1, got[-1] + 1)) - set(got))
    runs: list = []
    for n in missing:
        if runs and runs[-1][1] == n - 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in runs)


def _ttft_key(basis: str) -> str:
    """The metrics key of the TTFT the SLOs are judged on (``client_ttft_s`` or ``ttft_s``)."""
    return "client_ttft_s" if basis == "client" else "ttft_s"


def _table(rows: list, title: str, rank_from: Optional[dict] = None, basis: str = "engine"):
    """A rich table of ``rows``; its TTFT column is the ``basis`` TTFT (``client`` or ``engine``),
    the one the plan's SLOs are judged on, labelled in the header."""
    from rich.table import Table

    t = Table(title=title, title_justify="left", show_lines=False)
    key = _ttft_key(basis)
    for name, just in (("#", "right"), ("status", "left"), ("layout", "left"), ("devices", "right"),
                       ("tok/s/dev", "right"), ("tok/s/user", "right"), ("QPM", "right"),
                       (f"{basis} TTFT s p50/p90/p99", "left"), ("80 %", "left"), ("TPOT ms p50/p90/p99", "left"),
                       ("80 % ", "left"),
                       ("binds", "left")):
        t.add_column(name, justify=just, overflow="fold")
    for i, r in enumerate(rows):
        m = r.metrics
        rank = (rank_from or {}).get(r.candidate.key(), i + 1)
        t.add_row(str(rank), r.status, _label(r), str(r.candidate.devices),
                  f"{m['tokens_per_s_per_device']:.1f}", f"{m['tokens_per_s_per_user']:.1f}", f"{m['qpm']:.0f}",
                  _latency(m.get(key) or m["ttft_s"], ".2f"), _interval(m.get(key) or m["ttft_s"]),
                  _latency(m["tpot_ms"], ".1f"),
                  _interval(m["tpot_ms"]), str(m.get("bound") or ""))
    return t


def render_text(res: SearchResult, plan_name: str, width: int = 160) -> str:
    """The rich report: stages, the ranked table (top k), the Pareto frontier and the notes (the
    SN8102 / SN8105 warnings are diagnostics, located in the plan: ``sncc search`` prints them after it)."""
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    con = Console(file=buf, width=width, force_terminal=False, color_system=None, highlight=False)
    sp = res.space
    con.print(f"sncc search {plan_name}: {' and '.join(sp.modes)}, "
              f"{'exactly' if sp.fixed else 'at most'} {format_count(sp.budget, 'device')}, {sp.size} role points")
    st = Table(title="stages", title_justify="left")
    for c in ("stage", "candidates", "kept", "seconds"):
        st.add_column(c, justify="left" if c == "stage" else "right")
    for s in res.stages:
        st.add_row(s.name, f"{s.saw:,}", f"{s.kept:,}", f"{s.seconds:.2f}")
    st.add_row("total", "", "", f"{sum(s.seconds for s in res.stages):.2f}")
    con.print(st)
    line = simulation_line(res)
    if line:
        con.print(line)
    simulated = [r for r in res.ranked if r.source == "simulate"]
    top = simulated[: sp.top] or res.ranked[: sp.top]
    ranks = {r.candidate.key(): i + 1 for i, r in enumerate(res.ranked)}
    by = "goodput (highest rate meeting every SLO percentile)" if res.goodput else "output tokens/s per device"
    basis = res.ttft_basis
    how = ("event-simulated, 80 % calibration intervals" if simulated or not top else
           "analytic screen only: no candidate was event-simulated")
    con.print(_table(top, f"best {len(top)} (ranked by {by}; {how})", ranks, basis))
    con.print(_BASIS_NOTE[basis])
    hidden = _hidden_ranks(top, ranks)
    if hidden:
        many = "–" in hidden or "," in hidden
        con.print(f"{'ranks' if many else 'rank'} {hidden} {'are' if many else 'is'} not shown: only the analytic "
                  f"screen ran for {'them' if many else 'it'} (not event-simulated); `--format json` lists every rank")
    screen_only = len(res.ranked) - len(simulated)
    if simulated and screen_only:
        first = len(simulated) + 1
        span = f"rank {first}" if screen_only == 1 else f"ranks {first}–{len(res.ranked)}"
        con.print(f"{span}: {format_count(screen_only, 'candidate')} only the analytic screen ran for (not "
                  "event-simulated; the screen is optimistic), ranked after every simulated one; "
                  "`--format json` lists them (`source: screen`)")
    if res.frontier:
        con.print(_table(res.frontier, "Pareto frontier: tokens/s per device against tokens/s per user", ranks,
                         basis))
    base_rank = res.rank_of(res.base)
    if res.base is not None and res.base_refused:
        where = f", and lies outside the searched space ({res.base_outside})" if res.base_outside else ""
        con.print(f"the plan's own layout ({res.base.label()}) fails the checks{where}: not ranked or written; "
                  "the search replaced its roles and ranks the layouts of its space")
        for code, message, _help in res.base_refused:
            con.print(f"  {code + ': ' if code else ''}{message}")
    elif res.base is not None and res.base_outside:
        ref = res.reference
        figures = (f"; for reference: {ref.status} ({ref.source}), {ref.metrics['tokens_per_s_per_device']:.1f} "
                   f"tok/s/dev, QPM {ref.metrics['qpm']:.0f}") if ref is not None else ""
        con.print(f"the plan's own layout ({res.base.label()}) is outside the searched space "
                  f"({res.base_outside}): not ranked or written{figures}")
    elif res.base is not None:
        row = next((r for r in res.ranked if r.candidate.key() == res.base.key()), None)
        if row is not None and base_rank is not None:
            best = res.ranked[0].metrics["tokens_per_s_per_device"] if res.ranked else 0.0
            con.print(f"the plan's own layout ({res.base.label()}) ranks {base_rank} of {len(res.ranked)}: "
                      f"{row.status}, {row.metrics['tokens_per_s_per_device']:.1f} tok/s/dev "
                      f"(best {best:.1f}), QPM {row.metrics['qpm']:.0f}")
        else:
            con.print(f"the plan's own layout ({res.base.label()}) is not ranked: "
                      + ", ".join(res.rejected.get(res.base.label(), ["outside the space"])))
    if not res.ranked:
        con.print("no candidate of the searched space passed the checks: nothing is ranked or written")
    if res.rejected:
        shown = sorted(res.rejected.items())[:REFUSED_SHOWN]
        more = len(res.rejected) - len(shown)
        con.print(f"{format_count(len(res.rejected), 'candidate')} refused by the checks and not ranked: "
                  + "; ".join(f"{k}: {', '.join(v)}" for k, v in shown)
                  + (f"; and {more} more (`--format json` lists them all)" if more else ""))
        for line in refusal_lines(res):
            con.print(line)
    for n in res.notes:
        con.print(f"note: {n}")
    if res.interrupted:
        con.print("interrupted: the tables hold what was found before Ctrl-C")
    return buf.getvalue()


def simulation_line(res: SearchResult) -> str:
    """How many candidates the event simulation ran for, and why it stopped there ("" without stage 4)."""
    sim = res.simulation
    if sim is None or not sim.simulated:
        return ""
    k = res.space.top
    text = f"event-simulated {format_count(sim.simulated, 'candidate')} of at most {sim.max_simulated} (--max-simulated)"
    if sim.more:
        text += (f": none of the first {sim.first} (the top {k}, the Pareto frontier, the plan's own layout) "
                 f"met the SLOs, so {sim.more} more in screen order, {k} at a time")
        met = any(r.source == "simulate" and r.status == "met" for r in res.ranked)
        if met:
            text += ", until one met them"
    if sim.budget_reached:
        text += (f"; the budget is spent with none met: {format_count(sim.screen_only, 'candidate')} only the "
                 "screen ran for may still meet them (raise --max-simulated)")
    return text


def refusal_lines(res: SearchResult) -> list:
    """Each distinct refusal of the checks once (its code, how many candidates it refused, its
    message and help), most frequent first; at most :data:`REASONS_SHOWN`, then how many more."""
    count: dict = {}
    for label in sorted(res.rejected):
        for r in res.reasons.get(label, ()):
            count[tuple(r)] = count.get(tuple(r), 0) + 1
    ordered = sorted(count.items(), key=lambda kv: (-kv[1], kv[0]))
    out = []
    for (code, message, help_), n in ordered[:REASONS_SHOWN]:
        out.append(f"  {code} ({format_count(n, 'candidate')}): {message}" + (f"; help: {help_}" if help_ else ""))
    if len(ordered) > REASONS_SHOWN:
        out.append(f"  and {len(ordered) - REASONS_SHOWN} more distinct refusals (`--format json` lists each "
                   "candidate's, `sncc explain CODE` explains a code)")
    return out


def _row_doc(r: Row, rank: Optional[int]) -> dict:
    """A ranked row's JSON object (``rank`` None: the unranked reference row, which has no ``rank``)."""
    c = r.candidate
    roles = []
    for rc in c.roles:
        lay = rc.layout
        roles.append({"role": lay.role, "instances": rc.instances, "tp": lay.tp, "dp": lay.dp, "pp": lay.pp,
                      "expert_parallel": lay.expert_parallel, "devices_per_instance": lay.devices,
                      "max_num_seqs": rc.max_num_seqs, "max_num_batched_tokens": lay.max_num_batched_tokens,
                      "chunked_prefill": lay.chunk, "speculative": lay.speculative})
    m = r.metrics
    doc = {"rank": rank, "status": r.status, "source": r.source, "mode": c.mode, "layout": c.label(),
            "devices": c.devices, "roles": roles, "qpm": m["qpm"], "tokens_per_s": m["tokens_per_s"],
            "tokens_per_s_per_device": m["tokens_per_s_per_device"],
            "tokens_per_s_per_user": m["tokens_per_s_per_user"], "ttft_s": m["ttft_s"],
            "client_ttft_s": m.get("client_ttft_s"), "tpot_ms": m["tpot_ms"],
            "bound": m.get("bound"), "goodput_qpm": m.get("goodput_qpm"),
            "slo": [{"name": n, "verdict": v} for n, v in r.slo], "warnings": list(r.warnings),
            "equivalent_max_num_seqs": [list(seqs) for seqs in r.equivalent]}
    if rank is None:
        del doc["rank"]
    return doc


def document(res: SearchResult, plan_name: str, written: Optional[list] = None,
             diagnostics: Optional[list] = None) -> dict:
    """The JSON document of ``res`` (``schemas/search.schema.json``); ``diagnostics``: the search's
    located warnings (SN8102 dropped values, SN8105 nothing met) as
    :func:`sncc.diagnostics.render_json.diagnostic_dict` objects."""
    sp = res.space
    ranked = [_row_doc(r, i + 1) for i, r in enumerate(res.ranked)]
    ranks = {r.candidate.key(): i + 1 for i, r in enumerate(res.ranked)}
    return {
        "schema_version": SCHEMA_VERSION,
        "plan": plan_name,
        "space": {"modes": list(sp.modes), "devices": sp.budget, "fixed": sp.fixed, "top": sp.top,
                  "role_points": sp.size, "batches": list(sp.batches),
                  "layouts": {k: len(v) for k, v in sorted(sp.layouts.items())},
                  "dropped": [{"dimension": d, "value": v, "why": w} for d, v, w in sp.dropped]},
        "stages": [s.to_dict() for s in res.stages],
        "ranked": ranked,
        "frontier": [ranks[r.candidate.key()] for r in res.frontier],
        "base": {"layout": res.base.label(), "rank": res.rank_of(res.base), "outside": res.base_outside,
                 "reference": _row_doc(res.reference, None) if res.reference is not None else None,
                 "refused": [{"code": c or None, "message": msg, "help": h or None} for c, msg, h in res.base_refused]}
        if res.base else None,
        "rejected": [{"layout": k, "codes": v,
                      "reasons": [{"code": c, "message": msg, "help": h or None} for c, msg, h in res.reasons.get(k, ())]}
                     for k, v in sorted(res.rejected.items())],
        "ranked_by": "goodput_qpm" if res.goodput else "tokens_per_s_per_device",
        "ttft_judged_on": res.ttft_basis,
        "interrupted": res.interrupted,
        "simulation": res.simulation.to_dict() if res.simulation is not None else None,
        "notes": list(res.notes),
        "written": list(written or []),
        "diagnostics": list(diagnostics or []),
    }


def plot_frontier(res: SearchResult, path: str) -> None:
    """Write the frontier (tokens/s per device against tokens/s per user) and every simulated
    candidate to ``path`` (PNG).  Raises ImportError without matplotlib (``sncc[plot]``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for mode, marker in (("aggregated", "o"), ("disaggregated", "s")):
        pts = [r for r in res.ranked if r.candidate.mode == mode]
        if pts:
            ax.scatter([r.metrics["tokens_per_s_per_user"] for r in pts],
                       [r.metrics["tokens_per_s_per_device"] for r in pts], marker=marker, alpha=0.4, label=mode)
    fr = res.frontier
    if fr:
        ax.plot([r.metrics["tokens_per_s_per_user"] for r in fr], [r.metrics["tokens_per_s_per_device"] for r in fr],
                "k-", label="Pareto frontier (simulated)")
    ax.set_xlabel("tokens/s per user")
    ax.set_ylabel("output tokens/s per device")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

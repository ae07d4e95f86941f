"""The text report of ``sncc simulate``: rich tables of throughput, latency percentiles, SLO verdicts
with their intervals, where the time goes, what-ifs and goodput.

Numbers are written by :func:`sncc.sim.report.units.fmt` (fixed point, no exponents, ``n/a`` for a
figure the run does not define) in one unit per metric; the latency table shows the same
statistics the JSON document's ``latency`` and the plot's legends do
(:func:`sncc.sim.report.units.window_stats`).  The step breakdown lists the registered cost terms
(:data:`sncc.cost.terms.TERMS`) that cost time, each with its description, and says which terms
are zero for this plan and why.  Colour only on a terminal (``color=True``).
"""
from __future__ import annotations

import io
from typing import Any, Dict, List, Optional

from sncc.sim.engine.metrics import RATE_METRICS
from sncc.sim.report.units import NA, fmt, to_unit, unit_of, window_stats
from sncc.units import format_count

#: why a registered cost term may be zero for a plan (report footnote)
ZERO_WHY = {
    "attention.indexer": "no lightning indexer (not DeepSeek-V3.2/V4)",
    "ffn.dense": "no dense FFN layers",
    "moe.shared": "no shared experts",
    "moe.routed": "dense model",
    "moe.dequant": "experts stored at the activation width (no low-bit dequantization)",
    "vector.elementwise": "profile sets no elementwise cost",
    "comm.tp_allreduce": "attention TP 1",
    "comm.tp_dense_ffn": "attention TP 1 or no dense FFN layers",
    "comm.tp_moe_output": "attention TP 1 or dense model",
    "comm.ep_dispatch_combine": "no expert-parallel dispatch (dense model, one device, or TP-sharded experts)",
    "draft": "no speculative decoding",
}
#: terms a decode step / a prefill step never has (not listed as zero)
NOT_IN = {"decode_step": ("attention.prefill", "overhead.prefill_step"),
          "prefill_step": ("attention.decode", "lm_head", "draft")}


def _console(color: bool, width: int = 110):
    from rich.console import Console

    return Console(file=io.StringIO(), width=width, color_system="standard" if color else None,
                   force_terminal=color, highlight=False, soft_wrap=True, emoji=False)


def _table(title: str, *cols: str, right_from: int = 1, keep: int = 1):
    """A report table; its first ``keep`` columns never wrap (a name split over two lines reads
    as two rows)."""
    from rich import box
    from rich.table import Table

    t = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD, pad_edge=False,
              show_edge=False)
    for i, c in enumerate(cols):
        t.add_column(c, justify="right" if i >= right_from else "left", no_wrap=i < keep)
    return t


def _after(c: dict) -> str:
    """What a what-if leaves of every SLO (met / missed / uncertain; "predicted to miss" = missed:
    the point estimate misses, :func:`sncc.sim.engine.metrics.slo_verdict`)."""
    verdicts = c.get("verdicts") or {}
    short = c.get("predicted_to_miss") or []
    if c.get("all_slos") == "met":
        return "every SLO met"
    if not short:
        k = sum(v == "uncertain" for v in verdicts.values())
        return f"no SLO predicted to miss ({k} uncertain)" if k else "no SLO predicted to miss"
    return "still predicted to miss: " + ", ".join(f"{n} ({verdicts.get(n, '?')})" for n in short)


#: the what-ifs :func:`sncc.sim.whatif.cheapest_changes` tries
_WHATIFS = "one more instance, MTP, larger KV blocks"


def no_change_line(verdicts) -> str:
    """The line printed when the what-ifs ran and none helped, true to why they ran: ``verdicts``
    are the run's SLO verdicts (objects with ``name`` and ``verdict``).  The what-ifs run for SLOs
    that are missed (``metrics.violated``); with nothing missed the line names the uncertain SLOs
    instead of "a missed SLO"."""
    missed = [v.name for v in verdicts if v.verdict == "missed"]
    unsure = [v.name for v in verdicts if v.verdict == "uncertain"]
    if missed:
        what = "the missed SLO" + ("s " if len(missed) > 1 else " ") + ", ".join(missed)
        return f"no what-if ({_WHATIFS}) moves {what} beyond the seed noise"
    if unsure:
        many = len(unsure) > 1
        return (f"no SLO is missed; {', '.join(unsure)} {'are' if many else 'is'} uncertain (the calibration "
                f"interval straddles the target) and no what-if ({_WHATIFS}) moves {'them' if many else 'it'} "
                "beyond the seed noise")
    return f"every SLO is met: no what-if ({_WHATIFS}) was needed"


def render_text(result, plan, extra: dict | None = None, *, color: bool = False) -> str:
    """The human report of one run (module docstring)."""
    from sncc.sim.whatif import MT_KEEPS_UP

    extra = extra or {}
    d = result.to_dict()
    info = d["info"]
    con = _console(color)
    p = con.print
    p(f"plan `{plan.name}`: {format_count(d['requests']['completed'], 'request')} in {fmt(d['duration_s'], 's')} "
      f"(simulated, profile {info.get('profile', '?')})")
    for n in [info.get("profile_note"), info.get("interval_note"), *(info.get("not_applied") or ()),
              *(info.get("notes") or ())]:
        if n:
            p(f"  note: {n}", markup=False)

    p()
    sat = d.get("saturated") or {}
    t = _table("throughput", "", "whole run", "steady state" if sat else "")
    t.add_row("QPM", fmt(d["qpm"]), fmt(sat.get("qpm")) if sat else "")
    t.add_row("output tokens/s", fmt(d["output_tokens_per_s"]), fmt(sat.get("output_tokens_per_s")) if sat else "")
    t.add_row("output tokens/s per device", fmt(d["output_tokens_per_s_per_device"]),
              fmt(sat.get("output_tokens_per_s_per_device")) if sat else "")
    t.add_row("tokens/s per user (mean)", fmt(d["tokens_per_s_per_user"].get("mean")),
              fmt(sat.get("tokens_per_s_per_user")) if sat else "")
    p(t)
    p()

    def lat_table(title, rows):
        lt = _table(title, "", "mean", "p50", "p90", "p99")
        for label, key, unit, k in rows:
            row = rows_src.get(key) or {}
            lt.add_row(f"{label} ({unit})", *(fmt(None if row.get(s) is None else row.get(s) * k) for s in
                                              ("mean", "p50", "p90", "p99")))
        return lt

    spec_rows = (("client TTFT", "client_ttft_s", "s", 1.0), ("engine TTFT", "ttft_s", "s", 1.0),
                 ("TPOT", "tpot_ms", "ms", 1.0), ("e2e", "e2e_s", "s", 1.0), ("queue", "queue_s", "s", 1.0))
    rows_src = {k: d.get(k) or {} for k in ("client_ttft_s", "ttft_s", "tpot_ms", "e2e_s", "queue_s")}
    p(lat_table("latency, whole run", spec_rows))
    p()
    if sat:
        rule = {"admission-blocked": "admission blocked", "closed-loop": "first completion to last dispatch"}.get(
            sat.get("window"), "arrivals 10-90 %")
        rows_src = {k: v for k, v in window_stats(result).items() if k != "window"}
        p(lat_table(f"latency, steady state ({rule}: {fmt(sat['start_s'], 's')} to {fmt(sat['end_s'], 's')}, "
                    f"{format_count(int(sat['requests']), 'request')})", spec_rows))
        p()

    iv = d.get("intervals") or {}
    if iv:
        it = _table(f"80 % calibration intervals ({info.get('interval_basis', 'leave-one-out residuals')})", "", "prediction",
                    "interval")
        for k, lab, unit in (("qpm", "QPM", ""), ("client_ttft_s", "client TTFT mean", "s"),
                             ("ttft_s", "engine TTFT mean", "s"), ("tpot_ms", "TPOT mean", "ms")):
            if k in iv:
                x = iv[k]
                it.add_row(lab, fmt(x["value"], unit), f"{fmt(x['low'])} to {fmt(x['high'], unit)}")
        p(it)
        p()

    if d.get("slo"):
        ttft_slo = any(s.get("metric") == "ttft" for s in d["slo"])
        cols = ("verdict", "SLO", "window", "predicted", "interval") + (("engine TTFT",) if ttft_slo else ())
        st = _table("SLOs", *cols, right_from=3, keep=2)
        for s in d["slo"]:
            m = s.get("metric", "")
            unit = "" if unit_of(m) == "req/min" else unit_of(m)
            obs = fmt(to_unit(m, s["observed"]), unit)
            rng = (f"{fmt(to_unit(m, s['low']))} to {fmt(to_unit(m, s['high']), unit)}"
                   if s.get("low") is not None else "")
            if s["verdict"] == "n/a":
                done = (d.get("requests") or {}).get("completed", 0)
                rng = ("no request has more than one output token" if m in ("tpot", "tokens_per_s_per_user")
                       else f"too few requests ({done})"
                       if done and m in RATE_METRICS else "no completed request")
            mark = {"met": "met", "missed": "MISSED", "uncertain": "UNCERTAIN", "n/a": NA}[s["verdict"]]
            if s["verdict"] == "missed" and s.get("reaches_target") and rng:
                rng += " (reaches the target)"     # missed, though part of the interval would meet it
            row = [mark, s["name"] + (" (client)" if s.get("basis") == "client" else ""), s.get("window", ""), obs, rng]
            if ttft_slo:
                eo = s.get("engine_observed")
                row.append(fmt(to_unit(m, eo), unit) if (m == "ttft" and eo is not None) else "")
            st.add_row(*row)
        p(st)
        p()

    b = d.get("binds") or {}
    if b.get("time_shares"):
        wt = _table(f"where a request's time goes ({'steady state' if b.get('window') == 'steady' else 'whole run'})",
                    "", "mean", "share")
        for k, v in b["time_shares"].items():
            wt.add_row(k.replace("_", " "), fmt(v["mean_s"], "s"), fmt(100 * v["share"], "%", 2))
        p(wt)
        kv = b.get("kv_transfer")
        if kv and "kv_transfer" in b["time_shares"]:
            p(f"  of the KV transfer, waiting for shared P/D links: {fmt(kv['contention_mean_s'], 's')} "
              f"({fmt(100 * kv['contention_share'], '%', 2)}; {kv['delayed']} of {format_count(kv['transfers'], 'transfer')} delayed)")
    p()
    _steps(p, b)

    ch = extra.get("changes")
    if ch:
        p("\ncheapest changes for the SLOs predicted to miss (each re-simulated):")
        for c in ch:
            eff = "; ".join(f"{e['slo']}: {fmt(to_unit(e.get('metric', ''), e['before']))} -> "
                            f"{fmt(to_unit(e.get('metric', ''), e['after']), unit_of(e.get('metric', '')))}"
                            for e in c["effects"])
            need = f", needs {format_count(c['needs_devices'], 'device')} beyond the plan's hardware" if c.get("needs_devices") else ""
            p(f"  {c['change']} (+{format_count(c['added_devices'], 'device')}{need}): {eff}; after it: {_after(c)}", markup=False)
    elif "changes" in extra:
        p("\n  " + no_change_line(result.slo), markup=False)
    gp = extra.get("goodput")
    if gp:
        names = ", ".join(gp.get("binding") or ())
        unit, turns = gp.get("unit", "req/s"), gp.get("turns", 1) or 1
        what = "every latency and tokens/s-per-user SLO (client TTFT = queue + TTFT) on the steady window while keeping up"
        if turns > 1:
            what += f" with at least {100 * MT_KEEPS_UP:.0f} % of the offered turns completed"
        ivl = (f" (interval {fmt(gp['low'])} to {fmt(gp['high'])})" if gp.get("low") is not None
               and gp.get("high") is not None else "")
        burst = gp.get("burstiness", 1.0)
        process = "Poisson" if burst in (None, 1, 1.0) else f"Gamma (burstiness {burst:g})"
        arrivals = (f"{process} conversation starts ({turns} turns each: {fmt(gp['rate'] * turns)} requests/s)"
                    if turns > 1 else f"{process} arrivals")
        if gp["rate"] > 0:
            bind = f"; binding above it: {names}" if names else ""
            p(f"\ngoodput: {fmt(gp['rate'])} {unit}{ivl} ({fmt(gp['qpm'])} QPM) of {arrivals} meet {what} "
              f"({format_count(gp['runs'], 'run')}){bind}", markup=False)
        else:
            low = min((r for r, _ in gp.get("trials") or ()), default=0.0)
            p(f"\ngoodput: none - no rate down to {fmt(low)} {unit} meets {what} ({format_count(gp['runs'], 'run')})"
              + (f"; failing there: {names}" if names else ""), markup=False)
        if ivl:
            p("  interval: the rates at which the pessimistic / optimistic ends of the calibration residuals "
              "still meet every SLO")
    p("\nTTFT SLOs are judged on client TTFT (request sent to first token, queueing in front of the engine "
      "included), what `vllm bench serve` (bench.sh) and its --goodput measure; engine TTFT is from dispatch to an "
      "engine instance (the engine's own metric) and `queue` the time before it; an `engine_ttft` SLO is judged on "
      "engine TTFT.  An SLO whose prediction meets its target while the 80 % calibration interval straddles "
      "it is UNCERTAIN (exit 0 unless --strict); a prediction that misses its target is MISSED (exit 1), its "
      "interval marked \"reaches the target\" when part of it would meet the target.", markup=False)
    return con.file.getvalue()


def _steps(p, b: Dict[str, Any]) -> None:
    """The decode and prefill step breakdowns: one row per registered cost term that costs time."""
    from sncc.cost.terms import TERMS

    for key, lab in (("decode_step", "decode step"), ("prefill_step", "prefill step")):
        st = b.get(key)
        if not st:
            continue
        what = (f"{format_count(st['batch_per_group'], 'sequence')} per DP rank" if "batch_per_group" in st
                else f"one {fmt(st['tokens'])}-token prompt")
        terms = st.get("terms") or {}
        total = st["total"] or 1.0
        t = _table(f"{lab} ({what}): {fmt(1e3 * st['total'], 'ms')}", "cost term", "ms", "share", "what it is",
                   right_from=1)
        t.columns[3].justify = "left"
        zero: List[str] = []
        for term in TERMS:
            v = terms.get(term.name, 0.0)
            if v > 0:
                t.add_row(term.name, fmt(1e3 * v), fmt(100 * v / total, "%", 2), term.label)
            elif (st.get("hidden") or {}).get(term.name):
                zero.append(f"{term.name} ({fmt(1e3 * st['hidden'][term.name], 'ms')} hidden behind compute "
                            "by two-micro-batch overlap)")
            elif term.name in ZERO_WHY and term.name not in NOT_IN[key]:
                zero.append(f"{term.name} ({ZERO_WHY[term.name]})")
        p(t)
        vb = st.get("vector_by_op")
        if vb and terms.get("vector.elementwise"):
            p("  elementwise work by family: " + ", ".join(
                f"{k.replace('_', ' ')} {fmt(1e3 * v, 'ms')}" for k, v in vb.items() if v))
        if zero:
            p("  zero here: " + "; ".join(zero), markup=False)
        p()


def render_json(result, extra: Optional[dict] = None) -> str:
    """The JSON document (:func:`sncc.sim.report.json.render_json`)."""
    from sncc.sim.report.json import render_json as _r

    return _r(result, extra)

"""Render a :class:`~sncc.sim.metrics.SimResult` as a text report or JSON
(``schemas/simulate.schema.json``)."""

from __future__ import annotations

import json
import math

from sncc.sim.whatif import MT_KEEPS_UP


def _num(x) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


#: SLO metric -> (unit of its JSON numbers, unit shown in the text report, text value per JSON
#: value).  JSON keeps SI seconds for every latency; the report shows TPOT in ms, TTFT and e2e in
#: s, QPM bare (the name is its unit)
SLO_UNITS = {"ttft": ("s", "s", 1.0), "tpot": ("s", "ms", 1e3), "e2e": ("s", "s", 1.0),
             "qpm": ("req/min", "", 1.0), "output_tokens_per_s": ("tokens/s", "tokens/s", 1.0),
             "tokens_per_s_per_user": ("tokens/s", "tokens/s", 1.0)}


def _slo_metric(name: str) -> str:
    """``tpot`` of an SLO name such as ``tpot.mean < 0.05`` or ``qpm >= 600``."""
    return name.split(" ", 1)[0].split(".", 1)[0]


def result_dict(result, extra: dict | None = None) -> dict:
    """The JSON document of a run: the result's fields plus ``$schema`` and ``extra``
    (``goodput``, ``changes``).  Each ``slo`` entry gets ``unit``, the unit of its ``target``,
    ``observed``, ``low`` and ``high`` (:data:`SLO_UNITS`: ``s`` for latencies, SI as in the name)."""
    d = result.to_dict()
    for e in d.get("slo") or ():
        u = SLO_UNITS.get(_slo_metric(e["name"]))
        if u:
            e["unit"] = u[0]
    doc = {"$schema": "https://sncc.dev/schemas/simulate.schema.json"}
    doc.update(d)
    if extra:
        doc.update(extra)
    return json.loads(json.dumps(doc, default=lambda o: None), parse_constant=lambda c: None)


def render_json(result, extra: dict | None = None) -> str:
    """JSON text (2-space indent, trailing newline)."""
    return json.dumps(result_dict(result, extra), indent=2, allow_nan=False) + "\n"


def _fmt_slo_value(name: str, v: float) -> str:
    """Value ``v`` (JSON unit) of the SLO called ``name`` in its report unit, e.g. ``45 ms``."""
    if v is None or v != v:        # None / nan: the run defines no value (an n/a verdict)
        return "-"
    _, unit, k = SLO_UNITS.get(_slo_metric(name), ("", "", 1.0))
    x = v * k
    return f"{x:.3g} {unit}" if unit == "ms" else f"{x:.4g} {unit}".rstrip()


def _slo_label(name: str) -> str:
    """An SLO name (``tpot.mean < 0.05``, target in SI) with its target in the report unit:
    ``tpot.mean < 50 ms``."""
    parts = name.split(" ")
    if len(parts) != 3:
        return name
    try:
        target = float(parts[2])
    except ValueError:
        return name
    return f"{parts[0]} {parts[1]} {_fmt_slo_value(name, target)}"


def _after(c: dict) -> str:
    """What a what-if leaves of every SLO, in the verdict model (met / missed / uncertain;
    "predicted to miss" = missed, or uncertain with the point estimate missing)."""
    verdicts = c.get("verdicts") or {}
    short = c.get("predicted_to_miss") or []
    if c.get("all_slos") == "met":
        return "every SLO met"
    if not short:
        k = sum(v == "uncertain" for v in verdicts.values())
        return f"no SLO predicted to miss ({k} uncertain)" if k else "no SLO predicted to miss"
    return "still predicted to miss: " + ", ".join(f"{_slo_label(n)} ({verdicts.get(n, '?')})" for n in short)


def render_text(result, plan, extra: dict | None = None) -> str:
    """A human report: throughput, latency percentiles (run and steady state), SLO verdicts
    with their calibration intervals, where the time goes, and what-ifs / goodput."""
    d = result.to_dict()
    extra = extra or {}
    lines = [f"plan `{plan.name}`: {d['requests']['completed']} requests in {d['duration_s']:.1f} s (simulated, "
             f"profile {d['info'].get('profile', '?')})", ""]
    if d["info"].get("profile_note"):
        lines[-1:-1] = [f"  note: {d['info']['profile_note']}"]
    for n in d["info"].get("not_applied") or ():
        lines[-1:-1] = [f"  note: {n}"]
    for n in d["info"].get("notes") or ():
        lines[-1:-1] = [f"  note: {n}"]
    lines.append(f"  {'QPM (whole run)':<28}{d['qpm']:>10.1f}")
    lines.append(f"  {'output tokens/s':<28}{d['output_tokens_per_s']:>10.0f}")
    lines.append(f"  {'output tokens/s per device':<28}{d['output_tokens_per_s_per_device']:>10.1f}")
    tpu = _num(d["tokens_per_s_per_user"].get("mean"))
    # no request with more than one output token: no decode speed to report (n/a, not 0)
    lines.append(f"  {'tokens/s per user (mean)':<28}" + (f"{tpu:>10.1f}" if tpu is not None else f"{'n/a':>10}"))
    lines.append("")

    def table(title, rows):
        lines.append(f"  {title:<16}{'mean':>10}{'p50':>10}{'p90':>10}{'p99':>10}")
        for label, row in rows:
            row = row or {}
            cells = "".join(f"{(row.get(s) or 0):>10.3g}" for s in ("mean", "p50", "p90", "p99"))
            lines.append(f"  {label:<16}{cells}")

    table("whole run", [("TTFT (s)", d["ttft_s"]), ("TPOT (ms)", d["tpot_ms"]), ("e2e (s)", d["e2e_s"]),
                        ("queue (s)", d["queue_s"])])
    sat = d.get("saturated") or {}
    if sat:
        lines.append("")
        rule = "admission blocked" if sat.get("window") == "admission-blocked" else "arrivals 10–90 %"
        lines.append(f"  steady state ({rule}: {sat['start_s']:.0f}–{sat['end_s']:.0f} s, "
                     f"{sat['requests']:.0f} requests): QPM {sat['qpm']:.1f}")
        p = sat["percentiles"]
        table("steady state", [("TTFT (s)", p["ttft_s"]), ("TPOT (ms)", p["tpot_ms"]), ("e2e (s)", p["e2e_s"]),
                               ("queue (s)", p["queue_s"])])
    iv = d.get("intervals") or {}
    if iv:
        lines.append("")
        lines.append("  calibration intervals (from the profile's residuals):")
        for k, lab, unit in (("qpm", "QPM", ""), ("ttft_s", "TTFT mean", " s"), ("tpot_ms", "TPOT mean", " ms")):
            if k in iv:
                x = iv[k]
                lines.append(f"    {lab:<10} {x['value']:.4g}{unit}  in [{x['low']:.4g}, {x['high']:.4g}]{unit}")
    if d.get("slo"):
        lines.append("")
        for s in d["slo"]:
            mark = {"met": "met      ", "missed": "MISSED   ", "uncertain": "UNCERTAIN", "n/a": "n/a      "}[s["verdict"]]
            rng = ""
            if s.get("low") is not None:
                rng = f"  interval [{_fmt_slo_value(s['name'], s['low'])}, {_fmt_slo_value(s['name'], s['high'])}]"
            win = " (steady state)" if s.get("window") == "steady" else ""
            if s["verdict"] == "n/a":    # undefined on this run: neither met nor missed
                rng = ("  (no completed request has more than one output token)"
                       if s["name"].startswith(("tpot", "tokens_per_s_per_user")) else "  (no completed request)")
            lines.append(f"  {mark} {_slo_label(s['name']) + win:<38} observed {_fmt_slo_value(s['name'], s['observed'])}{rng}")
    b = d.get("binds") or {}
    if b.get("time_shares"):
        lines.append("")
        lines.append(f"  where a request's time goes ({'steady state' if b.get('window') == 'steady' else 'whole run'}):")
        for k, v in b["time_shares"].items():
            lines.append(f"    {k.replace('_', ' '):<14}{v['mean_s']:>10.3g} s  {100 * v['share']:>5.1f} %")
        kv = b.get("kv_transfer")
        if kv and "kv_transfer" in b["time_shares"]:
            lines.append(f"      of the KV transfer, waiting for shared P/D links: {kv['contention_mean_s']:.3g} s "
                         f"({100 * kv['contention_share']:.1f} %; {kv['delayed']} of {kv['transfers']} transfers delayed)")
    for key, lab in (("decode_step", "decode step"), ("prefill_step", "prefill step")):
        st = b.get(key)
        if st:
            what = (f"{st['batch_per_group']} seqs per attention group" if "batch_per_group" in st
                    else f"one {st['tokens']:.0f}-token prompt")
            comp = ", ".join(f"{k.replace('_', ' ')} {1e3 * st[k]:.3g}" for k in
                             ("attention", "ffn", "vector", "comm_exposed", "head_mtp", "launch") if k in st)
            lines.append(f"    {lab} ({what}): {1e3 * st['total']:.3g} ms = {comp} ms")
            vb = st.get("vector_by_op")
            if vb and st.get("vector"):
                lines.append("      vector unit: " + ", ".join(
                    f"{k.replace('_', ' ')} {1e3 * v:.3g}" for k, v in vb.items() if v) + " ms")
    ch = extra.get("changes")
    if ch:
        lines.append("")
        lines.append("  cheapest changes for the SLOs predicted to miss (each re-simulated):")
        for c in ch:
            eff = "; ".join(f"{_slo_label(e['slo'])}: {_fmt_slo_value(e['slo'], e['before'])} -> "
                            f"{_fmt_slo_value(e['slo'], e['after'])}" for e in c["effects"])
            need = (f", needs {c['needs_devices']} devices beyond the plan's hardware"
                    if c.get("needs_devices") else "")
            lines.append(f"    {c['change']} (+{c['added_devices']} devices{need}): {eff}; after it: {_after(c)}")
    elif "changes" in extra:
        lines.append("")
        lines.append("  no what-if (one more instance, MTP, larger KV blocks) moves a missed SLO beyond the seed noise")
    gp = extra.get("goodput")
    if gp:
        lines.append("")
        names = ", ".join(_slo_label(n) if " " in n else n for n in gp.get("binding") or ())
        unit, turns = gp.get("unit", "req/s"), gp.get("turns", 1) or 1
        what = ("every latency and tokens/s-per-user SLO (client TTFT = queue + TTFT) on the steady window "
                "while keeping up")
        if turns > 1:
            what += f" with at least {100 * MT_KEEPS_UP:.0f} % of the offered turns completed"
        iv = (f" (interval {gp['low']:.3g}–{gp['high']:.3g})" if gp.get("low") is not None
              and gp.get("high") is not None else "")
        burst = gp.get("burstiness", 1.0)
        process = "Poisson" if burst in (None, 1, 1.0) else f"Gamma (burstiness {burst:g})"
        arrivals = (f"{process} conversation starts ({turns} turns each: {gp['rate'] * turns:.3g} requests/s)"
                    if turns > 1 else f"{process} arrivals")
        if gp["rate"] > 0:
            bind = f"; binding above it: {names}" if names else ""
            lines.append(f"  goodput: {gp['rate']:.3g} {unit}{iv} ({gp['qpm']:.1f} QPM) of {arrivals} meet {what} "
                         f"({gp['runs']} runs){bind}")
        else:
            low = min((r for r, _ in gp.get("trials") or ()), default=0.0)
            lines.append(f"  goodput: none — no rate down to {low:.3g} {unit} meets {what} ({gp['runs']} runs)"
                         + (f"; failing there: {names}" if names else ""))
        if iv:
            lines.append("    interval: the rates at which the pessimistic / optimistic ends of the calibration "
                         "residuals still meet every SLO")
    lines.append("")
    lines.append("TTFT is measured from dispatch to an engine instance (the engine's own metric); "
                 "time in the proxy queue is `queue`.  An SLO whose calibration interval straddles its target "
                 "is UNCERTAIN (exit 0 unless --strict).")
    return "\n".join(lines) + "\n"

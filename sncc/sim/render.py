"""Render a :class:`~sncc.sim.metrics.SimResult` as a text table or JSON
(``schemas/simulate.schema.json``)."""

from __future__ import annotations

import json
import math


def _num(x) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def result_dict(result) -> dict:
    """The JSON document of a run: the result's fields plus ``$schema``."""
    d = result.to_dict()
    doc = {"$schema": "https://sncc.dev/schemas/simulate.schema.json"}
    doc.update(d)
    return json.loads(json.dumps(doc, default=lambda o: None), parse_constant=lambda c: None)


def render_json(result) -> str:
    """JSON text (2-space indent, trailing newline)."""
    return json.dumps(result_dict(result), indent=2, allow_nan=False) + "\n"


def render_text(result, plan) -> str:
    """A human table: throughput, latency percentiles and the SLO verdicts."""
    d = result.to_dict()
    lines = [f"plan `{plan.name}`: {d['requests']['completed']} requests in {d['duration_s']:.1f} s (simulated)", ""]
    lines.append(f"  {'QPM':<28}{d['qpm']:>10.1f}")
    lines.append(f"  {'output tokens/s':<28}{d['output_tokens_per_s']:>10.0f}")
    lines.append(f"  {'output tokens/s per device':<28}{d['output_tokens_per_s_per_device']:>10.1f}")
    tpu = _num(d["tokens_per_s_per_user"].get("mean"))
    lines.append(f"  {'tokens/s per user (mean)':<28}{(tpu or 0):>10.1f}")
    lines.append("")
    lines.append(f"  {'':<12}{'mean':>10}{'p50':>10}{'p90':>10}{'p99':>10}")
    for label, key, scale, unit in (("TTFT", "ttft_s", 1, "s"), ("TPOT", "tpot_ms", 1, "ms"),
                                    ("e2e", "e2e_s", 1, "s"), ("queue", "queue_s", 1, "s")):
        row = d.get(key) or {}
        cells = "".join(f"{(row.get(s) or 0) * scale:>10.3g}" for s in ("mean", "p50", "p90", "p99"))
        lines.append(f"  {label + ' (' + unit + ')':<12}{cells}")
    sat = d.get("saturated") or {}
    if sat:
        lines.append("")
        lines.append(f"  steady state ({sat['start_s']:.0f}–{sat['end_s']:.0f} s, {sat['requests']:.0f} requests dispatched):")
        lines.append(f"    QPM {sat['qpm']:.1f}   TTFT mean {sat['ttft_s']:.3g} s   TPOT mean {sat['tpot_ms']:.3g} ms   e2e mean {sat['e2e_s']:.3g} s")
    if d.get("slo"):
        lines.append("")
        for s in d["slo"]:
            mark = "met   " if s["met"] else "MISSED"
            lines.append(f"  {mark} {s['name']:<24} observed {s['observed']:.4g}")
    lines.append("")
    lines.append("TTFT is measured from dispatch to an engine instance (the engine's own metric); "
                 "time in the proxy queue is `queue`.")
    return "\n".join(lines) + "\n"

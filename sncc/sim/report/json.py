"""The JSON document of ``sncc simulate --format json`` (``schemas/simulate.schema.json``).

One unit per metric (:mod:`sncc.sim.report.units`): top-level figures carry their unit in their
name (``ttft_s``, ``tpot_ms``, ``qpm``); every ``slo`` entry and every what-if effect gives its
``unit`` and holds ``target``, ``observed``, ``low`` and ``high`` in it — TPOT in ms, TTFT and e2e
in s — with a name that shows the same unit (``tpot.mean < 50 ms``).  NaN becomes null.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Optional

from sncc.sim.report.units import to_unit, unit_of, window_stats


def _slo_entry(e: Dict[str, Any]) -> Dict[str, Any]:
    m = e.get("metric", "")
    out = dict(e)
    for k in ("target", "observed", "low", "high", "engine_observed"):
        out[k] = to_unit(m, e.get(k))
    out["unit"] = unit_of(m)
    return out


def result_dict(result: Any, extra: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The JSON document of a run: the result's fields (SLO entries in their metric's unit),
    ``latency`` (the window statistics the text report and the plot show,
    :func:`sncc.sim.report.units.window_stats`), ``$schema`` and ``extra`` (``goodput``, ``changes``,
    with what-if effects in their SLO's unit)."""
    d = result.to_dict()
    d["slo"] = [_slo_entry(e) for e in d.get("slo") or ()]
    d["latency"] = window_stats(result)
    doc: Dict[str, Any] = {"$schema": "https://sncc.dev/schemas/simulate.schema.json"}
    doc.update(d)
    if extra:
        extra = dict(extra)
        if extra.get("changes"):
            extra["changes"] = [dict(c, effects=[dict(e, before=to_unit(e.get("metric", ""), e["before"]),
                                                      after=to_unit(e.get("metric", ""), e["after"]),
                                                      unit=unit_of(e.get("metric", "")))
                                                 for e in c["effects"]]) for c in extra["changes"]]
        doc.update(extra)
    return json.loads(json.dumps(doc, default=lambda o: None), parse_constant=lambda c: None)


def render_json(result: Any, extra: Optional[Dict[str, Any]] = None) -> str:
    """JSON text (2-space indent, trailing newline)."""
    return json.dumps(result_dict(result, extra), indent=2, allow_nan=False) + "\n"

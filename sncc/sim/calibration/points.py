"""Measured calibration points: what was published, how to predict it, which residual family it feeds.

A :class:`Point` is one published row (a plan and its measured figures, or a computed scenario such
as a CloudMatrix-Infer decode point).  :func:`predict` simulates it with a profile and returns the
same metrics in the same units; :func:`load_manifest` reads a calibration manifest such as
``tests/calibration/calibration.toml`` (format in that file's header).

Metrics and units:

* ``tpot_ms`` [ms] — client TPOT, the mean over requests of (e2e - TTFT) / (output - 1);
* ``ttft_s`` [s] — client TTFT (proxy/scheduler queue + engine TTFT), mean over requests;
* ``engine_ttft_s`` [s] — engine TTFT (dispatch to first token), the seed-000 definition;
* ``qpm`` [requests/min]; ``output_tokens_per_s`` [tok/s] — total output tokens / benchmark time;
* scenario metrics: ``tok_s_per_npu`` [tok/s per 910C package], ``prefill_tok_s_per_npu``.

``window`` ``run`` reads each metric over the whole run (ramp-up and drain included, as a benchmark
client reports it), ``steady`` over the steady-state window (:class:`sncc.sim.engine.metrics.SimResult`).
"""
from __future__ import annotations

import math

import os
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover
    import tomli as _toml

#: measured metric -> residual family (sncc.sim.engine.metrics.FAMILY uses the same families)
METRIC_FAMILY: Dict[str, str] = {
    "tpot_ms": "tpot", "ttft_s": "ttft", "engine_ttft_s": "ttft", "qpm": "throughput",
    "output_tokens_per_s": "throughput", "tok_s_per_npu": "throughput",
    "prefill_tok_s_per_npu": "prefill_throughput",
}
#: unit of each metric, for tables
METRIC_UNIT: Dict[str, str] = {
    "tpot_ms": "ms", "ttft_s": "s", "engine_ttft_s": "s", "qpm": "req/min", "output_tokens_per_s": "tok/s",
    "tok_s_per_npu": "tok/s/NPU", "prefill_tok_s_per_npu": "tok/s/NPU",
}
SCENARIOS = ("cloudmatrix-decode", "cloudmatrix-prefill")


class ManifestError(ValueError):
    """A calibration manifest that cannot be read, or a point whose plan does not compile."""


@dataclass
class Point:
    """One published calibration row.

    ``id``; ``group`` (leave-one-out fold); ``role`` ``fit`` or ``report``; ``window`` ``run`` or
    ``steady``; ``measured`` {metric: value} (:data:`METRIC_FAMILY` keys); ``source``; ``spec`` the
    :class:`~sncc.sim.spec.SimSpec` of its plan (None for a scenario); ``scenario`` (kind and
    parameters of a computed point); ``plan`` the plan file; ``features`` the
    :class:`~sncc.sim.calibration.intervals.PlanFeatures` used for regimes and the nearest point;
    ``bound`` ``floor`` for a figure the engine reaches at least (:meth:`error`); ``weight`` of its
    metrics in a fit (1; a point with two metrics of one quantity, e.g. CloudMatrix's TPOT and
    tok/s per NPU, weighs each 1/sqrt(2))."""

    id: str
    group: str
    role: str
    window: str
    measured: Dict[str, float]
    source: str = ""
    spec: Any = None
    scenario: Optional[Dict[str, Any]] = None
    plan: str = ""
    features: Any = None
    plan_name: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)
    bound: str = ""
    weight: float = 1.0

    def error(self, metric: str, predicted: float) -> float:
        """The residual ``predicted / measured - 1`` of ``metric`` as the point's reading allows:
        two-sided for a measurement; for a ``floor`` (a figure the engine reaches at least: the
        vllm-ascend nightly baselines, calibration-set.md §B) only a prediction below it is an
        error (a prediction above it is 0)."""
        r = predicted / self.measured[metric] - 1.0
        return min(0.0, r) if self.bound == "floor" else r


def spec_of_plan(path: str, *, profile: Optional[str] = None):
    """The :class:`SimSpec` of the plan file at ``path`` (its suppressions honoured).

    Raises :class:`ManifestError` when it cannot be read or has errors."""
    from sncc.compiler import compile_file
    from sncc.sim.from_plan import spec_from_plan
    from sncc.source import SourceFile

    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as e:
        raise ManifestError(f"cannot read plan {path}: {getattr(e, 'strerror', None) or e}") from None
    from sncc.diagnostics.filters import apply_suppressions

    comp = compile_file(SourceFile(path, text))
    diags = apply_suppressions(comp.diagnostics, comp.sources, report_unused=False) if comp is not None else []
    if comp is None or comp.plan is None or any(d.is_error for d in diags):
        raise ManifestError(f"plan {path} has errors; run `sncc check {path}`")
    return spec_from_plan(comp.plan, comp.resolved, profile=profile), comp


def load_manifest(path: str) -> Tuple[List[Point], List[Dict[str, Any]]]:
    """(points, rows not stated) of the calibration manifest at ``path``.

    Raises :class:`ManifestError` for an unreadable file, an unknown metric, a missing plan, or a
    plan with errors."""
    from sncc.sim.calibration.intervals import plan_features, scenario_features

    try:
        with open(path, "rb") as fh:
            data = _toml.load(fh)
    except (OSError, _toml.TOMLDecodeError) as e:
        raise ManifestError(f"cannot read calibration manifest {path}: {e}") from None
    here = os.path.dirname(os.path.abspath(path))
    points: List[Point] = []
    meta = ("id", "group", "plan", "scenario", "role", "window", "source", "isl", "osl", "batch_per_npu", "bound",
            "weight", "client_rate")
    for row in data.get("point", []):
        measured = {k: float(v) for k, v in row.items() if k not in meta}
        unknown = [k for k in measured if k not in METRIC_FAMILY]
        if unknown:
            raise ManifestError(f"{path}: point {row.get('id')}: unknown metric(s) {', '.join(unknown)}")
        bound = row.get("bound", "")
        if bound not in ("", "floor"):
            raise ManifestError(f"{path}: point {row.get('id')}: bound must be \"floor\" or absent, got {bound!r}")
        p = Point(id=row["id"], group=row.get("group", row["id"]), role=row.get("role", "fit"),
                  window=row.get("window", "run"), measured=measured, source=row.get("source", ""),
                  bound=bound, weight=float(row.get("weight", 1.0)))
        if "scenario" in row:
            if row["scenario"] not in SCENARIOS:
                raise ManifestError(f"{path}: point {p.id}: unknown scenario {row['scenario']!r}")
            p.scenario = {k: row[k] for k in ("scenario", "isl", "osl", "batch_per_npu") if k in row}
            p.features = scenario_features(p.scenario)
        else:
            plan = os.path.normpath(os.path.join(here, row["plan"]))
            p.plan = plan
            p.spec, comp = spec_of_plan(plan)
            if "client_rate" in row:
                # the benchmark client's --request-rate under its --max-concurrency (a plan states
                # one or the other): conversations start at the rate and wait for a free slot
                rate = float(row["client_rate"])
                if rate <= 0 or not p.spec.workload.concurrency:
                    raise ManifestError(f"{path}: point {p.id}: client_rate needs a positive rate and a "
                                        f"plan with a concurrency")
                p.spec = replace(p.spec, workload=replace(p.spec.workload, rate=rate))
            p.plan_name = comp.plan.name
            p.features = plan_features(p.spec)
        points.append(p)
    return points, list(data.get("not_stated", []))


def _result_metric(res: Any, metric: str, window: str) -> float:
    """``metric`` of a :class:`SimResult` over ``window`` (module docstring)."""
    sat = res.saturated if window == "steady" else None
    if window == "steady" and not sat:
        raise ManifestError("no steady-state window in the run")
    if metric == "tpot_ms":
        return sat["tpot_ms"] if sat else res.tpot_ms["mean"]
    if metric == "ttft_s":
        return sat["percentiles"]["client_ttft_s"]["mean"] if sat else res.ttft_s["mean"] + res.queue_s["mean"]
    if metric == "engine_ttft_s":
        return sat["ttft_s"] if sat else res.ttft_s["mean"]
    if metric == "qpm":
        return sat["qpm"] if sat else res.qpm
    if metric == "output_tokens_per_s":
        return res.output_tokens_per_s
    raise ManifestError(f"metric {metric} is not a plan metric")


#: metrics an unrunnable trial predicts far below the measurement (throughputs: a floor then still
#: counts it); the others (latencies) far above it, by ``sncc calibrate``'s UNSERVABLE_RESIDUAL
UNADMITTABLE_LOW = frozenset({"qpm", "output_tokens_per_s", "tok_s_per_npu", "prefill_tok_s_per_npu"})


def predict(point: Point, profile: str, cache: Optional[Dict[Any, Any]] = None) -> Dict[str, float]:
    """The point's metrics predicted with ``profile`` (an id or an in-memory trial profile).

    ``cache`` (a dict kept for one profile) shares one simulation between points of the same plan
    file (e.g. seed 000's fitted QPM/TPOT and its reported TTFT)."""
    from sncc.sim.calibration import scenarios as S

    if point.scenario is not None:
        kind = point.scenario["scenario"]
        if kind == "cloudmatrix-decode":
            m = S.cloudmatrix_decode_step(point.scenario["isl"], point.scenario["osl"],
                                          point.scenario["batch_per_npu"], profile=profile)
            return {k: m[k] for k in ("tpot_ms", "tok_s_per_npu")}
        return {"prefill_tok_s_per_npu": S.cloudmatrix_prefill_tok_s_per_npu(profile=profile)}
    from sncc.sim.engine.des import Unadmittable
    from sncc.sim.engine.run import simulate_spec

    key = (point.plan, profile)
    res = cache.get(key) if cache is not None else None
    if res is None:
        try:
            res = simulate_spec(replace(point.spec, profile=profile), series=False)
        except Unadmittable:
            # trial constants (a fitted reserve) that leave a request no room: the deployment
            # cannot run, which the fit must see as far off, not as a crash
            from sncc.sim.calibration.fit import UNSERVABLE_RESIDUAL

            off = math.exp(UNSERVABLE_RESIDUAL)
            return {m: point.measured[m] * (1.0 / off if m in UNADMITTABLE_LOW else off) for m in point.measured}
        if cache is not None:
            cache[key] = res
    return {m: _result_metric(res, m, point.window) for m in point.measured}

"""Least-squares fit of profile constants to measured points, and leave-one-out cross-validation.

Shared by ``sncc calibrate`` (:mod:`sncc.sim.calibration.fit`) and the calibration-set benchmark
(``bench/calibration.py``).  The fit minimises the sum of squared log residuals
``ln(predicted / measured)`` of every measured metric of every ``role = "fit"`` point (scipy
``least_squares``, trust-region reflective, constants in log space, each within its bounds);
a point's metrics can be weighted.  Trial profiles are in-memory copies of the base profile
(:data:`sncc.cost.profile._CUSTOM`), so nothing is written while fitting.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from sncc.sim.calibration.points import Point, predict


def get_value(raw: Dict[str, Any], key: str) -> float:
    """Value of dotted constant ``key`` of a profile dict (KeyError when absent)."""
    node: Any = raw
    for part in key.split("."):
        node = node[part]
    return float(node["value"])


def set_value(raw: Dict[str, Any], key: str, value: float) -> None:
    """Set dotted constant ``key`` of a profile dict to ``value`` (KeyError when absent)."""
    node: Any = raw
    for part in key.split("."):
        node = node[part]
    node["value"] = float(value)


class TrialProfile:
    """Context manager: an in-memory profile id holding ``raw`` with ``values`` applied."""

    _n = 0

    def __init__(self, raw: Dict[str, Any], values: Dict[str, float]):
        TrialProfile._n += 1
        self.id = f"__trial_{TrialProfile._n}"
        self.raw = copy.deepcopy(raw)
        for k, v in values.items():
            set_value(self.raw, k, v)

    def __enter__(self) -> str:
        from sncc.cost import profile as P
        P._CUSTOM[self.id] = self.raw
        P._load_raw.cache_clear()
        return self.id

    def __exit__(self, *exc) -> None:
        from sncc.cost import profile as P
        P._CUSTOM.pop(self.id, None)
        P._load_raw.cache_clear()


#: constants a fit may move that are not profile constants: ``name -> apply(points, value) ->
#: points`` (e.g. an engine's memory reserve, :mod:`sncc.capacity`, which re-sizes the KV pools of the
#: points that engine serves); registered by the caller of the fit
EXTRA_KEYS: Dict[str, Callable[[Sequence[Point], float], List[Point]]] = {}


def _split(values: Dict[str, float]) -> Tuple[Dict[str, float], Dict[str, float]]:
    prof = {k: v for k, v in values.items() if k not in EXTRA_KEYS}
    extra = {k: v for k, v in values.items() if k in EXTRA_KEYS}
    return prof, extra


#: a profile constant derived from the others at every trial: ``moe.imbalance`` from the profile's
#: ``moe.eplb_step_ratio`` (:func:`derived_values`)
DERIVED = "moe.imbalance"
STEP_RATIO = "moe.eplb_step_ratio"


def derived_values(raw: Dict[str, Any], values: Dict[str, float]) -> Dict[str, float]:
    """``values`` with the derived constants of profile ``raw`` set for them.

    A profile holding ``moe.eplb_step_ratio`` (CloudMatrix-Infer's perfect-EPLB / default prefill
    throughput, a whole-step ratio) gets ``moe.imbalance`` (the max/mean load on the routed-expert
    matmuls, :mod:`sncc.cost.terms`) derived from it at these constants: the routed factor that
    makes the model's own CloudMatrix-Infer prefill step that much slower than its balanced form
    (:func:`sncc.sim.calibration.scenarios.routed_imbalance`).  Other profiles are returned as
    they are, and so are ``values`` that set ``moe.imbalance`` themselves (a fit of it)."""
    if "eplb_step_ratio" not in raw.get("moe", {}) or DERIVED in values:
        return values
    from sncc.sim.calibration.scenarios import cloudmatrix_prefill_parts, routed_imbalance
    prof, _ = _split(values)
    prof[DERIVED] = 1.0
    with TrialProfile(raw, prof) as pid:
        total, routed = cloudmatrix_prefill_parts(pid)
    out = dict(values)
    out[DERIVED] = routed_imbalance(get_value(raw, STEP_RATIO), total, routed)
    return out


def predict_points(points: Sequence[Point], raw: Dict[str, Any], values: Dict[str, float]) -> Dict[str, Dict[str, float]]:
    """{point id: {metric: predicted}} of ``points`` with profile ``raw`` + ``values`` (profile
    constants, and any :data:`EXTRA_KEYS` applied to the points), the derived constants
    recomputed from them (:func:`derived_values`)."""
    prof, extra = _split(derived_values(raw, values))
    for k, v in extra.items():
        points = EXTRA_KEYS[k](points, v)
    with TrialProfile(raw, prof) as pid:
        cache: Dict[Any, Any] = {}
        return {p.id: predict(p, pid, cache) for p in points}


#: state of the worker processes of a parallel Jacobian (set before the pool forks)
_POOL_STATE: Dict[str, Any] = {}


def _column(args) -> List[float]:
    """One finite-difference column: the log residuals at ``values`` (a worker process)."""
    values, = args
    st = _POOL_STATE
    return log_residuals(st["points"], predict_points(st["points"], st["raw"], values), st["weights"])


def log_residuals(points: Sequence[Point], preds: Dict[str, Dict[str, float]],
                  weights: Optional[Dict[str, float]] = None) -> List[float]:
    """``w x ln(1 + e)`` of every metric of the ``fit`` points, in point order, with ``e`` the
    point's error (:meth:`~sncc.sim.calibration.points.Point.error`: one-sided for a floor) and
    ``w`` the point's weight times ``weights[id]``."""
    out = []
    for p in points:
        if p.role != "fit":
            continue
        w = (weights or {}).get(p.id, 1.0) * getattr(p, "weight", 1.0)
        for m in p.measured:
            e = p.error(m, max(preds[p.id][m], 1e-300)) if hasattr(p, "error") else preds[p.id][m] / p.measured[m] - 1
            out.append(w * math.log(max(1.0 + e, 1e-300)))
    return out


@dataclass
class FitResult:
    """``values`` {constant: fitted value}; ``preds`` {point id: {metric: value}} at the fit;
    ``cost`` half the sum of squared weighted log residuals; ``evals`` simulations of the set."""

    values: Dict[str, float]
    preds: Dict[str, Dict[str, float]]
    cost: float
    evals: int


def fit_points(points: Sequence[Point], raw: Dict[str, Any], keys: Sequence[str],
               bounds: Dict[str, Tuple[float, float]], *, start: Optional[Dict[str, float]] = None,
               weights: Optional[Dict[str, float]] = None, max_nfev: int = 60,
               diff_step: float = 0.05, on_eval: Optional[Callable[[int, float], None]] = None,
               workers: int = 1) -> FitResult:
    """Bounded least squares of constants ``keys`` of profile ``raw`` to the ``fit`` points.

    ``bounds`` {key: (low, high)}; ``start`` the initial values (default: the profile's);
    ``weights`` per point id; ``on_eval(n, cost)`` after each evaluation; ``workers`` > 1 computes
    the finite-difference Jacobian's columns in that many forked processes.  Raises ImportError
    when scipy is missing."""
    import numpy as np
    from scipy.optimize import least_squares

    keys = list(keys)
    points = [p for p in points if p.role == "fit"]
    x0 = np.log([(start or {})[k] if k in (start or {}) else get_value(raw, k) for k in keys])
    lb = np.log([bounds[k][0] for k in keys])
    ub = np.log([bounds[k][1] for k in keys])
    x0 = np.clip(x0, lb + 1e-9, ub - 1e-9)
    n = [0]
    last: Dict[bytes, Any] = {}

    def resid(x):
        key = np.asarray(x, dtype=float).tobytes()
        if key in last:
            return last[key]
        vals = dict(zip(keys, np.exp(x)))
        preds = predict_points(points, raw, vals)
        r = np.array(log_residuals(points, preds, weights))
        n[0] += 1
        if on_eval:
            on_eval(n[0], 0.5 * float(r @ r))
        last.clear()
        last[key] = r
        return r

    pool = None
    jac: Any = "2-point"
    if workers > 1:
        import multiprocessing

        _POOL_STATE.update(points=points, raw=raw, weights=weights)
        pool = multiprocessing.get_context("fork").Pool(workers)

        def jac(x):
            f0 = resid(x)
            steps = [diff_step * max(1.0, abs(v)) for v in x]
            cols = []
            for j, h in enumerate(steps):
                xj = np.array(x, dtype=float)
                xj[j] = xj[j] + h if xj[j] + h <= ub[j] else xj[j] - h
                cols.append((dict(zip(keys, np.exp(xj))),))
            outs = pool.map(_column, cols)
            n[0] += len(outs)
            return np.column_stack([(np.array(o) - f0) / (math.log(c[0][keys[j]]) - x[j])
                                    for j, (o, c) in enumerate(zip(outs, cols))])
    try:
        sol = least_squares(resid, x0, jac=jac, bounds=(lb, ub), method="trf", diff_step=diff_step,
                            max_nfev=max_nfev, x_scale=1.0)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
            _POOL_STATE.clear()
    values = {k: float(v) for k, v in zip(keys, np.exp(sol.x))}
    preds = predict_points(points, raw, values)
    return FitResult(values, preds, float(sol.cost), n[0] + 1)


def leave_one_group_out(points: Sequence[Point], raw: Dict[str, Any], keys: Sequence[str],
                        bounds: Dict[str, Tuple[float, float]], *, start: Dict[str, float],
                        weights: Optional[Dict[str, float]] = None, max_nfev: int = 25, workers: int = 1,
                        on_fold: Optional[Callable[[str, FitResult], None]] = None,
                        only: Optional[Sequence[str]] = None) -> Dict[str, Dict[str, float]]:
    """{point id: {metric: predicted}} of every point by a profile fitted without its group.

    Each fold refits ``keys`` on the other groups' ``fit`` points, starting from ``start`` (the
    full fit), and predicts the left-out group (its ``report`` points too).  ``only`` (group
    names) runs those folds alone: a quick check of one family after a model change."""
    out: Dict[str, Dict[str, float]] = {}
    groups = list(dict.fromkeys(p.group for p in points))
    if only:
        groups = [g for g in groups if g in set(only)]
    for g in groups:
        train = [p for p in points if p.group != g]
        held = [p for p in points if p.group == g]
        if not any(p.role == "fit" for p in train):
            continue
        res = fit_points(train, raw, keys, bounds, start=start, weights=weights, max_nfev=max_nfev, workers=workers)
        out.update(predict_points(held, raw, res.values))
        if on_fold:
            on_fold(g, res)
    return out

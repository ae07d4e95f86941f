"""Calibration: the residual table of a profile and a least-squares refit of its constants.

* :func:`residual_rows` — every calibration point of the shipped A3 profile (seed 000
  7P1D/6P1D and CloudMatrix-Infer, domain-facts §6.1) with predicted, published and
  residual ``predicted/published - 1``, grouped into the families the SLO intervals use
  (``ttft``, ``tpot``, ``throughput``; ``prefill_throughput`` is reported but feeds no
  SLO, see the profile's ``[calibration]`` notes).
* :func:`kernel_residual_rows` — the kernel-level calibration points of a profile made from
  single-kernel measurements (``[calibration] kernel_points``, e.g. the H200 GEMM and copy):
  each kernel's time predicted with the simulator's own roofline (``cost_roofline.roofline`` with
  the profile's efficiencies and ``op_t0_s``) against the measured rate.
* :func:`load_measurements` / :func:`fit` / :func:`write_profile` — ``sncc calibrate``:
  measured TTFT/TPOT/QPM points of plans → least squares (scipy, optional extra
  ``calibrate``) on log residuals over chosen profile constants → a new profile TOML in
  which every refitted constant says ``fitted = "..."`` and ``calibration.residuals`` holds
  the new residuals.

Measurements file (TOML or JSON)::

    profile = "ascend-a3"                        # base profile (id or .toml path)
    fit = ["compute.eta_c_gemm_prefill", "overhead.prefill_step_s"]   # constants to fit
    [[point]]
    plan = "examples/deepseek-r1-a3-7p1d.sn"     # relative to the measurements file
    ttft_s = 1.93                                # any of ttft_s, tpot_ms, qpm (steady state)
    tpot_ms = 47
    qpm = 608
    requests = 1500                              # optional: shorter run while fitting
"""
from __future__ import annotations

import copy
import json
import math
import os
import sys
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover
    import tomli as _toml

#: measured metric key -> (family, getter on a SimResult)
METRICS: Dict[str, Tuple[str, Callable[[Any], float]]] = {
    "ttft_s": ("ttft", lambda r: r.saturated["ttft_s"] if r.saturated else r.ttft_s["mean"]),
    "tpot_ms": ("tpot", lambda r: r.saturated["tpot_ms"] if r.saturated else r.tpot_ms["mean"]),
    "qpm": ("throughput", lambda r: r.saturated["qpm"] if r.saturated else r.qpm),
}


class CalibrationError(ValueError):
    """Bad measurements file or a fit that cannot run (the message says which)."""


@dataclass
class Row:
    """One calibration point: ``name``, residual ``family``, ``predicted``, ``published``."""

    name: str
    family: str
    predicted: float
    published: float

    @property
    def residual(self) -> float:
        """predicted / published - 1."""
        return self.predicted / self.published - 1.0


def residual_rows(profile: str = "ascend-a3") -> List[Row]:
    """The residual table of an A3 profile against seed 000 and CloudMatrix-Infer (§6.1)."""
    from .runner import simulate
    from .scenarios import (CLOUDMATRIX_DECODE, CLOUDMATRIX_PREFILL_TOK_S_PER_NPU, SEED000_PUBLISHED,
                            cloudmatrix_decode_step, cloudmatrix_prefill_tok_s_per_npu, seed000_spec)

    rows: List[Row] = []
    for p in (7, 6):
        spec = replace(seed000_spec(p), profile=profile)
        s = simulate(spec, series=False).saturated
        pub = SEED000_PUBLISHED[p]
        rows.append(Row(f"seed000 {p}P1D QPM (steady state)", "throughput", s["qpm"], pub["qpm"]))
        rows.append(Row(f"seed000 {p}P1D TTFT mean s (steady state)", "ttft", s["ttft_s"], pub["ttft_s"]))
        if "tpot_ms" in pub:
            rows.append(Row(f"seed000 {p}P1D TPOT mean ms (steady state)", "tpot", s["tpot_ms"], pub["tpot_ms"]))
    for isl, osl, b, tpot, toks in CLOUDMATRIX_DECODE:
        m = cloudmatrix_decode_step(isl, osl, b, profile=profile)
        rows.append(Row(f"CloudMatrix decode {isl}/{osl} b{b}/NPU TPOT ms", "tpot", m["tpot_ms"], tpot))
        rows.append(Row(f"CloudMatrix decode {isl}/{osl} b{b}/NPU tok/s/NPU", "throughput",
                        m["tok_s_per_npu"], toks))
    rows.append(Row("CloudMatrix prefill tok/s/NPU (4K prompts, EP32)", "prefill_throughput",
                    cloudmatrix_prefill_tok_s_per_npu(profile=profile), CLOUDMATRIX_PREFILL_TOK_S_PER_NPU))
    return rows


#: roofline bound of a kernel -> the SLO residual families its points feed.  Prefill (TTFT) is
#: made of compute-bound GEMMs, a decode step (TPOT) of weight and KV reads; throughput (QPM,
#: tokens/s) depends on both phases, so it gets both kinds of point.
KERNEL_FAMILIES: Dict[str, Tuple[str, ...]] = {"compute": ("ttft", "throughput"), "memory": ("tpot", "throughput")}


def kernel_residual_rows(profile: str = "nvidia-h200") -> List[Row]:
    """Kernel-level calibration rows of ``profile`` from its ``[calibration] kernel_points``.

    Each point is a table with ``name``, ``chip`` (chips.toml id: peak FLOP/s and HBM bandwidth)
    and ``kind``:

    * ``"gemm"``: ``m``, ``n``, ``k`` [elements], ``quant`` (quant.toml id: weight bytes and
      compute dtype), ``measured_flop_per_s``.  Predicted time = the simulator's weight-GEMM cost
      (``sncc.sim.step_model``: ``roofline(2·m·k·n FLOPs, k·n·weight_bytes B, peak, HBM BW,
      compute.eta_c_gemm_prefill, compute.eta_m, compute.op_t0_s)``, m tokens through a k×n
      weight); measured time = ``2·m·n·k / measured_flop_per_s``.
    * ``"copy"``: ``bytes`` [B] copied device to device, ``measured_bytes_per_s`` counting read +
      write.  Predicted time = the simulator's memory cost ``roofline(0, 2·bytes, …,
      compute.eta_m, compute.op_t0_s)`` (reads and writes both HBM traffic); measured time =
      ``2·bytes / measured_bytes_per_s``.

    The point's roofline bound (compute if its FLOP time >= its byte time) picks its families
    (:data:`KERNEL_FAMILIES`): one latency row (``ttft`` or ``tpot``: predicted vs measured
    time [ms]) and one ``throughput`` row (predicted vs measured rate [TFLOP/s or TB/s]), so every
    residual keeps the sign convention of its family (``predicted/measured - 1`` of a time or
    of a rate).  Raises :class:`CalibrationError` when the profile has no kernel points or a
    point has an unknown ``kind``; KeyError for an unknown chip or quant.
    """
    from sncc import catalog

    from .cost_roofline import peak_for, roofline
    from .profile import load_profile

    prof = load_profile(profile)
    if not prof.has("calibration.kernel_points"):
        raise CalibrationError(f"profile {prof.id} records no [calibration] kernel_points")
    eta_m, t0 = prof.get("compute.eta_m"), prof.get("compute.op_t0_s")
    rows: List[Row] = []
    for pt in prof.get("calibration.kernel_points"):
        chip = catalog.chip(pt["chip"])
        bw = float(chip.hbm_bandwidth)
        kind = pt.get("kind")
        if kind == "gemm":
            q = catalog.quant(pt["quant"])
            peak = peak_for(chip, q.compute_dtype)
            eta_c = prof.get("compute.eta_c_gemm_prefill")
            m, n, k = (float(pt[x]) for x in ("m", "n", "k"))
            flops, nbytes = 2.0 * m * n * k, k * n * float(q.weight_bytes)
            measured = flops / float(pt["measured_flop_per_s"])
            work, unit = flops, "TFLOP/s"
        elif kind == "copy":
            peak, eta_c = peak_for(chip, "bf16"), 1.0       # no FLOPs: the compute term is 0
            flops, nbytes = 0.0, 2.0 * float(pt["bytes"])
            measured = nbytes / float(pt["measured_bytes_per_s"])
            work, unit = nbytes, "TB/s"
        else:
            raise CalibrationError(f"profile {prof.id}: kernel point {pt.get('name')!r} has unknown kind {kind!r}")
        tc = roofline(flops, 0.0, peak, bw, eta_c, eta_m)
        tm = roofline(0.0, nbytes, peak, bw, eta_c, eta_m)
        predicted = roofline(flops, nbytes, peak, bw, eta_c, eta_m, t0)
        lat, thr = KERNEL_FAMILIES["compute" if tc >= tm else "memory"]
        rows.append(Row(f"{pt['name']} time ms", lat, 1e3 * predicted, 1e3 * measured))
        rows.append(Row(f"{pt['name']} {unit}", thr, 1e-12 * work / predicted, 1e-12 * work / measured))
    return rows


def residuals_by_family(rows: Sequence[Row]) -> Dict[str, List[float]]:
    """Residuals grouped by family, rounded to 0.1 %."""
    out: Dict[str, List[float]] = {}
    for r in rows:
        out.setdefault(r.family, []).append(round(r.residual, 3))
    return out


def format_table(rows: Sequence[Row]) -> str:
    """The residual table as text."""
    lines = ["{:<52} {:<18} {:>10} {:>10} {:>8}".format("quantity", "family", "predicted", "published", "resid")]
    for r in rows:
        lines.append("{:<52} {:<18} {:>10.2f} {:>10.2f} {:>+7.1f}%".format(
            r.name, r.family, r.predicted, r.published, 100 * r.residual))
    return "\n".join(lines)


# ------------------------------------------------------------------ sncc calibrate
@dataclass
class Point:
    """One measured point: plan file and measured metrics (keys of :data:`METRICS`)."""

    plan: str
    measured: Dict[str, float]
    requests: Optional[int] = None


def load_measurements(path: str) -> Tuple[str, List[str], List[Point]]:
    """(base profile, constants to fit, points) from a TOML or JSON measurements file.

    Raises :class:`CalibrationError` for an unreadable file, no points, a point without a
    plan or without any measured metric, or a non-positive measurement."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise CalibrationError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        data = json.loads(raw) if path.endswith(".json") else _toml.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise CalibrationError(f"{path}: not valid {'JSON' if path.endswith('.json') else 'TOML'}: {e}") from None
    base = str(data.get("profile", "ascend-a3"))
    fit_keys = [str(k) for k in data.get("fit", [])]
    pts = data.get("point") or data.get("points") or []
    if not pts:
        raise CalibrationError(f"{path}: no [[point]] entries")
    here = os.path.dirname(os.path.abspath(path))
    points = []
    for n, p in enumerate(pts, 1):
        if "plan" not in p:
            raise CalibrationError(f"{path}: point {n} has no `plan`")
        meas = {k: float(p[k]) for k in METRICS if k in p}
        if not meas:
            raise CalibrationError(f"{path}: point {n} has none of {', '.join(METRICS)}")
        for k, v in meas.items():
            if not v > 0:
                raise CalibrationError(f"{path}: point {n}: {k} must be > 0, got {v}")
        plan = p["plan"] if os.path.isabs(p["plan"]) else os.path.join(here, p["plan"])
        points.append(Point(plan, meas, int(p["requests"]) if "requests" in p else None))
    return base, fit_keys, points


def _spec_of(plan_path: str, profile: str, requests: Optional[int]):
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    from .from_plan import spec_from_plan

    with open(plan_path, encoding="utf-8") as fh:
        comp = compile_file(SourceFile(plan_path, fh.read()))
    if comp is None or any(d.is_error for d in comp.diagnostics):
        raise CalibrationError(f"{plan_path}: the plan has errors; run `sncc check {plan_path}`")
    spec = spec_from_plan(comp.plan, comp.resolved, profile=profile)
    if requests:
        wl = spec.workload
        conc = min(wl.concurrency, requests) if wl.concurrency else None
        spec = replace(spec, workload=replace(wl, requests=requests, concurrency=conc))
    return spec


def default_fit_keys(raw: Dict[str, Any]) -> List[str]:
    """Every numeric ``fitted`` constant of the profile under [compute] and [overhead]."""
    keys = []
    for sec in ("compute", "overhead"):
        for k, e in (raw.get(sec) or {}).items():
            if isinstance(e, dict) and "fitted" in e and isinstance(e.get("value"), (int, float)):
                keys.append(f"{sec}.{k}")
    return keys


def _get(raw: Dict[str, Any], key: str) -> Dict[str, Any]:
    node: Any = raw
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            raise CalibrationError(f"profile has no constant {key}")
        node = node[part]
    if not isinstance(node, dict) or not isinstance(node.get("value"), (int, float)):
        raise CalibrationError(f"profile constant {key} is not numeric")
    return node


def fit(base: str, keys: Sequence[str], points: Sequence[Point], *, max_evals: int = 60) -> Dict[str, Any]:
    """Least-squares fit of profile constants ``keys`` to ``points``.

    Minimises the sum of squared log residuals ``ln(predicted/measured)`` over every
    measured metric (scipy ``least_squares``, trust-region reflective, parameters in log
    space so they stay positive).  Returns ``{"raw": new profile dict, "values": {key: v},
    "rows": [Row], "cost": ...}``.  Raises :class:`CalibrationError` when scipy is missing.
    """
    try:
        import numpy as np
        from scipy.optimize import least_squares
    except ImportError:
        raise CalibrationError("sncc calibrate needs scipy: pip install 'sncc[calibrate]'") from None
    from . import profile as P
    from .runner import simulate

    raw0 = P._load_raw(base)
    keys = list(keys) or default_fit_keys(raw0)
    if not keys:
        raise CalibrationError("no constants to fit: give `fit = [...]` in the measurements file")
    x0 = np.log([float(_get(raw0, k)["value"]) for k in keys])
    specs = [(pt, _spec_of(pt.plan, base, pt.requests)) for pt in points]
    tmp_id = f"__calibrate_{id(points)}"

    def predict(x) -> List[Row]:
        raw = copy.deepcopy(raw0)
        for k, v in zip(keys, np.exp(x)):
            _get(raw, k)["value"] = float(v)
        P._load_raw.cache_clear()
        P._CUSTOM[tmp_id] = raw
        rows = []
        for pt, spec in specs:
            r = simulate(replace(spec, profile=tmp_id), series=False)
            for mk, meas in pt.measured.items():
                fam, get = METRICS[mk]
                rows.append(Row(f"{os.path.basename(pt.plan)} {mk}", fam, get(r), meas))
        return rows

    def resid(x):
        return np.array([math.log(max(r.predicted, 1e-12) / r.published) for r in predict(x)])

    try:
        sol = least_squares(resid, x0, method="trf", diff_step=0.05, max_nfev=max_evals, x_scale=1.0)
        values = {k: float(v) for k, v in zip(keys, np.exp(sol.x))}
        rows = predict(sol.x)
    finally:
        P._CUSTOM.pop(tmp_id, None)
        P._load_raw.cache_clear()
    raw = copy.deepcopy(raw0)
    for k, v in values.items():
        _get(raw, k)["value"] = v
    return {"raw": raw, "values": values, "rows": rows, "cost": float(sol.cost), "keys": keys}


def write_profile(result: Dict[str, Any], base: str, measurements: str, out: str) -> None:
    """Write the fitted profile TOML (tomlkit; every refitted constant ``fitted = ...``).

    ``calibration.residuals`` becomes the fit's residuals by family; a base's
    ``calibration.serving_uncertainty`` (kept for profiles fitted to no serving figure) is
    dropped, since the new profile is fitted to measured serving points."""
    import tomlkit

    from . import profile as P

    with open(P.profile_path(base), encoding="utf-8") as fh:
        doc = tomlkit.parse(fh.read())
    rows = result["rows"]
    note = (f"fitted by `sncc calibrate {os.path.basename(measurements)}` (least squares on log residuals, "
            f"{len(rows)} measured values: " + "; ".join(f"{r.name} {100 * r.residual:+.1f}%" for r in rows) + ")")
    for k, v in result["values"].items():
        node: Any = doc
        for part in k.split("."):
            node = node[part]
        node["value"] = float(f"{v:.6g}")
        if "source" in node:
            del node["source"]
        node["fitted"] = note
    stem = os.path.splitext(os.path.basename(out))[0]
    doc["id"] = stem
    doc["description"] = f"{doc.get('description', '')} — refitted from {os.path.basename(measurements)}"
    fam = residuals_by_family(rows)
    cal = doc.get("calibration")
    if cal is None:
        cal = tomlkit.table()
        doc["calibration"] = cal
    t = tomlkit.inline_table()
    t["value"] = fam
    t["fitted"] = note
    cal["residuals"] = t
    # the new residuals are serving-level: the base's widening for a profile fitted to no
    # serving figure (sncc.sim.runner.profile_match) no longer applies
    if "serving_uncertainty" in cal:
        del cal["serving_uncertainty"]
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(tomlkit.dumps(doc))
    os.replace(tmp, out)

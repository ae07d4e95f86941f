"""Calibration: the residual table of a profile and a least-squares refit of its constants.

* :func:`residual_rows` — every calibration point of the shipped A3 profile (seed 000
  7P1D/6P1D and CloudMatrix-Infer, domain-facts §6.1) with predicted, published and
  residual ``predicted/published - 1``, grouped into the families the SLO intervals use
  (``ttft``, ``tpot``, ``throughput``; a ``prefill_throughput`` residual joins the ``ttft``
  family as its equivalent time residual, :func:`sncc.cost.inputs.profile_residuals`).
* :func:`kernel_residual_rows` — the kernel-level calibration points of a profile made from
  single-kernel measurements (``[calibration] kernel_points``, e.g. the H200 GEMM and copy):
  each kernel's time predicted with the simulator's own roofline (``cost_roofline.roofline`` with
  the profile's efficiencies and ``op_t0_s``) against the measured rate.
* :func:`load_measurements` / :func:`fit` / :func:`write_profile` — ``sncc calibrate``:
  measured TTFT/TPOT/QPM points of plans → bounded least squares (scipy, optional extra
  ``calibrate``) on log residuals over profile constants → a new profile TOML in which every
  refitted constant says ``fitted = "..."`` and ``calibration.residuals`` holds the new
  residuals.

Measurements file (TOML or JSON; every key below, nothing else)::

    profile = "ascend-a3"            # base profile: id or .toml path (relative to this file)
    fit = ["compute.eta_m"]          # optional; default: METRIC_CONSTANTS of the measured metrics
    residual_floor = true            # optional; false: write only the in-sample residuals
    [[point]]
    plan = "examples/deepseek-r1-a3-7p1d.sn"     # relative to the measurements file
    ttft_s = 1.93                                # any of ttft_s [s], tpot_ms [ms], qpm (steady state)
    tpot_ms = 47
    qpm = 608
    requests = 1500                              # optional: shorter run while fitting
    [[point]]
    plan = "out/plan.sn"
    bench_result = "out/bench-result.json"       # `vllm bench serve --save-result` output (bench.sh):
                                                 # client TTFT, TPOT, QPM and output tokens/s over the run
    [[point]]
    plan = "out2/plan.sn"                        # several API servers, no router: one client per server,
    bench_result = ["out2/bench-result-0.json", "out2/bench-result-1.json"]   # merged (bench_merge.py)

Decisions: without ``fit`` the fit moves only the constants the measured metrics inform
(:data:`METRIC_CONSTANTS`) and refuses when they outnumber the measured values; every constant
stays within 1e-3x..1e3x its base value and efficiencies within (0, 1] (:func:`fit_bounds`); a
fit that ends on a bound, or whose best fit still misses a measured value by more than
:data:`MAX_MISS` (2x), is refused (nothing written, exit 2) rather than written with a warning;
a point whose chip is of another generation than the profile's is refused
(:func:`chip_problem`); the written residuals of measured families are in-sample and, unless
``residual_floor = false``, keep the base's as a floor (:func:`write_profile`).
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
    # the steady state (the SLO window) when the run has one, else the whole run
    "ttft_s": ("ttft", lambda r: r.saturated["ttft_s"] if r.saturated else r.ttft_s["mean"]),
    "tpot_ms": ("tpot", lambda r: r.saturated["tpot_ms"] if r.saturated else r.tpot_ms["mean"]),
    "qpm": ("throughput", lambda r: r.saturated["qpm"] if r.saturated else r.qpm),
    # over the whole run, as a benchmark client measures it (``bench_result``): client TTFT
    # (proxy queue + engine TTFT), mean TPOT, completed requests and output tokens per second
    "client_ttft_s": ("ttft", lambda r: r.ttft_s["mean"] + r.queue_s["mean"]),
    "run_tpot_ms": ("tpot", lambda r: r.tpot_ms["mean"]),
    "run_qpm": ("throughput", lambda r: r.qpm),
    "output_tokens_per_s": ("throughput", lambda r: r.output_tokens_per_s),
}

#: ``vllm bench serve --save-result`` JSON key -> (measured metric, factor to its unit); the keys of
#: vLLM's ``vllm/benchmarks/serve.py`` result dict (``mean_<metric>_ms``, ``request_throughput``
#: [req/s], ``output_throughput`` [tok/s]; the same names in ``benchmarks/benchmark_serving.py``)
BENCH_RESULT_KEYS: Dict[str, Tuple[str, float]] = {
    "mean_ttft_ms": ("client_ttft_s", 1e-3),
    "mean_tpot_ms": ("run_tpot_ms", 1.0),
    "request_throughput": ("run_qpm", 60.0),
    "output_throughput": ("output_tokens_per_s", 1.0),
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
    from sncc.sim.engine.run import simulate_spec as simulate
    from sncc.sim.calibration.scenarios import (CLOUDMATRIX_DECODE, CLOUDMATRIX_PREFILL_TOK_S_PER_NPU, SEED000_PUBLISHED,
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
      (``sncc.cost.step``: ``roofline(2·m·k·n FLOPs, k·n·weight_bytes B, peak, HBM BW,
      compute.eta_c_gemm_dense, compute.eta_m, compute.op_t0_s)``, m tokens through a k×n
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

    from sncc.cost.roofline import peak_for, roofline
    from sncc.cost.profile import load_profile

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
            eta_c = prof.get("compute.eta_c_gemm_dense")
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
#: keys a measurements file takes at the top level and in one ``[[point]]``
TOP_KEYS: Tuple[str, ...] = ("profile", "fit", "residual_floor", "point", "points")
POINT_KEYS: Tuple[str, ...] = ("plan",) + tuple(METRICS) + ("requests", "bench_result")
#: unit of each measured metric, for messages
METRIC_UNITS: Dict[str, str] = {"ttft_s": "seconds", "tpot_ms": "milliseconds", "qpm": "requests per minute",
                                "client_ttft_s": "seconds", "run_tpot_ms": "milliseconds",
                                "run_qpm": "requests per minute", "output_tokens_per_s": "tokens per second"}

#: Measured metric -> the profile constants it informs, most direct first.  Without
#: ``fit = [...]`` the fit moves the union over the metrics the points measure, and nothing else:
#:
#: * ``ttft_s`` — TTFT is prefill time: the prefill GEMM efficiency and the fixed cost per prefill
#:   step (the two constants ascend-a3 fits to seed-000 TTFT);
#: * ``tpot_ms`` — TPOT is one decode step: HBM efficiency (weight and KV reads), decode attention
#:   efficiency, vector time per token-layer and the per-step graph launch intercept (the four
#:   ascend-a3 fits to the CloudMatrix-Infer decode curve);
#: * ``qpm`` — the QPM of a loaded closed-loop deployment is set by how many requests decode admits
#:   at once, i.e. the KV pool left after the runtime reserve (ascend-a3 fits it to seed-000's 608
#:   QPM); an open-loop (rate) plan's QPM is its arrival rate and informs no constant.
#:
#: A constant whose base value is 0 is left out (the fit scales constants by factors of their base
#: value); any other constant is fitted only when ``fit = [...]`` names it.
METRIC_CONSTANTS: Dict[str, Tuple[str, ...]] = {
    "ttft_s": ("compute.eta_c_gemm_dense", "overhead.prefill_step_s"),
    "tpot_ms": ("compute.eta_m", "compute.eta_c_attn_decode", "overhead.decode_graph_step_s"),
    "qpm": ("compute.eta_m", "overhead.decode_graph_step_s"),
    "client_ttft_s": ("compute.eta_c_gemm_dense", "overhead.prefill_step_s"),
    "run_tpot_ms": ("compute.eta_m", "compute.eta_c_attn_decode", "overhead.decode_graph_step_s"),
    "run_qpm": ("compute.eta_m", "overhead.decode_graph_step_s"),
    "output_tokens_per_s": ("compute.eta_m", "overhead.decode_graph_step_s"),
}

#: Bounded least squares: a fitted constant stays within this factor of its base value either way
#: (1e-3x .. 1e3x); an efficiency or fraction (``sncc.cost.profile.CONSTANTS`` kinds) also stays <= 1,
#: a max/mean load ratio >= 1.  A policy choice of this tool, not a measured fact: three orders of
#: magnitude is far outside any plausible recalibration, so reaching the limit means the data and
#: the model disagree (wrong units, wrong plan, wrong chip).
FIT_RANGE = 1e3
#: a fitted constant within this relative distance (0.1 %) of a bound sits on the bound
BOUND_TOL = 1e-3
#: The fitted model must reproduce every measured value within this factor in-sample, else no
#: profile is written: a fit that cannot come within 2x of its own data describes a different
#: deployment than the plan (units, plan or chip wrong).  Policy of this tool; for scale, the
#: shipped ascend-a3 profile's worst held-in residual is -37 % (seed-000 6P1D TTFT), a factor 1.6.
MAX_MISS = 2.0
#: least log residual given to every measured value of a trial the deployment cannot serve
#: (Unadmittable: no KV pool holds a request); :func:`fit` uses at least twice the largest log
#: residual at the base values, so such a trial always costs more than the starting point
UNSERVABLE_RESIDUAL = math.log(1e20)


@dataclass
class Point:
    """One measured point: plan file and measured metrics (keys of :data:`METRICS`, units
    :data:`METRIC_UNITS`); ``n`` its 1-based number and ``file`` the measurements file (messages)."""

    plan: str
    measured: Dict[str, float]
    requests: Optional[int] = None
    n: int = 0
    file: str = ""
    #: the benchmark's own ``max_concurrency`` / ``request_rate`` (``bench_result``), checked
    #: against the plan's workload
    bench: Optional[Dict[str, Any]] = None

    @property
    def where(self) -> str:
        """``<file>: point <n>`` (or ``point <n>``) for messages."""
        return f"{self.file}: point {self.n}" if self.file else f"point {self.n}"


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _parse_file(path: str) -> Dict[str, Any]:
    """The measurements file as a dict (TOML, or JSON for ``.json``); CalibrationError otherwise."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise CalibrationError(f"cannot read {path}: {e.strerror or e}") from None
    kind = "JSON" if path.endswith(".json") else "TOML"
    try:
        data = json.loads(raw) if kind == "JSON" else _toml.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise CalibrationError(f"{path}: not valid {kind}: {e}") from None
    if not isinstance(data, dict):
        raise CalibrationError(f"{path}: must be a table with keys {', '.join(TOP_KEYS)}")
    return data


#: kinds (:data:`sncc.cost.profile.KINDS`) of the constants a fit may move: the numeric ones
FITTABLE_KINDS: Tuple[str, ...] = ("efficiency", "fraction", "seconds", "bytes", "tokens", "nonnegative",
                                   "ratio_ge1")


def _kind_of(key: str) -> Optional[str]:
    """Kind of a fittable constant ``key`` (a numeric one the simulator reads), else None."""
    from sncc.cost.profile import CONSTANTS, OPTIONAL
    kind = CONSTANTS.get(key) or (OPTIONAL.get(key) if key == "comm.ep_link_efficiency" else None)
    return kind if kind in FITTABLE_KINDS else None


def fit_bounds(key: str, value: float) -> Tuple[float, float]:
    """(low, high) a fit may move constant ``key`` (base ``value`` > 0) to: ``value / FIT_RANGE``
    .. ``value * FIT_RANGE``, capped at 1 for efficiencies/fractions, floored at 1 for
    ``ratio_ge1`` constants (max/mean load)."""
    lo, hi = value / FIT_RANGE, value * FIT_RANGE
    kind = _kind_of(key)
    if kind in ("efficiency", "fraction"):
        hi = min(hi, 1.0)
    if kind == "ratio_ge1":
        lo = max(lo, 1.0)
    return lo, hi


def _fit_key_problem(raw: Dict[str, Any], key: str) -> Optional[str]:
    """Why constant ``key`` of profile ``raw`` cannot be fitted, or None."""
    from sncc.cost.profile import CONSTANTS
    if _kind_of(key) is None:
        names = [k for k in CONSTANTS if _kind_of(k)] + ["comm.ep_link_efficiency"]
        return f"`{key}` is not a numeric constant the simulator reads; fittable: {', '.join(names)}"
    try:
        v = _get(raw, key)["value"]
    except CalibrationError as e:
        return str(e)
    if not v > 0:
        return (f"`{key}` is {v} in the base profile; the fit scales a constant by factors of its base value, "
                "so start from a copy of the profile with a positive value")
    return None


def load_measurements(path: str) -> Tuple[str, List[str], List[Point]]:
    """(base profile, constants to fit, points) from a TOML or JSON measurements file.

    Format (README "sncc calibrate"): top-level ``profile`` (id or ``.toml`` path, relative to
    the measurements file; default ``ascend-a3``), ``fit`` (list of dotted constants; default
    :data:`METRIC_CONSTANTS` of the measured metrics), ``residual_floor`` (bool, default true:
    see :func:`write_profile`) and ``[[point]]`` tables with ``plan`` (path, relative to the
    measurements file), any of ``ttft_s`` [s], ``tpot_ms`` [ms], ``qpm`` [requests/min]
    (numbers > 0) and optional ``requests`` (integer >= 1: a shorter run while fitting).

    The checks are :func:`sncc.sim.calibration.measurements.check_measurements`' (the plans are
    not compiled here: :func:`fit` does).  Raises :class:`CalibrationError` for an unreadable
    file, or with the first problem found as ``<file>:<line>:<col>: <message>`` (``sncc
    calibrate`` reports every problem, located, as diagnostics)."""
    from sncc.sim.calibration.measurements import check_measurements
    from sncc.source import SourceFile, read_bytes_limited

    try:
        text = read_bytes_limited(path, regular_only=True).decode("utf-8")
    except OSError as e:
        raise CalibrationError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise CalibrationError(f"{path}: not UTF-8 text: {e}") from None
    src = SourceFile(path, text)
    m, diags = check_measurements(src, plans=False)
    if m is None:
        errs = [d for d in diags if d.is_error]
        line, col = src.line_col(errs[0].span.start) if errs[0].span else (1, 1)
        more = f" (and {len(errs) - 1} more problem{'s' if len(errs) > 2 else ''})" if len(errs) > 1 else ""
        raise CalibrationError(f"{path}:{line}:{col}: {errs[0].message}{more}")
    return m.base, m.keys, m.points


#: the largest bench result file read [B] (a `--save-result` file with per-request lists of a
#: long run is a few MB)
MAX_BENCH_RESULT_BYTES = 64 * 2**20


def _read_bench_doc(name: Any, here: str, where: str) -> Tuple[str, Dict[str, Any]]:
    """(path, parsed JSON object) of one ``--save-result`` file; :class:`CalibrationError` naming
    the file for a missing, special, oversized or unreadable file, bad JSON or a non-object."""
    if not isinstance(name, str) or not name:
        raise CalibrationError(f"{where}: bench_result must be the path of a `vllm bench serve --save-result` "
                               f"JSON file (or a list of them, one per client), got {name!r}")
    from sncc.source import read_bytes_limited
    from sncc.syntax.imports import not_a_regular_input

    path = name if os.path.isabs(name) else os.path.join(here, name)
    why = not_a_regular_input(path)
    if why:
        raise CalibrationError(f"{where}: bench_result: {path} {why}")
    try:
        doc = json.loads(read_bytes_limited(path, MAX_BENCH_RESULT_BYTES, regular_only=True).decode("utf-8"))
    except FileNotFoundError:
        raise CalibrationError(f"{where}: bench_result: {path} not found") from None
    except (OSError, ValueError) as e:       # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise CalibrationError(f"{where}: bench_result: {path} is not a readable JSON file: "
                               f"{getattr(e, 'strerror', None) or e}") from None
    if not isinstance(doc, dict):
        raise CalibrationError(f"{where}: bench_result: {path} is not a JSON object (a `--save-result` file)")
    return path, doc


#: ``--metadata`` key bench.sh gives each client of a split benchmark: ``<index>/<clients>``
BENCH_CLIENT_KEY = "sncc_bench_client"


def _client_set_problem(paths: Sequence[str], docs: Sequence[Dict[str, Any]]) -> Optional[str]:
    """Why the files are not the complete set of one split benchmark's clients, or None."""
    tags = [d.get(BENCH_CLIENT_KEY) for d in docs]
    if all(t is None for t in tags):
        return None                          # files of the user's own making: merged as given
    seen: Dict[int, str] = {}
    total = None
    for path, t in zip(paths, tags):
        try:
            i, n = (int(x) for x in str(t).split("/"))
        except ValueError:
            return f"{path} is not a client of a split bench.sh ({BENCH_CLIENT_KEY} = {t!r})"
        if total is not None and n != total:
            return f"{path} is client {i} of {n}, the others of {total}: results of different builds"
        total = n
        if i in seen:
            return f"{path} and {seen[i]} are both client {i}"
        seen[i] = path
    missing = sorted(set(range(total or 0)) - set(seen))
    if missing:
        return (f"client{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} of {total} missing "
                "(bench.sh writes one result file per API server; list them all)")
    plans = {d.get("sncc_plan") for d in docs}
    if len(plans) > 1:
        return f"the files are of different plans ({', '.join(sorted(map(str, plans)))})"
    return None


def read_bench_result(name: Any, here: str, where: str) -> Tuple[Dict[str, float], Dict[str, Any]]:
    """Measured metrics of a ``vllm bench serve --save-result`` JSON file (the ``bench.sh`` that
    ``sncc build`` writes runs it), keyed as :data:`METRICS`: ``client_ttft_s`` (``mean_ttft_ms``:
    the client's TTFT, queue included), ``run_tpot_ms`` (``mean_tpot_ms``), ``run_qpm``
    (``request_throughput`` x 60) and ``output_tokens_per_s`` (``output_throughput``), each over
    the whole benchmark; a key the file lacks is skipped.  ``name`` is relative to ``here``; a
    list of names is the result files of one benchmark split over several API servers (one
    ``vllm bench serve`` client each, ``bench.sh``), merged into one measurement by
    :func:`sncc.sim.calibration.bench_merge.merge`.
    Returns (metrics, run) with ``run`` the benchmark's ``requests`` (``completed`` +
    ``failed``), ``max_concurrency`` and ``request_rate`` where the file gives them, and for a
    merge ``approximate``: one line per merged figure that is not exact.

    Raises :class:`CalibrationError` naming the file for a missing, special or unreadable file,
    bad JSON, no known key, or a value that is not a number > 0; for a list, an empty list, a
    file named twice, or files that are not the complete client set of one split benchmark."""
    if isinstance(name, list):
        if not name:
            raise CalibrationError(f"{where}: bench_result is an empty list; name the result file of every client")
        read = [_read_bench_doc(n, here, where) for n in name]
        paths = [p for p, _ in read]
        dup = next((p for i, p in enumerate(paths) if p in paths[:i]), None)
        if dup:
            raise CalibrationError(f"{where}: bench_result: {dup} is listed twice")
        problem = _client_set_problem(paths, [d for _, d in read])
        if problem:
            raise CalibrationError(f"{where}: bench_result: {problem}")
        if len(read) == 1:
            path, doc = read[0]
        else:
            from sncc.sim.calibration.bench_merge import merge

            path, doc = ", ".join(paths), merge([d for _, d in read], paths)
    else:
        path, doc = _read_bench_doc(name, here, where)
        n = str(doc.get(BENCH_CLIENT_KEY, "0/1")).split("/")[-1]
        if n not in ("", "1"):
            raise CalibrationError(f"{where}: bench_result: {path} is one of {n} clients of a split benchmark; "
                                   "give bench_result the list of every client's result file")
    out: Dict[str, float] = {}
    for key, (metric, k) in BENCH_RESULT_KEYS.items():
        if key not in doc or doc[key] is None:
            continue
        v = doc[key]
        if not (_is_number(v) and v > 0):
            raise CalibrationError(f"{where}: bench_result: {path}: {key} must be a number > 0, got {v!r}")
        out[metric] = float(v) * k
    if not out:
        raise CalibrationError(f"{where}: bench_result: {path} has none of {', '.join(BENCH_RESULT_KEYS)} "
                               "(not a `vllm bench serve --save-result` file?)")
    run: Dict[str, Any] = {"file": path}
    done = doc.get("completed")
    if isinstance(done, int) and not isinstance(done, bool) and done > 0:
        failed = doc.get("failed")
        run["requests"] = done + (failed if isinstance(failed, int) and not isinstance(failed, bool) else 0)
    for key in ("max_concurrency", "request_rate"):
        v = doc.get(key)
        if _is_number(v) and v > 0 and v != float("inf"):
            run[key] = float(v)
    if "sncc_approximate" in doc:
        run["approximate"] = list(doc["sncc_approximate"])
    return out, run


def _spec_of(plan_path: str, profile: str, requests: Optional[int], where: str = ""):
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    from sncc.sim.from_plan import spec_from_plan

    pre = f"{where}: " if where else ""
    try:
        with open(plan_path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as e:
        raise CalibrationError(f"{pre}plan: cannot read {plan_path}: {getattr(e, 'strerror', None) or e}") from None
    comp = compile_file(SourceFile(plan_path, text))
    if comp is None or any(d.is_error for d in comp.diagnostics):
        raise CalibrationError(f"{pre}plan: {plan_path} has errors; run `sncc check {plan_path}`")
    spec = spec_from_plan(comp.plan, comp.resolved, profile=profile)
    if requests:
        wl = spec.workload
        conc = min(wl.concurrency, requests) if wl.concurrency else None
        spec = replace(spec, workload=replace(wl, requests=requests, concurrency=conc))
    return spec


def bench_mismatch(pt: "Point", spec: Any) -> Optional[str]:
    """Why a point's benchmark ran another load than its plan states (the run-level figures would
    describe a different run), or None: ``max_concurrency`` against the workload's
    ``concurrency``, ``request_rate`` against its ``rate``."""
    b = pt.bench or {}
    wl = spec.workload
    for key, mine, what in (("max_concurrency", wl.concurrency, "concurrency"), ("request_rate", wl.rate, "rate")):
        if key in b and (mine is None or abs(float(mine) - b[key]) > 1e-9 * max(1.0, b[key])):
            return (f"bench_result {b['file']} ran at {key} {b[key]:g}, but the plan's workload has {what} "
                    f"{mine if mine is not None else 'unset'}")
    return None


def bench_problem(pt: "Point", spec: Any) -> None:
    """Raise :class:`CalibrationError` when a point's benchmark ran another load than its plan
    states (:func:`bench_mismatch`)."""
    why = bench_mismatch(pt, spec)
    if why:
        raise CalibrationError(f"{pt.where}: {why}; simulate the load the benchmark ran (the plan `sncc build` "
                               "wrote bench.sh from)")


def fit_keys_for(raw: Dict[str, Any], keys: Sequence[str],
                 points: Sequence["Point"]) -> Tuple[List[str], Optional[Tuple[str, str]]]:
    """(constants to fit, problem) for explicit ``keys`` (returned as given) or, when empty, the
    defaults of the measured metrics (:func:`default_fit_keys`); ``problem`` is (message, help)
    when there are none, or when they outnumber the measured values (underdetermined)."""
    if keys:
        return list(keys), None
    n_values = sum(len(pt.measured) for pt in points)
    measured = [m for m in METRICS if any(m in pt.measured for pt in points)]
    keys = default_fit_keys(raw, measured)
    if not keys:
        return keys, (f"no constants to fit for {', '.join(measured)}", "give `fit = [...]` in the measurements file")
    if len(keys) > n_values:
        suggest: List[str] = []
        for m in measured:
            suggest += [k for k in default_fit_keys(raw, [m]) if k not in suggest][:1]
        suggest = suggest[:n_values]
        return keys, (f"underdetermined: {len(points)} point(s) give {n_values} measured value(s) "
                      f"({', '.join(measured)}), which inform {len(keys)} constants ({', '.join(keys)})",
                      "measure more points or name the constants to fit, e.g. fit = ["
                      + ", ".join(f'"{k}"' for k in suggest) + "]")
    return keys, None


def default_fit_keys(raw: Dict[str, Any], metrics: Sequence[str]) -> List[str]:
    """The constants of profile ``raw`` that the measured ``metrics`` inform
    (:data:`METRIC_CONSTANTS`, in its order), leaving out those absent or 0 in the profile."""
    keys: List[str] = []
    for m in METRICS:
        if m in metrics:
            for k in METRIC_CONSTANTS[m]:
                if k not in keys and _fit_key_problem(raw, k) is None:
                    keys.append(k)
    return keys


def _get(raw: Dict[str, Any], key: str) -> Dict[str, Any]:
    node: Any = raw
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            raise CalibrationError(f"profile has no constant {key}")
        node = node[part]
    if not isinstance(node, dict) or not _is_number(node.get("value")):
        raise CalibrationError(f"profile constant {key} is not numeric")
    return node


def chip_problem(prof: Any, spec: Any) -> Optional[str]:
    """Why ``spec``'s chip does not belong in a fit of profile ``prof``, or None.

    Rule (profile ``[calibration]`` ``chips`` / ``generations``, as
    :func:`sncc.cost.inputs.profile_match`): a chip the profile was made for, or of one of its
    generations (H100 into the H200 profile: efficiencies carry over within a generation), is
    accepted; another generation is refused, since one set of efficiencies cannot describe two
    chip generations.  A profile recording neither list accepts any chip."""
    why = other_generation(prof, spec.chip)
    if why is None:
        return None
    from sncc.sim.from_plan import PROFILE_BY_GENERATION
    other = PROFILE_BY_GENERATION.get(getattr(spec.chip, "generation", None))
    hint = f"profile = \"{other}\"" if other else "a profile made for it"
    return (f"runs on {why}: one set of efficiencies cannot "
            f"describe two chip generations; fit this point into {hint}, in its own measurements file")


def other_generation(prof: Any, chip: Any) -> Optional[str]:
    """``"<chip> (generation G), but profile P is made for <chips> (generation H)"`` when ``chip``
    is neither one profile ``prof`` was made for (``[calibration] chips``) nor of one of its
    ``generations``; None when it is, or when the profile records neither list.  The one rule of
    ``sncc calibrate`` (a point of another generation is refused) and of ``sncc simulate
    --profile`` (an explicit profile of another generation is refused)."""
    chips = list(prof.get("calibration.chips")) if prof.has("calibration.chips") else []
    gens = list(prof.get("calibration.generations")) if prof.has("calibration.generations") else []
    cid, gen = getattr(chip, "id", None), getattr(chip, "generation", None)
    if (not chips and not gens) or cid in chips or gen in gens:
        return None
    return (f"{cid} (generation {gen}), but profile {prof.id} is made for "
            f"{', '.join(chips) or '?'} (generation {', '.join(gens) or '?'})")


def fit(base: str, keys: Sequence[str], points: Sequence[Point], *, max_evals: int = 60,
        specs: Optional[Sequence[Any]] = None) -> Dict[str, Any]:
    """Bounded least-squares fit of profile constants ``keys`` to ``points``.

    Minimises the sum of squared log residuals ``ln(predicted/measured)`` over every measured
    metric (scipy ``least_squares``, trust-region reflective, parameters in log space) with each
    constant held within :func:`fit_bounds` (1e-3x .. 1e3x its base value, efficiencies <= 1).
    Empty ``keys``: :func:`default_fit_keys` of the measured metrics, refused when they outnumber
    the measured values (underdetermined); explicit ``keys`` are fitted as given.

    Returns ``{"raw": new profile dict, "values": {key: v}, "rows": [Row], "cost", "keys",
    "points", "explicit"}``.  Raises :class:`CalibrationError` when scipy is missing, a key
    cannot be fitted, the default fit is underdetermined, a point's chip is of another generation
    than the profile's (:func:`chip_problem`), a plan cannot run with the base profile, a
    constant moves no measured value, a fitted constant ends on a bound (:data:`BOUND_TOL`), or
    the best fit misses a measured value by more than :data:`MAX_MISS`: no profile is produced
    then, since a constant pinned at 1000x its base value or at efficiency 1 (or a fit 2x off its
    own data) is the fit absorbing a data/model mismatch.  ``specs``: each point's simulation spec
    when the caller has compiled the plans already
    (:func:`sncc.sim.calibration.measurements.check_measurements`)."""
    try:
        import numpy as np
        from scipy.optimize import least_squares
    except ImportError:
        raise CalibrationError("sncc calibrate needs scipy: pip install 'sncc[calibrate]'") from None
    from sncc.cost import profile as P
    from sncc.sim.engine.des import Unadmittable
    from sncc.sim.engine.run import simulate_spec as simulate

    pre = f"{points[0].file}: " if points and points[0].file else ""
    raw0 = P._load_raw(base)
    prof = P.load_profile(base)
    explicit = bool(keys)
    n_values = sum(len(pt.measured) for pt in points)
    measured = [m for m in METRICS if any(m in pt.measured for pt in points)]
    for k in keys:
        problem = _fit_key_problem(raw0, k)
        if problem:
            raise CalibrationError(f"{pre}fit: {problem}")
    keys, why = fit_keys_for(raw0, keys, points)
    if why:
        raise CalibrationError(f"{pre}{why[0]}; {why[1]}")
    if specs is None or len(specs) != len(points):
        specs = [_spec_of(pt.plan, base, pt.requests, pt.where) for pt in points]
    specs = list(zip(points, specs))
    for pt, spec in specs:
        bench_problem(pt, spec)
    for pt, spec in specs:
        problem = chip_problem(prof, spec)
        if problem:
            raise CalibrationError(f"{pt.where} ({os.path.basename(pt.plan)}) {problem}")
    v0 = [float(_get(raw0, k)["value"]) for k in keys]
    bounds = [fit_bounds(k, v) for k, v in zip(keys, v0)]
    lb = np.log([b[0] for b in bounds])
    ub = np.log([b[1] for b in bounds])
    x0 = np.log(v0)
    tmp_id = f"__calibrate_{id(points)}"

    def predict(x) -> List[Row]:
        """Rows at log-constants ``x``; Unadmittable of a trial the deployment cannot serve."""
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

    def logres(rows: List[Row]):
        return np.array([math.log(max(r.predicted, 1e-300) / r.published) for r in rows])

    penalty = [UNSERVABLE_RESIDUAL]

    def resid(x):
        try:
            return logres(predict(x))
        except Unadmittable:
            # a trial whose KV pool cannot hold a request (e.g. a large runtime reserve): no
            # prediction; a residual above every one at the start steers the solver away
            return np.full(n_values, penalty[0])

    def _moves(j: int) -> bool:
        """True when moving constant ``j`` 10 % inside its bounds changes a prediction (a zero
        Jacobian column can also come from a solution that sits on the bound)."""
        x = np.array(x_best, dtype=float)
        x[j] = x[j] - 0.1 if x[j] - 0.1 >= lb[j] else x[j] + 0.1
        try:
            return bool(np.any(resid(x) != resid(x_best)))
        finally:                   # predict() registered the trial profile again
            P._CUSTOM.pop(tmp_id, None)
            P._load_raw.cache_clear()

    try:
        try:
            r0 = logres(predict(x0))
        except Unadmittable as e:
            raise CalibrationError(f"{pre}a plan cannot run with base profile {prof.id}: {e}") from None
        penalty[0] = max(UNSERVABLE_RESIDUAL, 2.0 * float(np.max(np.abs(r0))))
        sol = least_squares(resid, x0, bounds=(lb, ub), method="trf", diff_step=0.05, max_nfev=max_evals,
                            x_scale=1.0)
        x_best = sol.x
        rows = predict(x_best)
        if any(abs(v) > math.log(MAX_MISS) for v in logres(rows)):
            # the simulated response is a step function of the constants (discrete events), which
            # can stop the solver short of a bound the measurements push it to: when a bound fits
            # better than the solution, the fit ends on that bound (and is refused below)
            best_cost = 0.5 * float(np.sum(logres(rows) ** 2))
            for j in range(len(keys)):
                for b in (lb[j], ub[j]):
                    x = x_best.copy()
                    x[j] = b
                    c = 0.5 * float(np.sum(resid(x) ** 2))
                    if c < best_cost:
                        best_cost, x_best = c, x
            if x_best is not sol.x:
                rows = predict(x_best)
        values = {k: float(v) for k, v in zip(keys, np.exp(x_best))}
    finally:
        P._CUSTOM.pop(tmp_id, None)
        P._load_raw.cache_clear()
    best = "; ".join(f"{r.name} {100 * r.residual:+.1f}%" for r in rows)
    dead = [k for j, k in enumerate(keys) if not np.any(sol.jac[:, j]) and not _moves(j)]
    if dead:
        raise CalibrationError(
            f"{pre}{', '.join(dead)} moves none of the measured values ({', '.join(measured)}) of these plans; "
            "leave it out of `fit`, or measure a metric it affects (sncc.sim.calibration.METRIC_CONSTANTS)")
    pinned = []
    for (k, v), (lo, hi) in zip(values.items(), bounds):
        if v <= lo * (1 + BOUND_TOL):
            pinned.append(f"{k} = {v:.4g} (lower bound: base {v0[keys.index(k)]:.4g} / {FIT_RANGE:g})")
        elif v >= hi * (1 - BOUND_TOL):
            why = "an efficiency cannot exceed 1" if hi == 1.0 else f"base {v0[keys.index(k)]:.4g} x {FIT_RANGE:g}"
            pinned.append(f"{k} = {v:.4g} (upper bound: {why})")
    if pinned:
        raise CalibrationError(
            f"{pre}no profile written: the fit ends on a bound, {'; '.join(pinned)} — the measurements are out "
            f"of the model's reach (best fit: {best}); check units (ttft_s in s, tpot_ms in ms, qpm per minute), "
            "the plans and the profile's chip")
    missed = [r for r in rows if abs(math.log(max(r.predicted, 1e-300) / r.published)) > math.log(MAX_MISS)]
    if missed:
        raise CalibrationError(
            f"{pre}no profile written: the best fit of {', '.join(keys)} still misses "
            + "; ".join(f"{r.name} (predicted {r.predicted:.4g}, measured {r.published:.4g})" for r in missed)
            + f" by more than {MAX_MISS:g}x; check units (ttft_s in s, tpot_ms in ms, qpm per minute) and the plans, "
            "or fit other constants")
    raw = copy.deepcopy(raw0)
    for k, v in values.items():
        _get(raw, k)["value"] = v
    return {"raw": raw, "values": values, "rows": rows, "cost": float(sol.cost), "keys": keys,
            "points": list(points), "explicit": explicit}


def check_output(out: str, base: Optional[str] = None) -> None:
    """Raise :class:`CalibrationError` unless ``out`` can take a written profile: a ``.toml`` path
    (``sncc simulate --profile`` treats other names as profile ids) that is not a directory, whose
    directory exists, and that is not the base profile's own file."""
    from sncc.cost import profile as P

    if os.path.isdir(out):
        raise CalibrationError(f"-o {out} is a directory; give a file name such as "
                               f"{os.path.join(out, 'profile.toml')}")
    if not out.endswith(".toml"):
        raise CalibrationError(f"-o {out}: the profile file name must end in .toml "
                               "(sncc simulate --profile reads other names as profile ids)")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise CalibrationError(f"cannot write {out}: directory {parent} does not exist")
    if base is not None:
        bp = os.path.abspath(P.profile_path(base))
        if os.path.exists(out) and os.path.exists(bp) and os.path.samefile(out, bp):
            raise CalibrationError(f"-o {out} is the base profile itself; write the fitted profile to another file")


def _base_residuals(raw: Dict[str, Any]) -> Tuple[Dict[str, List[float]], float]:
    """(base residuals by family with its widenings folded in, u) of a profile dict.

    A widening of the whole profile, ``serving_uncertainty`` (fitted to no serving figure) and
    ``derived_residual`` (a derived profile, e.g. ascend-a2: fitted on no point of its
    generation), is added to the SLO families' residuals as -w/+w, the two combined as
    ``1 - (1 - u)(1 - d)`` like :func:`sncc.sim.engine.run` applies them; ``u`` is that combined
    widening (0 when the profile has neither)."""
    cal = raw.get("calibration") or {}
    res = {k: [float(x) for x in v] for k, v in ((cal.get("residuals") or {}).get("value") or {}).items()}
    su = float((cal.get("serving_uncertainty") or {}).get("value", 0.0))
    d = float((cal.get("derived_residual") or {}).get("value", 0.0))
    u = 1.0 - (1.0 - su) * (1.0 - d)
    if u > 0:
        for fam in ("ttft", "tpot", "throughput"):
            res[fam] = res.get(fam, []) + [-u, u]
    return res, u




def _profile_doc(pid: str, seen: Tuple[str, ...] = ()) -> Any:
    """The tomlkit document of profile ``pid`` with its ``derived_from`` chain written out: the
    base's document under every table the derived file writes, as
    :func:`sncc.cost.profile._derive` merges them (a constant table replaces the base's, the
    rest is the base's), without ``derived_from``.  The written profile of a derived base (A2,
    950: their constants are ascend-a3's) thus holds every constant it runs with, the fitted
    ones included, and does not change when the base's base is refitted."""
    import tomlkit

    from sncc.cost import profile as P

    with open(P.profile_path(pid), encoding="utf-8") as fh:
        doc = tomlkit.parse(fh.read())
    base_id = doc.get("derived_from")
    if not base_id:
        return doc
    if not isinstance(base_id, str) or base_id in seen:      # load_profile refused it before
        raise CalibrationError(f"profile {pid}: derived_from {base_id!r} is not a profile id (or makes a cycle)")
    merged = _profile_doc(str(base_id), seen + (pid,))

    def merge(into: Any, over: Any) -> None:
        for k, v in over.items():
            if isinstance(v, dict) and "value" not in v and isinstance(into.get(k), dict):
                merge(into[k], v)
            else:
                into[k] = v

    merge(merged, {k: v for k, v in doc.items() if k != "derived_from"})
    out = tomlkit.document()        # the base file's header comments describe the base, not pid
    me = doc.get("id", pid)
    out.add(tomlkit.comment(f"Profile {me} (derived_from = \"{base_id}\") written out: every constant of "
                            f"{base_id}, {me}'s own tables over them."))
    for k, v in merged.items():
        out.add(k, v)
    return out


def write_profile(result: Dict[str, Any], base: str, measurements: str, out: str, *,
                  residual_floor: Optional[bool] = None) -> None:
    """Write the fitted profile TOML (tomlkit; every refitted constant ``fitted = ...``).

    ``[calibration]`` of the written profile:

    * ``residuals``: for each measured family, the fit's residuals — in-sample (the points the
      constants were fitted to, not held out) — plus, with ``residual_floor`` (default: the
      measurements file's ``residual_floor``, true when absent), the base profile's residuals of
      that family, so its SLO intervals are never narrower than the base's; families not
      measured (and ``prefill_throughput``, which also bounds TTFT) keep the base's residuals.  A
      base ``serving_uncertainty`` ``u`` (a profile fitted to no serving figure) is folded into
      the kept base residuals as -u/+u and dropped;
    * ``fitted_on`` names the measurements file, its points and the refitted constants, and the
      base's fitted_on for the rest;
    * a base ``[calibration.prefill_contradiction]`` is kept, marked as inherited from the base;
      the base's leave-one-out records (``loo``, ``typical_distance``) are not: they are the
      errors of the base's constants, so the intervals read ``residuals``.

    A derived constant (``moe.imbalance`` where the base has ``moe.eplb_step_ratio``:
    :func:`sncc.sim.calibration.refit.derived_values`) is written at the fitted values.

    The file is written atomically (temporary file in the same directory + rename; nothing left
    behind on failure).  Raises :class:`CalibrationError` for an output that is a directory, not
    ``.toml``, in a missing directory or the base profile itself (:func:`check_output`), or
    that cannot be written."""
    import tomlkit

    from sncc.cost import profile as P

    check_output(out, base)
    if residual_floor is None:
        try:
            residual_floor = bool(_parse_file(measurements).get("residual_floor", True))
        except CalibrationError:
            residual_floor = True
    doc = _profile_doc(base)
    base_id = str(doc.get("id", base))
    mname = os.path.basename(measurements)
    rows = result["rows"]
    note = (f"fitted by `sncc calibrate {mname}` (bounded least squares on log residuals, "
            f"{len(rows)} measured values, in-sample: " + "; ".join(f"{r.name} {100 * r.residual:+.1f}%" for r in rows)
            + ")")
    for k, v in result["values"].items():
        node: Any = doc
        for part in k.split("."):
            node = node[part]
        node["value"] = float(f"{v:.6g}")
        if "source" in node:
            del node["source"]
        node["fitted"] = note
    # a constant derived from the fitted ones (the A3 routed-load factor) at the fitted values
    from sncc.sim.calibration.refit import DERIVED, derived_values
    derived = derived_values(P._load_raw(base), dict(result["values"]))
    if DERIVED in derived and DERIVED not in result["values"]:
        node = doc
        for part in DERIVED.split("."):
            node = node[part]
        node["value"] = float(f"{derived[DERIVED]:.4g}")
    stem = os.path.splitext(os.path.basename(out))[0]
    doc["id"] = stem
    doc["description"] = f"{doc.get('description', '')} — refitted from {mname}"

    fit_fam = residuals_by_family(rows)
    base_res, u = _base_residuals(P._load_raw(base))
    fams = list(fit_fam) + [f for f in base_res if f not in fit_fam]
    new_res = {}
    for f in fams:
        if f in fit_fam:
            new_res[f] = fit_fam[f] + ([round(x, 3) for x in base_res.get(f, [])] if residual_floor else [])
        else:
            new_res[f] = [round(x, 3) for x in base_res[f]]
    measured_fams = ", ".join(fit_fam)
    kept = ", ".join(f for f in fams if f not in fit_fam) or "none"
    floor_txt = (f"plus, as a floor, base {base_id}'s residuals of the family (residual_floor = true: an "
                 "in-sample fit is not taken to be better than the base out of sample)" if residual_floor
                 else "only (residual_floor = false)")
    u_txt = (f"; the base's interval widening ±{u:.3g} (serving_uncertainty / derived_residual) folded into the "
             f"base residuals" if u else "")
    res_note = (f"{measured_fams}: in-sample residuals of `sncc calibrate {mname}` (the fitted points "
                f"themselves, not held out) {floor_txt}; {kept}: not measured, inherited from {base_id}{u_txt}")
    pts = result.get("points") or []
    per_pt = "; ".join(f"{os.path.basename(p.plan)} {'/'.join(p.measured)}" for p in pts)
    old_cal = doc.get("calibration")
    on_base = None
    if old_cal is not None and "fitted_on" in old_cal:
        on_base = old_cal["fitted_on"].get("value")
    cal = tomlkit.table()
    for line in (f"Written by `sncc calibrate {mname}` from base profile {base_id}.",
                 "residuals r = predicted / measured - 1 by family (sncc.sim.engine.metrics.interval):",
                 f"  {measured_fams}: IN-SAMPLE residuals of the fit " + ("+ the base's as a floor" if residual_floor
                                                                         else "only (residual_floor = false)") + ";",
                 f"  {kept}: not measured, the base profile's residuals"
                 + (f" (its interval widening ±{u:.3g} folded in)." if u else "."),
                 "Nothing recomputes these numbers; refit with sncc calibrate when the model changes."):
        cal.add(tomlkit.comment(line))
    t = tomlkit.inline_table()
    t["value"] = new_res
    t["fitted"] = res_note
    cal.add("residuals", t)
    on = tomlkit.inline_table()
    on["value"] = (f"{', '.join(result['values'])}: {mname} ({len(pts)} point{'s' if len(pts) != 1 else ''}: "
                   f"{per_pt}); every other constant as base {base_id}: {on_base or '?'}")
    on["source"] = f"sncc calibrate {mname} on base profile {base_id}"
    cal.add("fitted_on", on)
    if old_cal is not None:
        for key, item in old_cal.value.body:
            # the base's leave-one-out records are its own constants' out-of-sample errors: the
            # intervals of this profile read its residuals above instead
            if key is None or key.key in ("residuals", "fitted_on", "serving_uncertainty", "derived_residual", "loo",
                                          "typical_distance"):
                continue
            if key.key == "prefill_contradiction" and isinstance(item, dict) and "value" in item:
                item["value"] = (f"inherited from {base_id} (written for its constants; not re-examined by "
                                 f"sncc calibrate {mname})")
            cal.add(key.key, item)
    doc["calibration"] = cal
    text = tomlkit.dumps(doc)
    try:
        P.validate(_toml.loads(text), out)
    except P.ProfileError as e:     # a bug of this function, not of the user's input
        raise CalibrationError(f"the fitted profile would be invalid: {e}") from None
    try:
        from sncc.atomic_file import write_atomically
        write_atomically(out, text)
    except OSError as e:
        raise CalibrationError(f"cannot write {out}: {e.strerror or e}") from None

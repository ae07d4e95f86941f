"""Simulation result: latency percentiles, throughput and SLO verdicts."""
from __future__ import annotations

import operator
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Sequence


def percentile(sorted_xs: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile ``q`` in [0, 100] of an already sorted list."""
    if not sorted_xs:
        return float("nan")
    if len(sorted_xs) == 1:
        return float(sorted_xs[0])
    pos = (len(sorted_xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return float(sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo))


def summary(xs: Sequence[float]) -> Dict[str, float]:
    """mean/p50/p90/p99 of ``xs``."""
    s = sorted(xs)
    mean = sum(s) / len(s) if s else float("nan")
    return {"mean": mean, "p50": percentile(s, 50), "p90": percentile(s, 90), "p99": percentile(s, 99)}


_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


@dataclass
class SloVerdict:
    """One SLO check: ``name`` like ``ttft.p90 <= 2.0``; observed in the metric's unit."""

    name: str
    target: float
    observed: float
    met: bool


@dataclass
class SimResult:
    """Simulation metrics.

    Units: ``*_s`` seconds, ``tpot_ms`` milliseconds, ``qpm`` completed requests per
    minute over ``duration_s`` (first arrival to last completion), token rates in
    tokens/s.  ``ttft_s`` is the engine's view (dispatch to a prefill/serve instance to
    first token); ``queue_s`` is time in the proxy queue before dispatch (part of e2e).
    ``saturated``: the same figures over the saturated window — from the first time
    admission blocked (KV pool or max_num_seqs full with requests waiting) to the last
    dispatch — i.e. the steady state of a closed loop before the final drain:
    ``qpm`` = dispatches in the window per minute (each dispatch needs a completion to
    free its slot), ``ttft_s``/``tpot_ms``/``e2e_s`` means over requests dispatched in
    the window, ``start_s``/``end_s``/``requests``.  Empty if admission never blocked.
    ``fitted_constants`` lists every fitted profile constant the run used.
    """

    requests_completed: int
    duration_s: float
    qpm: float
    ttft_s: Dict[str, float]
    tpot_ms: Dict[str, float]
    e2e_s: Dict[str, float]
    queue_s: Dict[str, float]
    output_tokens_per_s: float
    output_tokens_per_s_per_device: float
    tokens_per_s_per_user: Dict[str, float]
    saturated: Dict[str, float] = field(default_factory=dict)
    slo: List[SloVerdict] = field(default_factory=list)
    fitted_constants: Dict[str, Any] = field(default_factory=dict)
    info: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict (``requests.completed`` nested as documented)."""
        d = asdict(self)
        d["requests"] = {"completed": d.pop("requests_completed")}
        return d


def build_result(R: Any, devices: int, slos: Sequence[Any], fitted: Dict[str, Any],
                 info: Dict[str, Any], t_first_block: Any = None) -> SimResult:
    """Aggregate per-request arrays of the engine into a :class:`SimResult`."""
    done = [i for i in range(len(R.t_done)) if R.t_done[i] >= 0]
    ttft = [R.t_first[i] - R.t_disp[i] for i in done]
    e2e = [R.t_done[i] - R.t_arr[i] for i in done]
    queue = [R.t_disp[i] - R.t_arr[i] for i in done]
    tpot = [(R.t_done[i] - R.t_first[i]) / (R.out[i] - 1) for i in done if R.out[i] > 1]
    t0 = min((R.t_arr[i] for i in done), default=0.0)
    t1 = max((R.t_done[i] for i in done), default=0.0)
    dur = max(t1 - t0, 1e-12)
    out_tok = sum(R.out[i] for i in done)
    tps_user = [1.0 / x for x in tpot if x > 0]
    res = SimResult(
        requests_completed=len(done), duration_s=dur, qpm=len(done) / dur * 60.0,
        ttft_s=summary(ttft), tpot_ms={k: v * 1e3 for k, v in summary(tpot).items()},
        e2e_s=summary(e2e), queue_s=summary(queue), output_tokens_per_s=out_tok / dur,
        output_tokens_per_s_per_device=out_tok / dur / max(1, devices),
        tokens_per_s_per_user={"mean": sum(tps_user) / len(tps_user) if tps_user else float("nan")},
        fitted_constants=dict(fitted), info=dict(info))
    if t_first_block is not None:
        t_end = max(R.t_disp[i] for i in done)
        win = [i for i in done if t_first_block <= R.t_disp[i] <= t_end]
        if len(win) > 1 and t_end > t_first_block:
            wt = [(R.t_done[i] - R.t_first[i]) / (R.out[i] - 1) for i in win if R.out[i] > 1]
            res.saturated = {
                "start_s": t_first_block, "end_s": t_end, "requests": float(len(win)),
                "qpm": len(win) / (t_end - t_first_block) * 60.0,
                "ttft_s": sum(R.t_first[i] - R.t_disp[i] for i in win) / len(win),
                "tpot_ms": 1e3 * sum(wt) / max(1, len(wt)),
                "e2e_s": sum(R.t_done[i] - R.t_arr[i] for i in win) / len(win),
            }
    res.slo = [evaluate_slo(res, s) for s in slos]
    return res


def evaluate_slo(res: SimResult, s: Any) -> SloVerdict:
    """Check one SloTarget against ``res`` (ttft/tpot/e2e targets in seconds)."""
    m, stat = s.metric, (s.stat or "mean")
    sat = res.saturated
    # A closed loop that saturates is judged on its steady state (the saturated
    # window); the end-of-run drain, set by the few longest outputs, is not a
    # property of the deployment.  Percentiles come from the whole run.
    if sat and stat == "mean" and m in ("ttft", "tpot", "e2e", "qpm"):
        obs = {"ttft": sat["ttft_s"], "tpot": sat["tpot_ms"] / 1e3, "e2e": sat["e2e_s"], "qpm": sat["qpm"]}[m]
        name = f"{m}.{stat} {s.op} {s.target:g}" if m != "qpm" else f"{m} {s.op} {s.target:g}"
        return SloVerdict(name=name + " (steady state)", target=s.target, observed=obs, met=bool(_OPS[s.op](obs, s.target)))
    if m == "ttft":
        obs = res.ttft_s[stat]
    elif m == "tpot":
        obs = res.tpot_ms[stat] / 1e3
    elif m == "e2e":
        obs = res.e2e_s[stat]
    elif m == "qpm":
        obs = res.qpm
    elif m == "output_tokens_per_s":
        obs = res.output_tokens_per_s
    elif m == "tokens_per_s_per_user":
        obs = res.tokens_per_s_per_user["mean"]
    else:
        raise ValueError(f"unknown SLO metric {m!r}")
    name = f"{m}.{stat} {s.op} {s.target:g}" if m in ("ttft", "tpot", "e2e") else f"{m} {s.op} {s.target:g}"
    return SloVerdict(name=name, target=s.target, observed=obs, met=bool(_OPS[s.op](obs, s.target)))

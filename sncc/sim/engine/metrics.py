"""Simulation result: latency percentiles, throughput and SLO verdicts."""
from __future__ import annotations

import operator
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple


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
    """One SLO check: ``name`` like ``ttft.p90 <= 2 s`` (the target in the metric's display unit,
    :func:`sncc.sim.report.units.slo_name`); ``target``, ``observed``, ``low``, ``high`` in SI
    (seconds for latencies; the JSON document converts them to the unit the name shows).

    ``low``/``high``: the interval the true value lies in given the profile's calibration
    residuals for the metric's family (:func:`interval`).  ``verdict`` (:func:`slo_verdict`):
    ``met`` (the point estimate and the whole interval meet the target), ``uncertain`` (the point
    estimate meets it, the interval straddles it), ``missed`` (the point estimate misses it;
    ``reaches_target`` when the interval still reaches the target) or ``n/a`` (the run defines no
    value: TPOT and tokens/s per user when no completed request has more than one output token,
    any metric when no request completed); ``met`` is True/False, or None when uncertain or
    n/a.  An n/a verdict is neither met nor missed and does not count for the exit code.
    ``window``: ``steady`` (judged on the steady-state window) or ``run`` (whole run).
    ``basis``: what a TTFT SLO is judged on, ``client`` (request sent to first token, queueing in
    front of the engine included: what ``vllm bench serve`` and ``--goodput`` measure) or
    ``engine`` (dispatch to an engine instance to first token); empty for other metrics.
    ``engine_observed``: a TTFT SLO's engine-side figure [s], shown beside the client one.
    """

    name: str
    target: float
    observed: float
    met: Optional[bool]
    verdict: str = "met"
    low: Optional[float] = None
    high: Optional[float] = None
    window: str = "run"
    metric: str = ""
    stat: str = "mean"
    op: str = "<"
    basis: str = ""
    engine_observed: Optional[float] = None
    reaches_target: bool = False


@dataclass
class SimResult:
    """Simulation metrics.

    Units: ``*_s`` seconds, ``tpot_ms`` milliseconds, ``qpm`` completed requests per
    minute over ``duration_s`` (first arrival to last completion), token rates in
    tokens/s.  ``ttft_s`` is the engine's view (dispatch to a prefill/serve instance to
    first token); ``queue_s`` is time in the proxy queue before dispatch (part of e2e);
    ``client_ttft_s`` is the client's view (request sent to first token: queue + engine TTFT per
    request), what ``vllm bench serve`` reports as TTFT and what TTFT SLOs are judged on.

    ``saturated`` is the steady-state window the SLOs are judged on:

    * closed loop that saturates: from the first time admission blocked (KV pool or
      max_num_seqs full with requests waiting) to the last dispatch — the steady state
      before the final drain; ``qpm`` = dispatches in the window per minute (each needs a
      completion to free its slot);
    * closed loop whose clients are never held back (``closed-loop``): from the first
      completion (the initial burst of dispatches is over) to the last dispatch; each dispatch
      there follows a completion, so ``qpm`` is the completion rate without ramp-up and drain
      (at least 10 requests).  A run of one wave (concurrency >= requests: fewer than 10 requests
      sent after the first completion) has no sends that follow completions: its dispatches in
      the window drain the proxy queue, so ``qpm`` is capped by Little's law for that many
      clients, ``60 x wave / mean e2e`` (the rate they would sustain, no think time);
    * open loop (a rate): requests arriving between the 10th and 90th percentile of
      arrival times (warm-up and drain excluded); ``qpm`` = those requests (all completed)
      per minute of ``max(window length, span of their dispatch times)``.  When the
      deployment keeps up each request is dispatched as it arrives and ``qpm`` is the
      offered rate over the window (e.g. 60 x 2 req/s = 120); when a backlog grows their
      dispatches spread over a longer span, each waiting for a completion to free KV blocks
      or a sequence slot, so ``qpm`` is the saturated completion rate — non-decreasing in the
      offered rate up to saturation, then flat.  (Counting completions inside the arrival
      window would miss the requests still decoding at its end: low by the e2e lag.)
      The QPM calibration interval of an open loop is capped at the offered rate
      (:func:`qpm_cap`): completions cannot outrun arrivals.

    It holds ``window`` (which rule), ``queue_growth`` (open loop: rise of the mean proxy
    wait from the first to the last fifth of the window per second of window, i.e. the
    backlog's growth as a fraction of the service rate; 0 for a closed loop), ``start_s``/``end_s``/``requests``, ``qpm``, the
    means ``ttft_s``/``tpot_ms``/``e2e_s``/``queue_s``, and ``percentiles`` (mean/p50/p90/p99
    of ``ttft_s``, ``tpot_ms``, ``e2e_s``, ``queue_s``, ``client_ttft_s`` = queue + TTFT).
    ``binds``: where a steady-window request spends its time (see :func:`time_shares`)
    and the decode/prefill step breakdown.  ``series``: time series (``t_s``,
    ``waiting``, ``running``, ``kv_use``).  ``intervals``: the calibration interval of
    each headline figure.  ``fitted_constants`` lists every fitted profile constant used.
    ``info["notes"]`` (when present): sentences the report prints as notes — follow-up prompts
    capped at the input max, fewer requests completed than requested, what-ifs not run
    (:func:`sncc.cost.inputs.simulate`, :func:`sncc.sim.whatif.cheapest_changes`).
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
    saturated: Dict[str, Any] = field(default_factory=dict)
    slo: List[SloVerdict] = field(default_factory=list)
    binds: Dict[str, Any] = field(default_factory=dict)
    intervals: Dict[str, Any] = field(default_factory=dict)
    fitted_constants: Dict[str, Any] = field(default_factory=dict)
    info: Dict[str, Any] = field(default_factory=dict)
    series: Dict[str, List[float]] = field(default_factory=dict)
    client_ttft_s: Dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict (``requests.completed`` nested as documented)."""
        d = asdict(self)
        d["requests"] = {"completed": d.pop("requests_completed")}
        return d

    def steady(self, metric: str, stat: str) -> Optional[float]:
        """``metric`` (ttft/tpot/e2e/queue/client_ttft/qpm/tokens_per_s_per_user/output_tokens_per_s)
        ``stat`` over the steady window in SLO units (seconds, QPM, tokens/s), or None when there is
        no steady window (tokens_per_s_per_user: the mean of 1/TPOT over the window's requests;
        output_tokens_per_s: the window's QPM / 60 x its requests' mean output tokens)."""
        sat = self.saturated
        if not sat:
            return None
        if metric == "qpm":
            return sat["qpm"]
        if metric in ("tokens_per_s_per_user", "output_tokens_per_s"):
            return sat.get(metric)
        key = {"ttft": "ttft_s", "tpot": "tpot_ms", "e2e": "e2e_s", "queue": "queue_s",
               "client_ttft": "client_ttft_s"}[metric]
        v = sat["percentiles"][key][stat]
        return v / 1e3 if metric == "tpot" else v


# ---------------------------------------------------------------- uncertainty
#: SLO metric -> residual family of the profile's ``calibration.residuals``
FAMILY = {"ttft": "ttft", "client_ttft": "ttft", "engine_ttft": "ttft", "queue": "ttft", "tpot": "tpot", "e2e": "tpot",
          "tokens_per_s_per_user": "tpot", "qpm": "throughput", "output_tokens_per_s": "throughput"}


def interval(value: float, residuals: Sequence[float]) -> Tuple[float, float]:
    """The 80 % interval of the true value given calibration residuals ``r = predicted/measured - 1``
    (:func:`sncc.sim.calibration.intervals.residual_interval`: split-conformal in log space,
    ``[value e^-q, value e^q]``, always holding the prediction itself).
    Raises ValueError when a residual is <= -1."""
    from sncc.sim.calibration.intervals import residual_interval

    return residual_interval(value, residuals)


def _arrival_qpm(R: Any, idx: Sequence[int]) -> Optional[float]:
    """Arrivals per minute of requests ``idx`` over the span of their arrival times (None: < 2)."""
    arr = [R.t_arr[i] for i in idx]
    if len(arr) < 2 or max(arr) <= min(arr):
        return None
    return len(arr) / (max(arr) - min(arr)) * 60.0


def qpm_cap(res: Any, value: float, high: float) -> float:
    """High end of a QPM calibration interval, capped for an open loop.

    In an open loop (a rate, or a trace with arrival times) completed requests per minute
    cannot exceed the offered rate: 60 x rate x turns (``build_result(offered_qpm=...)``), or
    the run's own arrival rate when no rate is given.  The profile's throughput residuals
    scale the prediction up to ``value / (1 + min(r))``; above the offered rate that says
    nothing about the deployment, so the high end is ``min(high, max(cap, value))`` (never
    below the point estimate, which a Poisson sample can put a little above the nominal
    rate).  A closed loop (``concurrency``) has no cap: ``res._qpm_cap`` is None."""
    cap = getattr(res, "_qpm_cap", None)
    return high if cap is None else min(high, max(cap, value))


def output_rate_cap(res: Any, value: float, high: float, qpm: float | None) -> float:
    """High end of an output tokens/s calibration interval, capped for an open loop as
    :func:`qpm_cap` caps QPM: the deployment completes at most the offered requests, so the
    tokens/s it can reach is ``value`` scaled by the headroom of ``qpm`` (the QPM of the same
    window) to the offered rate (``max(cap, qpm) / qpm``: the same requests at the same lengths).
    Closed loop, or no QPM: ``high``."""
    cap = getattr(res, "_qpm_cap", None)
    if cap is None or not qpm or qpm != qpm:
        return high
    return min(high, value * max(cap, qpm) / qpm)


def time_shares(R: Any, idx: Sequence[int], disaggregated: bool) -> Dict[str, Any]:
    """Mean seconds and share of e2e a request spends in each phase (requests ``idx``).

    Phases: ``queue`` (proxy, before dispatch), ``prefill`` (dispatch to the end of its
    prefill, incl. waiting for a step), ``kv_transfer`` (exposed KV transfer), ``decode_join``
    (KV arrival to first token: waiting for and running the first decode step), ``decode``
    (first to last token).  Aggregated serving has no ``kv_transfer``/``decode_join``.
    """
    n = max(1, len(idx))
    if disaggregated:
        ph = {"queue": sum(R.t_disp[i] - R.t_arr[i] for i in idx) / n,
              "prefill": sum(R.t_pdone[i] - R.t_disp[i] for i in idx) / n,
              "kv_transfer": sum(R.t_kv[i] - R.t_pdone[i] for i in idx) / n,
              "decode_join": sum(R.t_first[i] - R.t_kv[i] for i in idx) / n,
              "decode": sum(R.t_done[i] - R.t_first[i] for i in idx) / n}
    else:
        ph = {"queue": sum(R.t_disp[i] - R.t_arr[i] for i in idx) / n,
              "prefill": sum(R.t_first[i] - R.t_disp[i] for i in idx) / n,
              "decode": sum(R.t_done[i] - R.t_first[i] for i in idx) / n}
    tot = sum(ph.values()) or 1.0
    return {k: {"mean_s": v, "share": v / tot} for k, v in ph.items()}


def _window(R: Any, done: List[int], t_first_block: Any, closed: bool) -> Tuple[str, List[int], float, float, float]:
    """(rule, requests, start, end, qpm) of the steady-state window, or ("", [], ...)."""
    if not done:
        return "", [], 0.0, 0.0, 0.0
    if closed:
        t_end = max(R.t_disp[i] for i in done)
        if t_first_block is None:
            # the clients never wait for admission: the steady state runs from the first
            # completion (the initial burst of dispatches is over) to the last dispatch; each
            # dispatch there follows a completion, so its rate is the completion rate
            t0 = min(R.t_done[i] for i in done)
            win = [i for i in done if t0 <= R.t_disp[i] <= t_end]
            if len(win) < 10 or t_end <= t0:
                return "", [], 0.0, 0.0, 0.0
            qpm = len(win) / (t_end - t0) * 60.0
            wave = sum(1 for i in done if R.t_arr[i] < t0)
            if len(done) - wave < 10:
                # one wave (concurrency >= requests: every request sent before the first
                # completion): the window's dispatches drain the proxy queue, they do not follow
                # completions, so their rate can exceed what the clients sustain; Little's law
                # bounds a closed loop of `wave` clients at wave / mean e2e (no think time)
                e2e = sum(R.t_done[i] - R.t_arr[i] for i in win) / len(win)
                if e2e > 0:
                    qpm = min(qpm, wave / e2e * 60.0)
            return "closed-loop", win, t0, t_end, qpm
        win = [i for i in done if t_first_block <= R.t_disp[i] <= t_end]
        if len(win) < 2 or t_end <= t_first_block:
            return "", [], 0.0, 0.0, 0.0
        return "admission-blocked", win, t_first_block, t_end, len(win) / (t_end - t_first_block) * 60.0
    arr = sorted(R.t_arr[i] for i in done)
    if len(arr) < 10:
        return "", [], 0.0, 0.0, 0.0
    a, b = percentile(arr, 10), percentile(arr, 90)
    win = [i for i in done if a <= R.t_arr[i] <= b]
    if len(win) < 2 or b <= a:
        return "", [], 0.0, 0.0, 0.0
    # the window's requests, all completed, over the time the deployment took to admit them:
    # the window length when it keeps up (each is dispatched as it arrives), the longer span
    # of their dispatches when a backlog grows (then each dispatch waits for a completion to
    # free KV blocks or a sequence slot, so this is the saturated completion rate).  Counting
    # completions inside [a, b] instead misses those still decoding at b and undercounts by
    # the e2e lag even without queueing (SimResult docstring).
    disp = [R.t_disp[i] for i in win]
    qpm = len(win) / max(b - a, max(disp) - min(disp)) * 60.0
    return "arrivals-10-90", win, a, b, qpm


def build_result(R: Any, devices: int, slos: Sequence[Any], fitted: Dict[str, Any],
                 info: Dict[str, Any], t_first_block: Any = None, *, closed: bool = True,
                 disaggregated: bool = True, residuals: Optional[Dict[str, Sequence[float]]] = None,
                 series: Sequence[tuple] = (), offered_qpm: Optional[float] = None) -> SimResult:
    """Aggregate per-request arrays of the engine into a :class:`SimResult`.

    ``closed``: closed-loop workload (steady window = admission blocked); ``residuals``:
    calibration residuals per family (``ttft``/``tpot``/``throughput``) for intervals and
    verdicts (empty -> no interval, every verdict is met or missed).  ``offered_qpm``:
    open loop only, the offered request rate per minute (60 x rate x turns); None = the
    arrival rate the run saw (a trace's timestamps).  See :func:`qpm_cap`."""
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
        fitted_constants=dict(fitted), info=dict(info),
        client_ttft_s=summary([R.t_first[i] - R.t_arr[i] for i in done]))
    rule, win, a, b, qpm = _window(R, done, t_first_block, closed)
    if win:
        wt = [(R.t_done[i] - R.t_first[i]) / (R.out[i] - 1) for i in win if R.out[i] > 1]
        pct = {"ttft_s": summary([R.t_first[i] - R.t_disp[i] for i in win]),
               "tpot_ms": {k: v * 1e3 for k, v in summary(wt).items()},
               "e2e_s": summary([R.t_done[i] - R.t_arr[i] for i in win]),
               "queue_s": summary([R.t_disp[i] - R.t_arr[i] for i in win]),
               "client_ttft_s": summary([R.t_first[i] - R.t_arr[i] for i in win])}
        growth = 0.0
        if rule == "arrivals-10-90":
            byarr = sorted(win, key=R.t_arr.__getitem__)
            k = max(1, len(byarr) // 5)
            q = lambda ids: sum(R.t_disp[i] - R.t_arr[i] for i in ids) / len(ids)  # noqa: E731
            growth = (q(byarr[-k:]) - q(byarr[:k])) / (b - a)
        wu = [1.0 / x for x in wt if x > 0]
        # the window's completion rate times its requests' mean output: what `sncc search` ranks by
        tok_s = qpm / 60.0 * sum(R.out[i] for i in win) / len(win)
        res.saturated = {
            "window": rule, "queue_growth": growth, "start_s": a, "end_s": b, "requests": float(len(win)), "qpm": qpm,
            "ttft_s": pct["ttft_s"]["mean"], "tpot_ms": pct["tpot_ms"]["mean"],
            "e2e_s": pct["e2e_s"]["mean"], "queue_s": pct["queue_s"]["mean"], "percentiles": pct,
            "tokens_per_s_per_user": sum(wu) / len(wu) if wu else float("nan"),
            "output_tokens_per_s": tok_s, "output_tokens_per_s_per_device": tok_s / max(1, devices),
        }
    idx = win or done
    res._samples = ([R.t_first[i] - R.t_disp[i] for i in idx],
                    [1e3 * (R.t_done[i] - R.t_first[i]) / (R.out[i] - 1) for i in idx if R.out[i] > 1])
    res.binds = {"window": "steady" if win else "run",
                 "time_shares": time_shares(R, idx, disaggregated)}
    if series:
        res.series = {"t_s": [p[0] for p in series], "waiting": [p[1] for p in series],
                      "running": [p[2] for p in series], "kv_use": [p[3] for p in series]}
    res.info["residuals"] = dict(residuals or {})
    rsd = residuals or {}
    res._qpm_cap = None if closed else (offered_qpm or _arrival_qpm(R, win or done))
    heads = {"qpm": ("throughput", res.saturated.get("qpm", res.qpm)),
             "ttft_s": ("ttft", res.saturated.get("ttft_s", res.ttft_s["mean"])),
             "client_ttft_s": ("ttft", (res.saturated.get("percentiles", {}).get("client_ttft_s") or res.client_ttft_s)["mean"]),
             "tpot_ms": ("tpot", res.saturated.get("tpot_ms", res.tpot_ms["mean"]))}
    for k, (fam, v) in heads.items():
        if rsd.get(fam) and v == v:
            lo, hi = interval(v, rsd[fam])
            if k == "qpm":
                hi = qpm_cap(res, v, hi)
            res.intervals[k] = {"value": v, "low": lo, "high": hi, "family": fam}
    res.slo = [evaluate_slo(res, s, rsd) for s in slos]
    return res


def slo_verdict(op: str, target: float, observed: float, low: float, high: float) -> Tuple[str, bool]:
    """The one verdict rule of ``sncc simulate`` and ``sncc search`` (README *Search*: "uncertain"
    is a point estimate that meets the SLO while the interval straddles it):
    ``("met", False)`` when the point estimate and the whole interval ``[low, high]`` meet
    ``observed op target``; ``("uncertain", False)`` when the point estimate meets it and the
    interval straddles it; ``("missed", reaches)`` when the point estimate misses it, ``reaches``
    True when some of the interval still meets it ("missed, interval reaches the target")."""
    f = _OPS[op]
    lo_ok, hi_ok = bool(f(low, target)), bool(f(high, target))
    if f(observed, target):
        return ("met", False) if lo_ok and hi_ok else ("uncertain", False)
    return "missed", lo_ok or hi_ok


def violated(s: Any, v: SloVerdict) -> bool:
    """True when SLO ``s`` is missed (:func:`slo_verdict`: the point estimate misses it, whatever
    the interval): the cases the what-ifs try to fix and that fail ``sncc simulate``."""
    return v.verdict == "missed"


#: fewest completed requests a throughput SLO (qpm, output_tokens_per_s) is judged on when there is
#: no steady window: the steady windows' own minimum (:func:`_window`); below it the verdict is n/a
MIN_RATE_REQUESTS = 10
#: the SLO metrics that are rates over the run (judged n/a below :data:`MIN_RATE_REQUESTS`)
RATE_METRICS = ("qpm", "output_tokens_per_s")


def evaluate_slo(res: SimResult, s: Any, residuals: Optional[Dict[str, Sequence[float]]] = None,
                 client_ttft: bool = True) -> SloVerdict:
    """Check one SloTarget against ``res`` (ttft/tpot/e2e targets in seconds).

    Latency SLOs (any stat) and QPM are judged on the steady-state window when there is one
    (the warm-up and the end-of-run drain, set by the few longest outputs, are not
    properties of the deployment); else on the whole run.  TTFT is judged as the client sees
    it (``client_ttft``, the default: request sent to first token, queueing in front of the
    engine included), as ``vllm bench serve`` and its ``--goodput`` measure it (vllm 0.11.0 wheel
    ``vllm/benchmarks/lib/endpoint_request_func.py``: the timer starts before the HTTP request is
    posted); the verdict carries the engine-side figure too (``engine_observed``).
    ``client_ttft=False`` judges the engine-side TTFT (dispatch to first token).
    A metric the run does not define (nan: TPOT without any multi-token output; a throughput of
    a whole run of fewer than :data:`MIN_RATE_REQUESTS` completed requests) gets the verdict
    ``n/a`` (:class:`SloVerdict`).
    An ``engine_ttft`` SLO is judged on the engine-side TTFT whatever ``client_ttft`` says (the
    plan states that its target is a server-side figure).
    Raises ValueError for an unknown metric."""
    m, stat = s.metric, (s.stat or "mean")
    if m == "engine_ttft":
        import dataclasses as _dc

        from sncc.sim.report.units import slo_name as _name

        as_ttft = _dc.replace(s, metric="ttft") if _dc.is_dataclass(s) else s.model_copy(update={"metric": "ttft"})
        v = evaluate_slo(res, as_ttft, residuals, client_ttft=False)
        return _dc.replace(v, name=_name(m, stat, s.op, s.target), metric=m, basis="engine")
    if m not in FAMILY:
        raise ValueError(f"unknown SLO metric {m!r}")
    obs = None
    window = "run"
    engine = None
    if res.saturated and m in ("ttft", "tpot", "e2e", "qpm", "tokens_per_s_per_user", "output_tokens_per_s"):
        obs = res.steady("client_ttft" if (m == "ttft" and client_ttft) else m, stat)
        window = "steady"
        if obs is not None and obs != obs:     # e.g. no multi-token output in the window
            obs, window = None, "run"
        elif m == "ttft":
            engine = res.steady("ttft", stat)
    if obs is None and m in RATE_METRICS and res.requests_completed < MIN_RATE_REQUESTS:
        obs = float("nan")      # a rate over a run of a few requests is one request's latency, not throughput
    if obs is None:
        if m == "ttft":
            engine = res.ttft_s[stat]
            # a hand-built result without client_ttft_s: queue + TTFT of that statistic
            obs = (res.client_ttft_s.get(stat, engine + res.queue_s[stat]) if client_ttft else engine)
        elif m == "tpot":
            obs = res.tpot_ms[stat] / 1e3
        elif m == "e2e":
            obs = res.e2e_s[stat]
        elif m == "qpm":
            obs = res.qpm
        elif m == "output_tokens_per_s":
            obs = res.output_tokens_per_s
        else:
            obs = res.tokens_per_s_per_user["mean"]
    from sncc.sim.report.units import slo_name
    name = slo_name(m, stat, s.op, s.target)
    op = _OPS[s.op]
    basis = ("client" if client_ttft else "engine") if m == "ttft" else ""
    if obs is None or obs != obs:      # nan: no multi-token output (TPOT) or nothing completed
        return SloVerdict(name=name, target=s.target, observed=float("nan"), met=None, verdict="n/a",
                          window=window, metric=m, stat=stat, op=s.op, basis=basis)
    rs = (residuals or {}).get(FAMILY[m]) or []
    if rs and obs == obs:
        lo, hi = interval(obs, rs)
        if m == "qpm":
            hi = qpm_cap(res, obs, hi)
        elif m == "output_tokens_per_s":
            hi = output_rate_cap(res, obs, hi, res.steady("qpm", stat) if window == "steady" else res.qpm)
    else:
        lo = hi = obs
    verdict, reaches = slo_verdict(s.op, s.target, obs, lo, hi)
    met = {"met": True, "missed": False}.get(verdict)
    return SloVerdict(name=name, target=s.target, observed=obs, met=met, verdict=verdict,
                      low=lo if rs else None, high=hi if rs else None, window=window, metric=m, stat=stat, op=s.op,
                      basis=basis, engine_observed=engine, reaches_target=reaches)

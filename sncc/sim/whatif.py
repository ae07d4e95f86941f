"""Goodput search and "what binds" what-ifs — each answer checked by re-simulating.

* :func:`goodput` — the highest Poisson arrival rate [req/s] at which every latency SLO
  percentile holds on the steady-state window and the deployment keeps up.  TTFT is judged as the client sees it (proxy
  queue + engine TTFT): with an open loop the proxy queue is where overload shows.  "Keeps
  up" means the steady-window backlog grows by less than 5 % of the service rate
  (``saturated["queue_growth"] < 0.05``).
  Search: doubling from a low rate until an SLO fails, then bisection to ``tol``.  Its
  interval repeats the search with the SLO targets and the rate moved to the pessimistic /
  optimistic ends of the profile's calibration residuals (see :func:`goodput`).
* :func:`cheapest_changes` — for missed SLOs, the candidate plan changes (one more prefill /
  decode / serve instance, MTP on for a model with MTP layers, a larger KV block size), each
  re-simulated; changes within the seed-to-seed noise are dropped, changes that need more
  devices than the hardware has say so; sorted so the changes that fix every SLO with the
  fewest added devices come first.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Optional

from .metrics import FAMILY, evaluate_slo, violated
from .runner import simulate

#: MTP what-if: 1 draft token at 70 % acceptance — CloudMatrix-Infer's assumption (domain-facts §6.1)
MTP_WHATIF = (1, 0.7)
LATENCY = ("ttft", "tpot", "e2e")


def _at_rate(spec: Any, rate: float, requests: int) -> Any:
    wl = replace(spec.workload, rate=rate, concurrency=None, requests=requests)
    return replace(spec, workload=wl)


def _judge(res: Any, slos: List[Any]) -> tuple:
    """(ok, verdicts, keeps_up) of one trial result against latency SLOs ``slos``."""
    verdicts = [evaluate_slo(res, s, None, client_ttft=True) for s in slos]
    sat = res.saturated
    keeps_up = bool(sat) and sat["queue_growth"] < 0.05
    return all(v.met for v in verdicts) and keeps_up, verdicts, keeps_up


def _ok(spec: Any, rate: float, requests: int, progress: Any = None) -> tuple:
    res = simulate(_at_rate(spec, rate, requests), series=False,
                   progress=progress(f"goodput trial at {rate:.3g} req/s") if progress else None)
    return _judge(res, [s for s in spec.slos if s.metric in LATENCY])


#: a search whose start rate fails bisects down towards 0 only until its bracket falls below
#: ``start / MIN_RATE_DIVISOR``, then answers 0.0: a run at a near-zero rate serves every
#: request alone (one decode step per token each), so it costs seconds and says nothing new
MIN_RATE_DIVISOR = 16.0


def _search(ok_at: Any, start: float, tol: float, max_runs: int) -> tuple:
    """(rate, names failing just above it, trials) of the doubling + bisection search;
    ``ok_at(rate)`` returns ``(ok, failing names)``.  0.0 when no rate down to
    ``start / MIN_RATE_DIVISOR`` passes."""
    trials = []
    lo, hi = 0.0, None
    r = start
    fail_names: List[str] = []
    while hi is None and len(trials) < max_runs:
        ok, names = ok_at(r)
        trials.append((r, ok))
        if ok:
            lo = r
            r *= 2.0
        else:
            hi = r
            fail_names = names
    if hi is None:
        return lo, [], trials
    while hi - lo > tol * hi and len(trials) < max_runs:
        if lo == 0.0 and hi <= start / MIN_RATE_DIVISOR:
            break
        mid = 0.5 * (lo + hi)
        ok, names = ok_at(mid)
        trials.append((mid, ok))
        if ok:
            lo = mid
        else:
            hi = mid
            fail_names = names
    return lo, fail_names, trials


def _shifted(slos: List[Any], residuals: Dict[str, Any], side: str) -> List[Any]:
    """``slos`` with each target moved by its family's calibration residuals.

    ``side="low"`` (pessimistic): the target the *prediction* must meet so that the
    interval's worst end (:func:`sncc.sim.metrics.interval`) still meets the real one —
    ``target * (1 + min(r, 0))`` for ``<``/``<=`` (the truth may be ``1/(1+min r)`` x the
    prediction), ``target * (1 + max(r, 0))`` for ``>``/``>=``; ``"high"`` (optimistic): the
    other end.  A family without residuals keeps its target."""
    out = []
    for s in slos:
        rs = list(residuals.get(FAMILY[s.metric]) or []) + [0.0]
        below = s.op in ("<", "<=")
        f = 1.0 + (min(rs) if below == (side == "low") else max(rs))
        out.append(replace(s, target=s.target * f))
    return out


def goodput(spec: Any, *, requests: Optional[int] = None, start: float = 0.25, tol: float = 0.02,
            max_runs: int = 24, progress: Any = None) -> Dict[str, Any]:
    """Goodput [req/s] of ``spec`` under its latency SLOs (see the module docstring), with a
    calibration interval.

    ``requests`` per trial run (default: the plan's, capped at 3000).  ``max_runs`` caps the
    trials of each of the three searches below; a rate already simulated is not run again
    (the trial result does not depend on the targets).

    Interval (``low``/``high`` [req/s]): the calibration residuals ``r = predicted/measured -
    1`` (the profile's ``[calibration] residuals``, widened as in
    :func:`sncc.sim.runner.profile_match`; the trial results' ``info["residuals"]``) are read as "the truth is the prediction scaled by
    ``1/(1+r)``".  ``low`` is the goodput if every figure sits at its pessimistic end:

    * each latency SLO holds only while the prediction's pessimistic end meets it — the search
      is repeated with each target tightened by its family's residuals (:func:`_shifted`:
      ``ttft`` for TTFT, ``tpot`` for TPOT and e2e; e.g. TTFT < 2 s with a -40 % residual
      must be predicted below 1.2 s);
    * a deployment slower by ``1 + r_thr`` than predicted reaches that state at a rate lower by
      the same factor (all its times stretch), so the rate found is divided by ``1 + max(r, 0)``
      of the ``throughput`` family.

    ``high`` is the same with the optimistic ends (targets loosened by ``1 + max(r, 0)``, rate
    divided by ``1 + min(r, 0)``).  ``low <= rate <= high`` (clamped: bisection on a noisy
    criterion).  Both are None when the profile records no residuals.

    Returns ``{"rate": r, "qpm": 60r, "low", "high", "low_qpm", "high_qpm", "interval":
    {"targets_low", "targets_high": SLO name -> target [s] searched with, "rate_scale_low",
    "rate_scale_high"}, "runs": simulations run, "binding": [names of SLOs failing just above
    r], "trials": [(rate, ok)] of the nominal search}``; ``rate`` (or a bound) is 0.0 when no
    rate down to ``start / MIN_RATE_DIVISOR`` meets its targets.  ``progress(label)``, when
    given, returns each trial run's progress callback (:func:`sncc.sim.runner.simulate`)."""
    n = requests or min(spec.workload.requests, 3000)
    slos = [s for s in spec.slos if s.metric in LATENCY]
    cache: Dict[float, Any] = {}

    def trial(rate: float) -> Any:
        if rate not in cache:
            cache[rate] = simulate(_at_rate(spec, rate, n), series=False,
                                   progress=progress(f"goodput trial at {rate:.3g} req/s") if progress else None)
        return cache[rate]

    def ok_for(targets: List[Any]) -> Any:
        def ok_at(rate: float) -> tuple:
            ok, vs, keeps = _judge(trial(rate), targets)
            return ok, [v.name for v in vs if not v.met] + ([] if keeps else ["throughput keeps up"])
        return ok_at

    def named(targets: List[Any]) -> Dict[str, float]:
        """nominal SLO name -> the target searched with"""
        return {evaluate_slo(trial(start), s, None).name: t.target for s, t in zip(slos, targets)}

    rate, binding, trials = _search(ok_for(slos), start, tol, max_runs)
    out: Dict[str, Any] = {"rate": rate, "qpm": rate * 60.0, "low": None, "high": None, "low_qpm": None,
                           "high_qpm": None, "runs": 0, "binding": binding, "trials": trials}
    rsd = trial(start).info.get("residuals") or {}
    if rsd:
        thr = list(rsd.get("throughput") or []) + [0.0]
        bounds = {}
        for side, scale in (("low", 1.0 / (1.0 + max(thr))), ("high", 1.0 / (1.0 + min(thr)))):
            targets = _shifted(slos, rsd, side)
            r, _, _ = _search(ok_for(targets), start, tol, max_runs)
            bounds[side] = (r * scale, named(targets), scale)
        out["low"] = min(rate, bounds["low"][0])
        out["high"] = max(rate, bounds["high"][0])
        out["low_qpm"], out["high_qpm"] = out["low"] * 60.0, out["high"] * 60.0
        out["interval"] = {"targets_low": bounds["low"][1], "targets_high": bounds["high"][1],
                           "rate_scale_low": bounds["low"][2], "rate_scale_high": bounds["high"][2]}
    out["runs"] = len(cache)
    return out


def _better(op: str, before: float, after: float) -> float:
    """Relative improvement of an SLO's observed value (> 0 = closer to meeting it)."""
    if before is None or after is None or before != before or after != after or before == 0:
        return 0.0
    rel = (after - before) / abs(before)
    return -rel if op in ("<", "<=") else rel


def _candidates(spec: Any) -> List[tuple]:
    """(label, added devices, devices short of the hardware, changed spec) for each what-if.

    * one more instance of each role: adds its devices; when the plan's hardware
      (``spec.devices_available``) has fewer free devices, the label says how many more
      devices it needs;
    * MTP on: only for a model with MTP layers (``num_nextn_predict_layers > 0``; EAGLE or a
      separate draft model would need an acceptance sncc cannot assume);
    * a larger KV block size (kept only when its re-simulated effect beats the noise)."""
    out = []
    roles = list(spec.roles.items() if isinstance(spec.roles, dict) else spec.roles)
    used = sum(r.instances * r.devices for _, r in roles)
    avail = getattr(spec, "devices_available", None)

    def with_role(name: str, **kw):
        return replace(spec, roles=tuple((n, replace(r, **kw) if n == name else r) for n, r in roles))

    for name, r in roles:
        short = max(0, used + r.devices - avail) if avail else 0
        label = f"one more {name} instance ({name} instances {r.instances} -> {r.instances + 1})"
        out.append((label, r.devices, short, with_role(name, instances=r.instances + 1)))
    mtp_layers = getattr(spec.model, "num_nextn_predict_layers", 0) or 0
    if spec.features.mtp is None and mtp_layers > 0:
        out.append((f"MTP on ({MTP_WHATIF[0]} draft token, acceptance {MTP_WHATIF[1]:g} assumed as in "
                     "CloudMatrix-Infer)", 0, 0, replace(spec, features=replace(spec.features, mtp=MTP_WHATIF))))
    blk = roles[0][1].block_size
    if blk < 512:
        out.append((f"KV block size {blk} -> {blk * 2}", 0, 0,
                    replace(spec, roles=tuple((n, replace(r, block_size=blk * 2)) for n, r in roles))))
    return out


#: smallest relative SLO change a what-if must make to be reported, whatever the seed noise
MIN_EFFECT = 0.01


#: requests per what-if run (each candidate and its baseline run at this size, as the goodput
#: search does): a 100k-request plan would otherwise be simulated once per candidate in full
WHATIF_REQUESTS = 3000


def seed_noise(spec: Any, result: Any, slos: List[Any], progress: Any = None) -> Dict[str, float]:
    """Relative run-to-run noise per SLO name: ``|observed(seed+1) / observed(seed) - 1|``
    (one extra simulation with the next workload seed), at least :data:`MIN_EFFECT`."""
    other = simulate(replace(spec, workload=replace(spec.workload, seed=spec.workload.seed + 1)), series=False,
                     progress=progress)
    out = {}
    for s, v in slos:
        nv = evaluate_slo(other, s, result.info.get("residuals"))
        out[v.name] = max(MIN_EFFECT, abs(_better(s.op, v.observed, nv.observed)))
    return out


def cheapest_changes(spec: Any, result: Any, *, requests: Optional[int] = None,
                     progress: Any = None) -> List[Dict[str, Any]]:
    """What-ifs for the SLOs ``result`` misses, or whose prediction misses while the verdict is
    UNCERTAIN (:func:`sncc.sim.metrics.violated`; empty when there is none).

    Each candidate (:func:`_candidates`) is re-simulated with ``requests`` requests (default:
    the plan's, capped at :data:`WHATIF_REQUESTS` or 3x a closed loop's concurrency, whichever
    is larger; when capped, the baseline is re-run at the
    same size so before and after compare like with like); one whose effect on every missed
    SLO is within the seed noise (:func:`seed_noise`) is dropped.  Each entry: ``change``,
    ``added_devices``, ``needs_devices`` (devices beyond the plan's hardware, 0 when it fits),
    ``requests`` (per run), ``effects`` (per missed SLO: before, after, verdict) and
    ``all_slos``.  Sorted: changes that fix every SLO first, then those that fit the hardware,
    then fewer added devices.  ``progress(label)``, when given, returns the progress callback
    of each run (see :func:`sncc.sim.runner.simulate`)."""
    missed = [(s, v) for s, v in zip(spec.slos, result.slo) if violated(s, v)]
    if not missed:
        return []
    cands = _candidates(spec)
    prog = progress or (lambda label: None)
    # a closed loop needs several times its clients to reach its steady state
    n = requests or min(spec.workload.requests, max(WHATIF_REQUESTS, 3 * (spec.workload.concurrency or 0)))
    if n < spec.workload.requests:
        spec = replace(spec, workload=replace(spec.workload, requests=n))
        cands = [(lab, dev, short, replace(sp, workload=spec.workload)) for lab, dev, short, sp in cands]
        result = simulate(spec, series=False, progress=prog(f"what-if baseline at {n} requests"))
        missed = [(s, v) for s, v in zip(spec.slos, result.slo) if v.name in {m[1].name for m in missed}]
    noise = seed_noise(spec, result, missed, progress=prog("what-if seed noise"))
    out = []
    for label, dev, short, sp in cands:
        r = simulate(sp, series=False, progress=prog(f"what-if: {label}"))
        effects = []
        gain = False
        for s, v in missed:
            nv = evaluate_slo(r, s, result.info.get("residuals"))
            effects.append({"slo": v.name, "before": v.observed, "after": nv.observed, "verdict": nv.verdict})
            gain = gain or _better(s.op, v.observed, nv.observed) > noise[v.name]
        if not gain:
            continue
        fixes_all = not any(violated(s, v) for s, v in zip(sp.slos, r.slo))
        out.append({"change": label, "added_devices": dev, "needs_devices": short, "requests": n, "effects": effects,
                    "all_slos": "met" if all(v.verdict == "met" for v in r.slo) else (
                        "not missed" if fixes_all else "still missed")})
    rank = {"met": 0, "not missed": 1, "still missed": 2}
    out.sort(key=lambda c: (rank[c["all_slos"]], c["needs_devices"] > 0, c["added_devices"]))
    return out

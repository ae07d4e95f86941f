"""Goodput search and "what binds" what-ifs — each answer checked by re-simulating.

* :func:`goodput` — the highest Poisson arrival rate [req/s; conversations/s for a multi-turn
  workload] at which every SLO the search can judge holds on the steady-state window and the
  deployment keeps up.  Judged: every latency SLO (``ttft``, ``tpot``, ``e2e``, any statistic)
  and ``tokens_per_s_per_user`` (the mean over the run's requests, as its verdict); ``qpm`` and
  ``output_tokens_per_s`` are not (they follow from the rate).  TTFT is judged as the client sees
  it (proxy queue + engine TTFT): with an open loop the proxy queue is where overload shows.
  "Keeps up" means the steady-window backlog grows by less than 5 % of the service rate
  (``saturated["queue_growth"] < 0.05``).  A multi-turn workload (``turns > 1``) must also
  complete, in the steady window, at least :data:`MT_KEEPS_UP` of the offered turn rate (rate x
  turns requests/s): a follow-up turn only arrives after its previous turn completes, so an
  overloaded deployment throttles its own arrivals and the backlog test alone misses it.  Its
  trial runs are sized so that conversations keep starting for :data:`MT_LIFETIMES` conversation
  lifetimes (:func:`conversation_requests`); a shorter run is all ramp-up and drain and never
  shows the steady load.  A workload whose trace rows carry arrival times has no rate to search
  (:func:`goodput_refusal`).
  Search: doubling from a low rate until an SLO fails, then bisection to ``tol``.  Its
  interval repeats the search with the SLO targets and the rate moved to the pessimistic /
  optimistic ends of the profile's calibration residuals (see :func:`goodput`).
* :func:`cheapest_changes` — for missed SLOs, the candidate plan changes (one more prefill /
  decode / serve instance, MTP on for a model with MTP layers, a larger KV block size), each
  re-simulated; changes within the seed-to-seed noise are dropped, changes that need more
  devices than the hardware has say so; a change that raises the HCCL buffer the MoE
  dispatch/combine needs (SN4010) raises the candidate's ``HCCL_BUFFSIZE`` to match
  (:func:`fit_hccl_buffer`), so every candidate is a plan ``sncc check`` accepts; sorted so
  the changes that fix every SLO with the fewest added devices come first.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Optional

from sncc.sim.engine.metrics import FAMILY, evaluate_slo, interval, violated
from sncc.sim.engine.des import Unadmittable
from sncc.sim.engine.run import simulate_spec as simulate

#: MTP what-if: 1 draft token at 70 % acceptance — CloudMatrix-Infer's assumption (domain-facts §6.1)
MTP_WHATIF = (1, 0.7)
LATENCY = ("ttft", "tpot", "e2e")
#: SLO metrics the goodput search judges at each trial rate (module docstring)
GOODPUT_METRICS = LATENCY + ("tokens_per_s_per_user",)
#: "keeps up": the steady-window backlog grows by less than this fraction of the service rate
QUEUE_GROWTH_MAX = 0.05
#: multi-turn "keeps up": completed turns per second in the steady window are at least this
#: fraction of the offered turn rate.  Measured on a 4-turn Qwen3-32B plan (tests/fixtures/plans/
#: multi-turn-h200.sn, trials sized as below): 0.94-1.02 at sustainable rates (Poisson noise of
#: the conversations starting in the window), 0.15-0.55 when overloaded
MT_KEEPS_UP = 0.9
#: multi-turn trials: conversations keep starting for at least this many conversation lifetimes.
#: The ramp-up and the drain (about one lifetime each) then hold about 1/(2 x 8) = 6 % of the
#: requests each, inside the 10 % the open-loop steady window drops at each end
MT_LIFETIMES = 8
#: most requests of one multi-turn goodput trial (a longer run only costs time)
MT_MAX_REQUESTS = 30_000


def _at_rate(spec: Any, rate: float, requests: int) -> Any:
    wl = replace(spec.workload, rate=rate, concurrency=None, requests=requests)
    return replace(spec, workload=wl)


def goodput_refusal(spec: Any) -> Optional[str]:
    """Why the goodput search cannot run on ``spec`` (a sentence), or None when it can.

    * the workload's trace rows carry arrival times: the trace's arrivals replace the Poisson
      rate under test, so every trial would replay the same arrivals;
    * the plan has no SLO the search judges (:data:`GOODPUT_METRICS`)."""
    tr = spec.workload.trace
    if tr and tr[0][2] is not None:
        return ("--goodput searches the Poisson arrival rate, but the workload's trace gives every request's "
                "arrival time (its arrival_s column), which would replace the rate under test; drop the "
                "arrival_s column to keep the trace's lengths and search the rate, or simulate the trace "
                "without --goodput")
    if not any(s.metric in GOODPUT_METRICS for s in spec.slos):
        return ("--goodput needs at least one SLO on ttft, tpot, e2e or tokens_per_s_per_user in the plan's "
                "`slo` block")
    return None


def conversation_requests(workload: Any, rate: float, res: Any) -> int:
    """Requests a multi-turn goodput trial at ``rate`` [conversations/s] needs so that
    conversations keep starting for :data:`MT_LIFETIMES` conversation lifetimes.

    Lifetime ``D = (turns - 1) * think_time + turns * e2e`` [s], with e2e the mean of a run at
    that rate ``res`` (its steady window, else the whole run); requests
    ``= ceil(MT_LIFETIMES * rate * D) * turns``."""
    import math

    t = max(1, workload.turns)
    sat = res.saturated or {}
    e2e = sat.get("e2e_s", res.e2e_s.get("mean"))
    if e2e is None or e2e != e2e:
        e2e = 0.0
    life = (t - 1) * workload.think_time + t * e2e
    return int(math.ceil(MT_LIFETIMES * rate * life)) * t


def _trial(spec: Any, rate: float, requests: int, progress: Any = None) -> tuple:
    """(result, simulations run) of one goodput trial at ``rate``.

    A single-turn workload runs ``requests`` requests.  A multi-turn one is re-run (at most
    twice) with :func:`conversation_requests` x 1.25 requests, capped at
    :data:`MT_MAX_REQUESTS`, while the last run was too short and kept up by the backlog test
    (an overloaded run only grows its backlog when made longer)."""
    unit = "conversations/s" if spec.workload.turns > 1 else "req/s"

    def run(n: int) -> Any:
        return simulate(_at_rate(spec, rate, n), series=False,
                        progress=progress(f"goodput trial at {rate:.3g} {unit}") if progress else None)

    res, runs, n = run(requests), 1, requests
    if spec.workload.turns > 1:
        for _ in range(2):
            sat = res.saturated
            if sat and sat["queue_growth"] >= QUEUE_GROWTH_MAX:
                break
            need = conversation_requests(spec.workload, rate, res)
            if need <= n or n >= MT_MAX_REQUESTS:
                break
            n = min(MT_MAX_REQUESTS, int(need * 1.25))
            res, runs = run(n), runs + 1
    return res, runs


def _judge(res: Any, slos: List[Any], offered_turns: Optional[float] = None) -> tuple:
    """(ok, verdicts, keeps_up) of one trial result against the goodput SLOs ``slos``.

    ``offered_turns``: the offered turn rate [requests/s] of a multi-turn trial (rate x turns);
    its steady-window completions must reach :data:`MT_KEEPS_UP` of it (module docstring)."""
    verdicts = [evaluate_slo(res, s, None, client_ttft=True) for s in slos]
    sat = res.saturated
    keeps_up = bool(sat) and sat["queue_growth"] < QUEUE_GROWTH_MAX
    if keeps_up and offered_turns:
        keeps_up = sat["qpm"] / 60.0 >= MT_KEEPS_UP * offered_turns
    # an n/a verdict (TPOT of one-token outputs) neither passes nor fails a trial
    return all(v.met or v.verdict == "n/a" for v in verdicts) and keeps_up, verdicts, keeps_up


def _offered_turns(spec: Any, rate: float) -> Optional[float]:
    return rate * spec.workload.turns if spec.workload.turns > 1 else None


def _ok(spec: Any, rate: float, requests: int, progress: Any = None) -> tuple:
    res, _ = _trial(spec, rate, requests, progress)
    return _judge(res, [s for s in spec.slos if s.metric in GOODPUT_METRICS], _offered_turns(spec, rate))


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


def _ends(residuals: Any) -> tuple:
    """(low, high) factors of the calibration interval of the truth over a prediction of 1 for
    one family's residuals (:func:`sncc.sim.engine.metrics.interval`, the same rule as every
    SLO interval); (1, 1) without residuals."""
    return interval(1.0, list(residuals or []))


def _shifted(slos: List[Any], residuals: Dict[str, Any], side: str) -> List[Any]:
    """``slos`` with each target moved by its family's calibration interval.

    ``side="low"`` (pessimistic): the target the *prediction* must meet so that the
    interval's worst end (:func:`sncc.sim.engine.metrics.interval`, the truth between ``a`` and
    ``b`` x the prediction) still meets the real one — ``target / b`` for ``<``/``<=``,
    ``target / a`` for ``>``/``>=``; ``"high"`` (optimistic): the other end.  A family without
    residuals keeps its target."""
    out = []
    for s in slos:
        a, b = _ends(residuals.get(FAMILY[s.metric]))
        below = s.op in ("<", "<=")
        f = 1.0 / (b if below == (side == "low") else a)
        out.append(replace(s, target=s.target * f))
    return out


def goodput(spec: Any, *, requests: Optional[int] = None, start: float = 0.25, tol: float = 0.02,
            max_runs: int = 24, progress: Any = None) -> Dict[str, Any]:
    """Goodput [req/s; conversations/s when ``turns > 1``] of ``spec`` under its latency and
    tokens/s-per-user SLOs (see the module docstring), with a calibration interval.

    ``requests`` per trial run (default: the plan's, capped at 3000; a multi-turn trial grows
    to reach its steady state, :func:`_trial`).  ``max_runs`` caps the
    trials of each of the three searches below; a rate already simulated is not run again
    (the trial result does not depend on the targets).  Raises ValueError when
    :func:`goodput_refusal` gives a reason.

    Interval (``low``/``high`` [req/s]): the calibration residuals of each family (the trial
    results' ``info["residuals"]``: the plan's leave-one-out regime, widened as in
    :func:`sncc.cost.inputs.profile_match`) give the SLO intervals' rule, the truth between
    ``a`` and ``b`` x the prediction (:func:`sncc.sim.engine.metrics.interval`).  ``low`` is the
    goodput if every figure sits at its pessimistic end:

    * each latency SLO holds only while the prediction's pessimistic end meets it — the search
      is repeated with each target tightened by its family's interval (:func:`_shifted`:
      ``ttft`` for TTFT, ``tpot`` for TPOT and e2e; e.g. TTFT < 2 s with ``b = 1.6`` must be
      predicted below 1.25 s);
    * a deployment slower than predicted reaches that state at a rate lower by the same factor
      (all its times stretch), so the rate found is multiplied by ``a`` of the ``throughput``
      family.

    ``high`` is the same with the optimistic ends (targets loosened by ``1 / a``, rate times
    ``b``).  ``low <= rate <= high`` (clamped: bisection on a noisy
    criterion).  Both are None when the profile records no residuals.

    Returns ``{"rate": r, "unit": "req/s" | "conversations/s", "turns", "burstiness" (of the
    trials' arrivals: the plan's, 1 = Poisson), "qpm": 60 r turns (requests per minute), "low",
    "high", "low_qpm", "high_qpm", "interval": {"targets_low", "targets_high": SLO name -> target
    searched with (the SLO's unit), "rate_scale_low", "rate_scale_high"}, "runs": simulations
    run, "binding": [names of SLOs failing just above r], "trials": [(rate, ok)] of the nominal
    search}``; ``rate`` (or a bound) is 0.0 when no
    rate down to ``start / MIN_RATE_DIVISOR`` meets its targets.  ``progress(label)``, when
    given, returns each trial run's progress callback (:func:`sncc.cost.inputs.simulate`)."""
    why = goodput_refusal(spec)
    if why:
        raise ValueError(why)
    n = requests or min(spec.workload.requests, 3000)
    slos = [s for s in spec.slos if s.metric in GOODPUT_METRICS]
    turns = max(1, spec.workload.turns)
    cache: Dict[float, Any] = {}
    runs = [0]

    def trial(rate: float) -> Any:
        if rate not in cache:
            cache[rate], k = _trial(spec, rate, n, progress)
            runs[0] += k
        return cache[rate]

    def ok_for(targets: List[Any]) -> Any:
        def ok_at(rate: float) -> tuple:
            ok, vs, keeps = _judge(trial(rate), targets, _offered_turns(spec, rate))
            # n/a verdicts (no sample: e.g. one-token outputs) neither pass nor bind, as in _judge
            return ok, [v.name for v in vs if not v.met and v.verdict != "n/a"] + ([] if keeps else ["throughput keeps up"])
        return ok_at

    def named(targets: List[Any]) -> Dict[str, float]:
        """nominal SLO name -> the target searched with"""
        return {evaluate_slo(trial(start), s, None).name: t.target for s, t in zip(slos, targets)}

    rate, binding, trials = _search(ok_for(slos), start, tol, max_runs)
    out: Dict[str, Any] = {"rate": rate, "unit": "conversations/s" if turns > 1 else "req/s", "turns": turns,
                           "burstiness": spec.workload.burstiness,
                           "qpm": rate * turns * 60.0, "low": None, "high": None, "low_qpm": None,
                           "high_qpm": None, "runs": 0, "binding": binding, "trials": trials}
    rsd = trial(start).info.get("residuals") or {}
    if rsd:
        bounds = {}
        for side, scale in zip(("low", "high"), _ends(rsd.get("throughput"))):
            targets = _shifted(slos, rsd, side)
            r, _, _ = _search(ok_for(targets), start, tol, max_runs)
            bounds[side] = (r * scale, named(targets), scale)
        out["low"] = min(rate, bounds["low"][0])
        out["high"] = max(rate, bounds["high"][0])
        out["low_qpm"], out["high_qpm"] = out["low"] * turns * 60.0, out["high"] * turns * 60.0
        out["interval"] = {"targets_low": bounds["low"][1], "targets_high": bounds["high"][1],
                           "rate_scale_low": bounds["low"][2], "rate_scale_high": bounds["high"][2]}
    out["runs"] = runs[0]
    return out


def _better(op: str, before: float, after: float) -> float:
    """Relative improvement of an SLO's observed value (> 0 = closer to meeting it)."""
    if before is None or after is None or before != before or after != after or before == 0:
        return 0.0
    rel = (after - before) / abs(before)
    return -rel if op in ("<", "<=") else rel


def hccl_need_mb(spec: Any) -> Optional[float]:
    """HCCL buffer [MB] the MoE dispatch/combine of ``spec``'s decoding roles needs: the largest
    :func:`sncc.facts.buffers.dispatch_buffer_mb` (the SN4010 check's requirement) over the
    ``decode``/``serve`` roles that run an EP dispatch, with their redundant experts and the MTP
    draft tokens.  None off Ascend (the check applies to Ascend only), for a dense model or
    without an EP dispatch."""
    from sncc.facts.buffers import dispatch_buffer_mb

    if str(getattr(spec.chip, "vendor", "")).lower() not in ("huawei", "ascend"):
        return None
    draft = spec.features.mtp[0] if spec.features.mtp else 0
    roles = spec.roles.items() if isinstance(spec.roles, dict) else spec.roles
    routed = getattr(spec.model, "n_routed_experts", 0) or 0
    needs = [dispatch_buffer_mb(spec.model, r.ep_size, routed + r.redundant_experts, r.max_num_seqs * (1 + draft))
             for n, r in roles if n != "prefill" and r.expert_parallel]
    needs = [x for x in needs if x is not None]
    return max(needs) if needs else None


def _hccl_of(spec: Any, role: Any) -> int:
    from sncc.capacity import hccl_buffsize_mb

    if role.hccl_buffsize_mb is not None:
        return role.hccl_buffsize_mb
    return spec.hccl_buffsize_mb if spec.hccl_buffsize_mb is not None else hccl_buffsize_mb({})


def resized(spec: Any) -> Any:
    """``spec`` with every role's KV pool recomputed from its own fields (memory model of
    :func:`sncc.sim.engine.memory.role_memory`): for a what-if that changes what the memory model
    reads (MTP weights, ``HCCL_BUFFSIZE``), the pool ``sncc check`` computed for the plan no longer
    applies."""
    roles = spec.roles.items() if isinstance(spec.roles, dict) else spec.roles
    return replace(spec, roles=tuple((n, replace(r, memory=None, kv_budget_bytes_per_device=None)) for n, r in roles))


def fit_hccl_buffer(spec: Any) -> tuple:
    """(``spec`` with the decoding roles' ``hccl_buffsize_mb`` raised to what their MoE
    dispatch/combine needs, a note for the what-if's label or "").

    The buffer in effect is the role's ``HCCL_BUFFSIZE`` (its env over the plan's, else the default
    ``sncc build`` writes).  When :func:`hccl_need_mb` exceeds it the candidate would fail SN4010,
    so it gets ``ceil(need)`` MB: a larger buffer, 2x per HCCL communicator outside the KV pool,
    shrinks the pool as it would on the real deployment (the pool is recomputed, :func:`resized`)."""
    import math

    need = hccl_need_mb(spec)
    if need is None:
        return spec, ""
    roles = spec.roles.items() if isinstance(spec.roles, dict) else spec.roles
    low = [(n, _hccl_of(spec, r)) for n, r in roles if n != "prefill" and r.expert_parallel and _hccl_of(spec, r) < need]
    if not low:
        return spec, ""
    want = int(math.ceil(need))
    names = {n for n, _ in low}
    out = replace(spec, roles=tuple((n, replace(r, hccl_buffsize_mb=want) if n in names else r) for n, r in roles))
    return (resized(out), f"HCCL_BUFFSIZE {low[0][1]} -> {want} MB as SN4010 requires for the MoE dispatch/combine "
                          "(a smaller KV pool)")


def _candidates(spec: Any) -> List[tuple]:
    """(label, added devices, devices short of the hardware, changed spec) for each what-if.

    * one more instance of each role: adds its devices; when the plan's hardware
      (``spec.devices_available``) has fewer free devices, the label says how many more
      devices it needs;
    * MTP on: only for a model with MTP layers (``num_nextn_predict_layers > 0``; EAGLE or a
      separate draft model would need an acceptance sncc cannot assume);
    * a larger KV block size (kept only when its re-simulated effect beats the noise).

    Each changed spec passes the SN4010 HCCL-buffer check: :func:`fit_hccl_buffer` raises
    ``HCCL_BUFFSIZE`` where the change needs it (MTP doubles the tokens a rank dispatches per
    step) and the label says so."""
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
                     "CloudMatrix-Infer)", 0, 0,
                    resized(replace(spec, features=replace(spec.features, mtp=MTP_WHATIF, draft_kind="mtp",
                                                           draft_cost=None)))))
    blk = roles[0][1].block_size
    if blk < 512:
        out.append((f"KV block size {blk} -> {blk * 2}", 0, 0,
                    replace(spec, roles=tuple((n, replace(r, block_size=blk * 2)) for n, r in roles))))
    fitted = []
    for label, dev, short, sp in out:
        sp, note = fit_hccl_buffer(sp)
        fitted.append((f"{label} with {note}" if note else label, dev, short, sp))
    return fitted


#: a what-if's outcome over every SLO, best first (see :func:`cheapest_changes`)
ALL_SLOS = ("met", "none predicted to miss", "some predicted to miss")

#: smallest relative SLO change a what-if must make to be reported, whatever the seed noise
MIN_EFFECT = 0.01


#: requests per what-if run (each candidate and its baseline run at this size, as the goodput
#: search does): a 100k-request plan would otherwise be simulated once per candidate in full
WHATIF_REQUESTS = 3000
#: the what-if runs together simulate at most this share of the main run's requests, or
#: :data:`WHATIF_FREE` requests when that is more (the 3x-concurrency size of a huge closed loop,
#: 300k requests per run for 100k clients, would otherwise cost more than the main run)
WHATIF_SHARE = 0.25
#: requests the what-if runs may simulate together whatever the main run's size (a few seconds
#: of simulation): below it the what-ifs keep their full size
WHATIF_FREE = 60_000


def whatif_requests(workload: Any, runs: int) -> int:
    """Requests per what-if run for ``workload`` when the what-ifs make ``runs`` simulations:
    the plan's, capped at :data:`WHATIF_REQUESTS` or 3x a closed loop's concurrency, whichever
    is larger (a closed loop needs several times its clients to reach its steady state).  When
    the ``runs`` runs would together simulate more than :data:`WHATIF_SHARE` of the plan's
    requests and more than :data:`WHATIF_FREE`, each gets its share of the larger of the two
    (never fewer than :data:`WHATIF_REQUESTS`)."""
    runs = max(1, runs)
    n = min(workload.requests, max(WHATIF_REQUESTS, 3 * (workload.concurrency or 0)))
    budget = max(WHATIF_FREE, int(WHATIF_SHARE * workload.requests))
    if n * runs <= budget:
        return n
    return min(n, max(WHATIF_REQUESTS, budget // runs))


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
    UNCERTAIN (:func:`sncc.sim.engine.metrics.violated`; empty when there is none).

    Each candidate (:func:`_candidates`) is re-simulated with ``requests`` requests (default:
    :func:`whatif_requests`, the plan's capped at :data:`WHATIF_REQUESTS` or 3x a closed loop's
    concurrency, a large plan's what-ifs together at most :data:`WHATIF_SHARE` of the main run;
    a note says when that leaves fewer than 3x the clients; when capped,
    the baseline is re-run at the
    same size so before and after compare like with like); one whose effect on every missed
    SLO is within the seed noise (:func:`seed_noise`) is dropped.  Each entry: ``change``,
    ``added_devices``, ``needs_devices`` (devices beyond the plan's hardware, 0 when it fits),
    ``requests`` (per run), ``effects`` (per missed SLO: before, after, verdict), ``verdicts``
    (every SLO's name -> verdict after the change: met / missed / uncertain),
    ``predicted_to_miss`` (the SLOs still missed: their point estimate misses the target,
    :func:`sncc.sim.engine.metrics.violated`) and ``all_slos``, one of :data:`ALL_SLOS`: ``met`` (every
    verdict met), ``none predicted to miss`` (no SLO missed; uncertain ones meet on the point
    estimate by definition, :func:`sncc.sim.engine.metrics.slo_verdict`), ``some predicted to miss``.  Sorted: changes that fix every SLO
    first, then those that fit the hardware, then fewer added devices.  ``progress(label)``, when given, returns the progress callback
    of each run (see :func:`sncc.cost.inputs.simulate`)."""
    missed = [(s, v) for s, v in zip(spec.slos, result.slo) if violated(s, v)]
    if not missed:
        return []
    cands = _candidates(spec)
    prog = progress or (lambda label: None)
    # a run that cannot complete (Unadmittable, or nothing completed) is skipped with a note in
    # the caller's result.info["notes"], never a crash
    notes = result.info.setdefault("notes", [])
    # a closed loop needs several times its clients to reach its steady state; the baseline re-run,
    # the seed-noise run and one run per candidate share the what-if budget
    runs = len(cands) + 2
    n = requests or whatif_requests(spec.workload, runs)
    conc = spec.workload.concurrency or 0
    if requests is None and n < min(spec.workload.requests, 3 * conc):
        notes.append(f"what-ifs ran {n} requests each ({runs} runs, bounded to a share of the main run's "
                     f"{spec.workload.requests}), fewer than 3x the {conc} closed-loop clients: "
                     "their steady state is approximate")
    try:
        if n < spec.workload.requests:
            spec = replace(spec, workload=replace(spec.workload, requests=n))
            cands = [(lab, dev, short, replace(sp, workload=spec.workload)) for lab, dev, short, sp in cands]
            result = simulate(spec, series=False, progress=prog(f"what-if baseline at {n} requests"))
            missed = [(s, v) for s, v in zip(spec.slos, result.slo) if v.name in {m[1].name for m in missed}]
        noise = seed_noise(spec, result, missed, progress=prog("what-if seed noise"))
    except Unadmittable as e:
        notes.append(f"no what-ifs: their baseline run cannot complete: {e.head}")
        return []
    out = []
    for label, dev, short, sp in cands:
        try:
            r = simulate(sp, series=False, progress=prog(f"what-if: {label}"))
        except Unadmittable as e:
            notes.append(f"what-if `{label}` not run: {e.head}")
            continue
        if not r.requests_completed:
            notes.append(f"what-if `{label}` not run: no request completed")
            continue
        effects = []
        gain = False
        for s, v in missed:
            nv = evaluate_slo(r, s, result.info.get("residuals"))
            effects.append({"slo": v.name, "metric": v.metric, "before": v.observed, "after": nv.observed,
                            "verdict": nv.verdict})
            gain = gain or _better(s.op, v.observed, nv.observed) > noise[v.name]
        if not gain:
            continue
        short_of = [v.name for s, v in zip(sp.slos, r.slo) if violated(s, v)]
        whole = ALL_SLOS[0] if all(v.verdict == "met" for v in r.slo) else ALL_SLOS[2 if short_of else 1]
        out.append({"change": label, "added_devices": dev, "needs_devices": short, "requests": n, "effects": effects,
                    "verdicts": {v.name: v.verdict for v in r.slo}, "predicted_to_miss": short_of,
                    "all_slos": whole})
    out.sort(key=lambda c: (ALL_SLOS.index(c["all_slos"]), c["needs_devices"] > 0, c["added_devices"]))
    return out

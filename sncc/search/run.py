"""The staged search (issue 12): per-role pricing, closed-form combination, screen, simulation.

1. **price**: every role layout of the :class:`~sncc.search.space.Space` gets its cost tables
   (:func:`sncc.search.pricing.price_layout`), one probe per layout, on the backend;
2. **combine**: every whole plan (mode × layouts × batch × instance counts) is estimated in closed
   form from those tables, disaggregated plans by rate matching prefill against decode capacity
   with the KV transfer between them;
3. **screen**: the best estimates (``shortlist``) and their Pareto frontier become typed plans
   (:mod:`sncc.search.candidate`), run through the CHECKS tuple (a plan with an error is never
   ranked) and the analytic screen (:func:`sncc.sim.api.screen`);
4. **simulate**: the top *k* and the screened Pareto frontier are re-run in the event simulator
   (:func:`sncc.sim.api.simulate`) with percentiles and calibration intervals; a candidate whose
   interval straddles an SLO is ``uncertain``, never ranked as met.  While no simulated candidate
   meets the SLOs, the next ones in screen order are simulated, k at a time, up to a budget of
   simulated candidates (``max_simulated``): the screen is optimistic, so a lower-screened
   candidate may meet what the top k missed.

Every ranking is sorted on a total key (source, status, metric, then the candidate's own order)
so that the output is the same for every backend and worker count; the event-simulated rows rank
first, by their simulated figures, and the rows only the (optimistic) screen ran for after them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from sncc.search import pickling
from sncc.search.candidate import Candidate, candidate_facts, candidate_plan
from sncc.search.pricing import (LayoutPrice, PricingContext, aggregated_estimates, disaggregated_estimates,
                                 price_layout, workload_means)
from sncc.search.space import Space, build_space

pickling.register()     # the facts' read-only mappings travel to the backends' workers

#: items below which the light stages (pricing, screen: milliseconds per item) run in this
#: process instead of on the backend, whose worker start-up costs more than they do
INLINE_BELOW = 400

#: requests of a stage-4 simulation when the plan's workload asks for more: the cap
#: :func:`sncc.sim.whatif.goodput` puts on its trials (fewer than a few times the decode slots
#: never reach a closed loop's steady state: at 800 the screen's QPM was 3-4x the simulation's
#: on 64 x H200 disaggregated plans, at 3000 within 1.4x)
SIM_REQUESTS = 3000
#: stage 4 simulates again at most this many times to refill the top k after merging equal rows
REFILL_ROUNDS = 3
#: the default budget of event-simulated candidates (``--max-simulated``): this many times the top
#: k, at least SIM_BUDGET_MIN; when no candidate of the first round meets the SLOs, stage 4
#: simulates the next ones in screen order, k at a time, until one meets them or the budget is spent
SIM_BUDGET_TOPS = 5
SIM_BUDGET_MIN = 50
#: verdict order within a ranking's event-simulated rows (met, uncertain, missed) and within its
#: screen-only rows after them (screened: the screen's means meet the SLOs, then missed)
STATUS_ORDER = {"met": 0, "uncertain": 1, "screened": 2, "missed": 3}


@dataclass
class Stage:
    """One stage's bookkeeping: ``name``, candidates it ``saw``, ``kept`` for the next stage, ``seconds``."""

    name: str
    saw: int
    kept: int
    seconds: float

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return {"name": self.name, "candidates": self.saw, "kept": self.kept, "seconds": round(self.seconds, 4)}


def default_max_simulated(top: int) -> int:
    """The budget of event-simulated candidates when ``--max-simulated`` is not given:
    :data:`SIM_BUDGET_TOPS` × ``top``, at least :data:`SIM_BUDGET_MIN`."""
    return max(SIM_BUDGET_TOPS * top, SIM_BUDGET_MIN)


@dataclass(frozen=True)
class Simulation:
    """Stage 4's count: ``simulated`` candidates in all, within the budget ``max_simulated``;
    ``first`` of them in the first round (the top k, the screened Pareto frontier, the plan's own
    layout, refills of merged rows), ``more`` after it in screen order (``rounds`` batches of k)
    because none simulated so far met the SLOs; ``budget_reached``: that went on until the budget
    was spent with none met; ``screen_only``: ranked candidates left to the screen alone."""

    simulated: int
    max_simulated: int
    first: int
    more: int
    rounds: int
    budget_reached: bool
    screen_only: int

    def to_dict(self) -> dict:
        """JSON-ready dict (the search document's ``simulation``)."""
        return {"simulated": self.simulated, "max_simulated": self.max_simulated, "first_round": self.first,
                "more": self.more, "more_rounds": self.rounds, "budget_reached": self.budget_reached,
                "screen_only": self.screen_only}


@dataclass
class Row:
    """One ranked candidate: its :class:`Candidate`, ``status`` (met / uncertain / missed /
    screened), the figures (``metrics``: qpm, tokens_per_s, tokens_per_s_per_device,
    tokens_per_s_per_user, ttft_s (engine: dispatch to first token) / client_ttft_s (request sent
    to first token) [s] / tpot_ms [ms] dicts of mean/p50/p90/p99 and their ``low``/``high``,
    bound, devices), ``slo`` verdicts (name, verdict) and ``source`` (``simulate`` or ``screen``)."""

    candidate: Candidate
    status: str
    metrics: dict
    slo: list = field(default_factory=list)
    source: str = "screen"
    warnings: list = field(default_factory=list)
    #: larger ``max_num_seqs`` values the event simulation predicted identically (merged into this row)
    equivalent: tuple = ()

    def sort_key(self, goodput: bool = False) -> tuple:
        """Total ranking key: event-simulated rows first (the analytic screen is optimistic: a
        screen-only estimate never outranks a simulated figure), then status, then throughput per
        device (or goodput), then the candidate."""
        metric = self.metrics.get("goodput_qpm") if goodput else None
        main = -(metric if metric is not None else self.metrics["tokens_per_s_per_device"])
        return (self.source != "simulate", STATUS_ORDER[self.status], round(main, 9),
                -round(self.metrics["tokens_per_s"], 9), self.candidate.key())


@dataclass
class SearchResult:
    """What a search found: the ``space``, the ``stages``, the ``ranked`` rows (best first), the
    Pareto ``frontier`` (rows, by tokens/s per user), the candidates ``rejected`` by the checks
    (candidate label → codes; ``reasons``: candidate label → its errors' (code, message, help)),
    ``interrupted`` (Ctrl-C: what was found so far) and ``notes``;
    ``base`` is the plan's own layout, ranked among the others only when it lies inside the
    requested space (else it is the unranked ``reference`` row, ``base_outside`` saying why)."""

    space: Space
    stages: list
    ranked: list
    frontier: list
    rejected: dict
    interrupted: bool = False
    notes: list = field(default_factory=list)
    goodput: bool = False
    base: Optional[Candidate] = None
    #: the plan's own layout when it lies outside the requested space (``base_outside`` says why):
    #: screened and simulated as a reference beside the ranking, never ranked or written
    reference: Optional["Row"] = None
    base_outside: Optional[str] = None
    #: the TTFT the plan's SLOs judge: ``client`` (a ``ttft`` SLO: request sent to first token,
    #: the queue in front of the engines included) or ``engine`` (``engine_ttft``, or no TTFT SLO)
    ttft_basis: str = "engine"
    #: candidate label → the (code, message, help) of each error the checks refused it for
    reasons: dict = field(default_factory=dict)
    #: how many candidates stage 4 event-simulated, and why it stopped (:class:`Simulation`)
    simulation: Optional["Simulation"] = None
    #: the (code, message, help) of each error the checks refused the plan's own layout for
    #: (then it is neither ranked nor a reference row: the search replaced its roles); () when it passed
    base_refused: tuple = ()

    def rank_of(self, cand: Optional[Candidate]) -> Optional[int]:
        """1-based rank of ``cand`` in :attr:`ranked`, or None."""
        if cand is None:
            return None
        key = cand.key()
        return next((i + 1 for i, r in enumerate(self.ranked) if r.candidate.key() == key), None)


@dataclass(frozen=True)
class CandidateContext:
    """Shipped once per worker of stages 3 and 4: the base ``plan``, its ``facts``, ``moe``,
    the mean output ``mo`` [tokens] and the simulation's request count."""

    plan: Any
    facts: Any
    moe: bool
    mo: float
    sim_requests: int
    goodput: bool = False
    seed: int = 0


def screen_candidate(ctx: CandidateContext, cand: Candidate) -> dict:
    """Stage 3 for one candidate (a module-level function for the backends): the typed plan, the
    CHECKS tuple (errors → ``{"errors": [codes]}``) and the analytic screen's figures."""
    from sncc.checks import run_checks
    from sncc.sim import api

    plan = candidate_plan(ctx.plan, cand, ctx.moe, ctx.facts)
    facts = candidate_facts(plan, ctx.facts)
    diags = run_checks(plan, facts) + list(facts.diagnostics)
    errors = sorted({d.code.code for d in diags if d.is_error})
    warnings = sorted({d.code.code for d in diags if not d.is_error})
    if errors:
        # what each refusal says (the report prints each distinct one once, not only its code)
        reasons = sorted({(d.code.code, d.message, d.help or "") for d in diags if d.is_error})
        return {"errors": errors, "reasons": [list(r) for r in reasons]}
    try:
        s = api.screen(plan, facts)
    except Exception as e:  # noqa: BLE001 -- the cost model refuses it: reported, not ranked
        return {"errors": [f"{type(e).__name__}: {e}"]}
    tps = s.qpm / 60.0 * ctx.mo
    return {"warnings": warnings, "qpm": s.qpm, "ttft_s": {"mean": s.ttft_s}, "tpot_ms": {"mean": s.tpot_ms},
            "client_ttft_s": {"mean": s.client_ttft_s},
            "e2e_s": s.e2e_s, "bound": s.bound, "tokens_per_s": tps, "decode_slots": s.decode_slots,
            "tokens_per_s_per_device": tps / max(1, cand.devices),
            "tokens_per_s_per_user": 1e3 / s.tpot_ms if s.tpot_ms > 0 else 0.0, "devices": cand.devices}


def simulate_candidate(ctx: CandidateContext, cand: Candidate) -> dict:
    """Stage 4 for one candidate: the event simulation with percentiles, the calibration
    intervals (the headline interval's relative width applied to each percentile) and the SLO
    verdicts (:func:`sncc.sim.engine.metrics.slo_verdict`, as ``sncc simulate`` gives them); with ``ctx.goodput`` the highest Poisson rate meeting every SLO percentile."""
    from sncc.sim import api

    plan = candidate_plan(ctx.plan, cand, ctx.moe, ctx.facts)
    facts = candidate_facts(plan, ctx.facts)
    try:
        r = api.simulate(plan, facts, seed=ctx.seed, requests=ctx.sim_requests)
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"}
    sat = r.saturated or {}
    out: dict = {"qpm": sat.get("qpm", r.qpm), "devices": cand.devices}

    def pct(name: str, key: str) -> dict:
        d = dict((sat.get("percentiles") or {}).get(name) or getattr(r, name))
        iv = r.intervals.get(key)
        head = sat.get(key, d.get("mean"))
        if iv and head:
            lo, hi = iv["low"] / head, iv["high"] / head
            for stat in ("mean", "p50", "p90", "p99"):
                if stat in d:
                    d[f"{stat}_low"], d[f"{stat}_high"] = d[stat] * lo, d[stat] * hi
        return {k: float(v) for k, v in d.items()}

    out["ttft_s"] = pct("ttft_s", "ttft_s")
    # request sent to first token (the client's queue included): what a `ttft` SLO is judged on
    out["client_ttft_s"] = pct("client_ttft_s", "client_ttft_s")
    out["tpot_ms"] = pct("tpot_ms", "tpot_ms")
    # the figures `sncc simulate` prints for the same plan: the steady window's, else the run's
    tps = float(sat.get("output_tokens_per_s", r.output_tokens_per_s))
    out["tokens_per_s"] = tps
    out["tokens_per_s_per_device"] = tps / max(1, cand.devices)
    tpot = out["tpot_ms"].get("mean") or 0.0
    out["tokens_per_s_per_user"] = 1e3 / tpot if tpot > 0 else 0.0
    qi = r.intervals.get("qpm")
    if qi:
        out["qpm_low"], out["qpm_high"] = float(qi["low"]), float(qi["high"])
    from sncc.sim.engine.metrics import RATE_METRICS

    # the verdicts are simulate's (metrics.slo_verdict: a point estimate that misses is missed,
    # whatever its interval); a throughput SLO the run could not judge (n/a: too few requests,
    # metrics.MIN_RATE_REQUESTS) is uncertain, not met (an n/a TPOT of one-token outputs is a
    # metric that does not exist, and stays n/a)
    out["slo"] = [(v.name, "uncertain" if v.verdict == "n/a" and t.metric in RATE_METRICS else v.verdict)
                  for t, v in zip(plan.slo, r.slo)]
    # (name, metric, op, predicted [SI]) per SLO: SN8105 names the closest miss of an SLO nothing met
    out["slo_predicted"] = [(v.name, t.metric, t.op, float(v.observed) if v.observed is not None else None)
                            for t, v in zip(plan.slo, r.slo)]
    if ctx.goodput:
        from sncc.sim.from_plan import spec_from_plan
        from sncc.sim.whatif import goodput, goodput_refusal

        spec = spec_from_plan(plan, facts, seed=ctx.seed)
        if goodput_refusal(spec) is None:
            g = goodput(spec, requests=ctx.sim_requests)
            out["goodput_qpm"] = float(_goodput_qpm(g))
    return out


def _goodput_qpm(g: Any) -> float:
    for name in ("goodput_qpm", "qpm"):
        v = g.get(name) if isinstance(g, dict) else getattr(g, name, None)
        if isinstance(v, (int, float)):
            return float(v)
    rate = g.get("rate") if isinstance(g, dict) else getattr(g, "rate", None)
    return float(rate or 0.0) * 60.0


def _status(slo: list) -> str:
    verdicts = [v for _, v in slo if v != "n/a"]
    if any(v == "missed" for v in verdicts):
        return "missed"
    if any(v == "uncertain" for v in verdicts):
        return "uncertain"
    return "met"


def _screen_meets(plan: Any, m: dict) -> bool:
    """Every SLO the screen's means can judge (ttft, tpot, qpm, tokens/s) holds: a ``ttft`` SLO on the
    client TTFT (the queue in front of the engines included, as the simulation judges it), an
    ``engine_ttft`` SLO on the engine's."""
    client = m.get("client_ttft_s", m["ttft_s"])["mean"]
    vals = {"ttft": client, "engine_ttft": m["ttft_s"]["mean"], "tpot": m["tpot_ms"]["mean"] / 1e3, "qpm": m["qpm"],
            "output_tokens_per_s": m["tokens_per_s"], "tokens_per_s_per_user": m["tokens_per_s_per_user"],
            "e2e": m["e2e_s"]}
    ops = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
    return all(ops[t.op](vals[t.metric], t.target) for t in plan.slo if t.metric in vals)


def pareto(rows: list) -> list:
    """Rows not dominated in (tokens/s per device, tokens/s per user), by tokens/s per user."""
    rows = sorted(rows, key=lambda r: (-r.metrics["tokens_per_s_per_user"], -r.metrics["tokens_per_s_per_device"],
                                       r.candidate.key()))
    out, best = [], -1.0
    for r in rows:
        if r.metrics["tokens_per_s_per_device"] > best:
            out.append(r)
            best = r.metrics["tokens_per_s_per_device"]
    return out


def _estimate_front(ests: list) -> list:
    ests = sorted(ests, key=lambda e: (-e.tokens_per_s_per_user, -e.tokens_per_s_per_device, e.candidate.key()))
    out, best = [], -1.0
    for e in ests:
        if e.tokens_per_s_per_device > best:
            out.append(e)
            best = e.tokens_per_s_per_device
    return out


def search(plan: Any, facts: Any, *, overrides: Optional[dict] = None, backend: Any = None,
           goodput: bool = False, shortlist: Optional[int] = None, sim_requests: Optional[int] = None,
           progress: Optional[Callable[[str, int, int], None]] = None, seed: int = 0,
           max_simulated: Optional[int] = None) -> SearchResult:
    """Run the staged search over ``plan``'s space (module docstring) and return a :class:`SearchResult`.

    ``overrides``: CLI values over the ``search { }`` block (:func:`sncc.search.space.build_space`);
    ``backend``: an object with ``imap(fn, items, context=...)`` (default: inline);
    ``shortlist``: candidates screened in stage 3 (default max(50, 5 k));
    ``progress(stage, done, total)``; ``seed`` of the simulated workloads; ``max_simulated``: the
    budget of event-simulated candidates (default :func:`default_max_simulated`), spent on the next
    candidates in screen order, k at a time, while none simulated meets the SLOs (the first round,
    the top k and the frontier, always runs).  A KeyboardInterrupt during a stage stops it: the result
    holds what the finished stages and the consumed part of that stage found (``interrupted``).
    Raises ``ValueError`` for a plan the simulator cannot price (unknown model or chip)."""
    from sncc.search._serial import SerialBackend

    inline = SerialBackend()
    backend = backend or inline
    space = build_space(plan, facts, overrides)
    stages: list = []
    notes: list = []
    moe = bool(facts.is_moe)
    interrupted = False

    def run(stage: str, fn, items, ctx, heavy: bool = False) -> list:
        nonlocal interrupted
        got: list = []
        if interrupted or not items:
            return got
        # a worker pool costs seconds to start (measured: 3 s per stage with 2 spawned workers
        # here); the light stages run inline unless they are large
        bk = backend if heavy or len(items) >= INLINE_BELOW else inline
        try:
            for r in bk.imap(fn, items, context=ctx,
                                  on_progress=(lambda d, n: progress(stage, d, n)) if progress else None):
                got.append(r)
        except KeyboardInterrupt:
            interrupted = True
        return got

    # --- stage 1: price every role layout once
    t0 = time.perf_counter()
    means = _workload_means(plan, facts, space, moe)
    layouts = [lay for role in sorted(space.layouts) for lay in space.layouts[role]]
    partner = {}
    for role in ("prefill", "decode"):
        if space.layouts.get(role):
            partner[role] = _reference(plan, space.layouts[role])
    pctx = PricingContext(plan, facts, means, space.batches, partner, moe)
    prices: list = run("price", price_layout, layouts, pctx)
    priced = [p for p in prices if p.error is None]
    for p in prices:
        if p.error is not None:
            notes.append(f"layout {p.layout.role} {p.layout.label()} not priced: {p.error}")
    stages.append(Stage("price role layouts", len(layouts), len(priced), time.perf_counter() - t0))

    # --- stage 2: closed-form whole plans
    t0 = time.perf_counter()
    by_role: dict = {}
    for p in priced:
        by_role.setdefault(p.layout.role, []).append(p)
    ests: list = []
    if "aggregated" in space.modes:
        ests += aggregated_estimates(means, by_role.get("serve", []), space.instances.get("serve", ()),
                                     space.budget, space.fixed)
    if "disaggregated" in space.modes:
        ests += disaggregated_estimates(means, by_role.get("prefill", []), by_role.get("decode", []),
                                        space.instances.get("prefill", ()), space.instances.get("decode", ()),
                                        space.budget, space.fixed)
    n_short = shortlist or max(50, 5 * space.top)
    ranked_est = sorted(ests, key=lambda e: (not e.meets, -round(e.tokens_per_s_per_device, 9),
                                             -round(e.tokens_per_s, 9), e.candidate.key()))
    chosen: dict = {}
    for mode in space.modes:      # the best of each mode, then the best overall, then the frontier
        for e in [e for e in ranked_est if e.candidate.mode == mode][: max(space.top, n_short // (2 * len(space.modes)))]:
            chosen.setdefault(e.candidate.key(), e)
    for e in ranked_est:
        if len(chosen) >= n_short:
            break
        chosen.setdefault(e.candidate.key(), e)
    for e in _estimate_front([e for e in ests if e.ttft_s <= (means.ttft_s or float("inf"))])[:n_short // 2]:
        chosen.setdefault(e.candidate.key(), e)
    base = base_candidate(plan, facts)
    # the plan's own layout outside the requested budget, mode or values: a reference, never ranked
    base_outside = space.excludes(base) if base is not None else None
    cands = sorted({**{k: e.candidate for k, e in chosen.items()}, **({base.key(): base} if base else {})}.values(),
                   key=Candidate.key)
    # kept: the estimates passed on; the plan's own layout joins stage 3 beside them (not an estimate)
    stages.append(Stage("combine whole plans", len(ests), len(chosen), time.perf_counter() - t0))
    if base is not None and base.key() not in chosen:
        notes.append(f"checks + screen saw stage 2's picks and the plan's own layout ({base.label()}), "
                     "which stage 2 did not pick")

    # --- stage 3: checks + analytic screen
    t0 = time.perf_counter()
    mpn = sim_requests or min(getattr(facts, "requests", plan.workload.requests), SIM_REQUESTS)
    cctx = CandidateContext(plan, facts, moe, means.mo, mpn, goodput, seed)
    screened = run("screen", screen_candidate, cands, cctx)
    rows, rejected, reasons, seen = [], {}, {}, {}
    reference: Optional[Row] = None
    base_refused: tuple = ()
    for cand, m in zip(cands, screened):
        is_base = base is not None and cand.key() == base.key()
        if "errors" in m:
            if is_base:
                base_refused = tuple(tuple(r) for r in m.get("reasons", [])) or tuple(("", e, "") for e in m["errors"])
            if not (is_base and base_outside):
                rejected[cand.label()] = m["errors"]
                reasons[cand.label()] = [tuple(r) for r in m.get("reasons", [])]
            continue
        if is_base and base_outside:
            reference = Row(cand, "screened" if _screen_meets(plan, m) else "missed", m,
                            warnings=m.get("warnings", []))
            continue
        # a larger max_num_seqs the KV pool cannot fill is the same plan in effect: ranked once,
        # at the smallest batch (candidates are in key order: smaller batches first)
        same = (cand.mode, tuple((r.layout, r.instances) for r in cand.roles),
                round(m["qpm"], 6), round(m["tpot_ms"]["mean"], 6), round(m["ttft_s"]["mean"], 6))
        if same in seen and (base is None or cand.key() != base.key()):
            continue
        seen[same] = cand
        ok = _screen_meets(plan, m)
        rows.append(Row(cand, "screened" if ok else "missed", m, warnings=m.get("warnings", [])))
    stages.append(Stage("checks + screen", len(cands), len(rows), time.perf_counter() - t0))

    # --- stage 4: event simulation of the top k + the Pareto frontier; rows the simulation finds
    # equal to a smaller batch are merged (merge_equivalent) and the next screened rows fill the top k
    t0 = time.perf_counter()
    rows.sort(key=lambda r: r.sort_key())
    front = pareto([r for r in rows if r.status == "screened"])
    own = [reference] if reference is not None else [r for r in rows if base is not None and r.candidate.key() == base.key()]
    ranked_base = None if base_outside else base
    want = rows[: space.top] + front + own
    top_keys = {r.candidate.key() for r in rows[: space.top]}
    n_sim = n_done = 0

    def simulate_rows(sim_rows: list) -> None:
        nonlocal n_sim, n_done
        sims = run("simulate", simulate_candidate, [r.candidate for r in sim_rows], cctx, heavy=True)
        n_sim, n_done = n_sim + len(sim_rows), n_done + len(sims)
        for r, m in zip(sim_rows, sims):
            if "error" in m:
                notes.append(f"{r.candidate.label()}: not simulated: {m['error']}")
                r.source = "failed"
                continue
            sc = r.metrics
            r.metrics = {**m, "bound": sc.get("bound"),
                         "screen": {"qpm": sc["qpm"], "ttft_s": sc["ttft_s"]["mean"], "tpot_ms": sc["tpot_ms"]["mean"],
                                    "bound": sc["bound"], "decode_slots": sc["decode_slots"]}}
            r.slo = list(m.get("slo", []))
            r.status = _status(r.slo)
            r.source = "simulate"

    for _ in range(REFILL_ROUNDS):
        sim_rows = sorted({r.candidate.key(): r for r in want if r.source != "simulate"}.values(),
                          key=lambda r: r.candidate.key())
        if not sim_rows or interrupted:
            break
        simulate_rows(sim_rows)
        rows = merge_equivalent(rows, ranked_base)
        # the top picks that survived the merge; the merged ones' places go to the next screened rows
        kept = sum(1 for r in rows if r.source == "simulate" and r.candidate.key() in top_keys)
        if kept >= space.top:
            break
        want = sorted((r for r in rows if r.source == "screen"), key=lambda r: r.sort_key())[: space.top - kept]
        top_keys |= {r.candidate.key() for r in want}
    # none of the simulated candidates met the SLOs: the next ones in screen order, k at a time,
    # until one meets them or the budget of simulated candidates is spent
    budget = max_simulated if max_simulated is not None else default_max_simulated(space.top)
    first_round, more_rounds, budget_reached = n_sim, 0, False
    while not interrupted and not any(r.source == "simulate" and r.status == "met" for r in rows):
        left = sorted((r for r in rows if r.source == "screen"), key=lambda r: r.sort_key())
        if not left:
            break
        room = budget - n_sim
        if room <= 0:
            budget_reached = True
            break
        simulate_rows(left[: min(space.top, room)])
        rows = merge_equivalent(rows, ranked_base)
        more_rounds += 1
    for r in rows + own:
        if r.source == "failed":
            r.source = "screen"
    simulation = Simulation(n_sim, budget, first_round, n_sim - first_round, more_rounds, budget_reached,
                            sum(1 for r in rows if r.source == "screen"))
    stages.append(Stage("event simulation", n_sim, n_done, time.perf_counter() - t0))
    rows.sort(key=lambda r: r.sort_key(goodput))
    frontier = pareto([r for r in rows if r.source == "simulate" and r.status in ("met", "uncertain")])
    return SearchResult(space, stages, rows, frontier, rejected, interrupted, notes, goodput, base,
                        reference, base_outside, ttft_basis(plan), reasons, simulation, base_refused)


def _workload_means(plan: Any, facts: Any, space: Space, moe: bool):
    """:func:`sncc.search.pricing.workload_means` of the base plan; when its own layout is one the
    simulator refuses (a base layout with errors, which the search replaces), of the plan with
    the space's first layout in its place (the sampled workload and SLOs are the same).  Raises
    the base plan's ``ValueError`` when neither can be prepared."""
    from sncc.search.candidate import RoleChoice

    try:
        return workload_means(plan, facts)
    except ValueError as first:
        lay = space.layouts
        batch = space.batches[0] if space.batches else None
        if lay.get("serve"):
            cand = Candidate("aggregated", (RoleChoice(lay["serve"][0], 1, batch),))
        elif lay.get("prefill") and lay.get("decode"):
            cand = Candidate("disaggregated", (RoleChoice(lay["prefill"][0], 1), RoleChoice(lay["decode"][0], 1, batch)))
        else:
            raise
        other = candidate_plan(plan, cand, moe, facts)
        try:
            return workload_means(other, candidate_facts(other, facts))
        except ValueError:
            raise first from None


def ttft_basis(plan: Any) -> str:
    """``client`` when one of ``plan``'s SLOs is judged on the client TTFT (``ttft``,
    ``client_ttft``), else ``engine``."""
    return "client" if any(t.metric in ("ttft", "client_ttft") for t in plan.slo) else "engine"


def _without_batch(cand: Candidate) -> tuple:
    return (cand.mode, tuple((r.layout.key(), r.instances) for r in cand.roles))


def _simulated_figures(m: dict) -> tuple:
    """What two simulated rows must share to be the same plan in effect: QPM, TTFT and TPOT
    (mean and percentiles), rounded to 6 significant digits."""
    def g(v: Any) -> Any:
        return float(f"{v:.6g}") if isinstance(v, (int, float)) else v

    return (g(m.get("qpm")),) + tuple(g(m.get(k, {}).get(s)) for k in ("ttft_s", "tpot_ms")
                                      for s in ("mean", "p50", "p90", "p99"))


def merge_equivalent(rows: list, base: Optional[Candidate] = None) -> list:
    """Rows that differ only in ``max_num_seqs`` and got identical event-simulated figures
    (:func:`_simulated_figures`) are one plan in effect: the workload never fills the larger
    batch.  They are ranked once, as the row with the smallest ``max_num_seqs`` (the least KV
    cache reserved), which lists the others in :attr:`Row.equivalent`.  The plan's own layout
    (``base``) is never merged away: it heads its group (its rank is reported).  Rows only screened are kept as
    they are (stage 3 already merged equal screen figures).  Returns a new list."""
    def seqs(r: Row) -> tuple:
        return tuple(c.max_num_seqs for c in r.candidate.roles if c.max_num_seqs is not None)

    groups: dict = {}
    out: list = []
    for r in sorted(rows, key=lambda r: r.candidate.key()):
        if r.source != "simulate":
            out.append(r)
            continue
        k = (_without_batch(r.candidate), r.status, _simulated_figures(r.metrics))
        head = groups.get(k)
        if head is None:
            groups[k] = r
            out.append(r)
        elif base is not None and r.candidate.key() == base.key():
            # the plan's own layout heads its group (its rank is reported)
            r.equivalent = (seqs(head),) + head.equivalent
            head.equivalent = ()
            out[out.index(head)] = r
            groups[k] = r
        else:
            head.equivalent = head.equivalent + (seqs(r),)
    return out


def base_candidate(plan: Any, facts: Any) -> Optional[Candidate]:
    """The base plan's own layout as a :class:`Candidate` (screened beside the others, so that the
    report can say where the plan the search started from ranks), or None without roles."""
    from sncc.search.candidate import RoleChoice
    from sncc.search.space import Layout

    roles = []
    for name, role in plan.roles():
        rf = facts.roles.get(name)
        if rf is None:
            return None
        sp = getattr(rf, "speculative", None) is not None
        lay = Layout(name, rf.tp, rf.dp, rf.pp, bool(rf.expert_parallel), int(role.max_num_batched_tokens),
                     role.chunked_prefill, sp)
        roles.append(RoleChoice(lay, role.instances, role.max_num_seqs if name != "prefill" else None))
    if not roles:
        return None
    return Candidate("aggregated" if plan.serve is not None else "disaggregated", tuple(roles))


def _reference(plan: Any, layouts: list):
    """The layout a probe of the other role pairs with: the base plan's own when it is in the
    space, else the middle one (the KV transfer a probe prices depends on it a little)."""
    role = layouts[0].role
    own = getattr(plan, role, None)
    if own is not None:
        for lay in layouts:
            if (lay.tp, lay.dp, lay.pp) == (own.tp, own.dp_size, own.pp):
                return lay
    return layouts[len(layouts) // 2]

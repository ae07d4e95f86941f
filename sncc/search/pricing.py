"""Per-role pricing: cost tables computed once per role layout, combined in closed form.

Stage 1 of the search (:mod:`sncc.search.run`).  For each role :class:`~sncc.search.space.Layout`
one probe plan is derived and its step models are built once (:func:`sncc.sim.engine.run.prepare`:
the cost model of :mod:`sncc.cost`, the KV pool of :mod:`sncc.capacity`, the KV-transfer model).
From them a :class:`LayoutPrice` tabulates what the combination needs:

* a prefill-only step of ``T`` tokens costs ``a + b·T`` (two step-model points, as the analytic
  screen, :mod:`sncc.sim.engine.screen`); an instance's prefill capacity is ``1 / (b·mp)`` requests/s;
* the decode step at each batch size of the grid, at the sequences the KV pool holds;
* the mixed step's extra fixed cost (aggregated roles) and the exposed KV transfer (disaggregated).

Stage 2 combines them in the screen's mean-value equations (same formulas, module docstring of
:mod:`sncc.sim.engine.screen`), at saturation (every decode slot busy): TPOT = step / tokens per
step; a disaggregated plan's prefill load ``ρ`` gives TTFT ``1.5 (a / (1 − ρ) + b·mp) + KV + t_d``,
so the TTFT SLO caps ``ρ``, and prefill and decode instances are rate-matched; an aggregated step
``t = (t_d + p·a_mix) / (1 − λ·mp·b)`` is solved by fixed-point iteration.  These estimates only
shortlist: stage 3 runs the full screen and the checks on every candidate it ranks.
"""
from __future__ import annotations

import dataclasses as dc
import math
from dataclasses import dataclass
from typing import Any, Optional

from sncc.search.candidate import Candidate, RoleChoice, candidate_facts, candidate_plan
from sncc.search.space import Layout
from sncc.sim.workload import mean_request_tokens_per_step

#: prefill load ceiling of the screen (``0.98 * lam_p``, :mod:`sncc.sim.engine.screen`)
RHO_MAX = 0.98
#: requests sampled by a probe's ``prepare``: only its step models and pools are read (the means
#: come from the base plan's full workload, :class:`WorkloadMeans`)
PROBE_REQUESTS = 16


@dataclass(frozen=True)
class WorkloadMeans:
    """The workload as the screen reads it: mean prompt ``mp`` and output ``mo`` [tokens] of the
    sampled requests, ``max_tokens``, closed-loop ``concurrency`` or open-loop ``rate`` [req/s],
    ``reserve`` (KV admission reserves prompt + max_tokens) and the SLO targets
    ``ttft_s`` [s] / ``tpot_ms`` [ms] (upper bounds) and ``qpm_min`` (a lower bound on QPM, also
    from an ``output_tokens_per_s`` SLO at the mean output); None = no such SLO."""

    mp: float
    mo: float
    max_tokens: int
    concurrency: Optional[int]
    rate: Optional[float]
    reserve: bool
    ttft_s: Optional[float]
    tpot_ms: Optional[float]
    qpm_min: Optional[float] = None

    @property
    def per_request_tokens(self) -> float:
        """KV tokens a running request holds (prompt + max_tokens reserved, or + mean output)."""
        return self.mp + (self.max_tokens if self.reserve else self.mo)


def _slo_target(plan: Any, metric: str) -> Optional[float]:
    """The tightest upper target of ``metric`` [s] (a TTFT also from ``engine_ttft``), or None."""
    names = (metric, "engine_ttft") if metric == "ttft" else (metric,)
    vals = [t.target for t in plan.slo if t.metric in names and t.op in ("<", "<=")]
    return min(vals) if vals else None


def workload_means(plan: Any, facts: Any) -> WorkloadMeans:
    """The :class:`WorkloadMeans` of the base plan (one ``prepare`` of its full workload)."""
    from sncc.sim.engine.run import prepare
    from sncc.sim.from_plan import spec_from_plan

    spec = spec_from_plan(plan, facts)
    c = prepare(spec)
    n = max(1, len(c.prompts))
    wl = spec.workload
    tpot = _slo_target(plan, "tpot")
    mo = sum(c.outputs) / n
    floors = [t.target for t in plan.slo if t.metric == "qpm" and t.op in (">", ">=")]
    floors += [t.target * 60.0 / mo for t in plan.slo if t.metric == "output_tokens_per_s" and t.op in (">", ">=")]
    return WorkloadMeans(mp=sum(c.prompts) / n, mo=sum(c.outputs) / n, max_tokens=int(c.max_tokens),
                         concurrency=wl.concurrency, rate=(wl.rate * max(1, wl.turns)) if wl.rate else None,
                         reserve=spec.kv_admission == "reserve-max-tokens", ttft_s=_slo_target(plan, "ttft"),
                         tpot_ms=tpot * 1e3 if tpot is not None else None, qpm_min=max(floors) if floors else None)


@dataclass(frozen=True)
class LayoutPrice:
    """Cost tables of one role layout.  Times in seconds.

    ``a_s``/``b_s``: prefill step ``a + b·T`` (``T`` tokens); ``t1_s``: one prompt's (chunk's) step;
    ``kv_s``: exposed KV transfer of a mean prompt (disaggregated; 0 otherwise); ``seqs``: batch
    size → sequences the pool holds per DP rank (``min(batch, blocks / blocks per request)``);
    ``step_s``: batch size → decode step at those sequences; ``mix_s``: the mixed step's extra fixed
    cost (aggregated); ``tokens_per_step``: tokens per decode step (speculative decoding);
    ``error``: why the layout could not be priced (None = priced)."""

    layout: Layout
    a_s: float = 0.0
    b_s: float = 0.0
    t1_s: float = 0.0
    kv_s: float = 0.0
    seqs: tuple = ()
    step_s: tuple = ()
    mix_s: float = 0.0
    tokens_per_step: float = 1.0
    batches: tuple = ()
    error: Optional[str] = None


@dataclass(frozen=True)
class PricingContext:
    """What a pricing worker needs, shipped once per worker: the base ``plan`` and ``facts``, the
    workload ``means``, the batch grid, and the reference layouts a probe of one role pairs with
    (``partner``: role → :class:`Layout`), the model being MoE."""

    plan: Any
    facts: Any
    means: WorkloadMeans
    batches: tuple
    partner: dict
    moe: bool


def _probe(ctx: PricingContext, layout: Layout) -> Candidate:
    top = max(ctx.batches)
    own = RoleChoice(layout, 1, top if layout.role != "prefill" else None)
    if layout.role == "serve":
        return Candidate("aggregated", (own,))
    other = ctx.partner["decode" if layout.role == "prefill" else "prefill"]
    mate = RoleChoice(other, 1, top if other.role == "decode" else None)
    return Candidate("disaggregated", (own, mate) if layout.role == "prefill" else (mate, own))


def price_layout(ctx: PricingContext, layout: Layout) -> LayoutPrice:
    """The :class:`LayoutPrice` of ``layout`` (a module-level function: a backend worker runs it)."""
    from sncc.sim.engine.run import prepare
    from sncc.sim.from_plan import spec_from_plan

    m = ctx.means
    try:
        plan = candidate_plan(ctx.plan, _probe(ctx, layout), ctx.moe, ctx.facts)
        spec = spec_from_plan(plan, candidate_facts(plan, ctx.facts))
        spec = dc.replace(spec, workload=dc.replace(spec.workload, requests=PROBE_REQUESTS))
        c = prepare(spec)
    except Exception as e:  # noqa: BLE001 -- a layout the cost model refuses is not priced
        return LayoutPrice(layout, error=f"{type(e).__name__}: {e}")
    if layout.role == "serve":
        role, model, blocks = c.serve, c.serve_model, c.serve_blocks
    elif layout.role == "decode":
        role, model, blocks = c.decode, c.decode_model, c.decode_blocks
    else:
        role, model, blocks = c.prefill, c.prefill_model, 0
    mp, ctx_tokens = m.mp, m.mp + m.mo / 2
    chunk = min(role.chunk_size or role.max_num_batched_tokens, role.max_num_batched_tokens)
    c1 = min(mp, chunk)
    budget = role.max_num_batched_tokens * max(1, role.dp)
    t1 = t1_s = 0.0
    a = b = 0.0
    if layout.role in ("prefill", "serve"):
        def prefill_t(tokens: float) -> float:
            k = max(1, int(tokens // c1))
            return model.prefill_step([(c1, 0.0)] * k)
        t1 = prefill_t(c1)
        tb = prefill_t(max(c1, budget))
        b = max(1e-12, (tb - t1) / max(1.0, max(c1, budget) - c1))
        a = max(0.0, t1 - b * c1)
        t1_s = t1
    kv = float(c.kv_exposed(int(mp), t1)) if layout.role == "prefill" else 0.0
    seqs: list = []
    steps: list = []
    mix = 0.0
    if layout.role != "prefill":
        per_blocks = -(-int(m.per_request_tokens) // role.block_size)
        cap = blocks // max(1, per_blocks)
        for bsz in ctx.batches:
            s = max(0, min(int(bsz), cap))
            seqs.append(s)
            steps.append(model.decode_step(s, s * ctx_tokens, s * role.dp) if s else math.inf)
        if layout.role == "serve" and cap:
            s0 = max(1, min(max(ctx.batches), cap))
            mix = max(0.0, model.mixed_step([(1.0, 0.0)], s0, s0 * ctx_tokens, s0 * role.dp)
                      - model.decode_step(s0, s0 * ctx_tokens, s0 * role.dp))
    return LayoutPrice(layout, a_s=a, b_s=b, t1_s=t1_s, kv_s=kv, seqs=tuple(seqs), step_s=tuple(steps),
                       mix_s=mix,
                       tokens_per_step=mean_request_tokens_per_step(getattr(c, "tokens_per_step", None),
                                                                    float(model.tokens_per_decode_step)),
                       batches=tuple(ctx.batches) if layout.role != "prefill" else ())


@dataclass(frozen=True)
class Estimate:
    """Stage-2 estimate of a candidate: ``qpm``, ``ttft_s``, ``tpot_ms``, ``tokens_per_s``
    (output, whole plan), ``devices``, ``bound`` (what binds) and ``meets`` (every TTFT/TPOT SLO)."""

    candidate: Candidate
    qpm: float
    ttft_s: float
    tpot_ms: float
    tokens_per_s: float
    bound: str
    meets: bool

    @property
    def tokens_per_s_per_device(self) -> float:
        """Output tokens/s per device."""
        return self.tokens_per_s / max(1, self.candidate.devices)

    @property
    def tokens_per_s_per_user(self) -> float:
        """Output tokens/s one request sees (1000 / TPOT [ms])."""
        return 1e3 / self.tpot_ms if self.tpot_ms > 0 else 0.0


def _loop_bound(m: WorkloadMeans, e2e: float, caps: dict) -> tuple:
    if m.concurrency:
        caps["concurrency"] = m.concurrency / e2e
    if m.rate:
        caps["offered"] = m.rate
    name = min(sorted(caps), key=caps.get)
    return name, caps[name]


def _meets(m: WorkloadMeans, ttft: float, tpot_ms: float, qpm: float) -> bool:
    return ((m.ttft_s is None or ttft <= m.ttft_s) and (m.tpot_ms is None or tpot_ms <= m.tpot_ms)
            and (m.qpm_min is None or qpm >= m.qpm_min))


def aggregated_point(m: WorkloadMeans, p: LayoutPrice, i: int) -> Optional[tuple]:
    """(requests/s, TTFT [s], TPOT [ms]) of one saturated instance of serve layout ``p`` at batch
    index ``i`` (the screen's aggregated equations with every slot busy), or None (no slot)."""
    s = p.seqs[i]
    if s < 1:
        return None
    lay = p.layout
    t_d = p.step_s[i]
    chunk = min(lay.chunk or lay.max_num_batched_tokens, lay.max_num_batched_tokens)
    n_c = max(1, math.ceil(m.mp / chunk))
    c1 = min(m.mp, chunk)
    steps = max(0.0, (m.mo - 1) / p.tokens_per_step)
    slots = s * lay.dp
    lam = 0.0
    t = t_d
    ttft = 0.5 * t + n_c * (t + c1 * p.b_s + p.mix_s)
    for _ in range(60):
        load = min(0.98, lam * m.mp * p.b_s)
        frac = min(1.0, lam * n_c * t)
        t_new = (t_d + frac * p.mix_s) / (1.0 - load)
        ttft = 0.5 * t_new + n_c * (t_d + c1 * p.b_s + p.mix_s) / max(0.02, 1.0 - load)
        cap = min(RHO_MAX / (m.mp * p.b_s), max(1.0, lay.max_num_batched_tokens * lay.dp - slots * p.tokens_per_step)
                  / (m.mp * t_new))
        new = min(slots / (ttft + steps * t_new), cap)
        if abs(new - lam) < 1e-6 * max(new, 1e-9) and abs(t_new - t) < 1e-6 * t:
            lam, t = new, t_new
            break
        lam, t = 0.5 * (lam + new), t_new
    return lam, ttft, t / p.tokens_per_step * 1e3


def _same_as_smaller(p: LayoutPrice, i: int) -> bool:
    """True when batch ``i`` holds no more sequences than batch ``i - 1`` (the KV pool caps both):
    the same plan in effect, tried once at the smaller ``max_num_seqs``."""
    return i > 0 and p.seqs[i] == p.seqs[i - 1]


def aggregated_estimates(m: WorkloadMeans, prices: list, instances: tuple, budget: int, fixed: bool) -> list:
    """Stage-2 :class:`Estimate` of every aggregated candidate (layout × batch × instance count)."""
    out = []
    for p in prices:
        lay = p.layout
        for i, bsz in enumerate(p.batches):
            if _same_as_smaller(p, i):
                continue
            pt = aggregated_point(m, p, i)
            if pt is None:
                continue
            lam_i, ttft, tpot = pt
            e2e = ttft + (m.mo - 1) * tpot / 1e3     # (mo - 1) / E steps of E tokens
            for n in instances:
                dev = n * lay.devices
                if dev > budget or (fixed and dev != budget):
                    continue
                bound, lam = _loop_bound(m, e2e, {"decode-slots": n * lam_i})
                cand = Candidate("aggregated", (RoleChoice(lay, n, bsz),))
                out.append(Estimate(cand, lam * 60, ttft, tpot, lam * m.mo, bound, _meets(m, ttft, tpot, lam * 60)))
    return out


def disaggregated_estimates(m: WorkloadMeans, prefill: list, decode: list, p_instances: tuple,
                            d_instances: tuple, budget: int, fixed: bool, keep_prefill: int = 8,
                            keep_decode: int = 48) -> list:
    """Stage-2 :class:`Estimate` of disaggregated candidates: the ``keep_prefill`` prefill layouts
    with the most requests/s per device and the ``keep_decode`` decode points (layout × batch)
    meeting the TPOT SLO with the most requests/s per device (plus the decode points on the
    tokens/s-per-user frontier), rate-matched: for each decode instance count, the prefill
    instances that match its rate (one fewer and one more too) within the budget."""
    steps_of = lambda p: max(0.0, (m.mo - 1) / p.tokens_per_step)  # noqa: E731
    pre = []
    for p in prefill:
        if p.b_s <= 0:
            continue
        x = (m.ttft_s - p.kv_s) / 1.5 - p.b_s * m.mp if m.ttft_s is not None else math.inf
        rho = RHO_MAX if x == math.inf else min(RHO_MAX, 1.0 - p.a_s / x) if x > p.a_s else 0.0
        rate = rho / (p.b_s * m.mp)
        pre.append((rate / p.layout.devices, p, rho, rate))
    pre.sort(key=lambda t: (-t[0], t[1].layout.key()))
    pre = [t for t in pre if t[3] > 0][:keep_prefill]
    dec = []
    for d in decode:
        for i, bsz in enumerate(d.batches):
            if _same_as_smaller(d, i):
                continue
            s = d.seqs[i]
            if s < 1:
                continue
            t_d = d.step_s[i]
            tpot = t_d / d.tokens_per_step * 1e3
            dec.append((s * d.layout.dp / (steps_of(d) * t_d + 1.0) / d.layout.devices, d, i, bsz, tpot))
    ok = [t for t in dec if m.tpot_ms is None or t[4] <= m.tpot_ms]
    ok.sort(key=lambda t: (-t[0], t[1].layout.key(), t[3]))
    front, best = [], -1.0
    for t in sorted(dec, key=lambda t: (t[4], -t[0], t[1].layout.key(), t[3])):
        if t[0] > best:
            front.append(t)
            best = t[0]
    chosen = {(t[1].layout.key(), t[3]): t for t in ok[:keep_decode] + front}
    out = []
    for _, d, i, bsz, tpot in sorted(chosen.values(), key=lambda t: (t[1].layout.key(), t[3])):
        t_d = d.step_s[i]
        slots_i = d.seqs[i] * d.layout.dp
        dd = d.layout.devices
        for _, p, rho, rate in pre:
            dp_ = p.layout.devices
            ttft0 = 1.5 * (p.a_s / (1 - rho) + p.b_s * m.mp) + p.kv_s + t_d
            e2e = ttft0 + steps_of(d) * t_d
            r_d = slots_i / e2e
            for nd in d_instances:
                if nd * dd + dp_ > budget:
                    break
                need = nd * r_d / rate
                tries = sorted({max(1, math.floor(need)), max(1, math.ceil(need)), max(1, math.ceil(need)) + 1})
                if fixed:
                    rest = budget - nd * dd
                    tries = [rest // dp_] if rest % dp_ == 0 and rest // dp_ >= 1 else []
                for np_ in tries:
                    if np_ not in p_instances or np_ * dp_ + nd * dd > budget:
                        continue
                    lam_p = np_ * rate
                    bound, lam = _loop_bound(m, e2e, {"decode-slots": nd * r_d, "prefill": lam_p})
                    r = lam * m.mp / np_ * p.b_s            # prefill load per instance
                    ttft = 1.5 * (p.a_s / max(0.02, 1 - r) + p.b_s * m.mp) + p.kv_s + t_d
                    cand = Candidate("disaggregated", (RoleChoice(p.layout, np_), RoleChoice(d.layout, nd, bsz)))
                    out.append(Estimate(cand, lam * 60, ttft, tpot, lam * m.mo, bound, _meets(m, ttft, tpot, lam * 60)))
    return out

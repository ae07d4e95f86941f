"""Analytic screen: steady-state throughput and mean latencies without the event loop.

Shares the step costs of the event simulation (:class:`sncc.cost.step.StepModel`, the KV pool of
:mod:`sncc.capacity`, the KV-transfer model) and replaces the event loop by mean-value arithmetic
(simulator-modelling.md §3.4, §3.5, §3.8).  Per instance, with ``mp``/``mo`` the mean prompt and
output, ``E`` tokens per decode step (speculative decoding) and ``λ`` requests/s:

* **decode slots**: per DP rank ``min(max_num_seqs, pool blocks / blocks a request holds)`` (the
  prompt + ``max_tokens`` under reserve-max-tokens admission, prompt + output on demand); a
  request holds its slot for its TTFT and its ``(mo - 1) / E`` decode steps;
* **disaggregated**: a prefill step of ``T`` tokens costs ``a + b·T`` (two step-model points);
  pull dispatch batches whatever waits, so at ``r`` tokens/s per prefill instance a cycle lasts
  ``a / (1 - r·b)`` and TTFT is about 1.5 cycles + the exposed KV transfer + one decode step; the
  decode step is the step model's at the batch the slots hold;
* **aggregated** (``serve``): prefill chunks share the decode steps.  A step carries
  ``x = λ·mp·t`` prefill tokens on average, so ``t = t_d(B) + b·x + p·(a_mix - ...)``: each
  mixed step pays the per-token prefill cost ``b`` and, in the fraction ``p`` of steps that hold
  a chunk, the mixed step's extra fixed cost ``a_mix`` (eager launch and prefill overhead instead
  of the graph replay).  With ``n_c = ceil(mp / chunk)`` chunks per prompt, ``p = min(1,
  λ·n_c·t)``; solving for ``t`` gives ``t = (t_d + min(1, λ n_c t) a_mix) / (1 - λ mp b)``.  A
  prompt takes ``n_c`` steps (TTFT ≈ ``(n_c + 0.5)·t``), TPOT is ``t / E``;
* throughput ``λ = min(slots / (TTFT + decode time), prefill capacity, closed-loop concurrency /
  e2e, offered rate)``, solved by fixed-point iteration (the step time depends on ``λ``);
* **client TTFT** (request sent to first token, what ``vllm bench serve`` times and a ``ttft`` SLO
  judges) adds the queue in front of the engines to the engine TTFT: a closed loop of ``C`` clients
  below its ``N`` requests holds ``C`` requests in flight, so by Little's law ``C = λ·(client TTFT +
  decode time)``; a burst (``C ≥ N``) queues the ``N - slots`` requests no slot takes, and one waits
  half that queue's drain ``(N - slots) / 2λ`` on average; an open loop offered more than ``λ``
  grows its queue by ``r - λ`` per second, ``N/2 · (1/λ - 1/r)`` on average over ``N`` requests.

It is for fast sweeps (search); ``tests/sim/test_screen.py`` checks it against the event
simulation's steady state over a spread of aggregated and disaggregated plans.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Dict

from sncc.sim.engine.run import prepare
from sncc.sim.workload import mean_request_tokens_per_step


@dataclass(frozen=True)
class ScreenResult:
    """Steady state of one deployment: ``qpm`` [requests/min], ``ttft_s`` [s, dispatch to first
    token], ``tpot_ms`` [ms], ``e2e_s`` [s], ``bound`` (what binds: ``decode-slots``, ``prefill``,
    ``concurrency``, ``offered`` or ``step-capacity``), ``decode_slots`` (sequences the decode pools
    hold at once), ``prefill_capacity_qpm`` and ``client_ttft_s`` [s, request sent to first token:
    the queue in front of the engines + ``ttft_s``; module docstring]."""

    qpm: float
    ttft_s: float
    tpot_ms: float
    e2e_s: float
    bound: str
    decode_slots: float
    prefill_capacity_qpm: float
    client_ttft_s: float

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


def screen(spec: Any) -> ScreenResult:
    """The :class:`ScreenResult` of a :class:`~sncc.sim.spec.SimSpec` (module docstring).

    Raises what :func:`sncc.sim.engine.run.prepare` raises (an unknown quant, a profile error)."""
    c = prepare(spec)
    n = max(1, len(c.prompts))
    mp = sum(c.prompts) / n
    mo = sum(c.outputs) / n
    wl = spec.workload
    max_tokens = wl.max_tokens or wl.output.max or max(c.outputs)
    if spec.disaggregated:
        role, dm, pm, blocks = c.decode, c.decode_model, c.prefill_model, c.decode_blocks
        prole = c.prefill
    else:
        role, dm, pm, blocks = c.serve, c.serve_model, c.serve_model, c.serve_blocks
        prole = c.serve
    blk = role.block_size
    per_req = mp + (max_tokens if spec.kv_admission == "reserve-max-tokens" else mo)
    per_blocks = -(-int(per_req) // blk)
    # requests a rank's pool holds: a whole number of equal reservations, or, when lengths vary,
    # the pool over the mean reservation less half a one (the unused remainder of a pool packed
    # with reservations of varying size is on average half of one)
    held = c.prompts if spec.kv_admission == "reserve-max-tokens" else [p + o for p, o in zip(c.prompts, c.outputs)]
    if len(set(held)) > 1:
        fit = blocks / max(1.0, per_req / blk) - 0.5
    else:
        fit = blocks // max(1, per_blocks)
    seqs_group = max(1, min(role.max_num_seqs, fit))
    slots = seqs_group * role.dp * role.instances
    # each request decodes at its own tokens per step (sncc.sim.workload.request_tokens_per_step)
    tps = mean_request_tokens_per_step(getattr(c, "tokens_per_step", None), dm.tokens_per_decode_step)
    ctx = mp + mo / 2
    steps = max(0.0, (mo - 1) / tps)
    chunk = min(prole.chunk_size or prole.max_num_batched_tokens, prole.max_num_batched_tokens)
    budget = prole.max_num_batched_tokens * max(1, prole.dp)

    def decode_t(B: float) -> float:
        b = max(1, int(round(B)))
        return dm.decode_step(b, b * ctx, b * role.dp)

    def prefill_t(tokens: float) -> float:
        """One prefill-only step of ``tokens`` spread over the instance's DP ranks in prompts."""
        k = max(1, int(tokens // min(mp, chunk)))
        return pm.prefill_step([(min(mp, chunk), 0.0)] * k)

    # a prefill-only step costs about a + b*T (fixed launch/step overhead + per-token cost)
    t1, tb = prefill_t(min(mp, chunk)), prefill_t(max(min(mp, chunk), budget))
    b_tok = max(1e-12, (tb - t1) / max(1.0, max(min(mp, chunk), budget) - min(mp, chunk)))
    a_fix = max(0.0, t1 - b_tok * min(mp, chunk))
    lam_p = prole.instances / (b_tok * mp)            # prefill capacity with full batching [req/s]
    if spec.disaggregated:
        return _disaggregated(spec, c, wl, decode_t, t1, a_fix, b_tok, mp, steps, slots, seqs_group,
                              role, tps, lam_p)
    return _aggregated(wl, dm, decode_t, b_tok, mp, chunk, budget, steps, slots, seqs_group, role, tps, lam_p, ctx,
                       len(c.prompts))


def _disaggregated(spec, c, wl, decode_t, t1, a_fix, b_tok, mp, steps, slots, seqs_group, role, tps, lam_p):
    p_inst = c.prefill.instances
    kv = c.kv_exposed(int(mp), t1)
    t_d = decode_t(seqs_group)
    ttft = t1 + kv + t_d
    lam, bound = None, "decode-slots"
    for _ in range(100):
        if lam is not None:
            B = min(seqs_group, lam * (ttft + steps * t_d) / (role.dp * role.instances))
            t_d = decode_t(B)
        dec = steps * t_d
        bound, new = _binding(wl, ttft + dec, {"decode-slots": slots / (ttft + dec), "prefill": 0.98 * lam_p})
        # pull dispatch batches whatever waits: cycle = a / (1 - r*b) with r tokens/s per
        # instance; a request waits half a cycle on average and then runs one
        r = new * mp / p_inst
        cyc = a_fix / max(0.02, 1.0 - r * b_tok) + b_tok * mp
        ttft_new = 1.5 * cyc + kv + t_d
        ttft = ttft_new if lam is None else 0.5 * (ttft + ttft_new)
        if lam is not None and abs(new - lam) < 1e-4 * lam:
            lam = new
            break
        lam = new
    dec = steps * t_d
    return ScreenResult(qpm=lam * 60.0, ttft_s=ttft, tpot_ms=t_d / tps * 1e3, e2e_s=ttft + dec, bound=bound,
                        decode_slots=float(slots), prefill_capacity_qpm=lam_p * 60.0,
                        client_ttft_s=client_ttft(wl, len(c.prompts), lam, ttft, dec, slots))


def client_ttft(wl: Any, n: int, lam: float, ttft: float, dec: float, slots: float) -> float:
    """Mean client TTFT [s] of ``n`` requests served at ``lam`` [req/s] with engine TTFT ``ttft`` and
    decode time ``dec`` [s] on ``slots`` sequence slots (module docstring: Little's law for a closed
    loop, half the drain of a burst's queue, the growing queue of an over-offered open loop)."""
    if lam <= 0:
        return float("inf")
    if wl.rate:
        r = wl.rate * max(1, wl.turns)
        if wl.concurrency and wl.concurrency < n:   # the cap holds the rest at the client, untimed
            return max(ttft, wl.concurrency / lam - dec) if r > lam * 1.001 else ttft
        return ttft + (0.5 * n * (1.0 / lam - 1.0 / r) if r > lam else 0.0)
    if wl.concurrency and wl.concurrency < n:
        return max(ttft, wl.concurrency / lam - dec)
    return ttft + max(0.0, n - slots) / (2.0 * lam)


def _binding(wl, e2e: float, cand: dict) -> tuple:
    """(name, requests/s) of the lowest of the role's capacity bounds ``cand`` [req/s] and the
    workload's: a closed loop's ``concurrency / e2e`` (``e2e`` [s]) and an open loop's offered
    rate (turns count as requests)."""
    if wl.concurrency:
        cand["concurrency"] = wl.concurrency / e2e
    if wl.rate:
        cand["offered"] = wl.rate * max(1, wl.turns)
    bound = min(cand, key=cand.get)
    return bound, cand[bound]


def _aggregated(wl, dm, decode_t, b_tok, mp, chunk, budget, steps, slots, seqs_group, role, tps, lam_p, ctx, n_req):
    inst = role.instances
    n_c = max(1, math.ceil(mp / chunk))
    # the mixed step's extra fixed cost over a decode step (eager launch, prefill overhead)
    B0 = seqs_group
    a_mix = max(0.0, dm.mixed_step([(1.0, 0.0)], B0, B0 * ctx, B0 * role.dp) - decode_t(B0))
    lam, bound = None, "decode-slots"
    t = decode_t(seqs_group)
    c1 = min(mp, chunk)
    ttft = 0.5 * t + n_c * (t + c1 * b_tok + a_mix)
    for _ in range(300):
        li = (lam or 0.0) / inst                         # requests/s per instance
        B = seqs_group if lam is None else min(seqs_group, lam * (ttft + steps * t) / (role.dp * inst))
        t_d = decode_t(B)
        load = li * mp * b_tok
        if load >= 0.98:
            t_new = t_d / 0.02
        else:
            # t = (t_d + min(1, li n_c t) a_mix) / (1 - load): the branch whose p stays <= 1
            den = 1.0 - load - li * n_c * a_mix
            t_new = t_d / den if den > 0 else float("inf")
            if not math.isfinite(t_new) or li * n_c * t_new > 1.0:
                t_new = (t_d + a_mix) / (1.0 - load)
        t_old = t
        t = t_new if lam is None else 0.5 * (t + t_new)
        # a prompt's own chunk steps: each carries its chunk beside the decodes (and the others'
        # prefill, the 1 / (1 - load)); it waits half a step for the first
        ttft = 0.5 * t + n_c * (t_d + c1 * b_tok + a_mix) / max(0.02, 1.0 - load)
        dec = steps * t
        # a step holds at most the instance's token budget of prefill beside its decodes
        cap = min(0.98 / (mp * b_tok), max(1.0, budget - B * role.dp * tps) / (mp * t))
        bound, new = _binding(wl, ttft + dec, {"decode-slots": slots / (ttft + dec), "step-capacity": inst * cap})
        if lam is not None and abs(new - lam) < 1e-5 * lam and abs(t - t_old) < 1e-5 * t:
            lam = new
            break
        lam = new if lam is None else 0.5 * (lam + new)
    dec = steps * t
    return ScreenResult(qpm=lam * 60.0, ttft_s=ttft, tpot_ms=t / tps * 1e3, e2e_s=ttft + dec, bound=bound,
                        decode_slots=float(slots), prefill_capacity_qpm=lam_p * 60.0,
                        client_ttft_s=client_ttft(wl, n_req, lam, ttft, dec, slots))

"""Analytic screen: steady-state throughput and mean latencies without the event loop.

Shares the step-cost functions of the DES (:class:`sncc.cost.step.StepModel`, the KV
pool from :mod:`sncc.capacity`, the KV-transfer model) and replaces the event loop by
mean-value arithmetic (simulator-modelling.md §3.4, §3.5, §3.8):

* decode slots: per attention group ``min(max_num_seqs, floor(pool blocks / blocks
  reserved per request))`` with the mean prompt (+ max_tokens under reserve-max-tokens);
* decode step time ``t_d`` at the batch those slots hold and the mean context
  ``prompt + output/2``; a request holds its slot for its decode steps
  ``(out-1)/tokens_per_step`` plus its TTFT;
* prefill: a step of ``T`` tokens costs ``a + b*T`` (two step-model points); pull dispatch
  batches everything waiting, so at ``r`` tokens/s per instance a cycle lasts
  ``a/(1 - r*b)`` and TTFT ~ 1.5 cycles + exposed KV + one decode step; capacity ``1/b``;
* throughput ``lambda = min(slots / (TTFT + decode time), prefill capacity, closed-loop
  concurrency / e2e)``, solved by fixed-point iteration (TTFT depends on lambda).

It is for fast sweeps; ``tests/test_sim.py`` checks it against the DES steady state.
"""
from __future__ import annotations

from typing import Any, Dict

from sncc.sim.engine.run import prepare


def screen(spec: Any) -> Dict[str, float]:
    """Steady-state ``qpm``, ``ttft_s``, ``tpot_ms``, ``e2e_s`` and the binding resource
    (``bound``: ``decode-slots``, ``prefill`` or ``concurrency``) of ``spec``."""
    c = prepare(spec)
    n = max(1, len(c.prompts))
    mp = sum(c.prompts) / n
    mo = sum(c.outputs) / n
    wl = spec.workload
    max_tokens = wl.max_tokens or wl.output.max or max(c.outputs)
    if spec.disaggregated:
        role, dm, pm, blocks = c.decode, c.decode_model, c.prefill_model, c.decode_blocks
        p_inst = c.prefill.instances
    else:
        role, dm, pm, blocks = c.serve, c.serve_model, c.serve_model, c.serve_blocks
        p_inst = c.serve.instances
    blk = role.block_size
    per_req = mp + (max_tokens if spec.kv_admission == "reserve-max-tokens" else mo)
    per_blocks = -(-int(per_req) // blk)
    seqs_group = min(role.max_num_seqs, blocks // max(1, per_blocks))
    slots = seqs_group * role.dp * role.instances
    tps = dm.tokens_per_decode_step
    ctx = mp + mo / 2
    steps = max(0.0, (mo - 1) / tps)
    prole = spec.role("prefill" if spec.disaggregated else "serve")
    chunk = prole.chunk_size or prole.max_num_batched_tokens
    budget = prole.max_num_batched_tokens

    def t_step(tokens: float) -> float:
        """One prefill step of ``tokens`` spread over prompts of the mean length."""
        k = max(1, int(tokens // mp))
        return pm.prefill_step([(min(mp, chunk), 0.0)] * k)

    # step time is ~ a + b*T (fixed launch/step overhead + per-token cost): two points
    t1, tb = t_step(mp), t_step(max(mp, budget))
    b_tok = max(1e-12, (tb - t1) / max(1.0, max(mp, budget) - mp))
    a_fix = max(0.0, t1 - b_tok * mp)
    kv = c.kv_exposed(int(mp), t1) if spec.disaggregated else 0.0
    lam_p = p_inst / (b_tok * mp)             # prefill capacity with full batching [req/s]
    lam = None
    t_d = dm.decode_step(max(1, seqs_group), max(1, seqs_group) * ctx, max(1, seqs_group) * role.dp)
    ttft = t1 + kv + t_d
    bound = "decode-slots"
    dec = steps * t_d
    for _ in range(100):
        if lam is not None:
            B = max(1, min(seqs_group, round(lam * (ttft + steps * t_d) / (role.dp * role.instances))))
            t_d = dm.decode_step(B, B * ctx, B * role.dp)
        dec = steps * t_d
        cand = {"decode-slots": slots / (ttft + dec), "prefill": 0.98 * lam_p}
        if wl.concurrency:
            cand["concurrency"] = wl.concurrency / (ttft + dec)
        if wl.rate:
            cand["offered"] = wl.rate
        bound = min(cand, key=cand.get)
        new = cand[bound]
        # pull dispatch batches whatever waits: cycle c = a / (1 - r*b) with r tokens/s per
        # instance; a request waits half a cycle on average and then runs one
        r = new * mp / p_inst
        cyc = a_fix / max(0.02, 1.0 - r * b_tok) + b_tok * mp
        ttft_new = 1.5 * cyc + kv + t_d
        ttft = ttft_new if lam is None else 0.5 * (ttft + ttft_new)
        if lam is not None and abs(new - lam) < 1e-4 * lam:
            lam = new
            break
        lam = new
    return {"qpm": lam * 60.0, "ttft_s": ttft, "tpot_ms": t_d / tps * 1e3, "e2e_s": ttft + dec,
            "bound": bound, "decode_slots": float(slots), "prefill_capacity_qpm": lam_p * 60.0}

"""Reference scenarios used by the calibration tests and the benchmark.

* :func:`seed000_spec` — seed 000 (Omni-Infer on Atlas 900 A3 SuperPoD, DeepSeek-R1
  W8A8, C8 INT8 KV, 7P1D or 6P1D).  Published: 7P1D 608 QPM, TTFT 1.93 s, TPOT 47 ms;
  6P1D 613 QPM, TTFT ~5 s.
* :func:`cloudmatrix_decode_step` — CloudMatrix-Infer decode points (domain-facts §6.1).
* :func:`cloudmatrix_prefill_tok_s_per_npu` — its prefill point, and :func:`routed_imbalance`, the
  routed-load factor its perfect-EPLB step ratio implies.
* :func:`qwen3_32b_h200_spec` — a small aggregated case on 8 H200s.
"""
from __future__ import annotations

from typing import Optional

from sncc.sim.spec import Features, LengthDist, RoleSpec, SimSpec, SloTarget, Workload

#: Published seed-000 figures: (prefill instances) -> dict
SEED000_PUBLISHED = {7: {"qpm": 608.0, "ttft_s": 1.93, "tpot_ms": 47.0}, 6: {"qpm": 613.0, "ttft_s": 5.0}}

#: CloudMatrix-Infer decode curve (domain-facts §6.1): (ISL, OSL, batch per NPU, TPOT ms, tok/s/NPU)
CLOUDMATRIX_DECODE = [
    (1024, 1024, 128, 46.8, 2733),
    (2048, 256, 112, 47.4, 2360),
    (4096, 256, 96, 49.4, 1943),
    (4096, 256, 24, 24.6, 974),
    (4096, 256, 8, 14.9, 538),
]
#: CloudMatrix-Infer measured prefill throughput per NPU (2 dies), 4K prompts (domain-facts §6.1)
CLOUDMATRIX_PREFILL_TOK_S_PER_NPU = 5655.0

C8_MLA_KV_BYTES_PER_TOKEN = 39040.0   # vllm-ascend C8 on DeepSeek-R1: 640 B/token/layer x 61 (domain-facts §5.2)


def _a3():
    from sncc import catalog
    sysm = catalog.system("atlas-900-a3-superpod")
    chip = sysm.chip if hasattr(sysm.chip, "peak_flops") else catalog.chip(sysm.chip)
    return catalog, sysm, chip


def seed000_spec(prefill_instances: int = 7, requests: int = 3000, concurrency: int = 3168,
                 decode_devices: int = 64, seed: int = 0, output_mean: float = 1229,
                 input_mean: float = 3584) -> SimSpec:
    """The seed-000 P/D deployment (prefill ``prefill_instances`` x 16 dies TP8xDP2,
    decode 1 x ``decode_devices`` dies TP1xDP``decode_devices``)."""
    catalog, sysm, chip = _a3()
    # omni_placement { redundant_experts = 2 } per die, over each instance's EP group
    prefill = RoleSpec(instances=prefill_instances, devices=16, tp=8, dp=2,
                       max_num_batched_tokens=32768, chunk_size=16384, max_num_seqs=16,
                       graph_mode=False, redundant_experts=2 * 16)
    # optimize { omni_attn }: OmniAttn runs on the decode role (KV consumer) with its release's layout
    from sncc.engines.registry import adapter_for
    from sncc.facts import omni_attn_layout
    decode = RoleSpec(instances=1, devices=decode_devices, tp=1, dp=decode_devices,
                      max_num_batched_tokens=48, max_num_seqs=48, graph_mode=True,
                      redundant_experts=2 * decode_devices, omni_attn=omni_attn_layout(adapter_for("omni-infer")))
    wl = Workload(requests=requests, concurrency=concurrency,
                  input=LengthDist("lognormal", mean=input_mean, max=16384),
                  output=LengthDist("lognormal", mean=output_mean, max=32768),
                  max_tokens=32768, seed=seed)
    # Omni-Infer splits only prefill steps of two prompts or more (its adapter's micro_batch_steps)
    from sncc.cost.from_facts import micro_batch_steps
    feats = Features(micro_batch=2, micro_batch_steps=micro_batch_steps(adapter_for("omni-infer")),
                     graph_mode=True, superkernel=True, mtp=None)
    return SimSpec(model=catalog.model("deepseek-r1"), chip=chip, links=tuple(sysm.links),
                   # the seed writes kv_cache.dtype = int8, which Omni-Infer release_v0.3.0 ignores (SN4041):
                   # its servers run the model's BF16 KV, as the plan's facts say (Facts.kv_dtype_run)
                   devices_per_node=sysm.devices_per_node, quant="w8a8", kv_dtype="bf16", profile="ascend-a3",
                   roles=(("prefill", prefill), ("decode", decode)), features=feats, workload=wl,
                   slos=(SloTarget("ttft", "mean", "<", 2.0), SloTarget("tpot", "mean", "<", 0.050)),
                   kv_admission="reserve-max-tokens", prefill_dispatch="pull",
                   hccl_buffsize_mb=1000, engine="omni-infer")  # seed 000 plan: env { HCCL_BUFFSIZE = 1000 }


def cloudmatrix_decode_model(isl: int, osl: int, batch_per_npu: int, profile: str = "ascend-a3") -> tuple:
    """(StepModel, B, ctx_sum, B_total) of a CloudMatrix-Infer decode point: the decode role's
    step model and the arguments of its :meth:`~sncc.cost.step.StepModel.decode_step`.

    EP320 = 160 NPUs = 320 dies, TP1 x DP320, MTP 1 draft at 70% acceptance,
    batch per die ``B`` = batch_per_npu/2, mean context = ISL + OSL/2 [tokens]."""
    from sncc.cost.profile import load_profile
    from sncc.cost.model_shape import model_shape
    from sncc.cost.step import StepModel
    catalog, sysm, chip = _a3()
    dies = 320
    B = batch_per_npu // 2
    role = RoleSpec(instances=1, devices=dies, tp=1, dp=dies, max_num_seqs=B, graph_mode=True)
    spec = SimSpec(model=catalog.model("deepseek-r1"), chip=chip, links=tuple(sysm.links),
                   devices_per_node=sysm.devices_per_node, quant="w8a8", kv_dtype="int8",
                   kv_bytes_per_token=C8_MLA_KV_BYTES_PER_TOKEN, profile="ascend-a3",
                   roles=(("decode", role),),
                   # CloudMatrix-Infer pipelines decode in two micro-batches (its paper's
                   # microbatch-based decode pipeline, domain-facts §6.1): every step overlaps
                   features=Features(micro_batch=2, micro_batch_steps="all", graph_mode=True,
                                     superkernel=False, mtp=(1, 0.7)),
                   workload=Workload(requests=1, input=LengthDist(), output=LengthDist()))
    sm = StepModel(spec, "decode", role, load_profile(profile), model_shape(spec.model), C8_MLA_KV_BYTES_PER_TOKEN)
    # EP320: 256 routed experts on 320 dies -> 1 expert per die (shared/redundant on the rest)
    sm.e_loc = 1.0
    ctx = isl + osl / 2
    return sm, B, ctx * B, B * dies


def cloudmatrix_decode_step(isl: int, osl: int, batch_per_npu: int, profile: str = "ascend-a3") -> dict:
    """Model step [ms], TPOT [ms] and tok/s per NPU of a CloudMatrix-Infer decode point
    (:func:`cloudmatrix_decode_model`)."""
    sm, B, ctx_sum, B_total = cloudmatrix_decode_model(isl, osl, batch_per_npu, profile)
    t = sm.decode_step(B, ctx_sum, B_total)
    tpot = t / sm.tokens_per_decode_step
    return {"step_ms": t * 1e3, "tpot_ms": tpot * 1e3, "tok_s_per_npu": batch_per_npu / tpot}


def cloudmatrix_prefill_model(prompt: int = 4096, tokens_per_npu: int = 16384, profile: str = "ascend-a3"):
    """(step model, prefill chunks) of the CloudMatrix-Infer prefill setup: one instance of 16
    NPUs = 32 dies, EP32, attention DP32 (TP1), ``tokens_per_npu`` tokens batched per NPU of
    ``prompt``-token prompts (domain-facts §6.1)."""
    from sncc.cost.profile import load_profile
    from sncc.cost.model_shape import model_shape
    from sncc.cost.step import StepModel
    catalog, sysm, chip = _a3()
    role = RoleSpec(instances=1, devices=32, tp=1, dp=32, max_num_batched_tokens=tokens_per_npu * 16,
                    graph_mode=False)
    spec = SimSpec(model=catalog.model("deepseek-r1"), chip=chip, links=tuple(sysm.links),
                   devices_per_node=sysm.devices_per_node, quant="w8a8", kv_dtype="int8",
                   kv_bytes_per_token=C8_MLA_KV_BYTES_PER_TOKEN, profile="ascend-a3",
                   roles=(("prefill", role),), features=Features(micro_batch=2, graph_mode=False),
                   workload=Workload(requests=1, input=LengthDist(), output=LengthDist()))
    sm = StepModel(spec, "prefill", role, load_profile(profile), model_shape(spec.model), C8_MLA_KV_BYTES_PER_TOKEN)
    return sm, [(prompt, 0)] * (tokens_per_npu * 16 // prompt)


def cloudmatrix_prefill_tok_s_per_npu(prompt: int = 4096, tokens_per_npu: int = 16384,
                                      profile: str = "ascend-a3") -> float:
    """Model prefill throughput per NPU [tokens/s] of the CloudMatrix-Infer setup
    (:func:`cloudmatrix_prefill_model`)."""
    sm, chunks = cloudmatrix_prefill_model(prompt, tokens_per_npu, profile)
    t = sm.prefill_step(chunks)
    return tokens_per_npu * 16 / t / 16


def cloudmatrix_prefill_parts(profile: str = "ascend-a3") -> tuple:
    """(step time, routed-expert term) [s] of one CloudMatrix-Infer prefill step
    (:func:`cloudmatrix_prefill_model`) with ``profile``'s constants."""
    sm, chunks = cloudmatrix_prefill_model(profile=profile)
    total, parts = sm.prefill_parts(chunks)
    return total, parts["moe.routed"]


def routed_imbalance(step_ratio: float, total_balanced_s: float, routed_balanced_s: float) -> float:
    """Max/mean routed-expert load [ratio >= 1] that makes a step ``step_ratio`` times slower than
    its balanced form: ``I = 1 + (step_ratio - 1) x T1 / R1``.

    ``T1`` is the step time and ``R1`` its routed-expert term [s], both with balanced routing
    (``moe.imbalance = 1``).  Only the routed-expert matmuls of the busiest device grow with the
    load, so a whole-step ratio (CloudMatrix-Infer's perfect-EPLB 6,688 against the default 5,655
    tok/s per NPU, domain-facts §6.1) is a larger ratio on the routed term alone.  Raises
    ValueError when ``R1`` is not positive."""
    if routed_balanced_s <= 0:
        raise ValueError("the step has no routed-expert work")
    return 1.0 + (step_ratio - 1.0) * total_balanced_s / routed_balanced_s


def prefill_contradiction_bounds(profile: str = "ascend-a3") -> dict:
    """Numbers behind the profile's note on the seed-000 vs CloudMatrix prefill contradiction.

    All from this simulator's own cost functions, for one seed-000 prefill instance
    (16 dies, TP8 x DP2, eager) processing one 3,584-token prompt or a full 32k step:

    * ``needed_tok_s_per_npu``: prefill capacity per NPU at which 10.1 req/s of 3,584-token
      prompts (608 QPM) load 7 instances (56 NPUs) to rho = 0.85 — the load at which
      queueing can make 6P TTFT >= 1.5x 7P TTFT;
    * ``tp_allreduce_s_32k`` / ``eager_launch_s`` / ``kv_transfer_s``: the time per step or
      per request of the seed-specific mechanisms (TP8 all-reduce of a 32k step, eager
      launch per step, KV transfer of one prompt) — each far below the ~7x gap.
    """
    from sncc.sim.engine.run import prepare
    spec = seed000_spec(7)
    from dataclasses import replace
    c = prepare(replace(spec, profile=profile))
    pm = c.prefill_model
    s = pm.shape
    from sncc.cost import comm as cc
    tok_g = 32768 / pm.role.dp
    ar = 2 * cc.allreduce_time(tok_g * s.hidden * 2.0, pm.role.tp, pm.tp_bw, pm.tp_lat, pm.ar_alpha, pm.ar_eta)
    lam = 608 / 60.0
    return {
        "needed_tok_s_per_npu": lam * 3584 / 0.85 / 56,
        "cloudmatrix_tok_s_per_npu": CLOUDMATRIX_PREFILL_TOK_S_PER_NPU,
        "tp_allreduce_s_32k": ar * s.n_layers,
        "eager_launch_s": pm._launch_eager,
        "kv_transfer_s": c.kv_exposed(3584, 0.0),
    }


def qwen3_32b_h200_spec(requests: int = 200, rate: Optional[float] = 4.0, seed: int = 0) -> SimSpec:
    """Qwen3-32B BF16 on one HGX H200 node: 4 instances x TP2, Poisson arrivals."""
    from sncc import catalog
    sysm = catalog.system("hgx-h200")
    chip = sysm.chip if hasattr(sysm.chip, "peak_flops") else catalog.chip(sysm.chip)
    serve = RoleSpec(instances=4, devices=2, tp=2, dp=1, max_num_batched_tokens=8192, chunk_size=2048,
                     max_num_seqs=128, block_size=16)
    wl = Workload(requests=requests, rate=rate, input=LengthDist("lognormal", mean=2000, max=8000),
                  output=LengthDist("lognormal", mean=500, max=2000), seed=seed)
    return SimSpec(model=catalog.model("qwen3-32b"), chip=chip, links=tuple(sysm.links),
                   devices_per_node=sysm.devices_per_node, quant="bf16", kv_dtype="bf16",
                   profile="nvidia-h200", roles=(("serve", serve),),
                   features=Features(micro_batch=1, graph_mode=True), workload=wl,
                   kv_admission="on-demand", slos=(SloTarget("ttft", "p90", "<=", 2.0),))

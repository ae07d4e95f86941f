"""Simulator features of issue 3 beyond the calibration points: attention families (DSA,
DeepSeek-V4 hybrid, OmniAttn), cube/vector split, dtypes, serving features (chunked-prefill
interference, redundant experts, prefix cache, on-demand KV admission with preemption,
speculative decoding) and workloads (bursty arrivals, trace files, multi-turn reuse)."""
from __future__ import annotations

import dataclasses as dc
import math
import statistics

import pytest

from sncc import catalog
from sncc.catalog import arch
from sncc.sim import simulate
from sncc.cost.attention import attention_cost, indexer_bytes
from sncc.cost.model_shape import model_shape
from sncc.cost.inputs import resolve_kv_bytes_per_token, weight_bytes
from sncc.sim.engine.run import prepare
from sncc.sim.calibration.scenarios import qwen3_32b_h200_spec, seed000_spec



def _attn(model: str, kv_dtype: str, **kw):
    m = catalog.model(model)
    return attention_cost(model_shape(m), arch.kv_bytes_per_token(m, kv_dtype), **kw), m


# ------------------------------------------------------------------ attention families
@pytest.mark.parametrize("model,dtype", [("deepseek-r1", "bf16"), ("deepseek-r1", "int8"), ("deepseek-v3.2", "bf16"),
                                         ("deepseek-v3.2", "fp8"), ("deepseek-v4-flash", "fp8"),
                                         ("deepseek-v4-pro", "bf16"), ("qwen3-32b", "bf16")])
def test_stored_kv_bytes_agree_with_catalog(model, dtype):
    a, m = _attn(model, dtype)
    assert a.stored_bytes_per_token() == pytest.approx(arch.kv_bytes_per_token(m, dtype), rel=1e-12)


def test_dsa_reads_indexer_over_context_and_latent_over_topk():
    a, m = _attn("deepseek-v3.2", "bf16")
    kv = arch.kv_bytes_per_token(m, "bf16")
    L, k = m.num_hidden_layers, m.index_topk
    assert indexer_bytes(a.shape) == 132
    by, fl, ix = a.decode(1000)                   # below the knee: everything is read
    assert by == pytest.approx(1000 * kv)
    by2, fl2, ix2 = a.decode(100_000)
    lat = kv / L - 132
    assert by2 == pytest.approx(L * (100_000 * 132 + k * lat))
    assert fl2 == pytest.approx(L * k * a.decode(1)[1] / L)          # attention capped at top-k
    assert ix2 == pytest.approx(100 * ix)                              # indexer linear in context
    # prefill attention: quadratic below the knee, linear beyond it
    f1, _ = a.prefill(1000, 50_000)
    f2, _ = a.prefill(1000, 100_000)
    assert f1 == pytest.approx(f2)
    r1, _ = _attn("deepseek-r1", "bf16")
    assert a.prefill(64_000, 0)[0] < 0.1 * r1.prefill(64_000, 0)[0]


def test_dsv4_window_csa_hca_reads():
    a, m = _attn("deepseek-v4-flash", "fp8")
    s = a.shape
    assert (s.n_swa_only, s.n_csa, s.n_hca) == (2, 21, 20)
    kv = arch.kv_bytes_per_token(m, "fp8")
    c = 64_000
    by, fl, ix = a.decode(c)
    no_topk = dc.replace(a, shape=dc.replace(s, index_topk=10**9))
    by_full, _, _ = no_topk.decode(c)
    # without the top-k cap a query reads exactly the stored bytes of its context + the raw window
    assert by_full == pytest.approx(c * kv + s.n_layers * s.sliding_window * a.entry_bytes)
    assert by < by_full                                   # top-512 of 16k CSA entries
    assert ix == pytest.approx(s.n_csa * c / 4 * 2 * s.index_n_heads * s.index_head_dim)
    # far cheaper than V3.2 at long context (V4 reports ~10 % of V3.2 KV at 1M, domain-facts §5.1)
    v32, _ = _attn("deepseek-v3.2", "fp8")
    assert by < 0.2 * v32.decode(c)[0]


def test_v32_indexer_is_replicated_over_tp_and_v4_split():
    # vLLM's Indexer builds wq_b / weights_proj as ReplicatedLinear (vllm-ascend v0.23.0 reuses it);
    # vllm-ascend's DeepSeek-V4 indexer wq_b is ColumnParallelLinear without enable_dsa_cp
    from types import SimpleNamespace

    from sncc.cost.terms import attention_indexer

    v32, _ = _attn("deepseek-v3.2", "fp8")
    v4, _ = _attn("deepseek-v4-flash", "fp8")
    assert not v32.indexer_tp_split and v4.indexer_tp_split
    step = SimpleNamespace(idx_fl=1e12, B=4, q=2, ctx_avg=64_000)

    def cost(a, tp):
        m = SimpleNamespace(tp=tp, attn=a, shape=a.shape, peak_idx=1e15, bw=1e12, eta_c_indexer=1.0, eta_m=1.0, t0=0.0)
        return attention_indexer(m, step)

    assert cost(v32, 16) == pytest.approx(cost(v32, 1))           # every TP rank scores every key
    assert cost(v4, 4) == pytest.approx(cost(v4, 1) / 4)


def test_omni_attn_only_on_compressed_layers():
    full, m = _attn("deepseek-r1", "int8")
    half, _ = _attn("deepseek-r1", "int8", omni_layers=0.5, omni_kept=2048)
    assert half.decode(1000)[0] == full.decode(1000)[0]               # short context: nothing dropped
    c = 20_000
    assert half.decode(c)[0] == pytest.approx(full.decode(c)[0] * (0.5 + 0.5 * 2048 / c))
    gqa, _ = _attn("qwen3-32b", "bf16", omni_layers=0.5, omni_kept=2048)
    assert gqa.omni_layers == 0.0                                      # OmniAttn is MLA-only


# ------------------------------------------------------------------ dtypes
def test_int8_kv_reads_half_of_bf16_and_w4a8_experts_half_of_w8a8():
    q = qwen3_32b_h200_spec()
    b16 = resolve_kv_bytes_per_token(q)
    i8 = resolve_kv_bytes_per_token(dc.replace(q, kv_dtype="int8"))
    assert i8 == b16 / 2
    c16 = prepare(q).serve_model.attn.decode(4096)[0]
    c8 = prepare(dc.replace(q, kv_dtype="int8")).serve_model.attn.decode(4096)[0]
    assert c8 == c16 / 2
    s = seed000_spec(7, requests=10)
    # W4A8 on a MoE model: INT4 routed experts, W8A8 elsewhere (quant.toml moe_dense_weight_bytes)
    w8, w4 = weight_bytes(s), weight_bytes(dc.replace(s, quant="w4a8"))
    assert w4["routed_experts"] == w8["routed_experts"] / 2 and w4["attention"] == w8["attention"] == 1.0
    assert w4["embedding"] == w4["lm_head"] == w4["router"] == 2.0
    eager = dc.replace(s, roles=tuple((n, dc.replace(r, graph_mode=False)) for n, r in s.roles))   # no gear padding
    t8 = prepare(eager).decode_model.breakdown(0, 1, 4096, 1)["terms"]
    t4 = prepare(dc.replace(eager, quant="w4a8")).decode_model.breakdown(0, 1, 4096, 1)["terms"]
    assert t4["moe.routed"] == pytest.approx(t8["moe.routed"] / 2, rel=0.02)   # batch-1 decode reads weights
    assert t4["attention.projections"] == t8["attention.projections"]
    assert t4["moe.dequant"] > 0 == t8["moe.dequant"]        # INT4 experts are converted before the matmul


# ------------------------------------------------------------------ cube / vector split
def test_vector_split_by_operation_family():
    from sncc.cost.profile import load_profile

    c = prepare(seed000_spec(7, requests=10))
    dm = c.decode_model
    st = dm.breakdown(0, 16, 16 * 4096, 1024)
    ops = st["vector_by_op"]
    assert set(ops) == {"norm", "rope", "act_quant", "swiglu", "router"}
    assert sum(ops.values()) == pytest.approx(st["vector"])
    assert ops["act_quant"] > 0
    # memory-bound elementwise passes at the chip's bandwidth x compute.eta_vector, per element
    eta = load_profile("ascend-a3").get("compute.eta_vector")
    assert dm.vec_s_per_elem == pytest.approx(4.0 / (dm.bw * eta))
    bf = prepare(dc.replace(seed000_spec(7, requests=10), quant="bf16")).decode_model
    assert bf.vec_elems["act_quant"] == 0 and bf.vec_elems_total < dm.vec_elems_total


# ------------------------------------------------------------------ serving features
def test_redundant_experts_reduce_imbalance_by_formula():
    from sncc.cost.gemm import imbalance_with_redundancy as imb

    # R redundant slots of an instance: rho = R / E (seed 000: 2 per die x EP64 = 128 of 256)
    assert imb(1.18, 0, 64, 256, 2.0) == 1.18
    assert imb(1.18, 128, 64, 256, 2.0) == pytest.approx(1.045)
    assert imb(1.18, 256, 64, 256, 2.0) == 1.0
    vals = [imb(1.18, r, 16, 256, 2.0) for r in range(0, 320, 16)]
    assert all(a >= b for a, b in zip(vals, vals[1:]))
    base = seed000_spec(7, requests=10)
    none = dc.replace(base, roles=tuple((n, dc.replace(r, redundant_experts=0)) for n, r in base.roles))
    d0, d2 = prepare(none).decode_model, prepare(base).decode_model
    assert d2.imb < d0.imb and d2.e_loc == (256 + 128) / 64
    # a compute-bound prefill step: the routed GEMMs and EP traffic shrink with the imbalance
    p0 = prepare(none).prefill_model
    p2 = prepare(base).prefill_model
    assert p2.imb < p0.imb
    assert p2.prefill_step([(16384, 0)]) < p0.prefill_step([(16384, 0)])


def test_the_routed_load_factor_reproduces_the_perfect_eplb_step_ratio():
    """CloudMatrix-Infer's 6,688/5,655 is a whole-step ratio (domain-facts §6.1); only the routed
    matmuls grow with the load, so the routed factor is larger, and the model's own CloudMatrix
    prefill step at that factor is the ratio slower than balanced."""
    from sncc.cost.profile import _load_raw, load_profile
    from sncc.sim.calibration import refit as R
    from sncc.sim.calibration.scenarios import cloudmatrix_prefill_parts, routed_imbalance

    assert routed_imbalance(1.2, 2.0, 1.0) == pytest.approx(1.4)
    with pytest.raises(ValueError):
        routed_imbalance(1.2, 2.0, 0.0)
    raw = _load_raw("ascend-a3")
    ratio = load_profile("ascend-a3").get("moe.eplb_step_ratio")
    assert ratio == pytest.approx(6688 / 5655, abs=1e-4)
    with R.TrialProfile(raw, {"moe.imbalance": 1.0}) as pid:
        t1, r1 = cloudmatrix_prefill_parts(pid)
    imb = routed_imbalance(ratio, t1, r1)
    assert imb > ratio
    with R.TrialProfile(raw, {"moe.imbalance": imb}) as pid:
        ti, ri = cloudmatrix_prefill_parts(pid)
    assert ti / t1 == pytest.approx(ratio, rel=1e-6)
    assert ri / r1 == pytest.approx(imb, rel=1e-6)
    # the shipped factor is the one derived at the shipped constants (bench/calibration.py --write)
    assert load_profile("ascend-a3").get("moe.imbalance") == pytest.approx(imb, rel=0.005)
    assert R.derived_values(raw, {})["moe.imbalance"] == pytest.approx(imb)
    assert R.derived_values(_load_raw("nvidia-h200"), {}) == {}
    assert R.derived_values(raw, {"moe.imbalance": 1.5}) == {"moe.imbalance": 1.5}   # fitted itself
    # the load spread is the model's routing, not the chip's: the H200 profile reuses the factor
    assert load_profile("nvidia-h200").get("moe.imbalance") == pytest.approx(load_profile("ascend-a3").get("moe.imbalance"))


def test_a_moe_layer_under_ep_ends_with_a_tp_all_gather_and_a_dense_ffn_with_an_all_reduce():
    """vllm-ascend v0.23.0 ops/fused_moe/prepare_finalize.py: with TP > 1 each TP rank dispatches
    its slice of the tokens and the MoE layer all-gathers the slices; a TP-split dense FFN (or
    TP-sharded experts) all-reduces its partial sums."""
    from sncc.cost import comm as cc
    from sncc.cost.terms import tp_allreduce, tp_dense_ffn_allreduce, tp_moe_output

    pm = prepare(seed000_spec(7, requests=10)).prefill_model      # TP8 x DP2, experts over EP16
    assert pm.tp == 8 and pm.expert_parallel
    s = pm.step(16384, 0.0, 0, 0.0, 0)
    ar, gather = tp_allreduce(pm, s), tp_moe_output(pm, s)
    assert tp_dense_ffn_allreduce(pm, s) == ar
    assert gather == pytest.approx(cc.allgather_time(s.tok_g * pm.shape.hidden * 2.0, pm.tp, pm.tp_bw, pm.tp_lat,
                                                     pm.ar_alpha, pm.ar_eta))
    # a bandwidth-bound 8k-token exchange: the gather moves half the bytes of the all-reduce
    assert 0.45 < gather / ar < 0.6
    pm.expert_parallel = False                                    # TP-sharded experts
    assert tp_moe_output(pm, s) == ar


def test_chunked_prefill_interference_in_aggregated_serving():
    q = qwen3_32b_h200_spec(requests=300, rate=6.0)
    m = prepare(q).serve_model
    assert m.mixed_step([(2048, 0)], 32, 32 * 2500, 32) > 1.5 * m.decode_step(32, 32 * 2500, 32)
    big = simulate(q, series=False)
    # a smaller step budget (vLLM's max_num_batched_tokens is the chunk) puts fewer prefill tokens
    # beside each decode step: the longest step a decode waits for (the inter-token latency) is
    # shorter, and prompts take more steps (vLLM's tuning guide: smaller budgets, better ITL)
    small_role = dc.replace(q.role("serve"), chunk_size=256, max_num_batched_tokens=512)
    small = simulate(dc.replace(q, roles=(("serve", small_role),)), series=False)
    assert m.mixed_step([(512 - 32, 0)], 32, 32 * 2500, 32) < m.mixed_step([(2048, 0)], 32, 32 * 2500, 32)
    assert small.ttft_s["mean"] > big.ttft_s["mean"]


def test_prefix_cache_cuts_prefill_but_not_the_kv_transfer():
    # 12k-token prompts: the seed's eager prefill of a 3.5k prompt is bound by the host's kernel
    # dispatch (61 layers x overhead.eager_launch_per_layer_s), which a cached prefix does not shorten
    base = seed000_spec(7, requests=1200, input_mean=12000)
    hit = dc.replace(base, features=dc.replace(base.features, prefix_cache_hit_rate=0.6))
    a, b = simulate(base, series=False), simulate(hit, series=False)
    ta, tb = a.binds["time_shares"], b.binds["time_shares"]
    assert tb["prefill"]["mean_s"] < ta["prefill"]["mean_s"]
    # decode needs the whole prompt's KV, cached prefix or not (sncc.cost.kv_transfer)
    assert tb["kv_transfer"]["mean_s"] == pytest.approx(ta["kv_transfer"]["mean_s"], rel=0.05)


def test_on_demand_admission_blocks_then_preempts():
    base = seed000_spec(7, requests=1500)
    # 1.5e9 B of INT8 KV (39,040 B/token) as BF16 (70,272 B/token): the same 21k-token pool per rank
    dec = dc.replace(base.role("decode"), kv_budget_bytes_per_device=2.7e9)
    roles = (("prefill", base.role("prefill")), ("decode", dec))
    od = simulate(dc.replace(base, kv_admission="on-demand", roles=roles), series=False)
    assert od.requests_completed == 1500 and od.info["preemptions"] > 0
    assert od.saturated                      # admission blocked: the decode pool refused requests
    full = simulate(dc.replace(base, kv_admission="on-demand"), series=False)
    assert full.info["preemptions"] == 0 and full.requests_completed == 1500
    rv = simulate(base, series=False)
    assert rv.info["preemptions"] == 0
    # aggregated: preempted requests recompute and still finish, with their first token kept
    q = qwen3_32b_h200_spec()
    sv = dc.replace(q.role("serve"), kv_budget_bytes_per_device=2e9)
    r = simulate(dc.replace(q, roles=(("serve", sv),)), series=False)
    assert r.info["preemptions"] > 0 and r.requests_completed == 200
    assert all(x > 0 for x in r._samples[1])


def test_speculative_verify_scales_with_1_plus_k_and_draft_cost():
    base = seed000_spec(7, requests=10)

    def model(mtp, draft_cost=None):
        f = dc.replace(base.features, mtp=mtp, draft_cost=draft_cost)
        role = dc.replace(base.role("decode"), graph_gears=(4096,))   # same padding for every k
        return prepare(dc.replace(base, features=f, roles=(("prefill", base.role("prefill")), ("decode", role)))).decode_model

    m1, m3 = model((1, 0.7), 0.0), model((3, 0.7), 0.0)
    g = [model((k, 0.7), 0.0) for k in (1, 3)]
    for mm, k in zip(g, (1, 3)):
        mm.gears = None
        st = mm.breakdown(0, 512, 512 * 4096, 512 * 64)
        if k == 1:
            ffn1, vec1 = st["ffn"], st["vector"]
        else:
            assert st["vector"] == pytest.approx(vec1 * 4 / 2)      # vector work ~ tokens = B(1+k)
            assert st["ffn"] > 1.5 * ffn1
    # geometric acceptance: a rejection ends the run, E = (1 - a^(k+1)) / (1 - a) (BR-24 / SN7002)
    assert m3.tokens_per_decode_step == pytest.approx(1 + 0.7 + 0.7 ** 2 + 0.7 ** 3)
    assert m1.tokens_per_decode_step == pytest.approx(1.7)      # CloudMatrix MTP1 at 70 %
    # draft cost: plan fraction of a target step; n-gram (0) is cheaper than the MTP default
    ng = model((1, 0.7), 0.0).breakdown(0, 16, 16 * 4096, 1024)
    mtp = model((1, 0.7)).breakdown(0, 16, 16 * 4096, 1024)
    half = model((1, 0.7), 0.5).breakdown(0, 16, 16 * 4096, 1024)
    assert ng["total"] < mtp["total"]
    # draft_cost is a fraction of the target's whole decode step (launch included), as SN7002 counts it
    assert half["total"] == pytest.approx(ng["total"] * 1.5, rel=1e-9)


def test_each_serial_draft_forward_pays_its_fixed_cost():
    """MTP / EAGLE draft k tokens in k serial forwards (vLLM SpecDecodeBaseProposer.propose): each
    adds ``mtp.draft_forward_s`` to the step; a separate draft model's ``draft_cost`` already
    counts a whole target step per token, launch included, so it adds none."""
    from sncc.cost import terms

    base = seed000_spec(7, requests=10)

    def draft_ms(mtp, draft_cost=None, per_forward=None):
        f = dc.replace(base.features, mtp=mtp, draft_cost=draft_cost)
        m = prepare(dc.replace(base, features=f)).decode_model
        if per_forward is not None:
            m.draft_forward_s = per_forward
        s = m.step(0.0, 0.0, 32, 32 * 4096, 32 * 64)
        return terms.draft_tokens(m, s) * 1e3, m.draft_forward_s * 1e3

    one, fwd = draft_ms((1, 0.7))
    three, _ = draft_ms((3, 0.7))
    assert fwd > 0
    assert draft_ms((3, 0.7), per_forward=0.0)[0] == pytest.approx(three - 3 * fwd)
    assert three == pytest.approx(3 * one)
    sep, _ = draft_ms((3, 0.7), draft_cost=0.1)
    assert sep == pytest.approx(draft_ms((3, 0.7), draft_cost=0.1, per_forward=0.0)[0])


def test_gemm_efficiency_is_the_kernels_in_both_phases():
    """Dense matmuls run at ``compute.eta_c_gemm_dense`` and the routed experts' grouped matmul at
    ``compute.eta_c_gemm_grouped``, in a prefill step and a decode step alike: halving one
    efficiency slows only its own terms, in either phase."""
    from sncc.cost import terms

    base = seed000_spec(7, requests=10)
    c = prepare(base)
    for m, step in ((c.prefill_model, lambda m: m.step(8192.0, 0.0, 0, 0.0, 0, T_rank=8192.0)),
                    (c.decode_model, lambda m: m.step(0.0, 0.0, 48, 48 * 4096, 48 * 64))):
        s = step(m)
        before = {t.name: t.fn(m, s) for t in terms.TERMS}
        m.eta_c_grouped /= 2.0
        grouped = {t.name: t.fn(m, s) for t in terms.TERMS}
        m.eta_c_grouped *= 2.0
        m.eta_c_dense /= 2.0
        dense = {t.name: t.fn(m, s) for t in terms.TERMS}
        m.eta_c_dense *= 2.0
        assert {k for k in before if grouped[k] != before[k]} == {"moe.routed"}
        assert grouped["moe.routed"] > before["moe.routed"]
        assert dense["moe.routed"] == before["moe.routed"]     # (the decode's dense GEMMs read weights: memory-bound)
    # the prefill step is compute-bound: its dense projections take twice as long at half the rate
    m = c.prefill_model
    s = m.step(8192.0, 0.0, 0, 0.0, 0, T_rank=8192.0)
    t0 = terms.attention_projections(m, s)
    m.eta_c_dense /= 2.0
    assert terms.attention_projections(m, s) == pytest.approx(2.0 * t0)


# ------------------------------------------------------------------ workloads
def _arrival_cv(spec):
    from sncc.sim.engine.des import Simulation

    c = prepare(spec)
    sim = Simulation(spec, c)
    R = sim.run()["reqs"]
    t = sorted(R.t_arr)
    gaps = [b - a for a, b in zip(t, t[1:])]
    return statistics.pstdev(gaps) / statistics.mean(gaps), statistics.mean(gaps)


def test_bursty_arrivals_have_the_requested_cv():
    base = seed000_spec(7, requests=3000)
    wl = dc.replace(base.workload, concurrency=None, rate=8.0)
    cv1, m1 = _arrival_cv(dc.replace(base, workload=wl))
    # vLLM semantics: burstiness is the Gamma shape, CV = 1/sqrt(burstiness); 1/9 -> CV 3
    cv3, m3 = _arrival_cv(dc.replace(base, workload=dc.replace(wl, burstiness=1 / 9)))
    assert abs(cv1 - 1) < 0.1 and abs(cv3 - 3) < 0.5
    assert m1 == pytest.approx(1 / 8, rel=0.1) and m3 == pytest.approx(1 / 8, rel=0.25)
    p = simulate(dc.replace(base, workload=dc.replace(wl, requests=1500)), series=False)
    b = simulate(dc.replace(base, workload=dc.replace(wl, requests=1500, burstiness=1 / 9)), series=False)
    assert b.saturated["percentiles"]["client_ttft_s"]["p90"] > p.saturated["percentiles"]["client_ttft_s"]["p90"]


def test_multi_turn_reuse_comes_from_the_conversation():
    base = seed000_spec(7, requests=800)
    wl = dc.replace(base.workload, turns=4, think_time=5.0)
    on = dc.replace(base, workload=wl, features=dc.replace(base.features, prefix_cache_hit_rate=1.0))
    c = prepare(on)
    for i in range(1, 4):                                # follow-ups hold the previous context
        prev = c.prompts[i - 1] + c.outputs[i - 1]
        assert c.prompts[i] == min(16384, prev + (c.prompts[i] - prev)) and c.prompts[i] > prev or c.prompts[i] == 16384
        assert c.cached[i] == min(prev, c.prompts[i] - 1)
    assert c.cached[0] == 0 and c.cached[4] == 0          # a new conversation has nothing cached
    off = dc.replace(on, features=dc.replace(on.features, prefix_cache_hit_rate=0.0))
    assert sum(prepare(off).cached) == 0
    from sncc.sim.engine.des import Simulation

    sim = Simulation(on, prepare(on))
    R = sim.run()["reqs"]
    for i in range(800):
        if i % 4:
            assert R.t_arr[i] >= R.t_done[i - 1] + 5.0 - 1e-9   # think time after the previous reply
    a, b = simulate(on, series=False), simulate(off, series=False)
    assert a.ttft_s["mean"] < b.ttft_s["mean"]
    assert math.isfinite(a.qpm)

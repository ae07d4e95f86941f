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
from sncc.sim.engine.run import prepare, resolve_kv_bytes_per_token, resolve_quant
from sncc.sim.calibration.scenarios import qwen3_32b_h200_spec, seed000_spec

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
TRACES = ROOT / "tests" / "fixtures" / "traces"


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


def test_omni_attn_only_on_compressed_layers():
    full, m = _attn("deepseek-r1", "int8")
    half, _ = _attn("deepseek-r1", "int8", omni_layers=0.5, omni_kept=2048)
    assert half.decode(1000)[0] == full.decode(1000)[0]               # short context: nothing dropped
    c = 20_000
    assert half.decode(c)[0] == pytest.approx(full.decode(c)[0] * (0.5 + 0.5 * 2048 / c))
    gqa, _ = _attn("qwen3-32b", "bf16", omni_layers=0.5, omni_kept=2048)
    assert gqa.omni_layers == 0.0                                      # OmniAttn is MLA-only


# ------------------------------------------------------------------ dtypes
def test_int8_kv_reads_half_of_bf16_and_w4a8_weights_half_of_w8a8():
    q = qwen3_32b_h200_spec()
    b16 = resolve_kv_bytes_per_token(q)
    i8 = resolve_kv_bytes_per_token(dc.replace(q, kv_dtype="int8"))
    assert i8 == b16 / 2
    c16 = prepare(q).serve_model.attn.decode(4096)[0]
    c8 = prepare(dc.replace(q, kv_dtype="int8")).serve_model.attn.decode(4096)[0]
    assert c8 == c16 / 2
    s = seed000_spec(7, requests=10)
    w8, _ = resolve_quant(s)
    w4, _ = resolve_quant(dc.replace(s, quant="w4a8"))
    assert w4 == w8 / 2
    f8 = prepare(s).decode_model.breakdown(0, 1, 4096, 64)["ffn"]
    f4 = prepare(dc.replace(s, quant="w4a8")).decode_model.breakdown(0, 1, 4096, 64)["ffn"]
    assert f4 == pytest.approx(f8 / 2, rel=0.02)        # batch-1 decode is weight-read bound


# ------------------------------------------------------------------ cube / vector split
def test_vector_split_by_operation_family():
    from sncc.cost.profile import load_profile

    c = prepare(seed000_spec(7, requests=10))
    dm = c.decode_model
    st = dm.breakdown(0, 16, 16 * 4096, 1024)
    ops = st["vector_by_op"]
    assert set(ops) == {"norm", "rope", "act_quant", "swiglu", "router"}
    assert sum(ops.values()) == pytest.approx(st["vector"])
    # the reference model/quant of the profile keeps the fitted per-token-layer constant
    assert dm.vec_tot["decode"] == pytest.approx(load_profile("ascend-a3").get("compute.vector_s_per_token_layer_decode"))
    assert ops["act_quant"] > 0
    bf = prepare(dc.replace(seed000_spec(7, requests=10), quant="bf16")).decode_model
    assert bf.vec_elems["act_quant"] == 0 and bf.vec_tot["decode"] < dm.vec_tot["decode"]


# ------------------------------------------------------------------ serving features
def test_redundant_experts_reduce_imbalance_by_formula():
    from sncc.cost.gemm import imbalance_with_redundancy as imb

    assert imb(1.18, 0, 64, 256, 2.0) == 1.18
    assert imb(1.18, 2, 64, 256, 2.0) == pytest.approx(1.045)
    assert imb(1.18, 4, 64, 256, 2.0) == 1.0
    vals = [imb(1.18, r, 16, 256, 2.0) for r in range(0, 20)]
    assert all(a >= b for a, b in zip(vals, vals[1:]))
    base = seed000_spec(7, requests=10)
    d0 = prepare(dc.replace(base, features=dc.replace(base.features, redundant_experts=0))).decode_model
    d2 = prepare(base).decode_model
    assert d2.imb < d0.imb
    # a compute-bound prefill step: the routed GEMMs and EP traffic shrink with the imbalance
    p0 = prepare(dc.replace(base, features=dc.replace(base.features, redundant_experts=0))).prefill_model
    p2 = prepare(base).prefill_model
    assert p2.imb < p0.imb
    assert p2.prefill_step([(16384, 0)]) < p0.prefill_step([(16384, 0)])


def test_chunked_prefill_interference_in_aggregated_serving():
    q = qwen3_32b_h200_spec(requests=300, rate=6.0)
    m = prepare(q).serve_model
    assert m.mixed_step([(2048, 0)], 32, 32 * 2500, 32) > 1.5 * m.decode_step(32, 32 * 2500, 32)
    big = simulate(q, series=False)
    small = simulate(dc.replace(q, roles=(("serve", dc.replace(q.role("serve"), chunk_size=256)),)), series=False)
    assert small.tpot_ms["p99"] < big.tpot_ms["p99"]
    assert small.ttft_s["mean"] > big.ttft_s["mean"]


def test_prefix_cache_cuts_prefill_and_kv_transfer():
    base = seed000_spec(7, requests=1200)
    hit = dc.replace(base, features=dc.replace(base.features, prefix_cache_hit_rate=0.6))
    a, b = simulate(base, series=False), simulate(hit, series=False)
    ta, tb = a.binds["time_shares"], b.binds["time_shares"]
    assert tb["prefill"]["mean_s"] < ta["prefill"]["mean_s"]
    assert tb["kv_transfer"]["mean_s"] < ta["kv_transfer"]["mean_s"]


def test_on_demand_admission_blocks_then_preempts():
    base = seed000_spec(7, requests=1500)
    dec = dc.replace(base.role("decode"), kv_budget_bytes_per_device=1.5e9)
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


def test_trace_reader_errors_carry_the_line(tmp_path):
    from sncc.workload.trace import TraceError, read_trace

    assert read_trace(str(TRACES / "small.csv")) == [(1024, 256, 0.0), (2048, 128, 0.5), (512, 64, 0.75)]
    with pytest.raises(TraceError) as e:
        read_trace(str(TRACES / "bad-cell.csv"))
    assert (e.value.line, e.value.col) == (3, 5) and "output_len" in str(e.value)
    cases = {"1,2\n3,4,5\n": (2, 1, "either every row"), "10,2,1\n3,4,0.5\n": (2, 5, "before the previous"),
             "10,0\n": (1, 4, "positive"), "10\n": (1, 1, "2 or 3 columns"), "20000,5\n": (1, 1, "exceeds")}
    for text, (line, col, words) in cases.items():
        f = tmp_path / "t.csv"
        f.write_text(text)
        with pytest.raises(TraceError) as e:
            read_trace(str(f), max_input=16384)
        assert (e.value.line, e.value.col) == (line, col) and words in e.value.message, (text, e.value)
    with pytest.raises(TraceError):
        read_trace(str(tmp_path / "missing.csv"))


def _plan(tmp_path, workload: str, optimize: str = ""):
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    text = f'''plan "t" {{
  hardware {{ system = "atlas-800-a2"  nodes = 1  cann = "8.3.RC2" }}
  engine "vllm-ascend" {{ version = "v0.11.0" }}
  model "qwen3-32b" {{ quant = bf16 }}
  serve {{ devices = 8  tp = 8  max_num_seqs = 64  max_num_batched_tokens = 8k  chunked_prefill = 8k }}
  {optimize}
  workload {{ {workload}
             input {{ mean = 2k  max = 16k }}  output {{ mean = 512  max = 4k }} }}
  slo {{ ttft < 2s }}
}}
'''
    p = tmp_path / "plan.sn"
    p.write_text(text)
    return compile_file(SourceFile(str(p), text))


def test_trace_plan_check_and_simulation(tmp_path):
    from sncc.sim.from_plan import spec_from_plan

    (tmp_path / "tr.csv").write_text("input_len,output_len\n100,10\n200,20\n")
    comp = _plan(tmp_path, 'requests = 4  concurrency = 2  trace = "tr.csv"')
    assert not [d for d in comp.diagnostics if d.is_error]
    spec = spec_from_plan(comp.plan, comp.resolved)
    c = prepare(spec)
    assert c.prompts == [100, 200, 100, 200] and c.outputs == [10, 20, 10, 20]
    (tmp_path / "bad.csv").write_text("100,10\n\n200,x\n")
    bad = _plan(tmp_path, 'requests = 4  concurrency = 2  trace = "bad.csv"')
    errs = [d for d in bad.diagnostics if d.is_error]
    assert [d.code.code for d in errs] == ["SN2015"] and "bad.csv:3:5" in errs[0].message
    assert bad.source.line_col(errs[0].span.start)[0] == 7
    # arrivals in the trace drive an open loop; requests default to the rows
    (tmp_path / "arr.csv").write_text("100,10,0\n200,20,2.5\n")
    spec = spec_from_plan(_plan(tmp_path, 'trace = "arr.csv"').plan, _plan(tmp_path, 'trace = "arr.csv"').resolved)
    r = simulate(spec, series=False)
    assert spec.workload.requests == 2 and r.requests_completed == 2
    # arrivals in the trace and a `rate` or `concurrency` too: one arrival mode (SN2016)
    for mode in ("rate = 4", "concurrency = 2"):
        both = _plan(tmp_path, f'{mode}  trace = "arr.csv"')
        errs = [d for d in both.diagnostics if d.is_error]
        assert [d.code.code for d in errs] == ["SN2016"] and "arrival" in errs[0].message
    lengths_only = _plan(tmp_path, 'rate = 4  trace = "tr.csv"')        # the corrected twin
    assert not [d for d in lengths_only.diagnostics if d.is_error]


def test_burstiness_and_turns_in_plans(tmp_path):
    from sncc.sim.from_plan import spec_from_plan

    comp = _plan(tmp_path, "requests = 40  rate = 2  burstiness = 3  turns = 4  think_time = 5s",
                 "optimize { prefix_cache_hit = 0.9 }")
    assert not [d for d in comp.diagnostics if d.is_error], comp.diagnostics
    wl = spec_from_plan(comp.plan, comp.resolved).workload
    assert (wl.burstiness, wl.turns, wl.think_time, wl.rate) == (3.0, 4, 5.0, 2.0)
    bad = _plan(tmp_path, "requests = 40  rate = 2  burstiness = 0")     # any burstiness > 0 is valid
    assert any(d.is_error for d in bad.diagnostics)


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

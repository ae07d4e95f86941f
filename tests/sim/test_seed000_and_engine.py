"""Tests of the embedded serving simulator (sncc.sim).

Run ``pytest tests/test_sim.py -s`` to print the residual table (predicted vs published).
"""
from __future__ import annotations

import dataclasses
import math

import pytest

from sncc.sim import simulate
from sncc.sim.calibration.scenarios import (CLOUDMATRIX_DECODE, SEED000_PUBLISHED,
                                cloudmatrix_decode_step, qwen3_32b_h200_spec, seed000_spec)


@pytest.fixture(scope="module")
def seed_runs():
    return {p: simulate(seed000_spec(p)) for p in (7, 6)}


def _rel(pred: float, pub: float) -> float:
    return pred / pub - 1.0


def test_determinism():
    a = simulate(seed000_spec(7, requests=600, concurrency=700, seed=3)).to_dict()
    b = simulate(seed000_spec(7, requests=600, concurrency=700, seed=3)).to_dict()
    assert a == b
    c = simulate(seed000_spec(7, requests=600, concurrency=700, seed=4)).to_dict()
    assert c != a


def test_seed000_7p1d(seed_runs):
    """Issue 11: 7P1D QPM within 15 % (steady state); its TTFT is reported, not fitted (the A3
    prefill follows CloudMatrix-Infer's measured 5,655 tok/s per NPU, which the seed contradicts)."""
    s = seed_runs[7].saturated
    pub = SEED000_PUBLISHED[7]
    assert abs(_rel(s["qpm"], pub["qpm"])) <= 0.15
    assert _rel(s["ttft_s"], pub["ttft_s"]) < 0          # the measurement wins: shorter than the seed's


def test_seed000_7p1d_tpot_within_15pct(seed_runs):
    s = seed_runs[7].saturated
    assert abs(_rel(s["tpot_ms"], SEED000_PUBLISHED[7]["tpot_ms"])) <= 0.15


def test_seed000_6p1d_vs_7p1d(seed_runs):
    s7, s6 = seed_runs[7].saturated, seed_runs[6].saturated
    assert abs(s6["qpm"] / s7["qpm"] - 1.0) <= 0.05
    # at CloudMatrix-Infer's prefill rate neither prefill pool is near saturation: one instance
    # fewer leaves the engine TTFT within 10 %, not the seed's 2.6x (6P1D, reported, not fitted),
    # which is the contradiction bench/prefill_contradiction.py records
    assert abs(s6["ttft_s"] / s7["ttft_s"] - 1.0) <= 0.10


def test_seed000_other_seeds_stay_in_band():
    s0 = simulate(seed000_spec(7)).saturated
    for sd in (1, 2):
        s = simulate(seed000_spec(7, seed=sd)).saturated
        assert abs(_rel(s["qpm"], 608)) <= 0.15
        # another workload seed moves the steady-state figures by a few percent only
        assert abs(_rel(s["tpot_ms"], s0["tpot_ms"])) <= 0.05
        assert abs(_rel(s["ttft_s"], s0["ttft_s"])) <= 0.15


def test_more_decode_devices_not_lower_qpm():
    # (32 decode devices cannot hold DeepSeek-R1 W8A8 with the Omni-Infer reserve: unadmittable)
    small = simulate(seed000_spec(7, decode_devices=64, requests=1500)).saturated["qpm"]
    big = simulate(seed000_spec(7, decode_devices=96, requests=1500)).saturated["qpm"]
    assert big >= small


def test_longer_outputs_longer_e2e():
    short = simulate(seed000_spec(7, requests=800, output_mean=600))
    long_ = simulate(seed000_spec(7, requests=800, output_mean=2400))
    assert long_.e2e_s["mean"] > short.e2e_s["mean"]


def test_aggregated_qwen3_32b_h200_finite():
    r = simulate(qwen3_32b_h200_spec())
    d = r.to_dict()
    assert d["requests"]["completed"] == 200
    for v in (r.qpm, r.ttft_s["p99"], r.tpot_ms["mean"], r.e2e_s["p90"], r.output_tokens_per_s):
        assert math.isfinite(v) and v > 0
    assert r.slo and r.slo[0].met in (True, False)


def test_open_loop_poisson_runs():
    spec = dataclasses.replace(seed000_spec(7, requests=400),
                               workload=dataclasses.replace(seed000_spec(7).workload, requests=400,
                                                            concurrency=None, rate=5.0))
    r = simulate(spec)
    assert r.requests_completed == 400 and math.isfinite(r.ttft_s["mean"])


def test_cloudmatrix_decode_within_factor_2():
    for isl, osl, b, tpot, _ in CLOUDMATRIX_DECODE:
        m = cloudmatrix_decode_step(isl, osl, b)["tpot_ms"]
        assert 0.5 <= m / tpot <= 2.0


def test_residual_table_and_recorded_residuals():
    """Prints the residual table; the profile's recorded residuals must match the model's."""
    from sncc.sim.calibration.fit import format_table, residual_rows, residuals_by_family
    from sncc.cost.profile import load_profile
    from sncc.sim.calibration.scenarios import prefill_contradiction_bounds

    rows = residual_rows()
    print("\n" + format_table(rows))
    b = prefill_contradiction_bounds()
    print("prefill contradiction: seed needs ~{:.0f} tok/s/NPU vs CloudMatrix {:.0f}; TP8 all-reduce {:.2f} s per 32k "
          "step, eager launch {:.3f} s per step, KV transfer {:.4f} s per 3.5k prompt".format(
              b["needed_tok_s_per_npu"], b["cloudmatrix_tok_s_per_npu"], b["tp_allreduce_s_32k"],
              b["eager_launch_s"], b["kv_transfer_s"]))
    assert all(math.isfinite(r.predicted) for r in rows)
    recorded = load_profile("ascend-a3").entry("calibration.residuals")["value"]
    fresh = residuals_by_family(rows)
    assert set(recorded) == set(fresh)
    for fam, rs in fresh.items():
        assert len(rs) == len(recorded[fam])
        for a, b_ in zip(rs, recorded[fam]):
            assert abs(a - b_) <= 0.01, (fam, a, b_)
    # the acceptance points: seed 000 7P1D QPM and TPOT within the 15 %; CloudMatrix-Infer's
    # decode TPOTs within 25 % in-sample (the constants are fitted to the whole calibration set,
    # bench/calibration.py, not to these points alone)
    for r in rows:
        if r.name.startswith("seed000 7P1D") and "TTFT" not in r.name:
            assert abs(r.residual) <= 0.15, r
        if "decode" in r.name and "TPOT" in r.name:
            assert abs(r.residual) <= 0.25, r
    # issue 11's decision: prefill follows CloudMatrix-Infer's measured 5,655 tok/s per NPU, and the
    # contradiction with the seed's TTFT stays visible there, not silently tuned away
    assert abs([r for r in rows if r.family == "prefill_throughput"][0].residual) <= 0.10
    assert [r for r in rows if r.name.startswith("seed000 7P1D TTFT")][0].residual < -0.3


def test_simulator_pool_uses_the_check_memory_model():
    """One memory model: the simulator's KV pool is sncc.capacity's with the profile's reserve."""
    from sncc.capacity import device_memory, engine_reserve, weights_per_device
    from sncc.sim.engine.run import prepare

    spec = seed000_spec(7)
    c = prepare(spec)
    dec = spec.role("decode")
    # BF16 KV: Omni-Infer release_v0.3.0 ignores the seed's kv_cache.dtype = int8 (SN4041)
    mem = device_memory(spec.model, "w8a8", "bf16", dec.tp, dec.dp, dec.pp, hbm_bytes=spec.chip.hbm_bytes,
                        utilization=dec.memory_utilization,
                        reserve_bytes=engine_reserve(spec.engine, "decode").bytes, hccl_mb=spec.hccl_buffsize_mb,
                        context=1, seqs=1, redundant_experts=dec.redundant_experts,
                        kv_token_gain=dec.omni_attn.full_layer_token_gain)
    assert c.info["decode.weights_bytes_per_device"] == weights_per_device(
        spec.model, "w8a8", dec.tp, dec.dp, dec.pp, dec.redundant_experts)
    assert c.info["decode.kv_budget_bytes_per_device"] == mem.kv_budget
    # OmniAttn (the seed's optimize { omni_attn }): full layers hold 1 + 0.8 x 30/33 the tokens
    assert c.decode_blocks == int(mem.kv_budget // (dec.block_size * 70272.0 / (1 + 0.8 * 30 / 33)))
    # a bigger HCCL_BUFFSIZE leaves a smaller pool
    c2 = prepare(dataclasses.replace(spec, hccl_buffsize_mb=3000))
    assert c2.decode_blocks < c.decode_blocks


def test_steady_state_percentiles_and_verdicts(seed_runs):
    r = seed_runs[7]
    p = r.saturated["percentiles"]
    for key in ("ttft_s", "tpot_ms", "e2e_s", "queue_s", "client_ttft_s"):
        assert p[key]["p50"] <= p[key]["p90"] <= p[key]["p99"]
    assert r.steady("ttft", "p90") == p["ttft_s"]["p90"]
    # percentile SLOs are judged on the steady window, with an interval from the residuals
    from sncc.sim.engine.metrics import evaluate_slo, interval
    from sncc.sim.spec import SloTarget
    # TTFT is judged as vllm bench serve measures it (client TTFT), the engine-side figure beside it
    target = p["client_ttft_s"]["p90"] * 2
    v = evaluate_slo(r, SloTarget("ttft", "p90", "<", target), {"ttft": [-0.4, 0.1]})
    assert v.window == "steady" and v.verdict == "met" and v.observed == p["client_ttft_s"]["p90"]
    assert v.basis == "client" and v.engine_observed == p["ttft_s"]["p90"] < v.observed
    engine = evaluate_slo(r, SloTarget("ttft", "p90", "<", 100.0), {"ttft": [-0.4, 0.1]}, client_ttft=False)
    assert engine.basis == "engine" and engine.observed == p["ttft_s"]["p90"]
    # an engine_ttft SLO is judged on the engine side whatever client_ttft says
    server = evaluate_slo(r, SloTarget("engine_ttft", "p90", "<", 100.0), {"ttft": [-0.4, 0.1]})
    assert server.basis == "engine" and server.observed == p["ttft_s"]["p90"] and server.name.startswith("engine_ttft")
    # split-conformal in log space: two residuals are too few for the 80 % rank (ceil(3 x 0.8)
    # = 3), so the largest score |ln(1 - 0.5)| sets the half-width
    lo, hi = interval(2.0, [-0.5, 0.25])
    assert (lo, hi) == pytest.approx((1.0, 4.0))
    rs = (0.1, -0.1, 0.2, -0.2, 0.3, -0.3, 0.4, -0.4, 0.5)
    q = sorted(abs(math.log1p(x)) for x in rs)[7]          # rank ceil(10 x 0.8) = 8
    assert interval(2.0, rs) == pytest.approx((2.0 * math.exp(-q), 2.0 * math.exp(q)))
    straddle = evaluate_slo(r, SloTarget("ttft", "p90", "<", p["client_ttft_s"]["p90"] * 1.1), {"ttft": [-0.3]})
    assert straddle.verdict == "uncertain" and straddle.met is None
    missed = evaluate_slo(r, SloTarget("tpot", "p99", "<", 0.001), {"tpot": [-0.1, 0.1]})
    assert missed.verdict == "missed" and missed.met is False


def test_binds_time_shares_sum_to_one(seed_runs):
    b = seed_runs[7].binds
    shares = b["time_shares"]
    assert abs(sum(v["share"] for v in shares.values()) - 1.0) < 1e-9
    assert set(shares) == {"queue", "prefill", "kv_transfer", "decode_join", "decode"}
    st = b["decode_step"]
    # the "where time goes" breakdown is the registered cost-term list
    assert abs(sum(st["terms"].values()) - st["total"]) < 1e-9


def test_goodput_search_brackets_the_slo():
    from sncc.sim.whatif import _ok, goodput

    spec = seed000_spec(7, requests=1200)
    g = goodput(spec, requests=1200)
    assert 0 < g["rate"] < 20 and g["binding"]
    ok_lo, _, _ = _ok(spec, g["rate"], 1200)
    ok_hi, _, _ = _ok(spec, g["rate"] * 1.15, 1200)
    assert ok_lo and not ok_hi


def test_cheapest_changes_fix_6p1d_with_a_prefill_instance():
    from sncc.sim.whatif import cheapest_changes

    # one prefill instance and 12k-token prompts (at CloudMatrix-Infer's prefill rate one instance
    # keeps up with the seed's 3.5k): predicted client TTFT over the 2 s target (requests queue in
    # front of the one prefill instance), and the what-ifs try to fix it
    spec = seed000_spec(1, requests=1500, input_mean=12000)
    res = simulate(spec, series=False)
    from sncc.sim.engine.metrics import violated
    assert any(violated(s, v) and s.metric == "ttft" for s, v in zip(spec.slos, res.slo))
    ch = cheapest_changes(spec, res)
    # every listed change lowers the TTFT; one more prefill instance lowers it the most
    assert ch and all(c["effects"][0]["after"] < c["effects"][0]["before"] for c in ch)
    best = min(ch, key=lambda c: c["effects"][0]["after"])
    assert best["change"].startswith("one more prefill instance")


def test_analytic_screen_agrees_with_des_within_10pct():
    from sncc.sim.engine.screen import screen

    for spec in (seed000_spec(7), seed000_spec(6), seed000_spec(5), seed000_spec(7, decode_devices=96),
                 seed000_spec(7, input_mean=2000)):
        des = simulate(spec, series=False).saturated["qpm"]
        assert abs(screen(spec)["qpm"] / des - 1.0) <= 0.10


def test_plot_is_written(tmp_path, seed_runs):
    from sncc.sim.report.plot import write_plot

    r = seed_runs[7]
    out = tmp_path / "sim.png"
    ttft, tpot = r._samples
    write_plot(r, str(out), "seed 000 7P1D", ttft, tpot, seed000_spec(7).slos)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000

"""Tests of the embedded serving simulator (sncc.sim).

Run ``pytest tests/test_sim.py -s`` to print the residual table (predicted vs published).
"""
from __future__ import annotations

import dataclasses
import math

import pytest

from sncc.sim import simulate
from sncc.sim.scenarios import (CLOUDMATRIX_DECODE, CLOUDMATRIX_PREFILL_TOK_S_PER_NPU, SEED000_PUBLISHED,
                                cloudmatrix_decode_step, cloudmatrix_prefill_tok_s_per_npu,
                                qwen3_32b_h200_spec, seed000_spec)


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
    s = seed_runs[7].saturated
    pub = SEED000_PUBLISHED[7]
    assert abs(_rel(s["qpm"], pub["qpm"])) <= 0.15
    assert abs(_rel(s["ttft_s"], pub["ttft_s"])) <= 0.15
    assert abs(_rel(s["tpot_ms"], pub["tpot_ms"])) <= 0.15


def test_seed000_6p1d_vs_7p1d(seed_runs):
    s7, s6 = seed_runs[7].saturated, seed_runs[6].saturated
    assert abs(s6["qpm"] / s7["qpm"] - 1.0) <= 0.05
    assert s6["ttft_s"] >= 1.5 * s7["ttft_s"]


def test_seed000_other_seeds_stay_in_band():
    for sd in (1, 2):
        s = simulate(seed000_spec(7, seed=sd)).saturated
        assert abs(_rel(s["qpm"], 608)) <= 0.15
        assert abs(_rel(s["tpot_ms"], 47)) <= 0.15
        assert abs(_rel(s["ttft_s"], 1.93)) <= 0.25


def test_more_decode_devices_not_lower_qpm():
    small = simulate(seed000_spec(7, decode_devices=32, requests=1500)).saturated["qpm"]
    big = simulate(seed000_spec(7, decode_devices=64, requests=1500)).saturated["qpm"]
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


def test_residual_table(seed_runs):
    rows = []
    for p in (7, 6):
        r = seed_runs[p]
        s = r.saturated
        pub = SEED000_PUBLISHED[p]
        rows.append((f"seed000 {p}P1D QPM (saturated window)", s["qpm"], pub["qpm"]))
        rows.append((f"seed000 {p}P1D TTFT mean s (saturated window)", s["ttft_s"], pub["ttft_s"]))
        if "tpot_ms" in pub:
            rows.append((f"seed000 {p}P1D TPOT mean ms (saturated window)", s["tpot_ms"], pub["tpot_ms"]))
        rows.append((f"seed000 {p}P1D QPM (whole 3000-req run incl. drain)", r.qpm, pub["qpm"]))
        rows.append((f"seed000 {p}P1D TTFT mean s (whole run)", r.ttft_s["mean"], pub["ttft_s"]))
    for isl, osl, b, tpot, toks in CLOUDMATRIX_DECODE:
        m = cloudmatrix_decode_step(isl, osl, b)
        rows.append((f"CloudMatrix decode {isl}/{osl} b{b}/NPU TPOT ms", m["tpot_ms"], tpot))
        rows.append((f"CloudMatrix decode {isl}/{osl} b{b}/NPU tok/s/NPU", m["tok_s_per_npu"], toks))
    rows.append(("CloudMatrix prefill tok/s/NPU (4K prompts)", cloudmatrix_prefill_tok_s_per_npu(),
                 CLOUDMATRIX_PREFILL_TOK_S_PER_NPU))
    print("\n{:<58} {:>10} {:>10} {:>8}".format("quantity", "predicted", "published", "resid"))
    for name, pred, pub in rows:
        print("{:<58} {:>10.2f} {:>10.2f} {:>+7.1f}%".format(name, pred, pub, 100 * _rel(pred, pub)))
    assert all(math.isfinite(p) for _, p, _ in rows)

"""Fixes from the fresh-user simulator test: degenerate length distributions, speculative
decoding's expected accepted length and draft cost, optimisations the engine cannot apply,
profile/chip mismatch, hardware-aware what-ifs, progress of long runs."""
from __future__ import annotations

import dataclasses as dc
import io
import os
import random
import re

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sncc.sim import simulate
from sncc.sim.spec import LengthDist
from sncc.sim.workload import sample_lengths

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(HERE)


def _compile(path: str, text: str | None = None):
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    if text is None:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    return compile_file(SourceFile(path, text))


def _spec(comp, **kw):
    from sncc.sim.from_plan import spec_from_plan

    spec = spec_from_plan(comp.plan, comp.resolved)
    return dc.replace(spec, **kw) if kw else spec


def _small(spec, requests: int, concurrency: int | None = None):
    wl = dc.replace(spec.workload, requests=requests,
                    **({"concurrency": concurrency} if concurrency else {}))
    return dc.replace(spec, workload=wl)


QWEN_A2 = '''plan "fixed-len" {{
  model "qwen3-32b" {{ weights = "/data/qwen3-32b"  max_model_len = 8k }}
  hardware {{ system = "atlas-800-a2"  devices = 2  cann = "8.5.1" }}
  engine "vllm-ascend" {{ version = "v0.19.1rc1" }}
  serve {{ devices = 2  tp = 2  max_num_seqs = 8  chunked_prefill = 8k }}
  workload {{ requests = 40  concurrency = 8
             input {{ mean = 2k  max = {imax} }}  output {{ mean = 256  max = 256 }} }}
  slo {{ tpot < 50ms }}
}}
'''

LLAMA_H100 = '''plan "llama405" {{
  model "llama-3.1-405b" {{ weights = "/data/llama"  quant = fp8  max_model_len = 16k }}
  hardware {{ system = "hgx-h100"  devices = 8 }}
  engine "vllm" {{}}
  serve {{ devices = 8  tp = 8  max_num_seqs = 16  chunked_prefill = 8k }}
{optimize}
  workload {{ requests = 60  concurrency = 16
             input {{ mean = 2k  max = 8k }}  output {{ mean = 256  max = 1k }} }}
  slo {{ tpot < 35ms }}
}}
'''
ALL_OMNI = '''  optimize {
    micro_batch = 2
    superkernel_layers = 126
    omni_placement { redundant_experts = 2 }
    omni_attn { compress_ratio = 0.5 }
    omni_proxy { policy = OAS }
  }'''


# ------------------------------------------------------------------ 1. degenerate lengths
def test_lognormal_with_mean_equal_to_max_samples_the_fixed_length():
    rng = random.Random(0)
    assert sample_lengths(LengthDist("lognormal", mean=2048, max=2048), 50, rng, 0.8) == [2048] * 50
    assert sample_lengths(LengthDist("lognormal", mean=4096, max=2048), 5, rng, 0.8) == [2048] * 5
    assert sample_lengths(LengthDist("lognormal", mean=100, min=500, max=2048), 5, rng, 0.8) == [500] * 5
    assert sample_lengths(LengthDist("uniform", mean=3000, max=2048), 5, rng, 0.8) == [2048] * 5
    assert sample_lengths(LengthDist("lognormal", mean=1000, max=2048, cv=0.0), 3, rng, 0.8) == [1000] * 3


@settings(max_examples=200, deadline=None)
@given(kind=st.sampled_from(["fixed", "uniform", "lognormal"]),
       mean=st.floats(1, 70000), lo=st.integers(1, 4000), hi=st.one_of(st.none(), st.integers(1, 70000)),
       cv=st.one_of(st.none(), st.floats(0, 4)))
def test_sampler_never_raises_and_respects_the_bounds(kind, mean, lo, hi, cv):
    xs = sample_lengths(LengthDist(kind, mean=mean, max=hi, min=lo, cv=cv), 20, random.Random(1), 0.8)
    assert len(xs) == 20 and all(x >= 1 for x in xs)
    if hi:
        assert max(xs) <= max(hi, 1)


def test_fixed_length_benchmark_plan_simulates():
    from sncc.sim.command import simulate_plan

    comp = _compile("/tmp/fixed.sn", QWEN_A2.format(imax="2k"))
    text, code = simulate_plan(comp, fmt="json", progress_stream=None)
    assert code in (0, 1) and '"completed": 40' in text


# ------------------------------------------------------------------ 2. speculative decoding
def test_expected_tokens_is_the_one_formula_of_the_check_and_the_cost_model():
    from sncc.checks import speculative
    from sncc.facts.speculative import expected_tokens as E
    from sncc.sim.calibration.scenarios import seed000_spec
    from sncc.sim.engine.run import prepare

    assert E(0.7, 1) == pytest.approx(1.7)                        # CloudMatrix MTP1
    assert E(0.4, 3) == pytest.approx((1 - 0.4 ** 4) / 0.6)       # 1.624, not 1 + 3 x 0.4 = 2.2
    assert E(1.0, 3) == 4.0 and E(0.0, 5) == 1.0
    # the check's helper delegates to the one formula (it imports it lazily, sncc/checks/speculative.py)
    assert all(speculative.expected_tokens(a, k) == E(a, k) for a in (0.0, 0.4, 0.7, 1.0) for k in (1, 3, 5))
    base = seed000_spec(7, requests=10)
    dm = prepare(dc.replace(base, features=dc.replace(base.features, mtp=(3, 0.4)))).decode_model
    assert dm.tokens_per_decode_step == E(0.4, 3)
    with pytest.raises(ValueError):
        E(1.5, 1)


def _tpot_with_and_without_speculation(text: str) -> tuple:
    comp = _compile(os.path.join(ROOT, "tests", "cases", "x.sn"), text)
    spec = _small(_spec(comp), 16, concurrency=1)
    plain = dc.replace(spec, features=dc.replace(spec.features, mtp=None, draft_cost=None))
    return simulate(spec, series=False).tpot_ms["mean"], simulate(plain, series=False).tpot_ms["mean"]


def test_br24_speculation_slows_decode_in_the_simulator_as_in_the_check():
    with open(os.path.join(ROOT, "tests", "cases", "br-24-speculative-slowdown.sn"), encoding="utf-8") as fh:
        text = fh.read()
    # the case as written (draft_model, k = 4, alpha = 0.4, engines.toml draft cost) and the
    # brief's numbers (k = 3, alpha = 0.4, draft_cost = 0.3): both slower than no speculation
    for spec_line in ("method = draft_model  draft_tokens = 4  acceptance = 0.4",
                      "method = draft_model  draft_tokens = 3  acceptance = 0.4  draft_cost = 0.3"):
        t = re.sub(r"speculative \{[^}]*\}", "speculative { " + spec_line + " }", text)
        with_spec, without = _tpot_with_and_without_speculation(t)
        assert with_spec > 1.1 * without, spec_line
    # the corrected twin (k = 1, alpha = 0.8) speeds decode up
    with open(os.path.join(ROOT, "tests", "cases", "br-24-speculative-slowdown.fixed.sn"), encoding="utf-8") as fh:
        with_spec, without = _tpot_with_and_without_speculation(fh.read())
    assert with_spec < 0.8 * without


def test_draft_model_cost_defaults_to_the_engine_fraction_as_in_the_check():
    from sncc.catalog.engine_defaults import engine_defaults

    comp = _compile(os.path.join(ROOT, "tests", "cases", "br-24-speculative-slowdown.sn"))
    spec = _spec(comp)
    assert spec.features.draft_cost == engine_defaults()["draft_model_cost_fraction"]
    assert spec.features.mtp == (4, 0.4)


def test_cloudmatrix_mtp_points_keep_1_7_tokens_per_step():
    from sncc.sim.calibration.scenarios import cloudmatrix_decode_step, seed000_spec
    from sncc.sim.engine.run import prepare

    base = seed000_spec(7, requests=10)
    f = dc.replace(base.features, mtp=(1, 0.7))
    assert prepare(dc.replace(base, features=f)).decode_model.tokens_per_decode_step == pytest.approx(1.7)
    pt = cloudmatrix_decode_step(4096, 1024, 96)
    assert pt["tpot_ms"] > 0


# ------------------------------------------------------------------ 3. features per engine
def test_omni_and_ascend_optimisations_are_not_credited_on_vllm_nvidia():
    opt = _compile("/tmp/llama.sn", LLAMA_H100.format(optimize=ALL_OMNI))
    plain = _compile("/tmp/llama.sn", LLAMA_H100.format(optimize=""))
    s_opt, s_plain = _spec(opt), _spec(plain)
    assert s_opt.features == s_plain.features
    r_opt, r_plain = simulate(s_opt, series=False), simulate(s_plain, series=False)
    assert r_opt.tpot_ms["mean"] == pytest.approx(r_plain.tpot_ms["mean"], rel=1e-12)
    notes = " ".join(r_opt.info["not_applied"])
    for name in ("micro_batch", "superkernel_layers", "omni_attn", "omni_proxy"):
        assert f"optimize.{name}" in notes
    # omni_placement's redundant experts are built on every engine with expert parallelism;
    # a dense model has none
    assert all(r.redundant_experts == 0 for _, r in s_opt.roles)


def test_omni_infer_on_ascend_keeps_its_optimisations():
    comp = _compile(os.path.join(ROOT, "examples", "deepseek-r1-a3-7p1d.sn"))
    spec = _spec(comp)
    f = spec.features
    assert f.micro_batch == 2 and f.superkernel
    # OmniAttn runs on the decode role (the KV consumer) with Omni-Infer's layout, not the plan's
    # compress_ratio (which no key writes): 30 of 62 layers keep 1 + 3 blocks of 128 tokens
    dec, pre = spec.role("decode"), spec.role("prefill")
    assert pre.omni_attn is None
    assert dec.omni_attn.compressed_fraction == pytest.approx(30 / 62)
    assert dec.omni_attn.kept_tokens(dec.block_size) == 4 * dec.block_size
    # omni_placement { redundant_experts = 2 } per device, over each instance's EP group
    assert spec.role("decode").redundant_experts == 2 * 64 and spec.role("prefill").redundant_experts == 2 * 16


def test_mtp_what_if_only_for_models_with_mtp_layers():
    from sncc.sim.whatif import _candidates

    llama = _spec(_compile("/tmp/llama.sn", LLAMA_H100.format(optimize="")))
    assert not any("MTP" in c[0] for c in _candidates(llama))
    r1 = _spec(_compile(os.path.join(ROOT, "examples", "deepseek-r1-a3-7p1d.sn")))
    assert any("MTP" in c[0] for c in _candidates(r1))


def test_mtp_method_on_a_model_without_mtp_layers_is_not_simulated():
    text = LLAMA_H100.format(optimize="  speculative { method = mtp  draft_tokens = 1  acceptance = 0.7 }")
    spec = _spec(_compile("/tmp/llama.sn", text))
    assert spec.features.mtp is None and any("num_nextn_predict_layers = 0" in n for n in spec.notes)


# ------------------------------------------------------------------ 4. profiles
def test_a2_plan_uses_the_derived_a2_profile_and_widens_intervals():
    comp = _compile("/tmp/a2.sn", QWEN_A2.format(imax="6k"))
    spec = _spec(comp)
    assert spec.profile == "ascend-a2"
    r = simulate(spec, series=False)
    note = r.info["profile_note"]
    assert "ascend-a2 is derived from ascend-a3" in note and "±30 %" in note
    from sncc.cost.profile import load_profile
    from sncc.sim.calibration.intervals import conformal_score
    from sncc.sim.engine.metrics import interval
    from sncc.sim.engine.run import plan_residuals, widen_residuals

    a3, _ = plan_residuals(spec, load_profile("ascend-a3"))
    wide = r.info["residuals"]["tpot"]
    # the plan's A3 leave-one-out residuals, each composed with the derived profile's further ±30 %
    assert wide == widen_residuals(a3, 0.3)["tpot"]
    assert conformal_score(wide) > conformal_score(a3["tpot"])
    iv = r.intervals["tpot_ms"]
    assert (iv["low"], iv["high"]) == pytest.approx(interval(iv["value"], wide))


def test_h100_plan_notes_the_h200_profile_without_generation_widening():
    r = simulate(_small(_spec(_compile("/tmp/llama.sn", LLAMA_H100.format(optimize=""))), 20), series=False)
    assert "nvidia-h100" in r.info["profile_note"] and "hopper" in r.info["profile_note"]
    # kernel-level residuals plus the profile's serving_uncertainty (+-0.4); the same
    # generation (hopper) adds no cross-generation widening (+-0.5)
    from sncc.cost.profile import load_profile
    from sncc.sim.engine.run import widen_residuals

    kernel = load_profile("nvidia-h200").entry("calibration.residuals")["value"]
    assert r.info["residuals"]["tpot"] == widen_residuals({"tpot": list(kernel["tpot"])}, 0.4)["tpot"]


def test_a3_plan_has_no_profile_note():
    from sncc.sim.calibration.scenarios import seed000_spec

    assert "profile_note" not in simulate(seed000_spec(7, requests=200), series=False).info


def test_unknown_profile_lists_the_available_ones(tmp_path):
    from sncc.cli import main

    p = tmp_path / "a2.sn"
    p.write_text(QWEN_A2.format(imax="6k"))
    res = CliRunner().invoke(main, ["simulate", "--profile", "nope", str(p)])
    assert res.exit_code == 2
    assert "available: ascend-950, ascend-a2, ascend-a3, nvidia-h200" in res.output and "Traceback" not in res.output


# ------------------------------------------------------------------ 5. what-ifs and hardware
def _prefill_bound(spec, prefill_instances: int = 1):
    """``spec`` with ``prefill_instances`` prefill instances and 12k-token prompts (the seed's
    3.5k mean does not load one instance past its capacity at CloudMatrix-Infer's prefill rate):
    TTFT grows past its 2 s SLO."""
    roles = tuple((n, dc.replace(r, instances=prefill_instances) if n == "prefill" else r) for n, r in spec.roles)
    wl = dc.replace(spec.workload, input=dc.replace(spec.workload.input, mean=12000))
    return dc.replace(spec, roles=roles, workload=wl)


def test_what_ifs_say_when_they_need_more_devices_and_drop_noise():
    from sncc.sim.whatif import cheapest_changes

    comp = _compile(os.path.join(ROOT, "examples", "deepseek-r1-a3-6p1d.sn"))
    spec = _prefill_bound(_small(_spec(comp), 1500))
    assert spec.devices_available == 160
    res = simulate(spec, series=False)
    ch = cheapest_changes(spec, res)
    first = next(c for c in ch if c["change"].startswith("one more prefill instance"))
    assert first["needs_devices"] == 0          # 1 prefill instance leaves room on 160 devices
    assert not any(c["change"].startswith("KV block size") for c in ch)   # no effect beyond noise
    tight = dc.replace(spec, devices_available=spec.role("prefill").devices + spec.role("decode").devices)
    ch2 = cheapest_changes(tight, res)
    assert next(c for c in ch2 if c["change"].startswith("one more prefill instance"))["needs_devices"] == 16


def test_what_ifs_of_a_large_plan_run_at_the_capped_size(monkeypatch):
    from sncc.sim import whatif
    from sncc.sim.calibration.scenarios import seed000_spec

    spec = _prefill_bound(seed000_spec(6, requests=4000, concurrency=600))
    res = simulate(spec, series=False)
    from sncc.sim.engine.metrics import violated
    assert violated(spec.slos[0], res.slo[0])      # predicted TTFT over target
    monkeypatch.setattr(whatif, "WHATIF_REQUESTS", 1500)
    ch = whatif.cheapest_changes(spec, res)
    # max(1500, 3 x 600 clients) requests per run, not the plan's 4000
    assert ch and all(c["requests"] == 1800 for c in ch)
    assert ch[0]["change"].startswith("one more prefill instance")
    assert ch[0]["effects"][0]["after"] < ch[0]["effects"][0]["before"]


# ------------------------------------------------------------------ 6. progress
def test_progress_lines_for_long_runs():
    from sncc.sim.command import Progress

    calls = []
    comp = _compile("/tmp/agg.sn", '''plan "agg" {
  model "qwen3-32b" { weights = "/data/qwen3-32b"  max_model_len = 20k }
  hardware { system = "hgx-h200"  devices = 2 }
  engine "vllm" {}
  serve { devices = 2  tp = 2  max_num_seqs = 256  max_num_batched_tokens = 8k  chunked_prefill = 2k }
  workload { requests = 3000  concurrency = 512
             input { mean = 2k  max = 4k }  output { mean = 4k  max = 16k } }
}
''')
    spec = dc.replace(_spec(comp), kv_admission="on-demand")
    out = io.StringIO()
    prog = Progress(out, after_s=0.0, every_s=0.0)
    cb = prog.for_run("plan `agg`")
    r = simulate(spec, series=False, progress=lambda d, n: (calls.append((d, n)), cb(d, n)))
    assert r.info["preemptions"] > 0 and calls and all(n == 3000 for _, n in calls)
    assert out.getvalue().startswith("sncc simulate: plan `agg`: ") and "/3000 requests" in out.getvalue()
    quiet = io.StringIO()
    Progress(quiet, after_s=3600).for_run("x")(1, 2)
    assert quiet.getvalue() == ""

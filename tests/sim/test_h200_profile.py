"""H200 profile: kernel-level calibration residuals and the serving-uncertainty widening.

The nvidia-h200 profile is read from two single-kernel measurements (bf16 8192^3 GEMM at
788 TFLOP/s, device-to-device copy at 4.3 TB/s read + write).  ``kernel_residual_rows``
predicts both kernels with the simulator's own roofline; the profile records the residuals and
``serving_uncertainty`` widens every family because no end-to-end serving figure was fitted.
Run ``pytest tests/test_h200_calibration.py -s`` to print the kernel residual table.
"""
from __future__ import annotations

import copy
import dataclasses as dc
import os
import re
import sys
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from sncc.cost import profile as P
from sncc.sim import simulate
from sncc.sim.calibration.fit import (
    CalibrationError,
    Row,
    format_table,
    kernel_residual_rows,
    residuals_by_family,
    write_profile,
)
from sncc.sim.engine.metrics import evaluate_slo, interval
from sncc.cost.profile import load_profile
from sncc.sim.engine.run import profile_match

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover
    import tomli as _toml

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLAN = os.path.join(HERE, "fixtures", "plans", "qwen3-32b-h200.sn")


def _compile(path: str, text: str | None = None):
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    if text is None:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    comp = compile_file(SourceFile(path, text))
    assert comp is not None and not any(d.is_error for d in comp.diagnostics)
    return comp


def _spec(comp):
    from sncc.sim.from_plan import spec_from_plan

    return spec_from_plan(comp.plan, comp.resolved)


# ------------------------------------------------------------------ kernel residuals
def test_recorded_h200_residuals_match_the_kernel_model():
    """The profile's residuals are what kernel_residual_rows computes (fails on > 1 point drift)."""
    rows = kernel_residual_rows("nvidia-h200")
    print("\n" + format_table(rows))
    fresh = residuals_by_family(rows)
    recorded = load_profile("nvidia-h200").entry("calibration.residuals")["value"]
    assert set(fresh) == set(recorded) == {"ttft", "tpot", "throughput"}
    for fam, vals in fresh.items():
        assert len(vals) == len(recorded[fam]), fam
        for a, b in zip(vals, recorded[fam]):
            assert abs(a - b) <= 0.01, (fam, a, b)
    # the GEMM is compute-bound (ttft), the copy memory-bound (tpot); both feed throughput
    by = {r.name: r for r in rows}
    gemm = by["H200 bf16 GEMM 8192x8192x8192 time ms"]
    copy_ = by["H200 device-to-device copy 4 GiB time ms"]
    assert gemm.family == "ttft" and copy_.family == "tpot"
    # measured: 2 * 8192^3 FLOP at 788 TFLOP/s; 2 x 4 GiB at 4.3 TB/s
    assert gemm.published == pytest.approx(1e3 * 2 * 8192 ** 3 / 788e12)
    assert copy_.published == pytest.approx(1e3 * 2 * 2 ** 32 / 4.3e12)
    # held-in points: the efficiencies were read from them, so the residuals are small
    assert all(abs(r.residual) < 0.01 for r in rows)


def test_kernel_residuals_follow_the_profile_constants():
    """A changed efficiency moves the residual by the roofline's arithmetic (not a stored number)."""
    raw = copy.deepcopy(P._load_raw("nvidia-h200"))
    raw["compute"]["eta_c_gemm_dense"]["value"] = 0.7
    raw["compute"]["eta_m"]["value"] = 0.8
    pid = "__test_h200_kernel"
    P._CUSTOM[pid] = raw
    P._load_raw.cache_clear()
    try:
        rows = {r.name: r for r in kernel_residual_rows(pid)}
    finally:
        P._CUSTOM.pop(pid, None)
        P._load_raw.cache_clear()
    t0 = raw["compute"]["op_t0_s"]["value"]
    flops = 2.0 * 8192 ** 3
    pred = flops / (989e12 * 0.7) + t0
    g = rows["H200 bf16 GEMM 8192x8192x8192 time ms"]
    assert g.residual == pytest.approx(pred / (flops / 788e12) - 1, rel=1e-9)
    assert g.residual > 0.1                       # the recorded +0.2 % would be > 1 point off
    moved = 2.0 * 2 ** 32
    c = rows["H200 device-to-device copy 4 GiB TB/s"]
    assert c.family == "throughput"
    # throughput rows are rates: predicted rate / measured rate - 1
    assert c.residual == pytest.approx((moved / (moved / (4.8e12 * 0.8) + t0)) / 4.3e12 - 1, rel=1e-9)


def test_kernel_rows_need_kernel_points():
    with pytest.raises(CalibrationError, match="kernel_points"):
        kernel_residual_rows("ascend-a3")


# ------------------------------------------------------------------ serving widening
def test_profile_match_adds_the_serving_uncertainty():
    prof = load_profile("nvidia-h200")
    u = prof.get("calibration.serving_uncertainty")
    assert u == 0.4 and "assumed" in prof.entry("calibration.serving_uncertainty")["source"]

    def spec(cid, gen):
        return SimpleNamespace(chip=SimpleNamespace(id=cid, generation=gen))

    note, m = profile_match(spec("nvidia-h200", "hopper"), prof)
    assert m == u and "serving_uncertainty" in note and "±40 %" in note
    note, m = profile_match(spec("nvidia-h100", "hopper"), prof)        # same generation: only serving
    assert m == u and "nvidia-h100" in note and "hopper" in note
    note, m = profile_match(spec("nvidia-b200", "blackwell"), prof)     # both compose, stay > -100 %
    g = prof.get("calibration.other_generation_residual")
    assert m == pytest.approx(1 - (1 - g) * (1 - u)) and m < 1
    assert "±50 %" in note and "±40 %" in note and "±70 %" in note
    # a profile fitted to serving figures records no serving_uncertainty: unchanged behaviour
    assert profile_match(spec("ascend-910c", "atlas-a3"), load_profile("ascend-a3")) == (None, 0.0)


def test_h200_plan_prints_intervals_and_honest_verdicts():
    r = simulate(_spec(_compile(PLAN)), series=False)
    assert r.info["profile"] == "nvidia-h200" and "serving figure" in r.info["profile_note"]
    res = r.info["residuals"]
    kernel = load_profile("nvidia-h200").entry("calibration.residuals")["value"]
    from sncc.sim.engine.run import widen_residuals

    # the kernel residuals composed with the serving uncertainty: (1 + r)(1 ± 0.4) - 1
    wide = widen_residuals({f: list(kernel[f]) for f in ("ttft", "tpot", "throughput")}, 0.4)
    for fam in ("ttft", "tpot", "throughput"):
        assert res[fam] == wide[fam]
    iv = r.intervals["tpot_ms"]
    # the 80 % interval of the mixture (the one rule, metrics.interval), well wider than the
    # kernel residuals alone
    from sncc.sim.calibration.intervals import conformal_score
    from sncc.sim.engine.metrics import interval

    assert (iv["low"], iv["high"]) == pytest.approx(interval(iv["value"], wide["tpot"]))
    assert conformal_score(wide["tpot"]) > conformal_score(kernel["tpot"]) + 0.2
    assert set(r.intervals) == {"qpm", "client_ttft_s", "ttft_s", "tpot_ms"}
    v = {s.name.split()[0]: s for s in r.slo}
    assert v["ttft.mean"].verdict == "met" and v["ttft.mean"].high < 2.0
    tp = v["tpot.mean"]
    assert tp.verdict == "uncertain" and tp.met is None and tp.low < 0.025 < tp.high
    assert v["qpm"].verdict == "missed" and v["qpm"].high < 400
    # the kernel residuals alone would call the TPOT SLO met: the widening is what keeps the
    # verdict from being overconfident
    tpot_slo = next(s for s in _compile(PLAN).plan.slo if s.metric == "tpot")
    assert evaluate_slo(r, tpot_slo, {"tpot": kernel["tpot"]}).verdict == "met"
    assert interval(tp.observed, res["tpot"]) == pytest.approx((tp.low, tp.high))


def test_sncc_simulate_on_the_h200_plan(tmp_path):
    from sncc.cli import main

    out = CliRunner().invoke(main, ["simulate", PLAN])
    assert "Traceback" not in out.output
    text = out.output
    assert "80 % calibration intervals" in text
    assert "serving_uncertainty" in text
    assert re.search(r"UNCERTAIN +tpot\.mean < 25 ms", text) and re.search(r"MISSED +qpm >= 400", text)
    assert re.search(r"met +ttft\.mean < 2 s", text)


def test_write_profile_drops_the_serving_uncertainty(tmp_path):
    """A profile refitted to measured serving points no longer carries the kernel-only widening."""
    out = tmp_path / "h200-fitted.toml"
    rows = [Row("plan ttft_s", "ttft", 1.1, 1.0), Row("plan tpot_ms", "tpot", 19.0, 20.0)]
    write_profile({"values": {"compute.eta_m": 0.85}, "rows": rows}, "nvidia-h200",
                  str(tmp_path / "meas.toml"), str(out))
    with open(out, "rb") as fh:
        doc = _toml.load(fh)
    assert "serving_uncertainty" not in doc["calibration"]
    # the kernel-only widening (serving_uncertainty, +-0.4) is folded into the residuals it
    # widened, as the base profile's floor, and then dropped: nothing is widened twice
    res = doc["calibration"]["residuals"]["value"]
    assert res["ttft"][0] == 0.1 and res["tpot"][0] == -0.05
    for fam in ("ttft", "tpot", "throughput"):
        assert -0.4 in res[fam] and 0.4 in res[fam]
    assert doc["compute"]["eta_m"]["value"] == 0.85 and "fitted" in doc["compute"]["eta_m"]
    note, m = profile_match(SimpleNamespace(chip=SimpleNamespace(id="nvidia-h200", generation="hopper")),
                            load_profile(str(out)))
    assert note is None and m == 0.0


def test_h100_with_the_h200_profile_gets_kernel_residuals_and_serving_widening():
    """Same generation: no generation widening, the H200 kernel residuals plus ±serving_uncertainty."""
    llama = '''plan "llama405" {
  model "llama-3.1-405b" { weights = "/data/llama"  quant = fp8  max_model_len = 16k }
  hardware { system = "hgx-h100"  devices = 8 }
  engine "vllm" {}
  serve { devices = 8  tp = 8  max_num_seqs = 16  chunked_prefill = 8k }
  workload { requests = 20  concurrency = 8
             input { mean = 2k  max = 8k }  output { mean = 128  max = 256 } }
  slo { tpot < 35ms }
}
'''
    comp = _compile("/tmp/llama-h100.sn", llama)
    spec = _spec(comp)
    spec = dc.replace(spec, workload=dc.replace(spec.workload, requests=20))
    r = simulate(spec, series=False)
    assert "nvidia-h100" in r.info["profile_note"] and "hopper" in r.info["profile_note"]
    from sncc.sim.engine.run import widen_residuals

    kernel = load_profile("nvidia-h200").entry("calibration.residuals")["value"]
    assert r.info["residuals"]["tpot"] == widen_residuals({"tpot": list(kernel["tpot"])}, 0.4)["tpot"]

"""`sncc calibrate` and custom `--profile` files: the problems a fresh-user test found.

1. a bad measurements file is reported as located diagnostics, every problem at once (exit 1;
   tests/sim/test_calibrate_diagnostics.py has the positions and the JSON document);
2. fitted constants are bounded (efficiencies <= 1, 1e-3x..1e3x of the base) and a fit that
   ends on a bound or misses its own data by > 2x writes nothing;
3. a point on a chip of another generation than the profile's is refused (SN2085);
4. without ``fit``, only the constants the measured metrics inform are fitted, and more
   constants than measured values is refused;
5. the written profile keeps the base's residuals of unmeasured families, floors the measured
   ones with the base's, names the measurements in ``fitted_on`` and marks the inherited
   prefill contradiction;
6. ``-o`` a directory is refused and the write leaves no temporary file;
7. a malformed profile is a ProfileError naming the file and the key (``sncc simulate`` exit 2).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from sncc.cli import main
from sncc.sim.calibration import fit as C
from sncc.cost import profile as P
from sncc.sim.calibration.fit import CalibrationError, Point, Row, write_profile
from sncc.cost.profile import ProfileError, load_profile, profile_path
from sncc.sim.engine.run import profile_match, profile_residuals

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PLAN = ROOT / "examples" / "deepseek-r1-a3-7p1d.sn"
BROKEN_PLAN = ROOT / "examples" / "broken" / "experts-not-divisible.sn"
#: the fresh-user test's H100 plan (/tmp/usertest/plans/qwen32b-h100.sn)
H100_PLAN = '''plan "qwen32b-h100" {
  model "qwen3-32b" { quant = bf16 }
  hardware { system = "hgx-h100"  nodes = 1 }
  engine "vllm" {}
  serve { instances = 4  devices = 2  tp = 2  ep = 1  max_num_seqs = 128
          max_num_batched_tokens = 8k  chunked_prefill = 8k }
  kv_cache { dtype = auto  block_size = 16 }
  workload { requests = 2000  concurrency = 256
             input { mean = 2k  max = 8k }  output { mean = 512  max = 2k } }
  slo { ttft < 1s  tpot < 40ms }
}
'''


def _meas(tmp_path: Path, body: str, name: str = "m.toml") -> Path:
    p = tmp_path / name
    p.write_text(body, encoding="utf-8")
    return p


def _calibrate(meas: Path, out: Path):
    return CliRunner().invoke(main, ["calibrate", str(meas), "-o", str(out)])


def _located(r, *codes: str) -> str:
    """The diagnostics of an exit-1 run (a measurements file with problems, nothing fitted): no
    traceback, every code in ``codes`` reported."""
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output and "internal error" not in r.output, r.output
    for code in codes:
        assert f"error[{code}]" in r.output, r.output
    return r.output


def _error_line(r) -> str:
    """The single ``sncc: error:`` line of an exit-2 run without a traceback."""
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "internal error" not in r.output, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("sncc: error: "), r.output
    return lines[0]


# ------------------------------------------------------------------ 1. measurements validation
@pytest.mark.parametrize("point, code, at, needles", [
    ('ttft_s = "fast"', "SN2081", "4:10", ["point 1", "ttft_s", '"fast"', "seconds"]),
    ("ttft_s = true", "SN2081", "4:10", ["point 1", "ttft_s", "got true"]),
    ("tpot_ms = inf", "SN2081", "4:11", ["point 1", "tpot_ms", "inf"]),
    ("qpm = 600\nfoo_ms = 3", "SN2080", "5:1", ["point 1", "`foo_ms`", "plan, ttft_s, tpot_ms, qpm, client_ttft_s",
                                                "bench_result"]),
    ("qpm = 600\nrequests = 0", "SN2081", "5:12", ["point 1", "requests", "whole number"]),
    ('qpm = 600\nrequests = "many"', "SN2081", "5:12", ["point 1", "requests", '"many"']),
])
def test_bad_point_values_are_located_errors(tmp_path, point, code, at, needles):
    meas = _meas(tmp_path, f'fit = ["compute.eta_m"]\n[[point]]\nplan = "{PLAN}"\n{point}\n')
    out = tmp_path / "o.toml"
    text = _located(_calibrate(meas, out), code)
    assert f"--> {meas}:{at}" in text
    for n in needles:
        assert n in text
    assert not out.exists()


def test_unknown_top_level_key_is_an_error(tmp_path):
    meas = _meas(tmp_path, f'profle = "ascend-a3"\n[[point]]\nplan = "{PLAN}"\ntpot_ms = 47\n')
    text = _located(_calibrate(meas, tmp_path / "o.toml"), "SN2080")
    assert "`profle`" in text and "did you mean `profile`?" in text and "profile, fit, residual_floor, point" in text


def test_missing_plan_names_the_point_not_the_output(tmp_path):
    meas = _meas(tmp_path, '[[point]]\nplan = "nope.sn"\nttft_s = 1.0\n')
    text = _located(_calibrate(meas, tmp_path / "o.toml"), "SN2084")
    assert "point 1" in text and "plan" in text and "nope.sn" in text and "not found" in text
    assert f"--> {meas}:2:8" in text and "cannot write" not in text


def test_plan_with_errors_names_the_point(tmp_path):
    meas = _meas(tmp_path, f'fit = ["compute.eta_m"]\n[[point]]\nplan = "{BROKEN_PLAN}"\nttft_s = 1.0\n')
    text = _located(_calibrate(meas, tmp_path / "o.toml"), "SN2084")
    assert "point 1" in text and "has 1 error" in text and f"run `sncc check {BROKEN_PLAN}`" in text


def test_fit_key_the_simulator_does_not_read_is_an_error(tmp_path):
    meas = _meas(tmp_path, f'fit = ["compute.eta_mm"]\n[[point]]\nplan = "{PLAN}"\ntpot_ms = 47\n')
    text = _located(_calibrate(meas, tmp_path / "o.toml"), "SN2081")
    assert "fit" in text and "`compute.eta_mm`" in text and "did you mean `compute.eta_m`?" in text
    meas = _meas(tmp_path, f'fit = ["eta"]\n[[point]]\nplan = "{PLAN}"\ntpot_ms = 47\n')
    assert "fittable: compute.eta_m," in _located(_calibrate(meas, tmp_path / "o.toml"), "SN2081")


# ------------------------------------------------------------------ 2. bounds
def test_fit_bounds():
    assert C.fit_bounds("compute.eta_m", 0.705) == pytest.approx((0.000705, 1.0))
    assert C.fit_bounds("kv_transfer.link_efficiency", 0.5) == pytest.approx((0.0005, 1.0))
    assert C.fit_bounds("memory.runtime_reserve_bytes", 13.4e9) == pytest.approx((13.4e6, 13.4e12))
    assert C.fit_bounds("overhead.prefill_step_s", 0.1) == pytest.approx((1e-4, 100.0))
    assert C.fit_bounds("moe.imbalance", 1.18)[0] == 1.0


def test_efficiency_driven_past_1_is_refused_and_nothing_written(tmp_path):
    """TPOT 5 ms needs eta_m > 1 (the shipped profile predicts ~45 ms): the fit ends on eta_m = 1."""
    meas = _meas(tmp_path, f'fit = ["compute.eta_m"]\n[[point]]\nplan = "{PLAN}"\ntpot_ms = 5\nrequests = 800\n')
    out = tmp_path / "o.toml"
    line = _error_line(_calibrate(meas, out))
    assert "compute.eta_m" in line and "upper bound" in line and "cannot exceed 1" in line
    assert not out.exists()


def test_absurd_qpm_is_refused_and_nothing_written(tmp_path):
    """The fresh-user test's qpm = 1e300 (which gave eta_m = 2784 with exit 0)."""
    meas = _meas(tmp_path, f'fit = ["compute.eta_m"]\n[[point]]\nplan = "{PLAN}"\nqpm = 1e300\nrequests = 800\n')
    out = tmp_path / "o.toml"
    line = _error_line(_calibrate(meas, out))
    assert "no profile written" in line and "qpm" in line
    assert not out.exists()


# ------------------------------------------------------------------ 3. chips
def test_point_of_another_chip_generation_is_refused(tmp_path):
    (tmp_path / "h100.sn").write_text(H100_PLAN, encoding="utf-8")
    meas = _meas(tmp_path, 'fit = ["compute.eta_m"]\n[[point]]\nplan = "h100.sn"\ntpot_ms = 30\nrequests = 200\n'
                 f'[[point]]\nplan = "{PLAN}"\ntpot_ms = 47\nrequests = 800\n')
    out = tmp_path / "o.toml"
    text = _located(_calibrate(meas, out), "SN2085")
    assert "point 1" in text and "nvidia-h100" in text and "hopper" in text and "ascend-a3" in text
    assert 'profile = "nvidia-h200"' in text and f"--> {meas}:3:8" in text
    assert not out.exists()


def test_chip_rule_follows_the_profile_calibration_lists():
    def spec(cid, gen):
        return SimpleNamespace(chip=SimpleNamespace(id=cid, generation=gen))

    a3, h200 = load_profile("ascend-a3"), load_profile("nvidia-h200")
    assert C.chip_problem(a3, spec("ascend-910c", "atlas-a3")) is None
    assert "generation" in C.chip_problem(a3, spec("ascend-910b", "atlas-a2"))
    assert C.chip_problem(h200, spec("nvidia-h100", "hopper")) is None       # same generation
    assert C.chip_problem(h200, spec("ascend-910c", "atlas-a3"))
    bare = P.Profile("custom", {})                                         # no chips/generations
    assert C.chip_problem(bare, spec("ascend-910c", "atlas-a3")) is None


# ------------------------------------------------------------------ 4. which constants
def test_default_fit_keys_follow_the_measured_metrics():
    a3 = P._load_raw("ascend-a3")
    decode = ["compute.eta_m", "compute.eta_c_attn_decode", "overhead.decode_graph_step_s"]
    assert C.default_fit_keys(a3, ["tpot_ms"]) == decode == C.default_fit_keys(a3, ["run_tpot_ms"])
    assert C.default_fit_keys(a3, ["ttft_s"]) == ["compute.eta_c_gemm_dense", "overhead.prefill_step_s"]
    assert C.default_fit_keys(a3, ["client_ttft_s"]) == C.default_fit_keys(a3, ["ttft_s"])
    # a closed loop's QPM is set by its decode steps (the KV reserve is a memory.toml fact now)
    assert C.default_fit_keys(a3, ["qpm"]) == ["compute.eta_m", "overhead.decode_graph_step_s"]
    # a constant at 0 cannot be scaled: the profiles' per-op launch time is 0
    assert "compute.op_t0_s" not in C.default_fit_keys(a3, ["tpot_ms"])


def test_underdetermined_default_fit_is_refused(tmp_path):
    meas = _meas(tmp_path, f'[[point]]\nplan = "{PLAN}"\ntpot_ms = 47\nrequests = 800\n')
    out = tmp_path / "o.toml"
    text = _located(_calibrate(meas, out), "SN2082")
    assert "underdetermined" in text and "1 measured value" in text and "3 constants" in text
    assert 'fit = ["compute.eta_m"]' in text
    assert not out.exists()
    # the library's own check, for a caller that skips the measurements check
    base, keys, points = C.load_measurements(str(meas))
    with pytest.raises(CalibrationError, match="underdetermined"):
        C.fit(base, keys, points)


def test_constant_that_moves_nothing_is_refused(tmp_path):
    """The plan has no MTP: the draft-layer cost factor cannot move its TPOT."""
    meas = _meas(tmp_path, f'fit = ["mtp.draft_layer_cost_factor"]\n[[point]]\nplan = "{PLAN}"\n'
                 'tpot_ms = 45\nrequests = 800\n')
    line = _error_line(_calibrate(meas, tmp_path / "o.toml"))
    assert "mtp.draft_layer_cost_factor moves none of the measured values" in line


# ------------------------------------------------------------------ 5. the written profile
def _fake_fit(plan: str = "plan.sn"):
    rows = [Row(f"{plan} tpot_ms", "tpot", 40.2, 40.0)]
    return {"values": {"compute.eta_m": 0.8}, "rows": rows,
            "points": [Point(str(Path("/x") / plan), {"tpot_ms": 40.0}, None, 1, "m.toml")]}


def _load(path: Path) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def test_written_profile_keeps_unmeasured_families_and_floors_measured_ones(tmp_path):
    meas = _meas(tmp_path, '[[point]]\nplan = "plan.sn"\ntpot_ms = 40\n')
    out = tmp_path / "fitted.toml"
    write_profile(_fake_fit(), "ascend-a3", str(meas), str(out))
    base = P._load_raw("ascend-a3")["calibration"]["residuals"]["value"]
    doc = _load(out)
    cal = doc["calibration"]
    res = cal["residuals"]["value"]
    for fam in ("ttft", "throughput", "prefill_throughput"):     # not measured: the base's
        assert res[fam] == base[fam]
    assert res["tpot"] == [0.005] + base["tpot"]                   # in-sample + the base's floor
    assert "in-sample" in cal["residuals"]["fitted"] and "floor" in cal["residuals"]["fitted"]
    assert "m.toml" in cal["fitted_on"]["value"] and "plan.sn tpot_ms" in cal["fitted_on"]["value"]
    assert "compute.eta_m" in cal["fitted_on"]["value"]
    assert cal["prefill_contradiction"]["value"].startswith("inherited from ascend-a3")
    assert doc["compute"]["eta_m"]["value"] == 0.8 and "in-sample" in doc["compute"]["eta_m"]["fitted"]
    # the base's leave-one-out records judge the base's constants, not these: not copied
    assert "loo" not in cal and "typical_distance" not in cal
    # the routed-load factor is derived at the fitted values (refit.derived_values)
    from sncc.sim.calibration.refit import derived_values
    want = derived_values(P._load_raw("ascend-a3"), {"compute.eta_m": 0.8})["moe.imbalance"]
    assert doc["moe"]["imbalance"]["value"] == pytest.approx(want, rel=1e-3)
    # it loads, and TTFT / QPM SLOs still get intervals
    rs = profile_residuals(load_profile(str(out)))
    assert rs["ttft"] and rs["throughput"]
    assert "IN-SAMPLE" in out.read_text()


def test_residual_floor_false_writes_the_in_sample_residuals_only(tmp_path):
    meas = _meas(tmp_path, 'residual_floor = false\n[[point]]\nplan = "plan.sn"\ntpot_ms = 40\n')
    out = tmp_path / "fitted.toml"
    write_profile(_fake_fit(), "ascend-a3", str(meas), str(out))
    res = _load(out)["calibration"]["residuals"]["value"]
    assert res["tpot"] == [0.005]
    assert res["ttft"] == P._load_raw("ascend-a3")["calibration"]["residuals"]["value"]["ttft"]


def test_h200_serving_uncertainty_is_folded_into_the_kept_residuals(tmp_path):
    meas = _meas(tmp_path, '[[point]]\nplan = "plan.sn"\ntpot_ms = 40\n')
    out = tmp_path / "h200-fitted.toml"
    write_profile(_fake_fit(), "nvidia-h200", str(meas), str(out))
    base = P._load_raw("nvidia-h200")["calibration"]
    u = base["serving_uncertainty"]["value"]
    cal = _load(out)["calibration"]
    assert "serving_uncertainty" not in cal
    assert cal["residuals"]["value"]["throughput"] == base["residuals"]["value"]["throughput"] + [-u, u]
    assert cal["residuals"]["value"]["tpot"] == [0.005] + base["residuals"]["value"]["tpot"] + [-u, u]
    # not widened twice: the written profile carries the widening in its residuals only
    note, m = profile_match(SimpleNamespace(chip=SimpleNamespace(id="nvidia-h200", generation="hopper")),
                            load_profile(str(out)))
    assert note is None and m == 0.0


def _faster_tpot(plan: Path = PLAN, requests: int = 800, factor: float = 0.9) -> float:
    """A TPOT ``factor`` x what the shipped profile predicts for ``plan`` [ms] (10 % below by
    default): a fit to it must shorten the decode step."""
    from sncc.sim.calibration.fit import _spec_of
    from sncc.sim.engine.run import simulate_spec

    r = simulate_spec(_spec_of(str(plan), "ascend-a3", requests), series=False)
    return factor * (r.saturated["tpot_ms"] if r.saturated else r.tpot_ms["mean"])


def test_relative_base_profile_and_a_real_fit_write_a_valid_profile(tmp_path, monkeypatch):
    """``profile`` is relative to the measurements file, like ``plan``; the fitted file loads."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "base.toml").write_text(Path(profile_path("ascend-a3")).read_text(encoding="utf-8"), encoding="utf-8")
    meas = _meas(sub, f'profile = "base.toml"\nfit = ["compute.eta_m"]\n[[point]]\nplan = "{PLAN}"\n'
                 f'tpot_ms = {_faster_tpot():.3f}\nrequests = 800\n')
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "fitted.toml"
    r = _calibrate(meas, out)
    assert r.exit_code == 0, r.output
    prof = load_profile(str(out))
    # a 10 % faster TPOT needs faster weight and KV reads (the per-step overhead is now ~0.15 ms)
    key = "compute.eta_m"
    assert load_profile("ascend-a3").get(key) < prof.get(key) <= 1.0
    assert prof.entry(key)["fitted"].startswith("fitted by `sncc calibrate m.toml`")


# ------------------------------------------------------------------ 6. output file
def test_output_directory_is_refused_without_leftovers(tmp_path):
    meas = _meas(tmp_path, f'fit = ["compute.eta_m"]\n[[point]]\nplan = "{PLAN}"\ntpot_ms = 40\nrequests = 800\n')
    outdir = tmp_path / "outdir"
    outdir.mkdir()
    line = _error_line(_calibrate(meas, outdir))
    assert "is a directory" in line
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_missing_output_directory_is_refused(tmp_path):
    meas = _meas(tmp_path, f'fit = ["compute.eta_m"]\n[[point]]\nplan = "{PLAN}"\ntpot_ms = 40\nrequests = 800\n')
    line = _error_line(_calibrate(meas, tmp_path / "nodir" / "o.toml"))
    assert "does not exist" in line


def test_failed_write_leaves_no_temporary_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    meas = _meas(tmp_path, '[[point]]\nplan = "plan.sn"\ntpot_ms = 40\n')
    out = tmp_path / "fitted.toml"
    out.write_text("old", encoding="utf-8")

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("sncc.sim.calibration.fit.os.replace", boom)
    with pytest.raises(CalibrationError, match="cannot write"):
        write_profile(_fake_fit(), "ascend-a3", str(meas), str(out))
    assert out.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fitted.toml", "m.toml"]


# ------------------------------------------------------------------ 7. profile validation
def _mutated(tmp_path: Path, edit, base: str = "ascend-a3") -> Path:
    import tomlkit

    doc = tomlkit.parse(Path(profile_path(base)).read_text(encoding="utf-8"))
    edit(doc)
    p = tmp_path / "bad.toml"
    p.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return p


def _set(key, value):
    def edit(doc):
        sec, name = key.split(".")
        doc[sec][name]["value"] = value
    return edit


def _del(key, field=None):
    def edit(doc):
        sec, name = key.split(".")
        if field:
            del doc[sec][name][field]
        else:
            del doc[sec][name]
    return edit


@pytest.mark.parametrize("edit, needles", [
    (_del("compute.eta_m"), ["compute.eta_m", "missing"]),
    (_set("compute.eta_m", "fast"), ["compute.eta_m", "'fast'", "(0, 1]"]),
    (_set("compute.eta_m", 0), ["compute.eta_m", "(0, 1]", "got 0"]),
    (_set("compute.eta_c_gemm_dense", 1.5), ["compute.eta_c_gemm_dense", "(0, 1]"]),
    (_set("overhead.prefill_step_s", -0.1), ["overhead.prefill_step_s", ">= 0"]),
    (_set("overhead.decode_graph_step_s", -1), ["overhead.decode_graph_step_s", ">= 0"]),
    (_set("compute.eta_vector", 0), ["compute.eta_vector", "(0, 1]"]),
    (_set("kv_transfer.layerwise", 1), ["kv_transfer.layerwise", "true or false"]),
    (_set("policy.graph_gears", "all"), ["policy.graph_gears", "max-only"]),
    (_set("moe.imbalance", 0.5), ["moe.imbalance", ">= 1"]),
    (_set("calibration.residuals", {"tpot": [-1.0]}), ["calibration.residuals", "tpot", "-1"]),
    (_del("comm.ep_low_latency"), ["comm.ep_low_latency", "ep_link_efficiency"]),
    (_set("comm.ep_normal", {"ep": [8, 16], "dispatch_GBps": [1.0], "combine_GBps": [1.0, 2.0]}),
     ["comm.ep_normal", "equal-length"]),
    (_del("compute.op_t0_s", "source"), ["compute.op_t0_s", "source"]),
])
def test_malformed_profile_is_a_profile_error_naming_file_and_key(tmp_path, edit, needles):
    bad = _mutated(tmp_path, edit)
    with pytest.raises(ProfileError) as ei:
        load_profile(str(bad))
    msg = str(ei.value)
    assert msg.startswith(f"profile {bad}: ") and "\n" not in msg
    for n in needles:
        assert n in msg


@pytest.mark.parametrize("edit, key", [
    (_del("compute.eta_m"), "compute.eta_m"),          # was KeyError
    (_set("compute.eta_m", "fast"), "compute.eta_m"),  # was TypeError
    (_set("compute.eta_m", 0), "compute.eta_m"),       # was ZeroDivisionError
])
def test_simulate_with_a_malformed_profile_exits_2(tmp_path, edit, key):
    bad = _mutated(tmp_path, edit)
    r = CliRunner().invoke(main, ["simulate", "--profile", str(bad), str(PLAN)])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "internal error" not in r.output
    errors = [ln for ln in r.output.splitlines() if ln.startswith("sncc: error:")]
    assert errors == [errors[0]] and errors[0].startswith(f"sncc: error: profile {bad}: {key}: ")


def test_shipped_profiles_are_valid():
    for pid in P.available_profiles():
        assert P.profile_problems(P._load_raw(pid)) == [], pid


def test_every_profile_key_the_simulator_reads_is_listed():
    """Static: every ``get/has/entry("section.key")`` in sncc/sim and sncc/cost (f-strings matched
    as patterns) is in CONSTANTS or OPTIONAL, so the validation cannot miss a constant a run reads."""
    known = set(P.CONSTANTS) | set(P.OPTIONAL)
    sections = {k.split(".")[0] for k in known}
    pat = re.compile(r'\.(?:get|has|entry)\(\s*(f?)"((?:%s)\.[A-Za-z_{}]+)"' % "|".join(sorted(sections)))
    found = set()
    for f in [*(ROOT / "sncc" / "sim").rglob("*.py"), *(ROOT / "sncc" / "cost").rglob("*.py")]:
        if f.name == "profile.py" or f.parent.name == "calibration":
            continue
        for is_f, key in pat.findall(f.read_text(encoding="utf-8")):
            found.add(key)
            if is_f:
                rx = re.compile(re.sub(r"\\\{[^}]*\\\}", "[a-z_]+", re.escape(key)) + "$")
                assert any(rx.match(k) for k in known), (f.name, key)
            else:
                assert key in known, (f.name, key)
    assert {"compute.eta_m", "kv_transfer.setup_s", "calibration.loo", "overhead.prefill_step_s"} <= found


def test_keys_read_in_runs_are_listed(monkeypatch):
    """Dynamic: the keys an A3 P/D run and an H200 aggregated run read are all listed."""
    from dataclasses import replace

    from sncc.sim.engine.run import simulate_spec as simulate
    from sncc.sim.calibration.scenarios import qwen3_32b_h200_spec, seed000_spec

    seen = set()
    get, has = P.Profile.get, P.Profile.has

    def tget(self, key, default=None):
        seen.add(key)
        return get(self, key, default)

    def thas(self, key):
        seen.add(key)
        return has(self, key)

    monkeypatch.setattr(P.Profile, "get", tget)
    monkeypatch.setattr(P.Profile, "has", thas)
    simulate(seed000_spec(7, requests=200), series=False)
    simulate(replace(qwen3_32b_h200_spec(requests=100)), series=False)
    assert seen and seen <= set(P.CONSTANTS) | set(P.OPTIONAL), seen - set(P.CONSTANTS) - set(P.OPTIONAL)


def test_calibrate_refits_and_simulate_uses_the_profile(tmp_path):
    meas = tmp_path / "meas.toml"
    # a faster decode than the shipped profile predicts (5 % below its TPOT)
    target = _faster_tpot(factor=0.95)
    # (the HBM efficiency: the seed's decode step is mostly weight and KV reads; its fixed per-step
    # cost is a few percent of it)
    meas.write_text(f'profile = "ascend-a3"\nfit = ["compute.eta_m"]\n'
                    f'[[point]]\nplan = "{PLAN}"\ntpot_ms = {target:.3f}\nrequests = 800\n')
    out = tmp_path / "fitted.toml"
    r = CliRunner().invoke(main, ["calibrate", str(meas), "-o", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "fitted by `sncc calibrate meas.toml`" in text
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    d = tomllib.loads(text)
    eta = d["compute"]["eta_m"]
    assert eta["value"] > load_profile("ascend-a3").get("compute.eta_m")
    assert "fitted by `sncc calibrate meas.toml`" in eta["fitted"]
    assert d["calibration"]["residuals"]["value"]["tpot"]
    r2 = CliRunner().invoke(main, ["simulate", "--format", "json", "--profile", str(out), str(PLAN)])
    assert r2.exit_code in (0, 1), r2.output
    doc = json.loads(r2.stdout)  # warnings go to stderr
    assert doc["info"]["profile"] == "fitted"
    assert abs(doc["saturated"]["tpot_ms"] / target - 1) < 0.05


def test_calibrate_bad_input_is_a_message_not_a_traceback(tmp_path):
    meas = tmp_path / "m.toml"
    meas.write_text('[[point]]\nplan = "x.sn"\n')
    r = CliRunner().invoke(main, ["calibrate", str(meas), "-o", str(tmp_path / "o.toml")])
    assert "none of ttft_s, tpot_ms, qpm" in _located(r, "SN2082", "SN2084")
    r = CliRunner().invoke(main, ["simulate", "--profile", str(tmp_path / "missing.toml"), str(PLAN)])
    assert r.exit_code == 2 and "cannot read profile" in r.output


# ------------------------------------------------------------------ vllm bench serve results
H200_PLAN = ROOT / "tests" / "fixtures" / "plans" / "qwen3-32b-h200.sn"


def _bench_json(tmp_path: Path, **over) -> Path:
    """A `vllm bench serve --save-result` file (the keys of vllm/benchmarks/serve.py's result)."""
    doc = {"date": "20260101-000000", "backend": "vllm", "model_id": "Qwen/Qwen3-32B", "num_prompts": 200,
           "request_rate": "inf", "burstiness": 1.0, "max_concurrency": None,
           "duration": 60.0, "completed": 200, "failed": 0, "total_input_tokens": 400000,
           "total_output_tokens": 100000, "request_throughput": 3.2, "request_goodput": None,
           "output_throughput": 1700.0, "total_token_throughput": 8000.0,
           "mean_ttft_ms": 180.0, "median_ttft_ms": 150.0, "std_ttft_ms": 40.0, "p99_ttft_ms": 400.0,
           "mean_tpot_ms": 14.0, "median_tpot_ms": 13.5, "std_tpot_ms": 2.0, "p99_tpot_ms": 20.0,
           "mean_itl_ms": 14.0, "median_itl_ms": 13.0, "std_itl_ms": 3.0, "p99_itl_ms": 30.0}
    doc.update(over)
    p = tmp_path / "bench-result.json"
    p.write_text(json.dumps(doc))
    return p


def test_a_vllm_bench_serve_result_is_read_as_run_level_measurements(tmp_path):
    meas = C.read_bench_result(str(_bench_json(tmp_path)), str(tmp_path), "m.toml: point 1")
    got, run = meas
    assert got == {"client_ttft_s": pytest.approx(0.18), "run_tpot_ms": 14.0, "run_qpm": pytest.approx(192.0),
                   "output_tokens_per_s": 1700.0}
    assert run["requests"] == 200 and "max_concurrency" not in run      # null: no limit


def test_calibrate_fits_a_bench_result_of_the_plan(tmp_path):
    from sncc.sim.calibration.fit import _spec_of
    from sncc.sim.engine.run import simulate_spec

    base = simulate_spec(_spec_of(str(H200_PLAN), "nvidia-h200", 200), series=False).tpot_ms["mean"]
    # the benchmark decoded 30 % slower than the H200 profile predicts
    _bench_json(tmp_path, mean_tpot_ms=1.3 * base, request_throughput=None, output_throughput=None,
                mean_ttft_ms=None)
    meas = _meas(tmp_path, f'profile = "nvidia-h200"\nfit = ["compute.eta_m"]\n'
                           f'[[point]]\nplan = "{H200_PLAN}"\nbench_result = "bench-result.json"\n')
    out = tmp_path / "fitted.toml"
    r = _calibrate(meas, out)
    assert r.exit_code == 0, r.output
    d = _load(out)
    assert d["compute"]["eta_m"]["value"] < load_profile("nvidia-h200").get("compute.eta_m")   # slower than predicted


@pytest.mark.parametrize("content,words", [
    (None, "not found"), ("not json", "not a readable JSON file"), ("[1, 2]", "not a JSON object"),
    ('{"duration": 5}', "has none of mean_ttft_ms"), ('{"mean_tpot_ms": -1}', "mean_tpot_ms must be a number > 0"),
])
def test_bad_bench_results_are_one_line_errors(tmp_path, content, words):
    if content is not None:
        (tmp_path / "bench-result.json").write_text(content)
    meas = _meas(tmp_path, f'[[point]]\nplan = "{H200_PLAN}"\nbench_result = "bench-result.json"\n')
    text = _located(_calibrate(meas, tmp_path / "o.toml"), "SN2084")
    assert "point 1: bench_result" in text and words in text and f"--> {meas}:3:16" in text
    assert not (tmp_path / "o.toml").exists()


def test_a_bench_result_of_another_load_is_refused(tmp_path):
    _bench_json(tmp_path, max_concurrency=7)
    meas = _meas(tmp_path, f'profile = "nvidia-h200"\nfit = ["compute.eta_m"]\n'
                           f'[[point]]\nplan = "{H200_PLAN}"\nbench_result = "bench-result.json"\n')
    text = _located(_calibrate(meas, tmp_path / "o.toml"), "SN2085")
    assert "ran at max_concurrency 7" in text and "workload has concurrency" in text and f"--> {meas}:5:16" in text


# ------------------------------------------------------------------ derived base profiles, missing chip facts
def _a2_plan(system: str = "atlas-800-a2", version: str = "v0.11.0") -> str:
    """The user report's Qwen3-32B plan (one A2 node, 4 instances of TP2; on ``system``)."""
    from tests_helpers import QWEN3_32B_A2

    return (QWEN3_32B_A2.replace('system = "atlas-800-a2"', f'system = "{system}"')
            .replace('version = "v0.11.0"', f'version = "{version}"'))


def test_fitted_profile_of_a_derived_base_writes_the_base_chain_out(tmp_path):
    """ascend-a2 is derived_from ascend-a3 and writes no [compute] of its own: the fitted keys
    were written into tables the file lacks (NonExistentKey, an internal error).  The written
    profile holds every constant it runs with (a2 over a3), the fitted ones replaced."""
    meas = _meas(tmp_path, '[[point]]\nplan = "plan.sn"\ntpot_ms = 40\n')
    out = tmp_path / "a2-fitted.toml"
    fake = _fake_fit()
    fake["values"] = {"compute.eta_m": 0.8, "overhead.decode_graph_step_s": 0.0002}
    write_profile(fake, "ascend-a2", str(meas), str(out))
    doc = _load(out)
    assert "derived_from" not in doc and doc["id"] == "a2-fitted"
    assert doc["compute"]["eta_m"]["value"] == 0.8 and "in-sample" in doc["compute"]["eta_m"]["fitted"]
    assert doc["overhead"]["decode_graph_step_s"]["value"] == 0.0002
    base = P._load_raw("ascend-a2")
    written = P._load_raw(str(out))
    assert written["compute"]["eta_c_gemm_dense"] == base["compute"]["eta_c_gemm_dense"]     # the a3 constant
    assert written["calibration"]["chips"] == base["calibration"]["chips"]                   # a2's own table
    assert "ascend-a2" in doc["calibration"]["fitted_on"]["value"]
    assert not out.read_text().startswith("# Calibration profile of the sncc serving simulator for Atlas A3")
    load_profile(str(out))


def test_derived_widening_of_the_base_is_folded_into_the_kept_residuals(tmp_path):
    """ascend-a2's derived_residual (+-30 %, "no serving figure of this generation fitted") was
    copied into the fitted profile, whose simulate note then said so of a profile fitted on A2
    points.  It is folded into the kept base residuals as -d/+d, like serving_uncertainty, and
    the written profile has no widening note of its own."""
    meas = _meas(tmp_path, '[[point]]\nplan = "plan.sn"\ntpot_ms = 40\n')
    out = tmp_path / "a2-fitted.toml"
    write_profile(_fake_fit(), "ascend-a2", str(meas), str(out))
    base = load_profile("ascend-a2")
    d = base.get("calibration.derived_residual")
    cal = _load(out)["calibration"]
    assert "derived_residual" not in cal
    kept = list(base.get("calibration.residuals")["throughput"])
    assert cal["residuals"]["value"]["throughput"] == kept + [-d, d]
    note, m = profile_match(SimpleNamespace(chip=SimpleNamespace(id="ascend-910b2", generation="atlas-a2")),
                            load_profile(str(out)))
    assert m == 0.0 and (note is None or "derived" not in note)


def test_calibrate_fits_a_derived_profile_end_to_end(tmp_path):
    (tmp_path / "qwen32-a2.sn").write_text(_a2_plan(), encoding="utf-8")
    meas = _meas(tmp_path, 'profile = "ascend-a2"\nfit = ["compute.eta_m", "overhead.decode_graph_step_s"]\n'
                           '[[point]]\nplan = "qwen32-a2.sn"\ntpot_ms = 45\nqpm = 300\nrequests = 500\n')
    out = tmp_path / "prof.toml"
    r = _calibrate(meas, out)
    assert r.exit_code == 0, r.output
    assert "internal error" not in r.output and "fitted 2 constants of profile ascend-a2" in r.output
    r = CliRunner().invoke(main, ["simulate", "--profile", str(out), str(tmp_path / "qwen32-a2.sn")])
    assert r.exit_code in (0, 1) and "internal error" not in r.output and "profile prof" in r.output, r.output


def test_a_point_on_a_chip_without_catalog_facts_is_sn4080_at_its_plan(tmp_path):
    """`sncc simulate` reports the 950 plan's missing HBM bandwidth as SN4080 at its hardware
    block; calibrate reports the same diagnostic there (was: an internal error, then SN2084),
    with the point's `plan` as related location."""
    plan = tmp_path / "p950.sn"
    plan.write_text(_a2_plan("atlas-950-superpod", "v0.23.0"), encoding="utf-8")
    meas = _meas(tmp_path, 'profile = "ascend-950"\nfit = ["compute.eta_m"]\n[[point]]\nplan = "p950.sn"\n'
                           'tpot_ms = 45\n')
    text = _located(_calibrate(meas, tmp_path / "o.toml"), "SN4080")
    assert "SN2084" not in text and "cannot simulate chip `ascend-950dt`" in text
    assert f"--> {plan}:3:3" in text and f"::: {meas}:4:8" in text and "point 1's plan" in text
    assert not (tmp_path / "o.toml").exists()
    sim = CliRunner().invoke(main, ["simulate", str(plan)])
    assert "error[SN4080]: cannot simulate chip `ascend-950dt`" in sim.output

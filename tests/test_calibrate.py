"""`sncc calibrate` and `sncc simulate --profile`: a refit moves a constant toward the data."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sncc.cli import main

ROOT = Path(__file__).resolve().parents[1]
PLAN = ROOT / "examples" / "deepseek-r1-a3-7p1d.sn"


def test_calibrate_refits_and_simulate_uses_the_profile(tmp_path):
    meas = tmp_path / "meas.toml"
    # a faster decode than the shipped profile predicts (TPOT 40 ms instead of ~46 ms)
    meas.write_text(f'profile = "ascend-a3"\nfit = ["compute.eta_m"]\n'
                    f'[[point]]\nplan = "{PLAN}"\ntpot_ms = 40.0\nrequests = 800\n')
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
    assert d["compute"]["eta_m"]["value"] > 0.634
    assert "fitted" in d["compute"]["eta_m"] and "source" not in d["compute"]["eta_m"]
    assert d["calibration"]["residuals"]["value"]["tpot"]
    r2 = CliRunner().invoke(main, ["simulate", "--format", "json", "--profile", str(out), str(PLAN)])
    assert r2.exit_code in (0, 1), r2.output
    doc = json.loads(r2.stdout)  # warnings go to stderr
    assert doc["info"]["profile"] == "fitted"
    assert abs(doc["saturated"]["tpot_ms"] / 40.0 - 1) < 0.05


def test_calibrate_bad_input_is_a_message_not_a_traceback(tmp_path):
    meas = tmp_path / "m.toml"
    meas.write_text('[[point]]\nplan = "x.sn"\n')
    r = CliRunner().invoke(main, ["calibrate", str(meas), "-o", str(tmp_path / "o.toml")])
    assert r.exit_code == 2 and "none of ttft_s, tpot_ms, qpm" in r.output
    r = CliRunner().invoke(main, ["simulate", "--profile", str(tmp_path / "missing.toml"), str(PLAN)])
    assert r.exit_code == 2 and "cannot read profile" in r.output

"""The calibration interval of the goodput figure (issue 3): definition, soundness against the
SLO intervals, text and JSON output."""
from __future__ import annotations

import dataclasses
import json
import re

import pytest

from sncc.sim import simulate
from sncc.sim.engine.metrics import evaluate_slo, interval
from sncc.cost.profile import load_profile
from sncc.sim.engine.run import profile_residuals
from sncc.sim.report.text import render_json, render_text
from sncc.sim.calibration.scenarios import qwen3_32b_h200_spec, seed000_spec
from sncc.sim.spec import SloTarget
from sncc.sim.whatif import _at_rate, _shifted, goodput

N = 1200


@pytest.fixture(scope="module")
def seed_goodput():
    spec = seed000_spec(7, requests=N)
    return spec, goodput(spec, requests=N)


def test_shifted_targets_follow_the_slo_interval_ends():
    """Each target moves to where the prediction's interval end (metrics.interval) meets it."""
    rs = {"ttft": [-0.4, 0.1, 0.2, -0.1, 0.05], "tpot": [0.05]}
    slos = [SloTarget("ttft", "mean", "<", 2.0), SloTarget("tpot", "p90", "<=", 0.05),
            SloTarget("e2e", "p99", ">", 10.0)]
    low = _shifted(slos, rs, "low")
    high = _shifted(slos, rs, "high")
    a_t, b_t = interval(1.0, rs["ttft"])
    a_p, b_p = interval(1.0, rs["tpot"])
    assert a_t < 1.0 < b_t
    assert [s.target for s in low] == pytest.approx([2.0 / b_t, 0.05 / b_p, 10.0 / a_p])
    assert [s.target for s in high] == pytest.approx([2.0 / a_t, 0.05 / a_p, 10.0 / b_p])
    assert _shifted(slos, {}, "low") == slos


def _plan_residuals(spec):
    """The residuals the simulator gives ``spec``'s intervals (its leave-one-out regime)."""
    return simulate(spec, series=False).info["residuals"]


def test_goodput_interval_brackets_the_rate_and_uses_the_residuals(seed_goodput):
    spec, g = seed_goodput
    rsd = _plan_residuals(spec)
    assert 0 <= g["low"] <= g["rate"] <= g["high"]
    # the pessimistic ends tighten the binding targets: the low bound is below the rate
    assert g["low"] < 0.9 * g["rate"] and g["high"] > g["rate"]
    assert g["low_qpm"] == pytest.approx(60 * g["low"]) and g["high_qpm"] == pytest.approx(60 * g["high"])
    iv = g["interval"]
    assert iv["targets_low"]["ttft.mean < 2 s"] == pytest.approx(2.0 / interval(1.0, rsd["ttft"])[1])
    assert iv["targets_high"]["tpot.mean < 50 ms"] == pytest.approx(0.05 / interval(1.0, rsd["tpot"])[0])
    assert (iv["rate_scale_low"], iv["rate_scale_high"]) == pytest.approx(interval(1.0, rsd["throughput"]))
    # trials shared between the three searches are simulated once
    assert g["runs"] < 3 * len(g["trials"])


def test_low_bound_meets_every_slo_at_the_pessimistic_interval_end(seed_goodput):
    """At the simulated rate behind ``low`` the pessimistic end of every SLO interval
    (:func:`sncc.sim.engine.metrics.evaluate_slo` with the profile's residuals) meets its target."""
    spec, g = seed_goodput
    rsd = _plan_residuals(spec)
    if g["low"] > 0:
        sim_rate = g["low"] / g["interval"]["rate_scale_low"]
        res = simulate(_at_rate(spec, sim_rate, N), series=False)
        for s in spec.slos:
            v = evaluate_slo(res, s, rsd, client_ttft=True)
            assert v.high < s.target, v
    else:
        # a zero low bound is earned: at the search's floor rate an SLO's pessimistic end misses
        from sncc.sim.whatif import MIN_RATE_DIVISOR

        res = simulate(_at_rate(spec, 0.25 / MIN_RATE_DIVISOR, N), series=False)
        assert any(evaluate_slo(res, s, rsd, client_ttft=True).high >= s.target for s in spec.slos)
    # and the nominal goodput's SLOs are not all met at their pessimistic ends
    res = simulate(_at_rate(spec, g["rate"], N), series=False)
    assert any(evaluate_slo(res, s, rsd, client_ttft=True).high >= s.target for s in spec.slos)


def test_wider_residuals_widen_the_interval(seed_goodput, monkeypatch):
    """Widening every family by -10 % and +10 % (:func:`sncc.cost.inputs.profile_match`,
    as for another chip generation) keeps the simulation, so the interval must widen."""
    spec, g = seed_goodput
    from sncc.sim.engine import run as runner

    rsd = _plan_residuals(spec)
    monkeypatch.setattr(runner, "profile_match", lambda spec, prof: ("widened", 0.1))
    go = goodput(spec, requests=N)
    assert go["rate"] == g["rate"]
    from sncc.sim.engine.run import widen_residuals

    wide = widen_residuals(rsd, 0.1)          # each residual composed with a further -10 % / +10 %
    assert go["interval"]["targets_low"]["tpot.mean < 50 ms"] == pytest.approx(0.05 / interval(1.0, wide["tpot"])[1])
    assert go["interval"]["rate_scale_low"] == pytest.approx(interval(1.0, wide["throughput"])[0])
    assert go["low"] <= g["low"] and go["high"] > g["high"]
    assert go["high"] - go["low"] > g["high"] - g["low"]


def test_a_failing_start_stops_at_the_rate_floor(monkeypatch):
    """Targets no rate can meet: the search stops once its bracket is below
    start / MIN_RATE_DIVISOR (0.0) instead of simulating ever lower rates."""
    from sncc.sim import whatif

    calls = []
    rate, binding, _ = whatif._search(lambda r: (calls.append(r) or False, ["x"]), 0.25, 0.02, 24)
    assert rate == 0.0 and binding == ["x"]
    assert min(calls) >= 0.25 / whatif.MIN_RATE_DIVISOR and len(calls) == 5
    # a rate that passes below the start is still found
    rate, _, _ = whatif._search(lambda r: (r <= 0.07, []), 0.25, 0.02, 24)
    assert 0.07 * 0.98 <= rate <= 0.07


def test_goodput_interval_in_text_and_json(seed_goodput):
    spec, g = seed_goodput
    r = simulate(spec, series=False)

    class _Plan:
        name = "seed 000 7P1D"
    text = render_text(r, _Plan(), {"goodput": g})
    m = re.search(r"goodput: ([\d.]+) req/s \(interval ([\d.]+) to ([\d.]+)\)", text)
    assert m, text
    lo, rate, hi = float(m.group(2)), float(m.group(1)), float(m.group(3))
    assert lo <= rate <= hi and lo == pytest.approx(g["low"], rel=5e-3)
    doc = json.loads(render_json(r, {"goodput": g}))
    assert doc["goodput"]["low"] == pytest.approx(g["low"]) and doc["goodput"]["high"] == pytest.approx(g["high"])
    from sncc.emit.validate import validate_instance

    assert validate_instance("simulate.json", doc, "simulate") == []
    bad = json.loads(json.dumps(doc))
    bad["goodput"]["low"] = "fast"
    assert validate_instance("simulate.json", bad, "simulate")


def test_no_residuals_no_interval(tmp_path):
    """A profile recording no calibration residuals (a copy of nvidia-h200 without them):
    the bounds are None and the text prints no interval."""
    import tomlkit

    from sncc.cost.profile import profile_path

    with open(profile_path("nvidia-h200"), encoding="utf-8") as fh:
        doc = tomlkit.parse(fh.read())
    for key in ("residuals", "serving_uncertainty"):
        doc["calibration"].pop(key, None)
    path = tmp_path / "no-residuals.toml"
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    spec = dataclasses.replace(qwen3_32b_h200_spec(requests=200), profile=str(path))
    assert not profile_residuals(load_profile(spec.profile))
    g = goodput(spec, requests=200, max_runs=8)
    assert g["low"] is None and g["high"] is None and "interval" not in g
    r = simulate(spec, series=False)

    class _Plan:
        name = "qwen3"
    text = render_text(r, _Plan(), {"goodput": g})
    assert "goodput:" in text and "(interval" not in text
    from sncc.emit.validate import validate_instance

    assert validate_instance("simulate.json", json.loads(render_json(r, {"goodput": g})), "simulate") == []

"""The calibration manifest (tests/calibration/calibration.toml) as the fit reads it."""
from __future__ import annotations

import os

import pytest

from sncc.sim.calibration.points import ManifestError, load_manifest

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "..", "calibration", "calibration.toml")


def test_client_rate_rows_run_the_published_rate_under_their_concurrency():
    """sglang bench_serving --request-rate with --max-concurrency (the SGLang best-practice page's
    commands): R1 PD 2K-2K and Qwen3-480B PD at 8 req/s, Qwen3-480B 16-card mixed at 20."""
    points, _ = load_manifest(MANIFEST)
    wl = {p.id: p.spec.workload for p in points if p.spec is not None}
    assert (wl["sglang-r1-w4a8-16c-pd-2k2k"].rate, wl["sglang-r1-w4a8-16c-pd-2k2k"].concurrency) == (8.0, 400)
    assert (wl["sglang-qwen3-480b-w8a8-24c-pd-3.5k1.5k"].rate, wl["sglang-qwen3-480b-w8a8-24c-pd-3.5k1.5k"].concurrency) == (8.0, 410)
    assert wl["sglang-qwen3-480b-w8a8-16c-mixed-3.5k1.5k"].rate == 20.0
    # the rows whose command has no --request-rate stay plain closed loops
    assert wl["sglang-r1-w4a8-8c-mixed-2k2k"].rate is None


def test_a_client_rate_needs_a_closed_loop_plan(tmp_path):
    plan = os.path.join(HERE, "..", "calibration", "sglang-r1-w4a8-a3-8c-mixed-2k2k.sn")
    bad = tmp_path / "m.toml"
    bad.write_text(f'[[point]]\nid = "x"\nplan = "{plan}"\nclient_rate = 0\ntpot_ms = 50\n')
    with pytest.raises(ManifestError, match="client_rate"):
        load_manifest(str(bad))


def test_a_trial_that_cannot_admit_a_request_is_far_off_not_a_crash():
    # a fit may try a reserve that leaves one request no room (Unadmittable): the point then
    # predicts throughputs far low and latencies far high (sncc calibrate's UNSERVABLE_RESIDUAL)
    import dataclasses as dc
    import math

    from sncc.sim.calibration.fit import UNSERVABLE_RESIDUAL

    from sncc.sim.calibration.points import Point, predict
    from sncc.sim.calibration.scenarios import seed000_spec

    spec = seed000_spec(7, requests=20)
    spec = dc.replace(spec, workload=dc.replace(spec.workload, max_tokens=10_000_000))
    p = Point(id="x", group="g", role="fit", window="steady", measured={"qpm": 600.0, "tpot_ms": 47.0}, spec=spec)
    got = predict(p, "ascend-a3")
    off = math.exp(UNSERVABLE_RESIDUAL)
    assert got == {"qpm": pytest.approx(600.0 / off), "tpot_ms": pytest.approx(47.0 * off)}

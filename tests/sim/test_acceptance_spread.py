"""Speculative acceptance differs between requests (sncc.sim.workload.request_tokens_per_step):
each request decodes at its own tokens per step, so a run that starts all its requests at once ends
on the request that accepts least, while the mean TPOT barely moves."""
from __future__ import annotations

import dataclasses as dc
import statistics

import pytest

from sncc.facts.speculative import expected_tokens
from sncc.sim.calibration.scenarios import seed000_spec
from sncc.sim.engine.des import Simulation
from sncc.sim.engine.run import prepare
from sncc.sim.spec import LengthDist
from sncc.sim.workload import mean_request_tokens_per_step, request_tokens_per_step


def test_no_speculation_or_no_spread_gives_one_value():
    assert request_tokens_per_step(None, 3, 0.5, 0) == [1.0, 1.0, 1.0]
    assert request_tokens_per_step((3, 0.7), 4, 0.0, 0) == [pytest.approx(expected_tokens(0.7, 3))] * 4
    assert request_tokens_per_step((2, 1.0), 2, 0.5, 0) == [3.0, 3.0]


def test_spread_is_centred_on_the_plan_acceptance_and_grows_with_the_sd():
    e = expected_tokens(0.7, 3)
    narrow = request_tokens_per_step((3, 0.7), 2000, 0.2, 1)
    wide = request_tokens_per_step((3, 0.7), 2000, 0.8, 1)
    # the plan's acceptance is the median request's
    assert statistics.median(narrow) == pytest.approx(e, rel=0.01)
    assert statistics.median(wide) == pytest.approx(e, rel=0.03)
    assert statistics.pstdev(wide) > 3 * statistics.pstdev(narrow) > 0
    assert all(1.0 < t < 4.0 for t in wide)        # between no draft accepted and all 3 accepted
    # stratified quantiles: 16 requests hold the same spread as 2,000 (a short run is not luckier)
    few = request_tokens_per_step((3, 0.7), 16, 0.8, 1)
    assert statistics.median(few) == pytest.approx(e, rel=0.03)
    assert len(few) / sum(1 / t for t in few) == pytest.approx(len(wide) / sum(1 / t for t in wide), rel=0.03)
    assert request_tokens_per_step((3, 0.7), 1, 0.8, 1) == [pytest.approx(e)]     # one request: the median
    # fixed per seed: the same seed repeats, another seed deals the same values to other requests,
    # and the values move smoothly with the sd
    other = request_tokens_per_step((3, 0.7), 50, 0.5, 8)
    assert sorted(other) == sorted(request_tokens_per_step((3, 0.7), 50, 0.5, 7)) != other
    assert request_tokens_per_step((3, 0.7), 50, 0.5, 7) == request_tokens_per_step((3, 0.7), 50, 0.5, 7)
    a, b = request_tokens_per_step((3, 0.7), 50, 0.5, 7), request_tokens_per_step((3, 0.7), 50, 0.501, 7)
    assert max(abs(x - y) for x, y in zip(a, b)) < 0.01


def _one_wave(sd: float):
    """Seed 000's deployment with MTP 3 drafts, 96 requests of 2,048 + 512 tokens all started at
    once (one wave)."""
    base = seed000_spec(7, requests=96, concurrency=96)
    wl = dc.replace(base.workload, input=LengthDist("fixed", mean=2048, max=2048),
                    output=LengthDist("fixed", mean=512, max=512), max_tokens=512)
    spec = dc.replace(base, workload=wl, features=dc.replace(base.features, mtp=(3, 0.7)))
    c = prepare(spec)
    c.tokens_per_step = request_tokens_per_step((3, 0.7), len(c.prompts), sd, spec.workload.seed)
    R = Simulation(spec, c).run()["reqs"]
    tpot = [(d - f) / (o - 1) for d, f, o in zip(R.t_done, R.t_first, R.out) if o > 1]
    return R, c.tokens_per_step, max(R.t_done), statistics.mean(tpot), tpot


def test_a_one_wave_run_ends_on_its_least_accepting_request():
    _, _, end0, tpot0, spread0 = _one_wave(0.0)
    R, tps, end, tpot, spread = _one_wave(0.6)
    assert end > 1.1 * end0                          # the slowest request sets the end of the run
    assert tpot == pytest.approx(tpot0, rel=0.15)     # the mean TPOT moves far less
    assert statistics.pstdev(spread) > 3 * statistics.pstdev(spread0)
    # the request that accepts least decodes longest, the one that accepts most shortest
    decode = [d - f for d, f in zip(R.t_done, R.t_first)]
    worst = min(range(len(tps)), key=lambda i: tps[i])
    best = max(range(len(tps)), key=lambda i: tps[i])
    assert decode[worst] == max(decode) and decode[best] == min(decode)


def test_the_screen_prices_the_mean_request_with_the_harmonic_mean(monkeypatch):
    """The analytic screen's (and the search pricing's) TPOT is the step time over the harmonic mean
    of the requests' tokens per step: the mean request's (output - 1) x mean(1 / tps_i) steps, as the
    event simulation runs."""
    from sncc.sim.engine import run as run_mod
    from sncc.sim.engine.screen import screen

    base = seed000_spec(7, requests=400)
    spec = dc.replace(base, features=dc.replace(base.features, mtp=(3, 0.7)))
    tpot = {}
    for sd in (0.0, 0.8):
        monkeypatch.setattr(run_mod, "request_tokens_per_step",
                            lambda mtp, n, _sd, seed, sd=sd: request_tokens_per_step(mtp, n, sd, seed))
        tpot[sd] = screen(spec).tpot_ms
    own = request_tokens_per_step((3, 0.7), 400, 0.8, spec.workload.seed)
    harmonic = mean_request_tokens_per_step(own, 0.0)
    assert mean_request_tokens_per_step([1.0, 3.0], 9.0) == pytest.approx(1.5)   # 2 / (1 + 1/3)
    assert mean_request_tokens_per_step(None, 2.5) == 2.5 == mean_request_tokens_per_step([], 2.5)
    assert harmonic < expected_tokens(0.7, 3)
    assert tpot[0.8] > tpot[0.0]


def test_every_profile_carries_the_fitted_spread():
    """The spread is a property of the text, not of the chip: the H200 profile (no speculative
    calibration point) states the A3 fit's value, and a refit that moves it must move both."""
    from sncc.cost.profile import load_profile

    key = "workload.acceptance_logit_sd"
    a3 = load_profile("ascend-a3").get(key)
    assert a3 > 0
    for other in ("nvidia-h200", "ascend-a2", "ascend-950"):
        assert load_profile(other).get(key) == a3, other

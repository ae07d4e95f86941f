"""The shipped search spaces (examples/search/): what issue 12's "done when" asks of them (the
seed's 7P1D ranks near the top, the best layouts meet the SLOs, every written plan checks and
builds), and the analytic screen against the event simulation on the search's own candidates
(issue 12: the screen must agree where it ranks).  Every candidate a search re-runs in the event simulator carries
the screen's figures beside the simulation's; over the three shipped spaces (the seed's A3
11 nodes, 64 x H200 DeepSeek-V3, one H200 node of Qwen3-32B) that is > 20 plans, aggregated and
disaggregated.

Measured (report in the search README): QPM agrees within 0.9-1.4x on disaggregated and 0.9-1.6x
on aggregated plans that reach a steady state; TPOT within 1.0-1.8x; the rank order of QPM agrees
(Spearman >= 0.8).  TTFT does not: the screen's aggregated TTFT omits the wait in the engine
queue of a closed loop with more clients than slots (0.06-0.3x of the simulation's on 64 x H200):
that case is the xfail below, which turns into a pass when the screen models the queue.
"""
from __future__ import annotations

import pytest

from expect import ROOT, compile_text
from sncc.search.run import search

SPACES = ("examples/search/deepseek-r1-a3-11-nodes.sn", "examples/search/deepseek-v3-h200-64.sn",
          "tests/search/small_space.sn")


def _rank(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    for k, i in enumerate(order):
        r[i] = float(k)
    return r


def _spearman(a, b):
    ra, rb = _rank(a), _rank(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb)


@pytest.fixture(scope="module")
def results():
    out = {}
    for path in SPACES:
        comp = compile_text((ROOT / path).read_text(), str(ROOT / path))
        out[path] = (comp, search(comp.plan, comp.facts))
    return out


@pytest.fixture(scope="module")
def rows(results):
    out = []
    for path, (comp, res) in results.items():
        n = min(comp.plan.workload.requests, 3000)
        for r in res.ranked:
            if r.source == "simulate":
                # a closed loop reaches its steady state only with a few times the slots in requests
                steady = r.metrics["screen"]["decode_slots"] * 1.5 <= n
                out.append((path, r, steady))
    return out


def test_more_than_twenty_simulated_candidates_of_both_modes(rows):
    assert len(rows) >= 20
    modes = [r.candidate.mode for _, r, _ in rows]
    assert modes.count("aggregated") >= 5 and modes.count("disaggregated") >= 10


def test_qpm_and_tpot_agree_on_steady_candidates(rows):
    steady = [(p, r) for p, r, ok in rows if ok]
    assert len(steady) >= 20
    for p, r in steady:
        sc, m = r.metrics["screen"], r.metrics
        q = sc["qpm"] / m["qpm"]
        t = sc["tpot_ms"] / m["tpot_ms"]["mean"]
        assert 0.85 <= q <= 1.65, (p, r.candidate.label(), q)
        assert 0.75 <= t <= 1.8, (p, r.candidate.label(), t)


def test_the_screen_orders_candidates_as_the_simulation_does(rows):
    steady = [r for _, r, ok in rows if ok]
    rho = _spearman([r.metrics["screen"]["qpm"] for r in steady], [r.metrics["qpm"] for r in steady])
    assert rho >= 0.8, rho


@pytest.mark.xfail(strict=True, reason="the screen's aggregated TTFT omits the engine queue of a saturated closed loop")
def test_ttft_agrees_within_a_factor_two(rows):
    for p, r, ok in rows:
        if ok:
            ratio = r.metrics["screen"]["ttft_s"] / r.metrics["ttft_s"]["mean"]
            assert 0.5 <= ratio <= 2.0, (p, r.candidate.label(), ratio)


def test_the_seeds_7p1d_ranks_near_the_top_of_its_11_nodes(results):
    comp, res = results["examples/search/deepseek-r1-a3-11-nodes.sn"]
    assert res.base.label() == "P 7×tp8 dp2 ep + D 1×tp1 dp64 ep b48"
    # the seed's own layout is event-simulated and ranks in the upper half (its TTFT is met; its TPOT
    # interval straddles the target).  Prefill runs at CloudMatrix-Infer's measured rate (issue 11's
    # decision), at which 7 prefill instances are more than the seed's load needs: the best layouts
    # move devices from prefill to decode, so layouts with fewer prefill instances rank above it
    base = next(r for r in res.ranked if r.candidate.key() == res.base.key())
    assert base.source == "simulate" and res.rank_of(res.base) <= len(res.ranked) // 2
    assert dict(base.slo)["engine_ttft < 2 s"] == "met"
    best = res.ranked[0]
    assert best.status in ("met", "uncertain") and best.candidate.devices <= 176
    prefill = {c.layout.role: c.instances for c in best.candidate.roles}["prefill"]
    assert prefill < 7 and best.metrics["tokens_per_s_per_device"] > base.metrics["tokens_per_s_per_device"]


def test_the_h200_search_finds_met_layouts_of_both_modes(results):
    comp, res = results["examples/search/deepseek-v3-h200-64.sn"]
    for mode in ("aggregated", "disaggregated"):
        best = next(r for r in res.ranked if r.candidate.mode == mode)
        assert best.status == "met" and best.source == "simulate", mode
        assert best.candidate.devices <= 64
    assert res.ranked[0].candidate.mode == "disaggregated"


@pytest.mark.parametrize("path", SPACES[:2])
def test_every_written_plan_checks_and_builds(results, path, tmp_path):
    from click.testing import CliRunner

    from sncc.cli import main
    from sncc.search.write import write_best

    comp, res = results[path]
    best = [r for r in res.ranked if r.source == "simulate"][: res.space.top]
    files = write_best(comp, best, str(tmp_path / "best"), bool(comp.facts.is_moe))   # verifies each
    assert len(files) == res.space.top
    r = CliRunner().invoke(main, ["build", files[0], "-o", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output

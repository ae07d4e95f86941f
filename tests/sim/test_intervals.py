"""The shipped interval rule (sncc.sim.calibration.intervals): split-conformal half-widths over
the plan's leave-one-out regime, the family and regime fallbacks, the distance widening with its
nearest-point note, and the shipped ascend-a3 records' own out-of-sample coverage."""
from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest

from sncc.cost.profile import load_profile
from sncc.sim.calibration import intervals as I

FEATS = I.PlanFeatures(vendor="ascend", disaggregated=True, moe=True, active_params_b=37.0, devices=64,
                       input_tokens=3584.0, output_tokens=1229.0, batch_per_device=48.0, weight_bits=8.0,
                       speculative=False)


def _rec(i, family, residual, group=None, **feats):
    return {"id": f"p{i}", "group": group or f"g{i}", "metric": family, "family": family,
            "residual": residual, "features": replace(FEATS, **feats).to_dict()}


def test_conformal_rank_and_errors():
    rs = [0.1, -0.2, 0.3, -0.05, 0.5, 0.02, -0.4, 0.15, 0.25]
    scores = sorted(abs(math.log1p(r)) for r in rs)
    assert I.conformal_score(rs) == pytest.approx(scores[math.ceil(10 * 0.8) - 1])
    # fewer residuals than the rank needs: the largest score
    assert I.conformal_score([0.1, -0.3]) == pytest.approx(abs(math.log(0.7)))
    assert I.conformal_score([]) == 0.0 and I.residual_interval(5.0, []) == (5.0, 5.0)
    lo, hi = I.residual_interval(10.0, rs)
    assert lo < 10.0 < hi and lo * hi == pytest.approx(100.0)          # symmetric in log space
    with pytest.raises(ValueError):
        I.conformal_score([0.1, -1.0])


def test_conformal_intervals_cover_exchangeable_residuals():
    """With residuals drawn from one distribution, a new residual falls inside the interval built
    on the others at least 80 % of the time (the split-conformal guarantee), for small n too."""
    rnd = random.Random(7)
    for n in (6, 12, 30):
        hits = trials = 0
        for _ in range(1500):
            draws = [math.expm1(rnd.gauss(0.1, 0.3)) for _ in range(n + 1)]
            lo, hi = I.residual_interval(1.0 + draws[-1], draws[:-1])
            hits += lo <= 1.0 <= hi
            trials += 1
        assert hits / trials >= 0.77, (n, hits / trials)


def test_regime_fallback_and_family_borrowing():
    recs = [_rec(i, "tpot", 0.1 * (i % 3), moe=False) for i in range(3)]
    recs += [_rec(10 + i, "tpot", -0.2, disaggregated=False) for i in range(6)]
    recs += [_rec(20 + i, "throughput", 0.3) for i in range(6)]
    # 3 dense TPOT residuals are too few: dense/MoE dropped first, then aggregated/disaggregated
    sel = I.select_residuals(recs, "tpot", replace(FEATS, moe=False), typical=0.0)
    assert sel.regime == {"vendor": "ascend"} and len(sel.values) == 9
    # no TTFT residual at all: every family's, in the plan's regime (the 6 throughput ones)
    sel = I.select_residuals(recs, "ttft", FEATS, typical=0.0)
    assert sorted(sel.values) == [0.3] * 6 and "all families" in sel.note
    # a left-out group's records are not used, and not named as nearest
    sel = I.select_residuals(recs, "throughput", FEATS, typical=0.0, exclude_group="g20")
    assert len(sel.values) >= I.MIN_POINTS and sel.nearest != "p20"


def test_a_far_plan_gets_a_wider_interval_and_names_the_nearest_point():
    recs = [_rec(i, "tpot", r) for i, r in enumerate((0.1, -0.1, 0.2, -0.15, 0.05, 0.12))]
    near = I.select_residuals(recs, "tpot", FEATS, typical=1.0)
    far_feats = replace(FEATS, input_tokens=131072.0, devices=4, active_params_b=3.0)
    far = I.select_residuals(recs, "tpot", far_feats, typical=1.0)
    assert near.scale == 1.0 and far.scale > 3.0
    assert far.nearest == "p0" and "nearest calibration point p0" in far.note and "widened" in far.note
    assert I.conformal_score(far.values) > 2.5 * I.conformal_score(near.values)


def test_shipped_records_cover_themselves_out_of_sample():
    """Every shipped leave-one-out record, given the interval the rule builds from the other
    groups' records (as bench/calibration.py prints it), is covered at the 75 % target."""
    prof = load_profile("ascend-a3")
    recs = prof.entry("calibration.loo")["value"]
    typical = float(prof.get("calibration.typical_distance"))
    assert len(recs) >= 30 and {r["family"] for r in recs} >= {"tpot", "throughput"}
    hits = 0
    for r in recs:
        sel = I.select_residuals(recs, r["family"], I.PlanFeatures(**r["features"]), typical=typical,
                                 exclude_group=r["group"])
        lo, hi = I.residual_interval(1.0 + r["residual"], sel.values)
        hits += lo <= 1.0 <= hi
    assert hits / len(recs) >= 0.75, f"{hits}/{len(recs)}"


def test_seed000_report_names_its_regime_and_nearest_point():
    from sncc.sim import simulate
    from sncc.sim.calibration.scenarios import seed000_spec

    r = simulate(seed000_spec(7, requests=200), series=False)
    note = r.info["interval_note"]
    assert "leave-one-out residuals (vendor ascend, disaggregated yes" in note
    assert "nearest calibration point seed000-7p1d" in note

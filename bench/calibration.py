"""The calibration residual table: every published row of the calibration set, predicted in-sample
and leave-one-out, with the 80 % interval and whether it covers the measured value.

Usage::

    python bench/calibration.py            # the shipped ascend-a3 profile: in-sample + leave-one-out
    python bench/calibration.py --refit    # refit the constants first (in-sample), then cross-validate
    python bench/calibration.py --refit --write   # ... and write them, with the leave-one-out
                                                  # residual records, into the shipped profile

Rows: ``tests/calibration/calibration.toml`` (the plans beside it, seed 000's example plans and the
CloudMatrix-Infer scenarios).  *In-sample*: predicted by the shipped profile (or the refit).
*Leave-one-out*: each group of rows (a source family whose rows would leak each other) predicted
by the constants refitted without it, starting from the in-sample fit.  The interval of a row is
the shipped rule (:mod:`sncc.sim.calibration.intervals`) over the leave-one-out residuals of the
*other* groups, so the printed coverage is itself out of sample.

The Omni-Infer decode runtime reserve (``sncc/catalog/data/memory.toml``) is fitted with the timing
constants on seed 000's 7P1D QPM, the only point of that engine; its fold keeps it (the row is
marked), every other constant is refitted without it.

Runs for several minutes on two cores (``--workers 2``, the default, forks two processes).
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from dataclasses import replace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from sncc.cost import profile as P  # noqa: E402
from sncc.sim.calibration import intervals as I  # noqa: E402
from sncc.sim.calibration import refit as R  # noqa: E402
from sncc.sim.calibration.points import METRIC_FAMILY, load_manifest  # noqa: E402

MANIFEST = os.path.join(ROOT, "tests", "calibration", "calibration.toml")
PROFILE = "ascend-a3"

#: the Omni-Infer decode runtime reserve [B] (memory.toml), fitted with the profile constants
RESERVE = "reserve.omni-infer.decode"
#: constants fitted to the calibration set, with their bounds (efficiencies in (0, 1])
FIT = {
    "compute.eta_m": (0.2, 1.0),
    "compute.eta_c_gemm_dense": (0.1, 1.0),
    "compute.eta_c_gemm_grouped": (0.05, 1.0),
    "compute.eta_c_attn_prefill": (0.05, 1.0),
    "compute.eta_c_attn_decode": (0.05, 1.0),
    "compute.eta_c_indexer": (0.01, 1.0),
    "compute.eta_vector": (0.01, 1.0),
    "compute.dequant_s_per_weight_element": (1e-16, 1e-11),
    "overhead.decode_graph_step_s": (1e-4, 0.05),
    "overhead.prefill_step_s": (1e-4, 0.5),
    # the fixed part of a low-latency dispatch/combine, below the 126 us DeepEP-Ascend measured at
    # 128 tokens (the table's latencies pin the total there: sncc.cost.comm.ep_bandwidths)
    "comm.ep_alpha_low_latency_s": (1e-6, 1.2e-4),
    "comm.allreduce_alpha_s": (1e-6, 2e-4),
    # the spread of speculative acceptance between requests (sncc.sim.workload.request_tokens_per_step):
    # 0.01 = every request accepts alike; 1.5 puts the 10th-90th percentile of a 0.7 median at 0.25-0.94
    "workload.acceptance_logit_sd": (0.01, 1.5),
    # the fixed cost of one serial draft forward (sncc.cost.terms.draft_tokens)
    "mtp.draft_forward_s": (1e-5, 0.02),
    RESERVE: (3.0e9, 25.0e9),
}


def _with_reserve(points, value):
    """Points whose Omni-Infer decode roles have runtime reserve ``value`` [B] (the KV pool moves by
    the difference: :class:`sncc.capacity.MemoryBreakdown` is linear in the reserve)."""
    out = []
    for p in points:
        if p.spec is None or p.spec.engine != "omni-infer":
            out.append(p)
            continue
        roles = []
        for name, r in p.spec.roles:
            if name == "decode" and r.memory is not None:
                mem = replace(r.memory, reserve=int(value))
                r = replace(r, memory=mem, kv_budget_bytes_per_device=mem.kv_budget)
            roles.append((name, r))
        out.append(replace(p, spec=replace(p.spec, roles=tuple(roles))))
    return out


R.EXTRA_KEYS[RESERVE] = _with_reserve


def current_values(raw):
    """The profile's values of :data:`FIT`, and the shipped Omni-Infer decode reserve."""
    from sncc.capacity import engine_reserve
    vals = {k: R.get_value(raw, k) for k in FIT if k != RESERVE}
    vals[RESERVE] = float(engine_reserve("omni-infer", "decode").bytes)
    return vals


def rows_of(points, preds):
    """(point, metric, family, measured, predicted, signed residual, error) of every measured
    metric; the error is the residual as the point's reading allows (one-sided for a floor:
    :meth:`~sncc.sim.calibration.points.Point.error`)."""
    out = []
    for p in points:
        if p.id not in preds:
            continue
        for m, meas in p.measured.items():
            pred = preds[p.id][m]
            out.append((p, m, METRIC_FAMILY[m], meas, pred, pred / meas - 1.0, p.error(m, pred)))
    return out


def loo_records(points, loo):
    """Leave-one-out residual records in the profile's format (``fit`` points only)."""
    recs = []
    for p, m, fam, meas, pred, r, _ in rows_of(points, loo):
        if p.role != "fit":
            continue
        if p.bound == "floor" and r >= 0:
            continue        # above a floor: the truth's residual is unknown (anything <= r)
        fam_t = "ttft" if fam == "prefill_throughput" else fam
        if fam == "prefill_throughput":
            r = 1.0 / (1.0 + r) - 1.0       # a rate residual as the equivalent time residual
        recs.append({"id": p.id, "group": p.group, "metric": m, "family": fam_t, "residual": round(r, 4),
                     "features": p.features.to_dict()})
    return recs


def print_table(title, points, preds, records, typical):
    """One residual table; returns the summary (median/max |error|, coverage) of its fit rows.

    The error of a floor row is one-sided (0 above the floor) and its interval covers the floor
    when its high end reaches it; a second summary line gives the two-sided figures (every
    row's signed residual, floors read as measurements)."""
    print(f"\n{title}")
    print(f"{'row':44} {'metric':20} {'measured':>10} {'predicted':>10} {'pred/meas-1':>11} {'error':>7}  "
          f"{'80 % interval':>22} cover")
    errs, errs2, cover, cover2, n_cov = [], [], 0, 0, 0
    for p, m, fam, meas, pred, r, e in rows_of(points, preds):
        fam_t = "ttft" if fam == "prefill_throughput" else fam
        sel = I.select_residuals(records, fam_t, p.features, typical=typical, exclude_group=p.group)
        if fam == "prefill_throughput":
            # a rate: the interval of the truth from the equivalent time residuals r' = 1/(1+r) - 1
            lo_t, hi_t = I.residual_interval(1.0 / pred, sel.values)
            lo, hi = 1.0 / hi_t, 1.0 / lo_t
        else:
            lo, hi = I.residual_interval(pred, sel.values)
        ok2 = lo <= meas <= hi
        ok = hi >= meas if p.bound == "floor" else ok2
        tag = "" if p.role == "fit" else "  (reported)"
        if p.bound == "floor":
            tag = "  (floor)"
        if p.id.startswith("seed000-7p1d") and p.role == "fit":
            tag = "  (Omni-Infer reserve fitted here)"
        print(f"{p.id:44} {m:20} {meas:>10.4g} {pred:>10.4g} {100 * r:>+10.1f}% {100 * e:>+6.1f}%  "
              f"[{lo:>9.4g}, {hi:>9.4g}] {'yes' if ok else 'NO '}{tag}")
        if p.role == "fit":
            errs.append(abs(e))
            errs2.append(abs(r))
            n_cov += 1
            cover += ok
            cover2 += ok2
    med = statistics.median(errs) if errs else float("nan")
    mx = max(errs) if errs else float("nan")
    cov = cover / n_cov if n_cov else float("nan")
    print(f"  fit rows: {len(errs)} values; median |error| {100 * med:.1f} %, max {100 * mx:.1f} %; "
          f"80 % intervals cover {cover}/{n_cov} = {100 * cov:.0f} %")
    if errs2:
        print(f"  two-sided (floors read as measurements): median {100 * statistics.median(errs2):.1f} %, "
              f"max {100 * max(errs2):.1f} %; cover {cover2}/{n_cov} = {100 * cover2 / n_cov:.0f} %")
    return med, mx, cov


def write_profile(values, records, typical, summary):
    """Write the fitted constants and the leave-one-out records into the shipped profile."""
    import tomlkit

    from sncc.cost.profile import profile_path
    path = profile_path(PROFILE)
    with open(path, encoding="utf-8") as fh:
        doc = tomlkit.parse(fh.read())
    note = ("fitted by bench/calibration.py --refit to the calibration set (tests/calibration/calibration.toml: "
            "SGLang A3 best practice, vllm-ascend nightly and tutorial rows, seed 000 7P1D QPM/TPOT, "
            "CloudMatrix-Infer decode and prefill), bounded least squares on log residuals")
    for k, v in values.items():
        if k == RESERVE:
            continue
        node = doc
        for part in k.split("."):
            node = node[part]
        node["value"] = float(f"{v:.4g}")
        if "source" in node:
            del node["source"]
        node["fitted"] = note
    # the derived routed-load factor at these constants (sncc.sim.calibration.refit.derived_values)
    derived = R.derived_values(P._load_raw(PROFILE), {k: v for k, v in values.items()})
    if R.DERIVED in derived:
        doc["moe"]["imbalance"]["value"] = float(f"{derived[R.DERIVED]:.4g}")
    cal = doc["calibration"]
    if records is None:
        write_memory(values)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(tomlkit.dumps(doc))
        print(f"\nwrote the constants into {path} (no leave-one-out records: run without --no-loo)")
        return
    loo = tomlkit.inline_table()
    loo["value"] = records
    loo["source"] = (f"bench/calibration.py leave-one-group-out residuals (r = predicted/measured - 1) of every fitted "
                     f"row, with its plan features; typical nearest-point distance {typical:.3f}; median |error| "
                     f"{100 * summary[0]:.1f} %, max {100 * summary[1]:.1f} %, 80 % coverage {100 * summary[2]:.0f} %")
    cal["loo"] = loo
    t = tomlkit.inline_table()
    t["value"] = round(typical, 4)
    t["source"] = "bench/calibration.py: 90th percentile of the calibration points' nearest-other-group distances"
    cal["typical_distance"] = t
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(tomlkit.dumps(doc))
    write_memory(values)
    print(f"\nwrote {path}")


def write_memory(values):
    """Write the fitted Omni-Infer decode reserve into memory.toml."""
    import tomlkit

    mem = os.path.join(ROOT, "sncc", "catalog", "data", "memory.toml")
    with open(mem, encoding="utf-8") as fh:
        mdoc = tomlkit.parse(fh.read())
    mdoc["reserve"]["omni-infer"]["bytes"] = int(round(values[RESERVE], -8))
    with open(mem, "w", encoding="utf-8") as fh:
        fh.write(tomlkit.dumps(mdoc))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--refit", action="store_true", help="refit the constants in-sample first")
    ap.add_argument("--write", action="store_true", help="write the refit and the leave-one-out records")
    ap.add_argument("--workers", type=int, default=2, help="processes for the finite differences")
    ap.add_argument("--nfev", type=int, default=40, help="evaluations per fit")
    ap.add_argument("--loo-nfev", type=int, default=12, help="evaluations per leave-one-out fold")
    ap.add_argument("--no-loo", action="store_true", help="in-sample table only")
    ap.add_argument("--only", action="append", default=[], metavar="GROUP",
                    help="leave out only this group (repeatable; see --groups): a quick per-family check")
    ap.add_argument("--groups", action="store_true", help="list the leave-one-out groups and their rows, then exit")
    a = ap.parse_args()
    t0 = time.time()
    points, not_stated = load_manifest(MANIFEST)
    if a.groups:
        for g in dict.fromkeys(p.group for p in points):
            print(f"{g}: {', '.join(p.id for p in points if p.group == g)}")
        return 0
    unknown = set(a.only) - {p.group for p in points}
    if unknown:
        ap.error(f"unknown group(s) {', '.join(sorted(unknown))}: --groups lists them")
    raw = P._load_raw(PROFILE)
    values = current_values(raw)
    if a.refit:
        print(f"refitting {len(FIT)} constants on {sum(p.role == 'fit' for p in points)} rows ...", flush=True)
        res = R.fit_points(points, raw, list(FIT), FIT, start=values, max_nfev=a.nfev, workers=a.workers,
                           on_eval=lambda n, c: print(f"  eval {n}: cost {c:.4f}", flush=True) if n % 5 == 0 else None)
        values = res.values
        for k, v in values.items():
            print(f"  {k} = {v:.4g}")
        derived = R.derived_values(raw, values)
        if R.DERIVED in derived:
            print(f"  {R.DERIVED} = {derived[R.DERIVED]:.4g} (derived from {R.STEP_RATIO})")
    ins = R.predict_points(points, raw, values)
    records = []
    typical = I.typical_distance([p.features for p in points if p.role == "fit"],
                                 [p.group for p in points if p.role == "fit"])
    loo = None
    if not a.no_loo:
        n_groups = len(a.only) if a.only else len(set(p.group for p in points))
        print(f"\nleave-one-out over {n_groups} groups ...", flush=True)
        so_far = []

        def on_fold(g, r):
            # the fold's moved constants and its held-out residuals, as they come (a long run that
            # is stopped early still leaves its finished folds)
            moved = ", ".join(f"{k} {values[k]:.3g}->{v:.3g}" for k, v in r.values.items()
                              if abs(v / values[k] - 1.0) > 0.1)
            print(f"  fold {g}: cost {r.cost:.4f}; {moved}", flush=True)
            held = [p for p in points if p.group == g]
            for p, m, _, meas, pred, res, e in rows_of(held, R.predict_points(held, raw, r.values)):
                if p.role == "fit":
                    so_far.append(abs(e))
                print(f"    {p.id:44} {m:20} {meas:>10.4g} {pred:>10.4g} {100 * res:>+7.1f}%", flush=True)
            if so_far:
                print(f"    so far: {len(so_far)} values, median |error| {100 * statistics.median(so_far):.1f} %, "
                      f"max {100 * max(so_far):.1f} %", flush=True)

        loo = R.leave_one_group_out(points, raw, list(FIT), FIT, start=values, max_nfev=a.loo_nfev,
                                    workers=a.workers, only=a.only or None, on_fold=on_fold)
        records = loo_records(points, loo)
        if a.only:
            # the other groups' records are the shipped leave-one-out ones (intervals read them), or
            # their in-sample residuals when the profile records none (coverage then in-sample-based)
            shipped = raw.get("calibration", {}).get("loo", {}).get("value") or loo_records(points, ins)
            records = [r for r in shipped if r.get("group") not in set(a.only)] + records
    else:
        records = loo_records(points, ins)
    s_in = print_table("IN-SAMPLE (shipped profile)" if not a.refit else "IN-SAMPLE (refit)", points, ins, records, typical)
    if loo is not None:
        s_loo = print_table("LEAVE-ONE-OUT (each group predicted by constants fitted without it)", points, loo,
                            records, typical)
    for ns in not_stated:
        print(f"\nnot stated: {ns['id']} ({ns['measured']}): {ns['reason']}")
    print(f"\n({time.time() - t0:.0f} s)")
    if a.write:
        write_profile(values, records if loo is not None else None, typical, s_loo if loo is not None else s_in)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where the decode step's time goes across CloudMatrix-Infer's batch sweep, against the measured
step, with the marginal cost of a sequence: the record behind issue 11's "decode shape" finding.

Usage::

    python bench/decode_shape.py              # the shipped ascend-a3 profile
    python bench/decode_shape.py --profile P  # another profile (a refit written elsewhere)

Measured step [ms] = TPOT x tokens per step (MTP, 1 draft at 70 % acceptance: 1.7), from the
CloudMatrix-Infer decode curve (domain-facts §6.1, ``sncc.sim.calibration.scenarios.CLOUDMATRIX_DECODE``);
seed 000's 7P1D decode (47 ms TPOT, no MTP) is printed beside it at the batch per die its published
QPM and TPOT imply (``seed B*``: 608/60 req/s x 1,229 tokens x 47 ms / 64 dies = 9) and at its full
batch (48).
Rows are the report groups of the registered cost terms (:data:`sncc.cost.terms.GROUPS`), exposed
time; ``hidden`` is the communication the micro-batch overlap hides.
"""
from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from sncc.cost.terms import GROUPS  # noqa: E402
from sncc.sim.calibration.scenarios import (CLOUDMATRIX_DECODE, SEED000_PUBLISHED,  # noqa: E402
                                            cloudmatrix_decode_model, seed000_spec)


def columns(profile: str):
    """(label, sequences per die, context [tokens], measured step [ms], breakdown) per column."""
    out = []
    for isl, osl, b, tpot, _ in sorted(CLOUDMATRIX_DECODE, key=lambda r: r[2]):
        sm, B, ctx_sum, B_total = cloudmatrix_decode_model(isl, osl, b, profile)
        out.append((f"CM b{b}", B, ctx_sum / B, tpot * sm.tokens_per_decode_step,
                    sm.breakdown(0.0, B, ctx_sum, B_total)))
    from dataclasses import replace

    from sncc.sim.engine.run import prepare

    spec = seed000_spec(7)
    c = prepare(replace(spec, profile=profile))
    dm, role = c.decode_model, c.decode
    ctx = spec.workload.input.mean + spec.workload.output.mean / 2
    pub = SEED000_PUBLISHED[7]
    # the batch per die the published QPM and TPOT imply (Little's law on the decode pool:
    # output tok/s = dies x B / TPOT), and the full batch (max_num_seqs)
    implied = pub["qpm"] / 60.0 * spec.workload.output.mean * pub["tpot_ms"] / 1e3 / (role.dp * role.instances)
    for label, B in (("seed B*", max(1, round(implied))), ("seed full", role.max_num_seqs)):
        out.append((label, B, ctx, pub["tpot_ms"] * dm.tokens_per_decode_step,
                    dm.breakdown(0.0, B, B * ctx, B * role.dp)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="ascend-a3")
    a = ap.parse_args()
    cols = columns(a.profile)
    w = 10
    print(f"{'':24}" + "".join(f"{c[0]:>{w}}" for c in cols))
    print(f"{'sequences per die':24}" + "".join(f"{c[1]:>{w}}" for c in cols))
    print(f"{'context [tokens]':24}" + "".join(f"{c[2]:>{w}.0f}" for c in cols))
    for g in GROUPS:
        print(f"{g + ' [ms]':24}" + "".join(f"{1e3 * c[4][g]:>{w}.2f}" for c in cols))
    print(f"{'hidden comm [ms]':24}" + "".join(f"{1e3 * sum(c[4]['hidden'].values()):>{w}.2f}" for c in cols))
    print(f"{'model step [ms]':24}" + "".join(f"{1e3 * c[4]['total']:>{w}.2f}" for c in cols))
    print(f"{'measured step [ms]':24}" + "".join(f"{c[3]:>{w}.2f}" for c in cols))
    print(f"{'model / measured - 1':24}" + "".join(f"{1e3 * c[4]['total'] / c[3] - 1:>{w}.1%}" for c in cols))
    # marginal cost of one more sequence per die at the same context (the 4K/256 points)
    same = [c for c in cols if c[0].startswith("CM") and abs(c[2] - 4224) < 1]
    for lo, hi in zip(same, same[1:]):
        dB = hi[1] - lo[1]
        print(f"marginal {lo[1]}->{hi[1]} sequences per die: model "
              f"{1e3 * (hi[4]['total'] - lo[4]['total']) / dB:.2f} ms, measured {(hi[3] - lo[3]) / dB:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

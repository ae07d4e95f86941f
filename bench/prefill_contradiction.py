"""Evidence for the seed-000 / CloudMatrix-Infer prefill contradiction (issue 3).

Sweeps the two prefill constants of the ``ascend-a3`` profile that the seed-000 TTFT
figures are sensitive to — the GEMM efficiency of the prefill role (``compute.eta_c_gemm_dense``
and ``compute.eta_c_gemm_grouped`` set together: the profile's GEMM efficiencies are the kernels',
shared by both phases, so the sweep sets them on the prefill role's step model only and leaves the
decode role at the profile's) and ``overhead.prefill_step_s`` (fixed cost per prefill step) — and
prints, for every cell:

* seed 000 7P1D and 6P1D steady-state TTFT [s] and QPM (published: 1.93 s / 608 QPM and
  ~5 s / 613 QPM);
* the CloudMatrix-Infer prefill throughput [tok/s per NPU] of the same constants
  (published 5,655, domain-facts §6.1);
* whether the cell reproduces all five figures within +-10 %.

Run: ``python bench/prefill_contradiction.py`` (about 30 s on 2 cores).  Nothing here is
fitted; it only shows that no cell of the grid meets all five figures at once.
"""
from __future__ import annotations

import copy
import itertools
import sys
import time

from sncc.cost import profile as P
from sncc.sim.engine.run import simulate_spec as simulate
from sncc.sim.calibration.scenarios import (CLOUDMATRIX_PREFILL_TOK_S_PER_NPU, SEED000_PUBLISHED,
                                cloudmatrix_prefill_tok_s_per_npu, seed000_spec)

ETAS = (0.04, 0.0474, 0.055, 0.08, 0.15, 0.3, 0.5)
STEP_S = (0.0, 0.1, 0.25, 0.5)
TOL = 0.10


def _cell(eta: float, step_s: float) -> dict:
    """Seed 7P/6P and CloudMatrix prefill figures with the prefill role's two constants overridden."""
    from sncc.sim.engine import run as RUN

    raw = copy.deepcopy(P._load_raw("ascend-a3"))
    for key in ("eta_c_gemm_dense", "eta_c_gemm_grouped"):
        raw["compute"][key]["value"] = eta
    raw["overhead"]["prefill_step_s"]["value"] = step_s
    pid = f"__prefill_grid_{eta}_{step_s}"
    P._CUSTOM[pid] = raw
    prepare = RUN.prepare

    def prefill_only(spec):
        c = prepare(spec)
        pm = c.prefill_model
        pm.eta_c_dense = pm.eta_c_grouped = eta
        pm.prefill_step_s = step_s
        return c

    RUN.prepare = prefill_only
    try:
        s7 = simulate(seed000_spec(7), series=False).saturated
        s6 = simulate(seed000_spec(6), series=False).saturated
        cm = cloudmatrix_prefill_tok_s_per_npu(profile=pid)
    finally:
        RUN.prepare = prepare
        P._CUSTOM.pop(pid, None)
        P._load_raw.cache_clear()
    return {"ttft7": s7["ttft_s"], "qpm7": s7["qpm"], "ttft6": s6["ttft_s"], "qpm6": s6["qpm"], "cm": cm}


def main() -> int:
    pub7, pub6 = SEED000_PUBLISHED[7], SEED000_PUBLISHED[6]
    targets = {"ttft7": pub7["ttft_s"], "qpm7": pub7["qpm"], "ttft6": pub6["ttft_s"], "qpm6": pub6["qpm"],
               "cm": CLOUDMATRIX_PREFILL_TOK_S_PER_NPU}
    print(f"{'eta_prefill':>11} {'step_s':>6} | {'TTFT7 s':>7} {'QPM7':>6} {'TTFT6 s':>7} {'QPM6':>6} "
          f"{'6P/7P':>5} | {'CM tok/s/NPU':>12} | within 10 %")
    t0 = time.perf_counter()
    n_ok = 0
    for eta, step in itertools.product(ETAS, STEP_S):
        c = _cell(eta, step)
        ok = [k for k, v in targets.items() if abs(c[k] / v - 1.0) <= TOL]
        n_ok += len(ok) == len(targets)
        print(f"{eta:>11.4f} {step:>6.2f} | {c['ttft7']:>7.2f} {c['qpm7']:>6.0f} {c['ttft6']:>7.2f} {c['qpm6']:>6.0f} "
              f"{c['ttft6'] / c['ttft7']:>5.2f} | {c['cm']:>12.0f} | {len(ok)}/5 {' '.join(sorted(ok))}")
    print(f"published: TTFT7 {targets['ttft7']} s, QPM7 {targets['qpm7']:.0f}, TTFT6 {targets['ttft6']} s, "
          f"QPM6 {targets['qpm6']:.0f}, 6P/7P {targets['ttft6'] / targets['ttft7']:.2f}, CM {targets['cm']:.0f}")
    print(f"cells meeting all five within +-10 %: {n_ok} of {len(ETAS) * len(STEP_S)} "
          f"({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

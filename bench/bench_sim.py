"""Benchmark of the serving simulator: seconds per 1000 simulated requests, goodput search
time, analytic screen time and peak memory.

Usage: ``python bench/bench_sim.py [--runs 5]``.  Workloads: the seed-000 7P1D plan with
3000 requests (closed loop, 3168 clients) and the same plan with 100k requests; a goodput
search on the 7P1D plan (3000 requests per trial); the analytic screen of the same plan.
Targets (issue 3): 3000-request run <= 1 s median, goodput <= 10 s, peak memory <= 500 MB.
"""
from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

from sncc.sim import simulate
from sncc.sim.engine.screen import screen
from sncc.sim.calibration.scenarios import seed000_spec
from sncc.sim.whatif import goodput


def _time(fn, runs: int) -> float:
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def _peak(fn) -> float:
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    for n, runs in ((3000, a.runs), (100_000, max(1, a.runs // 2))):
        spec = seed000_spec(7, requests=n)
        med = _time(lambda: simulate(spec), runs)
        print(f"{n:>7} requests: median {med:.3f} s/run ({runs} runs) = {med / n * 1000:.3f} s per 1000 requests; "
              f"peak traced memory {_peak(lambda: simulate(spec)):.1f} MiB")
    spec = seed000_spec(7)
    box = {}
    t = time.perf_counter()
    box["g"] = goodput(spec)
    dt = time.perf_counter() - t
    print(f"goodput search (7P1D, 3000 requests per trial): {dt:.2f} s, {box['g']['runs']} runs, "
          f"{box['g']['rate']:.3g} req/s; peak traced memory {_peak(lambda: goodput(spec, max_runs=3)):.1f} MiB")
    med = _time(lambda: screen(spec), a.runs)
    print(f"analytic screen (7P1D): median {med * 1e3:.1f} ms")


if __name__ == "__main__":
    main()

"""Benchmark of the serving simulator: seconds per 1000 simulated requests and peak memory.

Usage: ``python bench/bench_sim.py [--runs 5]``.  Workloads: the seed-000 7P1D plan with
3000 requests (closed loop, 3168 clients) and the same plan with 100k requests.
"""
from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

from sncc.sim import simulate
from sncc.sim.scenarios import seed000_spec


def _time(spec, runs: int) -> float:
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        simulate(spec)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    for n, runs in ((3000, a.runs), (100_000, max(1, a.runs // 2))):
        spec = seed000_spec(7, requests=n)
        med = _time(spec, runs)
        tracemalloc.start()
        simulate(spec)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"{n:>7} requests: median {med:.3f} s/run ({runs} runs) = {med / n * 1000:.3f} s per 1000 requests; "
              f"peak traced memory {peak / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()

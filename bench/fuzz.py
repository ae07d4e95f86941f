"""A long, memory-capped fuzzing campaign against ``sncc check`` (issue 5 §4, issue 14).

Usage: ``python bench/fuzz.py N [--jobs J] [--seed S] [--mem-mb M] [--out DIR]``

Draws N inputs with the generators of ``tests/fuzzgen.py`` — grammar derivations of
``grammar/sncc.lark``, plans from the plan model's keys and kinds, and mutations of the
examples and of generated plans (``any_input``) — and checks each with
``tests/test_fuzz.py``'s ``check_input`` (read, compile every phase, render text and JSON,
and for a plan without errors emit and validate the outputs): no exception, no SN9001, under
2 s of CPU time for an input under 1 MB, every range inside the file.  Every 16th input goes through a
real file and ``read_source``; the others are decoded in memory the same way.

Each worker process runs under an address-space limit (``--mem-mb``, default 1024 MiB of
memory beyond the worker's footprint after warm-up, set with ``RLIMIT_AS``), so a blow-up is
a MemoryError (an escape), not a swapped machine.  Failures do not stop the run; the first
ones are saved under ``--out`` (default: a new temporary folder) as ``fail-NNNN.sn`` with the
violated properties in ``fail-NNNN.txt``.

Prints the inputs tried per family, how many reached the constraint passes, escapes
(exceptions, SN9001, ranges outside the file, schema failures), hangs (inputs over 2 s of CPU
time; wall time is shown beside it), the slowest input and the peak resident memory of any
worker (``ru_maxrss``).  Exit status 1
when anything failed.  ``--jobs`` defaults to the number of CPUs.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

#: failing inputs kept per worker
KEEP = 20
#: an input that takes more CPU time than this counts as a hang (issue 14: "0 hangs over 2 s");
#: CPU time, because the workers share the machine: wall time is printed beside it
HANG_S = 2.0


def _cap_memory(mb: int) -> int:
    """Limit this process's address space to its current size plus ``mb`` MiB; returns the
    limit in bytes (0 when the platform has no RLIMIT_AS)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return 0
    with open("/proc/self/statm") as f:
        vsz = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = vsz + mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return limit


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def campaign(n: int, seed: int, out: str, worker: int, mem_mb: int, progress: str) -> dict:
    """Check ``n`` inputs drawn with ``random.Random(seed)``; returns the worker's counts."""
    import fuzzgen
    import test_fuzz as F
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    outdir = pathlib.Path(out)
    stats = {"tried": {}, "reached": {}, "failed": 0, "hangs": 0, "slow_wall": 0, "slowest": (0.0, 0),
             "slowest_wall": (0.0, 0), "saved": [], "first": []}
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="sncc-fuzz-") as scratch:
        work = pathlib.Path(scratch)
        F.check_input(F.EXAMPLES[0].read_bytes(), work)  # warm up: catalog, parser, emitters
        F.check_input(fuzzgen.model_plan(random.Random(0)).encode(), work, via_file=False)
        stats["limit"] = _cap_memory(mem_mb)
        t_start = time.perf_counter()
        for i in range(n):
            family, data = fuzzgen.any_input(rng)
            stats["tried"][family] = stats["tried"].get(family, 0) + 1
            t0, c0 = time.perf_counter(), time.process_time()
            problems = F.check_input(data, work, via_file=(i % 16 == 0))
            dt, wall = time.process_time() - c0, time.perf_counter() - t0
            if dt > stats["slowest"][0]:
                stats["slowest"] = (dt, len(data))
            if wall > stats["slowest_wall"][0]:
                stats["slowest_wall"] = (wall, len(data))
            stats["slow_wall"] += wall > HANG_S
            if dt > HANG_S:
                stats["hangs"] += 1
                problems = problems or [f"took {dt:.2f} s of CPU time on a {len(data)}-byte input"]
            if i % 1000 == 999 and progress:
                with open(f"{progress}.{worker}", "w") as f:
                    f.write(f"{i + 1} {time.perf_counter() - t_start:.0f}s failed={stats['failed']}\n")
            if not problems:
                if family != "grammar" and i % 8 == 0:  # sample: how many reach the checks
                    try:
                        if compile_file(SourceFile("p.sn", data.decode("utf-8"))).plan is not None:
                            stats["reached"][family] = stats["reached"].get(family, 0) + 8
                    except UnicodeDecodeError:
                        pass
                continue
            stats["failed"] += 1
            if len(stats["saved"]) < KEEP:
                base = outdir / f"fail-{worker:02d}{len(stats['saved']):03d}"
                base.with_suffix(".sn").write_bytes(data)
                base.with_suffix(".txt").write_text("\n".join(problems) + "\n", encoding="utf-8")
                stats["saved"].append(str(base.with_suffix(".sn")))
                stats["first"].append((str(base.with_suffix(".sn")), problems))
    stats["peak_rss_mb"] = _peak_rss_mb()
    return stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int, help="number of inputs")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--mem-mb", type=int, default=1024, help="address space each worker may add after warm-up (MiB)")
    ap.add_argument("--out", default=None, help="folder for failing inputs (default: a new temporary folder)")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int(time.time())
    out = a.out or tempfile.mkdtemp(prefix="sncc-fuzz-failures-")
    pathlib.Path(out).mkdir(parents=True, exist_ok=True)
    jobs = max(1, a.jobs)
    shares = [a.n // jobs + (1 if j < a.n % jobs else 0) for j in range(jobs)]
    progress = os.path.join(out, "progress")
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(campaign, shares, [seed * 1000 + j for j in range(jobs)], [out] * jobs, range(jobs),
                                [a.mem_mb] * jobs, [progress] * jobs))
    wall = time.perf_counter() - t0
    tried: dict[str, int] = {}
    reached: dict[str, int] = {}
    for r in results:
        for k, v in r["tried"].items():
            tried[k] = tried.get(k, 0) + v
        for k, v in r["reached"].items():
            reached[k] = reached.get(k, 0) + v
    failed = sum(r["failed"] for r in results)
    hangs = sum(r["hangs"] for r in results)
    slow = max((r["slowest"] for r in results), default=(0.0, 0))
    slow_wall = max((r["slowest_wall"] for r in results), default=(0.0, 0))
    peak = max((r["peak_rss_mb"] for r in results), default=0.0)
    print(f"seed {seed}: {sum(tried.values())} inputs in {wall:.0f} s with {jobs} processes "
          f"(memory cap {a.mem_mb} MiB beyond warm-up per process)")
    for k in sorted(tried):
        print(f"  {k:8s} {tried[k]:8d} tried, ~{reached.get(k, 0):8d} reached the checks")
    print(f"  escapes (exception, SN9001, range outside the file, schema failure, >2 s): {failed}")
    print(f"  hangs over {HANG_S:g} s of CPU time: {hangs} "
          f"(over {HANG_S:g} s of wall time on this shared machine: {sum(r['slow_wall'] for r in results)})")
    print(f"  slowest input: {slow[0]:.3f} s CPU ({slow[1]} bytes); {slow_wall[0]:.3f} s wall ({slow_wall[1]} bytes)")
    print(f"  peak resident memory of a worker: {peak:.0f} MiB")
    firsts = [f for r in results for f in r["first"]]
    if firsts:
        print(f"failing inputs saved under {out}:")
        for path, problems in firsts[:10]:
            print(f"  {path}: {problems[0][:200]}")
    else:
        for f in pathlib.Path(out).glob("progress.*"):
            f.unlink()
        if not os.listdir(out):
            os.rmdir(out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

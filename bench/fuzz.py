"""A long fuzzing campaign against ``sncc check`` (issue 5 §4).

Usage: ``python bench/fuzz.py N [--jobs J] [--seed S] [--out DIR]``

Generates N inputs with the strategies of ``tests/test_fuzz.py`` — half
grammar-driven plans built from the plan model and the catalog
(``valid_plans``), half mutations of every ``examples/*.sn`` and
``examples/broken/*.sn`` (``mutated_examples``) — and checks each with
``check_input`` (the CLI's in-process path: read, compile every phase, render
text and JSON): no exception, no SN9001, under 2 s for an input under 1 MB,
every diagnostic range inside the file.  Unlike the bounded test, the inputs
are random (seeded by ``--seed``, default: from the clock) and failures do not
stop the run.

Prints how many inputs were tried, how many reached the constraint passes (a
typed plan was built), how many failed, and the slowest input; the first
failing inputs are saved under ``--out`` (default: a new temporary folder) as
``fail-NNNN.sn`` with the violated properties in ``fail-NNNN.txt``.  Exit
status 1 when any input failed.  ``--jobs`` splits the inputs over that many
processes (default: the number of CPUs).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

#: failing inputs kept per worker
KEEP = 20


def campaign(n: int, seed: int, kind: str, out: str, worker: int) -> dict:
    """Check ``n`` inputs of ``kind`` (``valid`` or ``mutated``) drawn with ``seed``.

    Returns ``{"tried", "reached", "failed", "slowest": (seconds, bytes), "saved": [paths],
    "first": [(path, problems)]}``.
    """
    import hypothesis
    from hypothesis import HealthCheck, Phase, given, settings

    import test_fuzz as F
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    outdir = pathlib.Path(out)
    stats = {"tried": 0, "reached": 0, "failed": 0, "slowest": (0.0, 0), "saved": [], "first": []}
    strategy = F.valid_plans().map(lambda t: t.encode("utf-8")) if kind == "valid" else F.mutated_examples()

    with tempfile.TemporaryDirectory(prefix="sncc-fuzz-") as scratch:
        work = pathlib.Path(scratch)
        F.check_input(F.EXAMPLES[0].read_bytes(), work)  # warm up: catalog, parser

        @hypothesis.seed(seed)
        @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(data=strategy)
        def run(data: bytes) -> None:
            stats["tried"] += 1
            t0 = time.perf_counter()
            problems = F.check_input(data, work)
            dt = time.perf_counter() - t0
            if dt > stats["slowest"][0]:
                stats["slowest"] = (dt, len(data))
            if not problems:
                try:
                    text = data.decode("utf-8")
                    if compile_file(SourceFile("p.sn", text)).plan is not None:
                        stats["reached"] += 1
                except UnicodeDecodeError:
                    pass
                return
            stats["failed"] += 1
            if len(stats["saved"]) < KEEP:
                base = outdir / f"fail-{worker:02d}{len(stats['saved']):03d}"
                base.with_suffix(".sn").write_bytes(data)
                base.with_suffix(".txt").write_text("\n".join(problems) + "\n", encoding="utf-8")
                stats["saved"].append(str(base.with_suffix(".sn")))
                stats["first"].append((str(base.with_suffix(".sn")), problems))

        run()
    return stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int, help="number of inputs")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--out", default=None, help="folder for failing inputs (default: a new temporary folder)")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int(time.time())
    out = a.out or tempfile.mkdtemp(prefix="sncc-fuzz-failures-")
    pathlib.Path(out).mkdir(parents=True, exist_ok=True)
    jobs = max(1, a.jobs)
    # each job draws half of its inputs from each family
    tasks = []
    per_job = a.n // jobs
    for j in range(jobs):
        share = per_job + (1 if j < a.n % jobs else 0)
        tasks.append((share // 2, seed * 1000 + 2 * j, "valid", out, 2 * j))
        tasks.append((share - share // 2, seed * 1000 + 2 * j + 1, "mutated", out, 2 * j + 1))
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(campaign, *zip(*tasks)))
    wall = time.perf_counter() - t0
    tried = sum(r["tried"] for r in results)
    failed = sum(r["failed"] for r in results)
    for (n, _, kind, _, _), r in zip(tasks, results):
        pass
    by_kind = {}
    for (_, _, kind, _, _), r in zip(tasks, results):
        k = by_kind.setdefault(kind, {"tried": 0, "reached": 0, "failed": 0})
        for key in k:
            k[key] += r[key]
    slow = max((r["slowest"] for r in results), default=(0.0, 0))
    print(f"seed {seed}: tried {tried} inputs in {wall:.1f} s with {jobs} processes; {failed} failed")
    for kind, k in by_kind.items():
        print(f"  {kind:8s} {k['tried']:6d} tried, {k['reached']:6d} reached the checks, {k['failed']:4d} failed")
    print(f"  slowest input: {slow[0]:.3f} s ({slow[1]} bytes)")
    firsts = [f for r in results for f in r["first"]]
    if firsts:
        print(f"failing inputs saved under {out}:")
        for path, problems in firsts[:10]:
            print(f"  {path}: {problems[0][:200]}")
    else:
        os.rmdir(out) if not os.listdir(out) else None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

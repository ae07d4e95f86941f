"""Benchmark of ``sncc search`` on the two shipped spaces (issue 12).

Usage: ``python bench/bench_search.py [--workers N] [--backend local|ray]``.

* ``examples/search/deepseek-v3-h200-64.sn``: aiconfigurator's ``default`` space: DeepSeek-V3 FP8
  on 64 x H200, ISL 3584, OSL 1229, TTFT 2 s, TPOT 50 ms, aggregated and disaggregated.
  Target: <= 10 s here with local processes.  aiconfigurator's own ``default`` sweep of this
  case took 204-229 s on this machine (issue 12's recorded anchor, one ``estimate``: 4.9 s);
  when ``bench/aiconfigurator_anchor.py`` is present it times aiconfigurator in the same run,
  else the recorded anchor is printed, marked as recorded.
* ``examples/search/deepseek-r1-a3-11-nodes.sn``: seed 000's 11 A3 nodes (176 devices).

For each: candidates per stage, seconds per stage, wall time, the best layouts, and where the
plan's own layout ranks.  The ratio to the anchor is within this run when the anchor is timed.
"""
from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPACES = ("examples/search/deepseek-v3-h200-64.sn", "examples/search/deepseek-r1-a3-11-nodes.sn")
#: issue 12: aiconfigurator's `default` sweep of the H200 case on this machine (recorded, not timed)
RECORDED_ANCHOR_S = (204.0, 229.0)


def _anchor():
    """(seconds, how) of aiconfigurator's `default` sweep timed now by bench/aiconfigurator_anchor.py
    (``time_aiconfigurator``: installs it into a cached scratch venv), else (None, why)."""
    path = ROOT / "bench" / "aiconfigurator_anchor.py"
    if not path.exists():
        return None, "recorded (issue 12), not timed in this run"
    spec = importlib.util.spec_from_file_location("aiconfigurator_anchor", path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        got = mod.time_aiconfigurator()
    except Exception as e:  # noqa: BLE001 -- the anchor is optional: say why and fall back
        return None, f"recorded (issue 12); not timed: {type(e).__name__}: {e}"
    if got.get("installed") and got.get("seconds"):
        return float(got["seconds"]), "timed in this run (bench/aiconfigurator_anchor.py)"
    return None, f"recorded (issue 12); not timed: {got.get('reason', 'aiconfigurator did not install')}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="local", choices=["local", "ray"])
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--no-aiconfigurator", action="store_true",
                    help="print the recorded anchor instead of timing aiconfigurator (its install and sweep take minutes)")
    args = ap.parse_args()
    from sncc.compiler import compile_file
    from sncc.search._serial import backend
    from sncc.search.run import search
    from sncc.source import SourceFile

    for rel in SPACES:
        path = ROOT / rel
        t0 = time.perf_counter()
        comp = compile_file(SourceFile(str(path), path.read_text()))
        plan, facts = comp.plan, comp.facts
        t_compile = time.perf_counter() - t0
        with backend(args.backend, workers=args.workers) as bk:
            t1, c1 = time.perf_counter(), time.process_time()
            res = search(plan, facts, backend=bk)
            wall, cpu = time.perf_counter() - t1, time.process_time() - c1
        print(f"\n{rel}  ({' and '.join(res.space.modes)}, {'exactly' if res.space.fixed else 'at most'} "
              f"{res.space.budget} devices; backend {args.backend}, {getattr(bk, 'workers', '?')} worker(s))")
        print(f"  compile {t_compile:.2f} s (once)")
        for s in res.stages:
            print(f"  {s.name:22s} {s.saw:7,d} candidates -> {s.kept:5,d} kept  {s.seconds:6.2f} s")
        screened = next(s.saw for s in res.stages if s.name == "checks + screen")
        simulated = next(s.saw for s in res.stages if s.name == "event simulation")
        print(f"  candidates screened {screened}, simulated {simulated}, wall {wall:.2f} s "
              f"(CPU of this process {cpu:.2f} s: the machine is shared when wall >> CPU)")
        for mode in res.space.modes:
            best = [r for r in res.ranked if r.candidate.mode == mode][:3]
            for r in best:
                m = r.metrics
                print(f"  best {mode[:5]} #{res.rank_of(r.candidate):<3d} {r.status:9s} {r.candidate.label():48s} "
                      f"{m['tokens_per_s_per_device']:7.1f} tok/s/dev  {m['tokens_per_s_per_user']:5.1f} tok/s/user  "
                      f"TTFT {m['ttft_s']['mean']:.2f} s  TPOT {m['tpot_ms']['mean']:.1f} ms")
        if res.base is not None:
            print(f"  the plan's own layout {res.base.label()} ranks {res.rank_of(res.base)} of {len(res.ranked)}")
        if "h200" in rel:
            secs, how = _anchor() if not args.no_aiconfigurator else (None, "recorded (issue 12), --no-aiconfigurator")
            if secs is not None:
                print(f"  aiconfigurator default sweep: {secs:.1f} s ({how}); sncc / aiconfigurator = {wall / secs:.3f}")
            else:
                lo, hi = RECORDED_ANCHOR_S
                print(f"  aiconfigurator default sweep: {lo:.0f}-{hi:.0f} s ({how}); "
                      f"sncc {wall:.1f} s is {lo / wall:.0f}-{hi / wall:.0f}x less")


if __name__ == "__main__":
    main()

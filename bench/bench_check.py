"""How fast `sncc check` feels where editors and hooks run it (issue 4, "Speed").

Prints two figures, both measured on this machine in this run:

(a) cold `sncc check examples/deepseek-r1-a3-7p1d.sn` (a new Python process
    each time: `python -m sncc.cli check ...`) as a ratio to
    `python -c "import lark, pydantic, click"` (the floor any sncc start pays),
    medians of interleaved runs.  Target: <= 1.5x.
(b) the language server's re-check of a 300-line plan after a one-character
    edit, in-process through :func:`sncc.lsp.convert.check_document` (the
    function the server calls on every change), median over the edits, after
    one warm-up check.  Target: <= 30 ms.

Usage: python bench/bench_check.py [--runs 9] [--edits 60]
The disk cache of the parser (``~/.cache/sncc``) and sncc's .pyc files are written
by the first run and then used, as they are for a user (children run without
PYTHONDONTWRITEBYTECODE); set SNCC_NO_CACHE=1 to measure without the disk cache.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "examples" / "deepseek-r1-a3-7p1d.sn"


#: children run with bytecode caching on, as on a user's machine: ``pip install`` compiles the
#: floor's packages (lark, pydantic, click) to .pyc, and sncc's own .pyc files are written by
#: the first run.  A shell that exports PYTHONDONTWRITEBYTECODE=1 (this sandbox does) would
#: otherwise make every run recompile sncc's ~50 modules from source but not the floor's.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run(cmd: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system of the child), in seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=CHILD_ENV)
    dt = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.decode(errors='replace')[-500:]}")
    return dt, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cold_check(runs: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """Median (wall, CPU) seconds of a cold check and of the import floor, interleaved."""
    check = [sys.executable, "-m", "sncc.cli", "check", str(PLAN.relative_to(ROOT))]
    floor = [sys.executable, "-c", "import lark, pydantic, click"]
    _run(check)  # writes .pyc files and the disk cache once, as a first use would
    _run(floor)
    a, b = [], []
    for _ in range(runs):
        a.append(_run(check))
        b.append(_run(floor))
    med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
    return (med(a, 0), med(a, 1)), (med(b, 0), med(b, 1))


def plan_300_lines() -> str:
    """A valid 300-line plan: the seed-000 deployment written one key per line,
    each with a comment as engineers document them, and an `env` block of
    synthetic variables filling it to 300 lines."""
    body = [
        ("model \"deepseek-r1\" {", [("weights", '"/data/models/DeepSeek-R1-W8A8"'), ("quant", "w8a8"),
                                     ("served_name", '"deepseek-r1"')]),
        ("hardware {", [("system", '"atlas-900-a3-superpod"'), ("nodes", "11"), ("cann", '"8.2.RC1"'),
                        ("memory_utilization", "0.9")]),
        ("engine \"omni-infer\" {", []),
        ("prefill {", [("instances", "7"), ("devices", "16"), ("tp", "8"), ("ep", "2"),
                       ("max_num_batched_tokens", "32k"), ("chunked_prefill", "16k")]),
        ("decode {", [("instances", "1"), ("devices", "64"), ("tp", "1"), ("ep", "64"), ("max_num_seqs", "48")]),
        ("kv_cache {", [("dtype", "int8"), ("block_size", "128")]),
        ("optimize {", [("micro_batch", "2"), ("superkernel_layers", "58"),
                        ("graph_cache", '"/data/torchair_cache/deepseek-r1-w8a8"')]),
        ("workload {", [("requests", "3000"), ("concurrency", "3168")]),
        ("gateway {", [("base_url", '"https://gateway.example.com/api"'), ("api_key", 'env("GATEWAY_API_KEY")'),
                       ("model_id", '"deepseek-r1"'), ("timeout", "30min")]),
    ]
    lines = ["# 300-line benchmark plan: seed 000 (DeepSeek-R1 W8A8, 7P1D on an Atlas 900 A3 SuperPoD)",
             'plan "bench-300" {']
    for head, keys in body:
        lines.append(f"  # --- {head.split()[0]} ---")
        if not keys:
            lines.append(f"  {head} }}")
            continue
        lines.append(f"  {head}")
        for k, v in keys:
            lines.append(f"    # {k}: see `sncc` hover for its meaning and default")
            lines.append(f"    {k} = {v}")
        if head.startswith("workload"):
            lines += ["    input {", "      mean = 3.5k", "      max = 16k", "    }",
                      "    output {", "      mean = 1.2k", "      max = 32k", "    }"]
        lines.append("  }")
    lines += ["  slo {", "    ttft < 2s", "    tpot < 50ms", "    qpm >= 600", "  }", "  env {",
              "    HCCL_BUFFSIZE = 1000"]
    i = 0
    while len(lines) < 298:
        i += 1
        lines.append(f"    SNCC_BENCH_VAR_{i:03d} = {i}")
    lines += ["  }", "}"]
    assert len(lines) == 300, len(lines)
    return "\n".join(lines) + "\n"


def lsp_recheck(edits: int) -> tuple[float, float, int]:
    """Median and 90th percentile (s) of re-checking the 300-line plan after
    one-character edits, and the number of diagnostics of the unedited plan."""
    from sncc.lsp.convert import check_document

    text = plan_300_lines()
    path = str(ROOT / "bench-300.sn")
    uri = Path(path).as_uri()
    first = check_document(uri, path, text)  # warm: imports, catalog, grammar
    n_diags = len(first.diagnostics)
    # one-character edits as typing makes them: a digit of a value, a letter in a comment
    spots = [text.index("max_num_seqs = 48") + len("max_num_seqs = 4"),
             text.index("requests = 3000") + len("requests = 300"),
             text.index("# weights") + 3]
    times = []
    for i in range(edits):
        at = spots[i % len(spots)]
        ch = text[at]
        new = ("9" if ch != "9" else "8") if ch.isdigit() else ("x" if ch != "x" else "y")
        edited = text[:at] + new + text[at + 1:]
        t = time.perf_counter()
        check_document(uri, path, edited)
        times.append(time.perf_counter() - t)
    times.sort()
    return statistics.median(times), times[int(0.9 * (len(times) - 1))], n_diags


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=9, help="cold runs of each command (>= 7)")
    ap.add_argument("--edits", type=int, default=60, help="one-character edits to re-check (>= 50)")
    args = ap.parse_args()
    runs, edits = max(args.runs, 7), max(args.edits, 50)
    (check, check_cpu), (floor, floor_cpu) = cold_check(runs)
    ratio = check / floor
    print(f"(a) cold `sncc check {PLAN.relative_to(ROOT)}`: {check * 1000:.0f} ms median of {runs}; "
          f"`python -c \"import lark, pydantic, click\"`: {floor * 1000:.0f} ms; "
          f"ratio {ratio:.2f}x (target <= 1.5x) {'OK' if ratio <= 1.5 else 'OVER'}")
    print(f"    CPU time (user + system, steadier on a busy machine): {check_cpu * 1000:.0f} ms vs "
          f"{floor_cpu * 1000:.0f} ms, ratio {check_cpu / floor_cpu:.2f}x; load average {os.getloadavg()[0]:.2f}")
    try:
        med, p90, n = lsp_recheck(edits)
    except ImportError as e:
        print(f"(b) skipped: the lsp extra is not installed ({e})")
        return
    print(f"(b) LSP re-check of a 300-line plan after a one-character edit: {med * 1000:.1f} ms median, "
          f"{p90 * 1000:.1f} ms p90 over {edits} edits ({n} diagnostics) (target <= 30 ms) "
          f"{'OK' if med <= 0.030 else 'OVER'}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    main()

"""Time ``sncc check`` on generated ~1 MB plans (issue 5: under 3 s here).

Usage: ``python bench/bench_large_plan.py [--size BYTES] [--runs N] [--profile]``

Three plans, each the seed plan ``examples/deepseek-r1-a3-7p1d.sn`` grown to
``--size`` bytes (default 1 MB = 10^6) with items the language accepts:

* ``env``: a large ``env`` block of ``NAME = value`` lines (numbers, strings,
  quantities) with a comment line every 20 entries — the realistic shape of a
  big plan;
* ``dense``: the same block with the shortest entries (``E1 = 1``), the most
  tokens per byte: the parser's worst case for valid text;
* ``comments``: the seed plan followed by comment lines;
* ``dense-cap``: the dense block cut to just under the parser's token limit
  (:data:`sncc.syntax.parser.MAX_TOKENS`; a 1 MB dense plan is over it and is
  rejected with SN1001 before parsing): the slowest plan sncc accepts.

Each is timed end to end in a fresh ``sncc check`` process (``python -m sncc``
via the console script: start-up, read, parse, build, resolve, checks, text
rendering), the median of ``--runs`` runs, and in-process per phase (parse,
plan, resolve, checks).  ``--profile`` prints the top functions of the dense
case under cProfile.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
SEED = ROOT / "examples" / "deepseek-r1-a3-7p1d.sn"
ENV_LINE = "env { HCCL_BUFFSIZE = 1000 }"


def generate(kind: str, size: int) -> str:
    """The seed plan grown to about ``size`` bytes (UTF-8) with items of ``kind``."""
    base = SEED.read_text(encoding="utf-8")
    assert ENV_LINE in base
    room = size - len(base.encode("utf-8"))
    lines: list[str] = []
    used = 0
    i = 0
    if kind == "dense-cap":
        from sncc.syntax.parser import MAX_TOKENS

        entries = (MAX_TOKENS - 2_000) // 3  # `Ei = 1` is three tokens; the seed plan is ~400
        return base.replace(ENV_LINE, "env {\n  HCCL_BUFFSIZE = 1000\n" + "".join(f"E{i} = 1\n" for i in range(entries)) + "  }")
    while used < room:
        if kind == "comments":
            line = f"# filler line {i:07d}: " + "lorem ipsum dolor sit amet " * 3 + "\n"
        elif kind == "dense":
            line = f"E{i} = 1\n"
        else:
            if i % 20 == 0:
                line = f"  # group {i // 20}: runtime overrides for rank set {i // 20}\n"
            else:
                value = (str(i * 7), f'"/opt/ascend/runtime/lib-{i}"', f"{i % 900 + 1}ms", f'"{i % 8},{(i + 1) % 8}"')[i % 4]
                line = f"  SNCC_BENCH_{i:06d} = {value}\n"
        lines.append(line)
        used += len(line)
        i += 1
    if kind == "comments":
        return base + "".join(lines)
    return base.replace(ENV_LINE, "env {\n  HCCL_BUFFSIZE = 1000\n" + "".join(lines) + "  }")


def time_cli(path: str, runs: int) -> tuple[float, int]:
    """Median wall time of ``sncc check path`` in a fresh process, and its exit status."""
    ts, rc = [], 0
    for _ in range(runs):
        t = time.perf_counter()
        res = subprocess.run([sys.executable, "-c", "import sys; from sncc.cli import main; sys.argv[0] = 'sncc'; main()",
                              "check", "--no-color", path], capture_output=True)
        ts.append(time.perf_counter() - t)
        rc = res.returncode
        if rc not in (0, 1):
            sys.stderr.write(res.stderr.decode(errors="replace")[-2000:])
    return statistics.median(ts), rc


def time_phases(text: str) -> dict[str, float]:
    """Seconds per compiler phase, in this process (parser and catalog already warm)."""
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    comp = compile_file(SourceFile("large.sn", text))
    out = {}
    for phase in ("_parsed", "plan", "resolved", "diagnostics"):
        t = time.perf_counter()
        getattr(comp, phase)
        out[phase.strip("_")] = time.perf_counter() - t
    out["codes"] = sorted({d.code.code for d in comp.diagnostics})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    compile_file(SourceFile("warm.sn", SEED.read_text(encoding="utf-8"))).diagnostics  # warm the parser and catalog
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="sncc-bench-") as d:
        for kind in ("env", "dense", "comments", "dense-cap"):
            text = generate(kind, a.size)
            path = os.path.join(d, f"large-{kind}.sn")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            wall, rc = time_cli(path, a.runs)
            ph = time_phases(text)
            worst = max(worst, wall)
            print(f"{kind:9s} {len(text.encode()):>9,d} bytes {text.count(chr(10)):>7,d} lines: sncc check {wall:.2f} s "
                  f"(median of {a.runs}, exit {rc}); in process: parse {ph['parsed']:.2f} s, plan {ph['plan']:.2f} s, "
                  f"resolve {ph['resolved']:.2f} s, checks+sort {ph['diagnostics']:.2f} s; codes {ph['codes']}")
            if a.profile and kind == "dense-cap":
                import cProfile
                import pstats

                comp = compile_file(SourceFile("large.sn", text))
                prof = cProfile.Profile()
                prof.runcall(lambda: comp.diagnostics)
                pstats.Stats(prof).sort_stats("tottime").print_stats(15)
    print(f"slowest: {worst:.2f} s (target < 3 s)")
    return 0 if worst < 3.0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""`sncc check` imports only what checking needs (issue 14 item 16, start-up speed).

A cold `sncc check` pays for every module it imports; the simulator, the emitters, the
importer, the language server and the libraries only they use (rich, jsonschema, tomlkit)
must stay out of it, and with the disk cache warm no TOML is parsed.  The gain is measured by
``bench/bench_check.py``; this test keeps it from silently regressing: it runs a real
``sncc check`` in a fresh interpreter and inspects ``sys.modules`` afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: the seed plan (Omni-Infer on an A3 SuperPoD), a vllm-ascend plan, a vLLM GPU plan and one
#: with a speculative decoder: between them every check family runs
PLANS = ["examples/deepseek-r1-a3-7p1d.sn", "tests/cases/br-01-tp-not-dividing-heads.fixed.sn",
         "tests/cases/br-25-heads-and-experts-tp3.fixed.sn", "tests/cases/br-24-speculative-slowdown.fixed.sn"]

#: module prefixes `check` must not import: what only build, simulate, search, import or the
#: language server run (sncc.cost is allowed: SN5006/SN7002 and the TPOT floor read it)
FORBIDDEN = ("sncc.sim", "sncc.search", "sncc.importer", "sncc.lsp", "sncc.fmt", "sncc.build",
             "rich", "jsonschema", "tomlkit", "matplotlib", "pygls")

#: checks the plans in the given output formats (one process: the modules of all of them add up)
_CHILD = r"""
import contextlib, io, json, sys
from sncc import cli
codes = []
for fmt in sys.argv[1].split(","):
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            cli.main(["check", "--format", fmt, *sys.argv[2:]])
        except SystemExit as e:
            codes.append(e.code)
print(json.dumps({"code": max(codes), "modules": sorted(sys.modules)}))
"""


def _check_modules(cache_dir: Path, formats: str) -> tuple[int, list[str]]:
    env = {"SNCC_CACHE_DIR": str(cache_dir), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", _CHILD, formats, *PLANS], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return got["code"], got["modules"]


def _unwanted(modules: list[str]) -> list[str]:
    bad = [m for m in modules if any(m == p or m.startswith(p + ".") for p in FORBIDDEN)]
    # the emitters: sncc.emit._common (one_line, for the bench command's metadata) is shared
    # with lowering; every emitter module, and every engine's own emit_* module, is not
    bad += [m for m in modules if m.startswith("sncc.emit.") and m != "sncc.emit._common"]
    bad += [m for m in modules if m.startswith("sncc.engines.") and ".emit" in m]
    return sorted(bad)


def test_check_imports_no_simulator_emitter_or_rich(tmp_path):
    code, first = _check_modules(tmp_path, "text,json,sarif,github,concise")
    assert code == 0, "the plans check clean: the whole pipeline, lowering included, ran"
    assert {"sncc.checks", "sncc.lowering", "sncc.plan.model"} <= set(first), "the check did run"
    assert _unwanted(first) == []
    # second run, the disk cache warm: the catalog and data tables come back without parsing TOML
    _, warm = _check_modules(tmp_path, "text")
    assert _unwanted(warm) == []
    assert "tomllib" not in warm and "tomli" not in warm

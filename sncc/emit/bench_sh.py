"""``bench.sh``: ``vllm bench serve`` against the entry point with the plan's workload.

The result file (``bench-result.json``, vLLM's ``--save-result`` JSON) is written into
``${SNCC_BENCH_DIR:-.}``, never into the output folder (a rebuild replaces that folder).
"""

from __future__ import annotations

from sncc.emit import shell
from sncc.emit._common import one_line
from sncc.emit.args import cli_words
from sncc.lowering.deployment import Deployment


def emit(dep: Deployment) -> dict[str, str]:
    """``{"bench.sh": text}``, or {} when the deployment has no API server."""
    b = dep.bench
    if b is None:
        return {}
    t = b.target
    need = dep.node(t.node).required(f"the {t.role} the benchmark calls")
    req = [need] if need is not None else []
    lines = shell.header(dep, f"vllm bench serve against {t.role} on node {t.node}, port {t.port}", depth=0)
    lines.append(f"# Writes ${{SNCC_BENCH_DIR:-.}}/{b.result_file} (vLLM's result JSON; sncc calibrate reads it).")
    for n in b.notes:
        lines.append(f"# Note: {one_line(n)}")
    lines += ["set -euo pipefail", shell.OUT_HERE]
    lines += shell.source("env/common.sh")
    lines += shell.require(req)
    lines.append('mkdir -p "${SNCC_BENCH_DIR:-.}"')
    words = ["vllm", "bench", "serve", "--base-url", f'"http://${{{t.address_var}}}:{t.port}"']
    for a in b.flags:
        words += cli_words(a)
    words += ["--result-dir", '"${SNCC_BENCH_DIR:-.}"']
    lines.append("exec " + shell.continued(words))
    return {"bench.sh": "\n".join(lines) + "\n"}

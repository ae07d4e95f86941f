"""``bench.sh``: ``vllm bench serve`` against the entry point with the plan's workload.

The result file (``bench-result.json``, vLLM's ``--save-result`` JSON) is written into
``${SNCC_BENCH_DIR:-.}``, never into the output folder (a rebuild replaces that folder).

Several API servers without a router (:class:`~sncc.lowering.deployment.BenchSpec` with several
clients): one ``vllm bench serve`` per server, started side by side with its share of the workload,
each writing ``bench-result-<i>.json`` and its output to ``bench-<i>.log``; the script waits for all
and exits non-zero when any client failed (an interrupt stops them all).
"""

from __future__ import annotations

from sncc.emit import shell
from sncc.emit._common import one_line
from sncc.emit.args import cli_words
from sncc.lowering.deployment import BenchClient, Deployment


def _command(c: BenchClient) -> list[str]:
    t = c.target
    words = ["vllm", "bench", "serve", "--base-url", f'"http://${{{t.address_var}}}:{t.port}"']
    for a in c.flags:
        words += cli_words(a)
    return words + ["--result-dir", '"${SNCC_BENCH_DIR:-.}"']


def emit(dep: Deployment) -> dict[str, str]:
    """``{"bench.sh": text}``, or {} when the deployment has no API server."""
    b = dep.bench
    if b is None:
        return {}
    clients = b.clients
    req = list(dep.bench_required())
    if len(clients) == 1:
        t = clients[0].target
        what = f"vllm bench serve against {t.role} on node {t.node}, port {t.port}"
    else:
        what = f"vllm bench serve: {len(clients)} clients side by side, one per API server, each with its share"
    lines = shell.header(dep, what, depth=0)
    files = " ".join(f"${{SNCC_BENCH_DIR:-.}}/{c.result_file}" for c in clients)
    lines.append(f"# Writes {files} (vLLM's result JSON; sncc calibrate reads "
                 + ("it)." if len(clients) == 1 else "the list of them as one bench_result and merges them)."))
    for n in b.notes:
        lines.append(f"# Note: {one_line(n)}")
    lines += ["set -euo pipefail", shell.OUT_HERE]
    lines += shell.source("env/common.sh")
    lines += shell.require(req)
    lines.append('mkdir -p "${SNCC_BENCH_DIR:-.}"')
    if len(clients) == 1:
        lines.append("exec " + shell.continued(_command(clients[0])))
        return {"bench.sh": "\n".join(lines) + "\n"}
    lines += ["pids=()", """trap 'kill "${pids[@]}" 2>/dev/null || true' INT TERM"""]
    for i, c in enumerate(clients):
        t = c.target
        log = f'"${{SNCC_BENCH_DIR:-.}}/bench-{i}.log"'
        lines += ["", f"# client {i}: {t.role} on node {t.node}, port {t.port}; {one_line(c.share)}",
                  shell.continued(_command(c)) + f" \\\n  >{log} 2>&1 &", 'pids+=("$!")',
                  f'echo "client {i}: pid $!, log {log[1:-1]}"']
    lines += ["", "rc=0", 'for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done',
              'if [ "$rc" -ne 0 ]; then echo "a benchmark client failed (exit $rc): see its log" >&2; fi',
              'exit "$rc"']
    return {"bench.sh": "\n".join(lines) + "\n"}

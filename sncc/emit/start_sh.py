"""``start/node<k>.sh``: start every server of node ``k`` and wait for them.

Each runs the node's ``launch/*.sh`` in the background, stops them all when one exits or the
script is interrupted, and returns the first failure's status.  (Process managers can run the
``launch/`` scripts one by one instead.)
"""

from __future__ import annotations

from sncc.emit import shell
from sncc.emit.launch_sh import script_name
from sncc.lowering.deployment import Deployment


def emit(dep: Deployment) -> dict[str, str]:
    """``{start/node<k>.sh: text}`` for every node."""
    out: dict[str, str] = {}
    for n in dep.nodes:
        procs = [p for p in dep.processes if p.node == n.index]
        if not procs:
            continue
        lines = shell.header(dep, f"start the {len(procs)} server process{'es' if len(procs) != 1 else ''} of node {n.index}")
        lines += ["set -euo pipefail", shell.OUT_UP, "pids=()",
                  """trap 'kill "${pids[@]}" 2>/dev/null || true' INT TERM EXIT"""]
        for p in procs:
            lines.append(f'"$SNCC_OUT/{script_name(p)}" &')
            lines.append('pids+=("$!")')
        lines += ["status=0", "wait -n || status=$?", "exit \"$status\""]
        out[f"start/node{n.index}.sh"] = "\n".join(lines) + "\n"
    return out

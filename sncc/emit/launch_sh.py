"""``launch/<name>.sh``: one script per engine server process.

Each script: checks the variables it needs (node addresses, the network interface, rank tables),
sources ``env/common.sh`` and its own ``env/<name>.sh``, changes into the output folder (relative
paths in engine configs resolve there), and ends with
``exec vllm serve <model> --config <role>.yaml <role's --no-X switches> <per-server flags>``.
It needs no accelerator to reach that line.
"""

from __future__ import annotations

from sncc.emit import shell
from sncc.emit.args import cli_words, shell_value, split
from sncc.emit.role_yaml import file_name as yaml_name
from sncc.lowering.deployment import Deployment, RoleDeployment, ServerProcess


def script_name(p: ServerProcess) -> str:
    """``launch/<name>.sh``."""
    return f"launch/{p.name}.sh"


def env_name(p: ServerProcess) -> str:
    """``env/<name>.sh``, the process's environment file."""
    return f"env/{p.name}.sh"


def command(dep: Deployment, r: RoleDeployment, p: ServerProcess) -> list[str]:
    """The shell words of the server command (after ``exec``)."""
    _, cli = split(r.args)
    words = ["vllm", "serve", shell_value(dep.model_path), "--config", f'"$SNCC_OUT/{yaml_name(r.name)}"']
    for a in list(cli) + list(p.flags):
        words += cli_words(a)
    return words


def emit_process(dep: Deployment, r: RoleDeployment, p: ServerProcess) -> str:
    """The launch script of process ``p`` of role ``r``."""
    lines = shell.header(dep, p.summary)
    lines.append(f"# Run on node {p.node}. " + shell.needs(p.required))
    lines += ["set -euo pipefail", shell.OUT_UP]
    lines += shell.source("env/common.sh")
    lines += shell.require(p.required)
    lines += shell.source(env_name(p))
    lines += ['cd "$SNCC_OUT"', "exec " + shell.continued(command(dep, r, p))]
    return "\n".join(lines) + "\n"


def emit_env(dep: Deployment, p: ServerProcess) -> str:
    """``env/<name>.sh``: node ``p.node``'s variables and the process's own (safe to source)."""
    from sncc.emit._common import generated_by, one_line

    node = dep.node(p.node)
    lines = ["# shellcheck shell=bash",
             f"# Environment of {one_line(p.summary)}; {generated_by(dep.name)}.",
             f"# Sourced by {script_name(p)} after env/common.sh; it only sets variables."]
    lines += shell.exports(list(node.env) + list(p.env))
    return "\n".join(lines) + "\n"


def emit(dep: Deployment) -> dict[str, str]:
    """Every ``launch/*.sh`` and ``env/<name>.sh``."""
    out: dict[str, str] = {}
    for r in dep.roles:
        for inst in r.instances:
            for p in inst.processes:
                out[script_name(p)] = emit_process(dep, r, p)
                out[env_name(p)] = emit_env(dep, p)
    return out

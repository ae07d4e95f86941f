"""``<role>.yaml``: the role's engine arguments for ``vllm serve <model> --config <role>.yaml``.

Flat dashed keys, one per line with the derivation as a comment, JSON arguments as JSON
strings, no false values (they are ``--no-X`` on the launch command line); see
:mod:`sncc.emit.args`.  The first line points editors at the schema copy.
"""

from __future__ import annotations

from sncc.emit._common import generated_by, one_line, schema_ref
from sncc.emit.args import split, yaml_scalar
from sncc.lowering.deployment import Deployment, RoleDeployment

SCHEMA = "vllm-serve-config"


def file_name(role: str) -> str:
    """``prefill.yaml``, ``decode.yaml``, ``serve.yaml``."""
    return f"{role}.yaml"


def emit_role(dep: Deployment, r: RoleDeployment) -> str:
    """The YAML text of role ``r`` (deterministic, LF, trailing newline)."""
    yaml_args, cli = split(r.args)
    lines = [f"# yaml-language-server: $schema={schema_ref(SCHEMA)}",
             f"# {dep.engine} {dep.engine_version} (vLLM {dep.vllm_version})" + (f" on {dep.system}" if dep.system else "")
             + f", {r.name} role; {generated_by(dep.name)}.",
             f"# Read by: vllm serve {one_line(dep.model_path)} --config {file_name(r.name)} (launch/*.sh add the per-server flags).",
             "# Keys are vLLM arguments: `key: value` is `--key value`; JSON arguments are JSON strings."]
    if cli:
        lines.append("# False switches are not here (vLLM drops `false`): the launch scripts pass "
                     + " ".join(f"--no-{a.name}" for a in cli) + ".")
    for a in yaml_args:
        line = f"{a.name}: {yaml_scalar(a.value)}"
        if a.note:
            line += f"  # {one_line(a.note)}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def emit(dep: Deployment) -> dict[str, str]:
    """``{<role>.yaml: text}`` for every role."""
    return {file_name(r.name): emit_role(dep, r) for r in dep.roles}

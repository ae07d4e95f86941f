"""``<role>.toml`` (vllm-ascend): the role's ``vllm serve`` arguments, exact, as TOML.

Every key is an argument of the pinned release, dashed as on the command line; one rule
(:mod:`sncc.emit.args`) maps it to the YAML and the command line: ``key = value`` is
``--key value``, ``key = true`` is ``--key``, ``key = false`` is ``--no-key``, a list repeats its
items, and a table ``[key]`` is the argument's JSON value (``[additional-config]`` is
``--additional-config '{...}'``).  Scalars come first, tables after (TOML order).  ``model`` is
the positional model argument.  Per-server flags (port, DP rank and address, kv-transfer config)
are not role arguments: they are in ``launch/*.sh``.  What the file was built for (chip, CANN,
versions) is in ``manifest.json``.
"""

from __future__ import annotations

import tomlkit

from sncc.emit._common import generated_by, one_line, schema_ref
from sncc.lowering.deployment import Deployment, RoleDeployment

SCHEMA = "vllm-serve-config"


def file_name(role: str) -> str:
    """``prefill.toml``, ``decode.toml``, ``serve.toml``."""
    return f"{role}.toml"


def _item(value, note: str = ""):
    it = tomlkit.item(value)
    if note:
        it.comment(one_line(note))
        it.trivia.comment_ws = "  "
    return it


def _table(d: dict):
    t = tomlkit.table()
    for k, v in d.items():
        if not isinstance(v, dict):
            t.add(k, v)
    for k, v in d.items():
        if isinstance(v, dict):
            t.add(k, _table(v))
    return t


def emit_role(dep: Deployment, r: RoleDeployment) -> str:
    """The TOML text of role ``r``."""
    doc = tomlkit.document()
    doc.add("model", _item(dep.model_path, "the positional model argument of vllm serve"))
    for a in r.args:
        if not isinstance(a.value, dict):
            doc.add(a.name, _item(a.value, a.note))
    for a in r.args:
        if isinstance(a.value, dict):
            if a.note:
                doc.add(tomlkit.comment(f"[{a.name}]: {one_line(a.note)}"))
            doc.add(a.name, _table(a.value))
    head = (f"#:schema {schema_ref(SCHEMA)}\n"
            f"# vllm serve arguments of the {r.name} role, {dep.engine} {dep.engine_version}; {generated_by(dep.name)}.\n"
            "# `key = value` is `--key value`, `key = true` is `--key`, `key = false` is `--no-key`, a table is the\n"
            f"# argument's JSON value; {r.name}.yaml carries the same arguments for `vllm serve --config`.\n\n")
    return head + tomlkit.dumps(doc)


def emit(dep: Deployment) -> dict[str, str]:
    """``{<role>.toml: text}`` for every role."""
    return {file_name(r.name): emit_role(dep, r) for r in dep.roles}

"""Emitters: a :class:`~sncc.lowering.deployment.Deployment` → the text of each output file.

Every emitter is a pure function of the Deployment (no plan, no catalog, no clock, no I/O);
two builds of one plan are byte-identical.  The output tree (docs/design.md §6):

==================================  ===============================================================
``<role>.yaml``                     ``vllm serve --config``: the role's arguments (:mod:`.role_yaml`)
``<role>.toml``                     vllm-ascend: the same arguments as TOML (engines/vllm_ascend)
``launch/<server>.sh``              one per server process: env, checks, ``exec vllm serve`` (:mod:`.launch_sh`)
``env/common.sh``, ``env/<server>.sh``  shared and per-server variables, safe to source
``start/node<k>.sh``                every server of node k
``proxy.sh``                        the router listing every API server (:mod:`.proxy_sh`)
``bench.sh``                        ``vllm bench serve`` with the plan's workload (:mod:`.bench_sh`)
``settings.json``                   the client's file (:mod:`.settings`)
``model_extra_config.<role>.json``  Omni-Infer (engines/omni_infer), with ``omni_placement.<role>.yaml``
``inventory.yml``                   Omni-Infer: Ansible inventory of its server playbook
``schemas/*.schema.json``           copies of the schemas the files name
``manifest.json``                   written by :mod:`.writer`: versions, chip, CANN, file hashes
==================================  ===============================================================
"""

from __future__ import annotations

import importlib

from typing import TYPE_CHECKING

from sncc.emit._common import SCHEMA_DIR

if TYPE_CHECKING:
    from sncc.lowering.deployment import Deployment

#: the emitters every engine gets, in output order (modules of this package, imported by
#: :func:`emit_all` when it runs: ``check`` imports :mod:`._common` through lowering, and must
#: not pay for every emitter)
SHARED = ("role_yaml", "launch_sh", "env_files", "start_sh", "proxy_sh", "bench_sh", "settings")

#: output file name pattern → schema name (the file's ``$schema`` / ``#:schema`` / yaml-language-server line)
SCHEMAS = {
    ".yaml": "vllm-serve-config",
    ".toml": "vllm-serve-config",
    "settings.json": "settings",
    "model_extra_config.": "omni-infer-model-extra-config",
    "omni_placement.": "omni-placement",
    "inventory.yml": None,
}

__all__ = ["emit_all", "schema_for"]


def schema_for(name: str) -> str | None:
    """Schema name of output ``name`` (``vllm-serve-config`` for ``decode.yaml``), or None."""
    base = name.rsplit("/", 1)[-1]
    if name.startswith(f"{SCHEMA_DIR}/") or "/" in name:
        return None
    for key in ("model_extra_config.", "omni_placement.", "settings.json", "inventory.yml"):
        if base.startswith(key) or base == key:
            return SCHEMAS[key]
    for ext in (".yaml", ".toml"):
        if base.endswith(ext):
            return SCHEMAS[ext]
    return None


def emit_all(dep: "Deployment", *, schemas: bool = True) -> dict[str, str]:
    """Every output of ``dep``: ``{relative path: text}``, the shared emitters' files first, then
    the engine's own, then (``schemas``) a copy of every schema the files reference.  Raises
    nothing for a valid Deployment."""
    from sncc import resources
    from sncc.engines.registry import adapter_for

    files: dict[str, str] = {}
    for name in SHARED:
        files.update(importlib.import_module(f"{__name__}.{name}").emit(dep))
    for path in adapter_for(dep.engine).emitters:
        files.update(importlib.import_module(path).emit(dep))
    if schemas:
        for s in sorted({sc for n in files if (sc := schema_for(n))}):
            files[f"{SCHEMA_DIR}/{s}.schema.json"] = resources.schema_path(s).read_text(encoding="utf-8")
    return files

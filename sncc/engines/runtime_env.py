"""Environment variables read outside the engines (``data/runtime_env.toml``): the collective
libraries, device runtimes and torch_npu, each with its reader and source; and the network
interface variables a multi-node deployment exports per vendor."""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from typing import Any, Mapping

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


@lru_cache(maxsize=1)
def _data() -> Mapping[str, Any]:
    return tomllib.loads((files("sncc.engines") / "data" / "runtime_env.toml").read_text(encoding="utf-8"))


def nic_vars(vendor: str) -> tuple[str, ...]:
    """The interface variables every node of a multi-node deployment on ``vendor`` (``ascend`` /
    ``nvidia``) exports."""
    return tuple(_data()["nic"].get(vendor, ()))


def runtime_vars(vendor: str) -> frozenset[str]:
    """Names of the variables outside the engine that ``vendor``'s stack reads."""
    return frozenset(v["name"] for v in _data()["var"] if vendor in v["vendors"])


def reader(name: str) -> str | None:
    """Who reads variable ``name`` (``CANN HCCL``, ``NCCL`` ...), or None when not listed."""
    return next((v["reader"] for v in _data()["var"] if v["name"] == name), None)


def written_variables(dep) -> dict[str, str]:
    """``{name: where}`` of every variable the deployment's env files export that sncc chose
    (``where`` the first process or ``env/common.sh``); the plan's own ``env`` entries are left
    out: they are the user's."""
    out: dict[str, str] = {}
    for v in dep.common_env:
        if v.note != "from plan env" and v.section != "plan env":
            out.setdefault(v.name, "env/common.sh")
    for n in dep.nodes:
        for v in n.env:
            out.setdefault(v.name, f"env (node {n.index})")
    for p in dep.processes:
        for v in p.env:
            if not v.section.endswith(" env"):   # the role's own env { } block
                out.setdefault(v.name, f"env/{p.name}.sh")
    return out


def unread_variables(dep, manifests) -> list[str] | None:
    """Names of variables sncc writes for ``dep`` that no reader knows: not in the engine's
    manifest env, not in the manifest of the vLLM it runs, not in :func:`runtime_vars`.
    ``manifests`` is the list of :class:`~sncc.engines.base.Manifest` to read (None entries
    allowed); None is returned when none is available (nothing to check against)."""
    found = [m for m in manifests if m is not None]
    if not found:
        return None
    known = set(runtime_vars(dep.vendor))
    for m in found:
        known |= set(m.env)
    return sorted(n for n in written_variables(dep) if n not in known)

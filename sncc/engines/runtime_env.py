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

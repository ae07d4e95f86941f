"""Node addresses, network interfaces and port bases: the one accessor lowering reads them from.

Until the plan language has ``hosts { }`` (docs/design.md §2.4), every address is a script
variable ``NODE_<k>_IP`` and the interface is ``SNCC_NIC``, which the launch scripts require
and check before anything else.  Port bases default to the design's values.
"""

from __future__ import annotations

from dataclasses import dataclass

#: port bases when the plan names none (docs/design.md §2.4): first API port, DP RPC port, KV port, proxy port
DEFAULT_API_PORT = 8000
DEFAULT_DP_RPC_PORT = 13345
DEFAULT_KV_PORT = 20001
DEFAULT_PROXY_PORT = 9000
#: the variable holding the network interface name when the plan names none
NIC_VAR = "SNCC_NIC"


@dataclass(frozen=True)
class PortBases:
    """First API port, first DP RPC port, first KV-transfer port (None: the connector's rule) and the proxy port."""

    api: int = DEFAULT_API_PORT
    dp_rpc: int = DEFAULT_DP_RPC_PORT
    kv: int | None = None
    proxy: int = DEFAULT_PROXY_PORT


def address_var(k: int) -> str:
    """The shell variable that holds node ``k``'s address in every script: ``NODE_<k>_IP``."""
    return f"NODE_{k}_IP"


def node_address(plan, k: int) -> tuple[str | None, str | None]:
    """(literal address, env-variable name) of node ``k``; (None, None) when the plan gives none."""
    hosts = getattr(plan, "hosts", None)
    addrs = getattr(hosts, "addresses", None) if hosts is not None else None
    if not addrs or k >= len(addrs):
        return None, None
    a = addrs[k]
    name = getattr(a, "name", None)
    return (None, name) if name is not None else (str(a), None)


def node_nic(plan) -> str | None:
    """The network interface name the plan gives (``hosts.nic``), or None."""
    hosts = getattr(plan, "hosts", None)
    nic = getattr(hosts, "nic", None) if hosts is not None else None
    return str(nic) if nic else None


def port_bases(plan) -> PortBases:
    """Port bases of ``plan`` (``hosts`` values where given, else the defaults)."""
    hosts = getattr(plan, "hosts", None)

    def get(attr: str, default):
        v = getattr(hosts, attr, None) if hosts is not None else None
        return int(v) if v is not None else default

    return PortBases(api=get("port", DEFAULT_API_PORT), dp_rpc=get("dp_rpc_port", DEFAULT_DP_RPC_PORT),
                     kv=get("kv_port", None), proxy=get("proxy_port", DEFAULT_PROXY_PORT))

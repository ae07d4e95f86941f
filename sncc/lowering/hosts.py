"""Node addresses, the network interface and port bases: the one accessor lowering reads them from.

The plan's ``hosts { }`` block (docs/design.md §2.4) gives node *k*'s address as
``addresses[k]`` (a literal or an ``env("NAME")`` reference), the cluster network interface
(``nic``) and the port bases.  Without it, every address is the script variable ``NODE_<k>_IP``
and the interface is ``SNCC_NIC``; the launch scripts check both before anything else.  In the
scripts a node's address is always read through ``NODE_<k>_IP``: ``env/common.sh`` sets it from
the plan (a value the caller already set wins), so one command line serves every case.

A port base the plan does not write is ``None`` here where the connector has its own rule (the
KV port: Mooncake's floor above AscendDirectTransport's random range), else the plan model's
default (:class:`sncc.plan.model.Hosts`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sncc.plan.address import address_problem, nic_problem, repeated_address

#: the variable holding the network interface name when the plan names none
NIC_VAR = "SNCC_NIC"


def _default(field: str) -> int:
    from sncc.plan.model import Hosts

    return int(Hosts.model_fields[field].default)


#: port bases when the plan names none (the plan model's defaults, docs/design.md §2.4)
DEFAULT_API_PORT = _default("port")
DEFAULT_DP_RPC_PORT = _default("dp_rpc_port")
DEFAULT_KV_PORT = _default("kv_port")
DEFAULT_PROXY_PORT = _default("proxy_port")


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


def addresses(plan) -> list:
    """The plan's ``hosts.addresses`` (strings and :class:`~sncc.plan.model.EnvRef`), [] without."""
    hosts = plan.hosts
    return list(hosts.addresses or []) if hosts is not None else []


def node_address(plan, k: int) -> tuple[str | None, str | None]:
    """(literal address, env-variable name) of node ``k``; (None, None) when the plan gives none."""
    addrs = addresses(plan)
    if k >= len(addrs):
        return None, None
    a = addrs[k]
    name = getattr(a, "name", None)
    return (None, name) if name is not None else (str(a), None)


def node_nic(plan) -> str | None:
    """The network interface name the plan gives (``hosts.nic``), or None."""
    hosts = plan.hosts
    return str(hosts.nic) if hosts is not None and hosts.nic else None


def port_bases(plan) -> PortBases:
    """Port bases of ``plan``: ``hosts`` values where written, else the defaults (the KV base:
    None, so the connector's rule applies)."""
    hosts = plan.hosts

    def get(attr: str, default):
        if hosts is None or hosts.is_default(attr):
            return default
        return int(getattr(hosts, attr))

    return PortBases(api=get("port", DEFAULT_API_PORT), dp_rpc=get("dp_rpc_port", DEFAULT_DP_RPC_PORT),
                     kv=get("kv_port", None), proxy=get("proxy_port", DEFAULT_PROXY_PORT))


def check_hosts(plan, nodes: int) -> tuple[str, str] | None:
    """(message, ``hosts`` key) when ``hosts`` cannot describe a deployment of ``nodes`` nodes:
    :func:`check_addresses`, or a ``nic`` that is not an interface name; None when it can.  The
    parts that need no node count (:func:`sncc.plan.address.repeated_address`,
    :func:`~sncc.plan.address.nic_problem`) are reported by the ``hosts`` check too, so ``sncc
    check`` names them even when an error elsewhere keeps the plan from lowering."""
    why = check_addresses(plan, nodes)
    if why:
        return why, "addresses"
    why = nic_problem(node_nic(plan))
    if why:
        return why, "nic"
    return None


def check_addresses(plan, nodes: int) -> str | None:
    """Why ``hosts.addresses`` cannot name the deployment's ``nodes`` nodes (fewer addresses than
    nodes, a literal that is no address, or a literal or an ``env("NAME")`` given twice, among the
    used nodes' or the spare addresses past them: :func:`sncc.plan.address.repeated_address`),
    or None when it can (or the plan has none)."""
    addrs = addresses(plan)
    if not addrs:
        return None
    if len(addrs) < nodes:
        return (f"`hosts.addresses` names {len(addrs)} node{'s' if len(addrs) != 1 else ''}, and the deployment "
                f"uses {nodes}: node k is addresses[k], so give one address per node")
    for k, a in enumerate(addrs):
        if getattr(a, "name", None) is None:
            why = address_problem(str(a))   # the builder rejects these first (SN2004 at the literal)
            if why is not None:
                return f"`{a}` (hosts.addresses[{k}]) is not an IP address or host name: {why}"
    return repeated_address(addrs)


def unused_addresses(plan, nodes: int) -> str | None:
    """Why ``hosts.addresses`` looks miscounted: it has entries past the deployment's ``nodes``
    nodes, which no script reads (node k is ``addresses[k]``); None when every entry names a node."""
    addrs = addresses(plan)
    if len(addrs) <= nodes:
        return None
    spare = [f"addresses[{k}] (" + (f"env(\"{a.name}\")" if getattr(a, "name", None) is not None else f"`{a}`") + ")"
             for k, a in enumerate(addrs) if k >= nodes]
    return (f"`hosts.addresses` names {len(addrs)} nodes, and the deployment uses {nodes}: "
            f"{', '.join(spare)} {'is' if len(spare) == 1 else 'are'} unused")

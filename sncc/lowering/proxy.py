"""The router in front of the servers (:class:`~sncc.lowering.deployment.ProxySpec`).

* disaggregated plans: the engine's P/D proxy (vllm-ascend's ``load_balance_proxy_server_example.py``,
  vLLM's NIXL ``toy_proxy_server.py``) or Omni-Infer's nginx global proxy, listing every prefill
  and decode API server;
* aggregated plans with several API servers: the engine's DP load balancer where the pinned
  release ships one (vllm-ascend from v0.23.0), else none (clients pick a server);
* one API server: no proxy; the benchmark calls the server.

It runs on node 0 of the deployment on ``hosts.proxy_port`` (default 9000).  Facts: the
adapter's ``pins.toml [proxy.*]``.
"""

from __future__ import annotations

from sncc.lowering.context import LowerCtx
from sncc.lowering.deployment import Arg, Endpoint, ProxySpec, RoleDeployment, ShellValue
from sncc.lowering.hosts import address_var


def endpoints(roles: tuple[RoleDeployment, ...], name: str) -> tuple[Endpoint, ...]:
    """Every API server of role ``name``: (node, port) of each process that serves the API."""
    out = []
    for r in roles:
        if r.name != name:
            continue
        for inst in r.instances:
            for p in inst.processes:
                if p.api_port is not None:
                    out.append(Endpoint(name, p.node, address_var(p.node), p.api_port))
    return tuple(out)


def _addr(e: Endpoint) -> ShellValue:
    return ShellValue("{" + e.address_var + "}")


def _hostport(e: Endpoint) -> ShellValue:
    return ShellValue("{" + e.address_var + "}:" + str(e.port))


def _names(args: dict) -> dict:
    """The proxy's flag names as dashed argument names (no leading ``--``)."""
    return {k: v.lstrip("-") for k, v in args.items()}


def proxy_spec(ctx: LowerCtx, roles: tuple[RoleDeployment, ...]) -> ProxySpec | None:
    """The proxy of the deployment, or None (see the module docstring)."""
    from sncc import catalog

    facts = ctx.adapter.data.get("proxy", {})
    port = ctx.ports.proxy
    if ctx.plan.disaggregated:
        pre, dec = endpoints(roles, "prefill"), endpoints(roles, "decode")
        if "global" in facts:
            f = facts["global"]
            policy, _ = ctx.adapter.proxy_policy(ctx.plan)
            a = _names(f["args"])
            flags = (Arg(a["port"], port), Arg(a["prefill"], ShellValue(",".join(_hostport(e).template for e in pre))),
                     Arg(a["decode"], ShellValue(",".join(_hostport(e).template for e in dec))),
                     Arg(a["prefill_policy"], policy), Arg(a["decode_policy"], policy))
            return ProxySpec(kind="global", script=f["script"], root_env=f["root_env"], root_help=f["root_help"],
                             node=0, port=port, flags=flags, policy=policy, endpoints=pre + dec, launcher="bash",
                             source=tuple(f.get("source", ())))
        f = facts.get("pd")
        if f is None:
            return None
        a = _names(f["args"])
        flags = (Arg(a["host"], "0.0.0.0"), Arg(a["port"], port),
                 Arg(a["prefill_hosts"], [_addr(e) for e in pre]), Arg(a["prefill_ports"], [e.port for e in pre]),
                 Arg(a["decode_hosts"], [_addr(e) for e in dec]), Arg(a["decode_ports"], [e.port for e in dec]))
        return ProxySpec(kind="pd", script=f["script"], root_env=f["root_env"], root_help=f["root_help"], node=0,
                         port=port, flags=flags, policy=f["policy"], endpoints=pre + dec, source=tuple(f.get("source", ())))
    eps = endpoints(roles, "serve")
    f = facts.get("dp")
    if len(eps) <= 1 or f is None:
        return None
    if f.get("since") and catalog.parse_version(ctx.pin.version) < catalog.parse_version(f["since"]):
        return None
    a = _names(f["args"])
    flags = (Arg(a["host"], "0.0.0.0"), Arg(a["port"], port), Arg(a["hosts"], [_addr(e) for e in eps]),
             Arg(a["ports"], [e.port for e in eps]))
    return ProxySpec(kind="dp", script=f["script"], root_env=f["root_env"], root_help=f["root_help"], node=0,
                     port=port, flags=flags, policy=f["policy"], endpoints=eps, source=tuple(f.get("source", ())))

"""Server processes of each instance: per-process flags, environment and ports.

Three launch patterns, chosen by the adapter (:meth:`~sncc.engines.base.EngineAdapter.launch_mode`):

* **internal** (vLLM's own DP; aggregated serving, and vLLM on NVIDIA): one process per node of
  an instance.  An instance on several nodes passes ``--data-parallel-size-local``,
  ``--data-parallel-address <node 0>``, ``--data-parallel-rpc-port`` on every node, and
  ``--data-parallel-start-rank`` plus ``--headless`` on every node but the first (vLLM
  arg_utils: a non-headless node with a start rank would serve its own API, hybrid LB).
* **external** (vllm-ascend P/D, its documented external-DP pattern): one ``vllm serve`` per DP
  rank with ``--data-parallel-rank``, its own ``--port`` and device slice.
* **per-rank-env** (Omni-Infer, its ``start_api_servers.py``): one process per DP rank with
  ``--data-parallel-size 1 --data-parallel-size-local 1`` and the rank in ``VLLM_DP_*``.

Ports: API ports count up per node from the base; each instance with DP > 1 gets its own DP RPC
port; KV-transfer ports follow the connector's rule (:class:`~sncc.engines.base.ConnectorSpec`):
an instance takes ``devices`` consecutive ports, and instances never overlap.
"""

from __future__ import annotations

import json
import re

from sncc.lowering.context import LowerCtx, LoweringError
from sncc.lowering.deployment import (Arg, EnvVar, InstanceDeployment, RankDeployment, Required, ServerProcess,
                                      ShellValue, node_requirement)
from sncc.lowering.env import map_devices, mask_var
from sncc.lowering.hosts import NIC_VAR, address_var, node_address, node_nic
from sncc.lowering.placement import InstanceSlot
from sncc.lowering.roles import RoleFacts


class PortCounter:
    """Next free API port per node, the next DP RPC port and the next KV port offset."""

    def __init__(self, ctx: LowerCtx, kv_base: int | None) -> None:
        self.api_base = ctx.ports.api
        self.next_api: dict[int, int] = {}
        self.next_rpc = ctx.ports.dp_rpc
        self.kv_next = kv_base

    def api(self, node: int) -> int:
        """Take the next API port on ``node``."""
        p = self.next_api.get(node, self.api_base)
        self.next_api[node] = p + 1
        return p

    def rpc(self) -> int:
        """Take the next DP RPC port."""
        p = self.next_rpc
        self.next_rpc += 1
        return p

    def kv(self, span: int) -> int | None:
        """Take ``span`` consecutive KV ports; None without a KV connector."""
        if self.kv_next is None:
            return None
        p = self.kv_next
        self.kv_next += span
        return p


def kv_base(ctx: LowerCtx, conn) -> int | None:
    """First KV-transfer port: the plan's ``hosts.kv_port``, else the connector's floor for this
    node size (Mooncake on Ascend: above AscendDirectTransport's random range), else the default."""
    from sncc.lowering.hosts import DEFAULT_KV_PORT

    if conn is None or conn.port_rule in ("llmdatadist", "none"):
        return None
    if ctx.ports.kv is not None:
        return ctx.ports.kv
    floor = conn.min_kv_port.get(str(ctx.per_node)) if ctx.per_node else None
    if floor is None and conn.min_kv_port:
        floor = max(conn.min_kv_port.values())
    return max(DEFAULT_KV_PORT, int(floor)) if floor else DEFAULT_KV_PORT


def _addr(k: int) -> ShellValue:
    return ShellValue("{" + address_var(k) + "}")


def _req_node(ctx: LowerCtx, k: int, what: str) -> list[Required]:
    """What a script needs for node ``k``'s address ([] when the plan gives it literally)."""
    lit, envref = node_address(ctx.plan, k)
    need = node_requirement(k, lit, envref, what)
    return [need] if need is not None else []


def instance_processes(ctx: LowerCtx, rs: RoleFacts, slot: InstanceSlot, ports: PortCounter, conn,
                       kv_rank: int | None, nodes_total: int) -> InstanceDeployment:
    """The :class:`InstanceDeployment` of ``slot`` with its server processes (see the module docstring)."""
    mode = ctx.adapter.launch_mode(ctx.plan.disaggregated)
    per_rank = rs.tp * rs.pp
    master = slot.nodes[0]
    multi = len(slot.nodes) > 1
    rpc = ports.rpc() if (rs.dp > 1 or multi) else None
    kv_port = ports.kv(rs.devices) if conn is not None else None
    ranks: list[RankDeployment] = []
    procs: list[ServerProcess] = []
    visible = mask_var(ctx)
    base_required = _req_node(ctx, master, f"the DP master of {rs.name} instance {slot.index}")
    nic = [Required(NIC_VAR, f"set {NIC_VAR} to the network interface of the cluster network "
                             "(the dev field of: ip -4 route list 0/0)")] if nodes_total > 1 and node_nic(ctx.plan) is None else []
    if mode == "internal":
        for j, node in enumerate(slot.nodes):
            local = [r for r in slot.ranks if r.node == node]
            devs = tuple(d for r in local for d in r.devices)
            port = ports.api(node) if j == 0 else None
            for r in local:
                ranks.append(RankDeployment(r.dp_rank, node, r.devices, port if r is local[0] and j == 0 else None))
            flags: list[Arg] = []
            if port is not None:
                flags.append(Arg("port", port, "API port of this instance"))
            if multi:
                flags += [Arg("data-parallel-size-local", len(local), f"DP ranks on node {node}"),
                          Arg("data-parallel-address", _addr(master), f"node {master}, the instance's DP master"),
                          Arg("data-parallel-rpc-port", rpc, "DP RPC port of this instance")]
                if j > 0:
                    flags += [Arg("data-parallel-start-rank", local[0].dp_rank, f"first DP rank on node {node}"),
                              Arg("headless", True, "engine cores only; node 0 serves the API")]
            elif rpc is not None:
                flags.append(Arg("data-parallel-rpc-port", rpc, "DP RPC port of this instance (unique per node)"))
            name = f"{rs.name}-{slot.index}-node{node}"
            env = [EnvVar(visible, map_devices(ctx, rs, devs), f"{_n(len(devs), 'device')} of node {node}")]
            procs.append(_finish(ctx, rs, slot, name, node, tuple(x.dp_rank for x in local), devs, port, flags, env,
                                 conn, kv_port, kv_rank, base_required + nic, mode))
    else:
        for r in slot.ranks:
            port = ports.api(r.node)
            ranks.append(RankDeployment(r.dp_rank, r.node, r.devices, port))
            flags = [Arg("port", port, f"API port of DP rank {r.dp_rank}")]
            env = [EnvVar(visible, map_devices(ctx, rs, r.devices), f"DP rank {r.dp_rank}: {_n(per_rank, 'device')} of node {r.node}")]
            if mode == "per-rank-env":
                flags += [Arg("data-parallel-size", 1, "one engine core per server (start_api_servers.py)"),
                          Arg("data-parallel-size-local", 1, "one engine core per server"),
                          Arg("data-parallel-address", _addr(master), f"node {master}, the instance's DP master"),
                          Arg("data-parallel-rpc-port", rpc if rpc is not None else ctx.ports.dp_rpc,
                              "DP RPC port of this instance")]
                env += ctx.adapter.rank_env(ctx, rs, r.dp_rank, _addr(master),
                                            rpc if rpc is not None else ctx.ports.dp_rpc)
            elif rs.dp > 1:
                flags += [Arg("data-parallel-rank", r.dp_rank, "external DP: this server is one rank"),
                          Arg("data-parallel-address", _addr(master), f"node {master}, the instance's DP master"),
                          Arg("data-parallel-rpc-port", rpc, "DP RPC port of this instance")]
            name = f"{rs.name}-{slot.index}-node{r.node}" + (f"-rank{r.dp_rank}" if rs.dp > 1 else "")
            procs.append(_finish(ctx, rs, slot, name, r.node, (r.dp_rank,), r.devices, port, flags, env,
                                 conn, kv_port, kv_rank, base_required + nic, mode))
    return InstanceDeployment(role=rs.name, index=slot.index, nodes=slot.nodes, ranks=tuple(ranks),
                              dp_master_node=master, dp_rpc_port=rpc, kv_port=kv_port, processes=tuple(procs))


def _finish(ctx: LowerCtx, rs: RoleFacts, slot: InstanceSlot, name: str, node: int, dp_ranks: tuple[int, ...],
            devs: tuple[int, ...], port: int | None, flags: list[Arg], env: list[EnvVar], conn, kv_port: int | None,
            kv_rank: int | None, required: list[Required], mode: str) -> ServerProcess:
    from sncc.lowering.env import role_env

    req = list(required) + list(ctx.adapter.required_vars(ctx, rs))
    env = list(ctx.adapter.role_env(ctx, rs, slot.index)) + env + list(role_env(ctx, rs))
    if node != slot.nodes[0]:
        req += _req_node(ctx, node, "this node")
    if conn is not None:
        cfg, cenv, creq = kv_transfer(ctx, rs, name, node, dp_ranks, conn, kv_port, kv_rank)
        flags.append(Arg("kv-transfer-config", cfg, f"{conn.class_name}; engine_id unique per server process"
                         if "engine_id" in cfg else f"{conn.class_name}" + (f"; {conn.notes}" if conn.notes else "")))
        env += cenv
        req += creq
    req += referenced(ctx, env, flags, node)
    seen: set[str] = set()
    req = [r for r in req if not (r.name in seen or seen.add(r.name))]
    what = "API server" if port is not None else "headless engine cores"
    summary = (f"{rs.name} instance {slot.index}, node {node}, DP rank{'s' if len(dp_ranks) > 1 else ''} "
               f"{_ranks(dp_ranks)}, devices {_ranks(devs)}: {what}" + (f" on port {port}" if port is not None else ""))
    return ServerProcess(name=name, role=rs.name, instance=slot.index, node=node, ranks=dp_ranks, devices=devs,
                         api_port=port, flags=tuple(flags), env=tuple(env), required=tuple(req), summary=summary)


def referenced(ctx: LowerCtx, env: list[EnvVar], flags: list[Arg], node: int) -> list[Required]:
    """A :class:`Required` for every variable a process's values expand (node addresses of other
    nodes, the interface variable), so the script checks them all before it starts anything."""
    from sncc.lowering.env import node_env

    names: list[str] = []
    values = [v.value for v in env] + [v.value for v in node_env(ctx, node, len(ctx.slots) and _nodes(ctx))]
    for a in flags:
        values += a.value if isinstance(a.value, list) else [a.value]
    for v in values:
        if isinstance(v, ShellValue):
            names += [n for n in v.variables if n != "SNCC_OUT"]
    out = []
    for n in dict.fromkeys(names):
        m = re.fullmatch(r"NODE_(\d+)_IP", n)
        if m:
            out += _req_node(ctx, int(m.group(1)), "this node" if int(m.group(1)) == node else "a server this one talks to")
        elif n == NIC_VAR:
            out.append(Required(NIC_VAR, f"set {NIC_VAR} to the network interface of the cluster network "
                                         "(the dev field of: ip -4 route list 0/0)"))
        else:
            out.append(Required(n, f"set {n}"))
    return out


def _nodes(ctx: LowerCtx) -> int:
    """Nodes the placement uses (1 + the highest node of a rank), computed once per placement:
    every process asks, so a scan per process would make lowering quadratic in the instances."""
    if ctx.nodes_used is None or ctx.nodes_used[0] is not ctx.slots:
        ctx.nodes_used = (ctx.slots, 1 + max((r.node for s in ctx.slots for r in s.ranks), default=0))
    return ctx.nodes_used[1]


def _n(k: int, word: str) -> str:
    from sncc.units import format_count

    return format_count(k, word)


def _ranks(xs: tuple[int, ...]) -> str:
    if len(xs) > 2 and list(xs) == list(range(xs[0], xs[0] + len(xs))):
        return f"{xs[0]}-{xs[-1]}"
    return ",".join(map(str, xs))


def kv_transfer(ctx: LowerCtx, rs: RoleFacts, name: str, node: int, dp_ranks: tuple[int, ...], conn,
                kv_port: int | None, kv_rank: int | None) -> tuple[dict, list[EnvVar], list[Required]]:
    """(``--kv-transfer-config`` object, extra env, required variables) of one process.

    ``engine_id``: ``per-node`` connectors get the process name (vLLM appends ``_dp<local rank>``
    within a process, so names unique per process keep every engine core unique); ``kv-rank``
    connectors (Omni-Infer) the instance's kv_rank.  Port rules: ``kv_port+rank`` writes the
    instance's ``kv_port``; ``env`` exports ``port_env`` = the instance's base (and ``host_env`` =
    this node's address)."""
    plan = ctx.plan
    cfg: dict = {"kv_connector": conn.class_name}
    if conn.module_path:
        cfg["kv_connector_module_path"] = conn.module_path
    for k, v in conn.extra.items():
        cfg[k] = v
    cfg["kv_role"] = conn.kv_role or rs_kv_role(plan, rs.name)
    env: list[EnvVar] = []
    req: list[Required] = []
    if conn.engine_id == "kv-rank":
        cfg["kv_rank"] = kv_rank
        cfg["engine_id"] = str(kv_rank)
        cfg["kv_parallel_size"] = sum(r.instances for r in ctx.roles.values())
    elif conn.engine_id != "none":
        cfg["engine_id"] = name
    if conn.port_rule == "kv_port+rank":
        cfg["kv_port"] = kv_port
    elif conn.port_rule == "env":
        if conn.port_env:
            how = ("DP rank r listens on base + r" if conn.listen_ports(ctx.pin.vllm) == "dp-rank"
                   else "ranks listen on base + DP rank × tp + tp rank")
            env.append(EnvVar(conn.port_env, str(kv_port), f"{conn.class_name} port base of this instance "
                              f"({how})", "KV transfer"))
        if conn.host_env:
            env.append(EnvVar(conn.host_env, _addr(node), "this node's address", "KV transfer"))
    if conn.rank_table_env:
        req.append(Required(conn.rank_table_env, f"set {conn.rank_table_env} to the rank table of this deployment "
                                                 "(vllm-ascend examples/disaggregated_prefill_v1/gen_ranktable.sh)"))
    extra = ctx.adapter.kv_connector_extra(ctx, conn, rs)
    if extra:
        cfg["kv_connector_extra_config"] = extra
    json.dumps(cfg)  # must be JSON-serialisable
    return cfg, env, req


def rs_kv_role(plan, name: str) -> str:
    """``kv_producer`` for prefill, ``kv_consumer`` for decode.  Raises :class:`LoweringError`
    for a role that transfers no KV (serve)."""
    try:
        return {"prefill": "kv_producer", "decode": "kv_consumer"}[name]
    except KeyError:
        raise LoweringError(f"`{name}` does not transfer KV cache") from None


def kv_listen_ports(conn, listen: str, tp: int, rank) -> list[int]:
    """Offsets from its instance's KV port base that DP rank ``rank`` (a :class:`RankDeployment`)
    listens on under connector ``conn``: ``kv_port+rank`` connectors ``dp_rank × tp × pp + local
    rank`` (one per device of the rank); ``env`` connectors (NIXL, vllm-ascend LLMDataDist) by
    ``listen`` (:meth:`~sncc.engines.base.ConnectorSpec.listen_ports`): ``"tp-rank"`` ``dp_rank × tp
    + tp_rank``, ``"dp-rank"`` ``dp_rank``; [] for connectors whose ports sncc does not assign."""
    if conn is None:
        return []
    if conn.port_rule == "kv_port+rank":
        width = len(rank.devices)
        return [rank.dp_rank * width + j for j in range(width)]
    if conn.port_rule == "env" and conn.port_env:
        if listen == "dp-rank":
            return [rank.dp_rank]
        return [rank.dp_rank * tp + j for j in range(tp)]
    return []


def port_clash(roles, proxy, conn=None, listen: str = "tp-rank") -> tuple[str, str, str, str | None] | None:
    """(message, the ``hosts`` key of the listener's port base, code, help) for the first listener of
    the deployment whose port is past :data:`~sncc.plan.model.PORT_MAX` (counted up from its base:
    one per server, instance or rank; SN4047) or that a listener before it already has on its node
    (SN4043), or None.  Listeners: every server's API port on its node, each instance's DP RPC port
    on its DP master node, each rank's KV-transfer ports on its node (:func:`kv_listen_ports`:
    Mooncake's ``kv_port + dp_rank × tp × pp + local rank``, NIXL's side-channel ports from
    ``VLLM_NIXL_SIDE_CHANNEL_PORT`` by the release's ``listen`` rule, LLMDataDist's RPC ports), and
    the proxy's port on its node."""
    from sncc.plan.model import PORT_MAX

    listeners: list[tuple[int, int, str, str]] = []   # (node, port, what, hosts key), in deployment order
    for r in roles:
        for inst in r.instances:
            who = f"{r.name} instance {inst.index}"
            for p in inst.processes:
                if p.api_port is not None:
                    listeners.append((p.node, p.api_port, f"the API server {p.name}", "port"))
            if inst.dp_rpc_port is not None:
                listeners.append((inst.dp_master_node, inst.dp_rpc_port, f"the DP RPC port of {who}", "dp_rpc_port"))
            if inst.kv_port is not None:
                what = (f"the {conn.port_env} side-channel port" if conn is not None and conn.port_rule == "env"
                        else "a KV-transfer port")
                for rank in inst.ranks:
                    for off in kv_listen_ports(conn, listen, r.tp, rank):
                        listeners.append((rank.node, inst.kv_port + off, f"{what} of {who} (DP rank {rank.dp_rank})",
                                          "kv_port"))
    if proxy is not None:
        listeners.append((proxy.node, proxy.port, "the proxy", "proxy_port"))
    over = next((x for x in listeners if x[1] > PORT_MAX), None)
    if over is not None:
        node, port, what, key = over
        top = max(x[1] for x in listeners if x[3] == key)
        return (f"port {port} of {what} on node {node} is past {PORT_MAX}, the largest TCP port: the ports "
                f"counted up from `hosts.{key}` (one per server, instance or rank) reach {top}", key, "SN4047",
                f"lower `hosts.{key}` by at least {top - PORT_MAX}, and keep its range clear of the other listeners'")
    used: dict[tuple[int, int], str] = {}
    for node, port, what, key in listeners:
        prev = used.get((node, port))
        if prev is not None:
            return f"port {port} on node {node} is taken twice: by {prev} and by {what}", key, "SN4043", None
        used[(node, port)] = what
    return None

"""Lowering: a typed plan and its resolved facts → the :class:`~sncc.lowering.deployment.Deployment`
that every emitter reads (docs/design.md §5).

Steps (each its own module, each pure: no I/O, no clock, no hash-order dependence):

1. :mod:`.context` — the engine adapter and the pin the plan is built for, node size and count;
2. :mod:`.roles` — each role's parallelism and per-role settings (the one accessor);
3. :mod:`.placement` — instances and DP ranks onto nodes and device slices;
4. :mod:`.engine_args` plus the adapter's hooks — role-level engine arguments;
5. :mod:`.launch` — server processes, per-process flags, ports, KV-transfer configs;
6. :mod:`.env` — shared and per-node environment; :mod:`.proxy`, :mod:`.bench`, :mod:`.client`.

Raises :class:`LoweringError` (one line, with the plan path it is about) for a plan no engine
can run as written; the compiler turns it into an SN4042 diagnostic.
"""

from __future__ import annotations

from sncc.lowering.context import LowerCtx, LoweringError, make_context
from sncc.lowering.deployment import (Arg, Deployment, EnvVar, InstanceDeployment, NodeDeployment, RoleDeployment,
                                      ServerProcess, ShellValue)

__all__ = ["Arg", "Deployment", "EnvVar", "InstanceDeployment", "LowerCtx", "LoweringError", "NodeDeployment",
           "RoleDeployment", "ServerProcess", "ShellValue", "lower"]


def lower(plan, resolved, plan_file: str | None = None) -> Deployment:
    """Lower ``plan`` (with its ``resolved`` facts) to a :class:`Deployment`.

    ``plan_file`` is the plan's path as the user named it (recorded in the benchmark's
    metadata so ``sncc calibrate`` finds the plan).  Never reads files or environment variables.
    """
    import sncc
    from sncc.lowering.bench import bench_spec
    from sncc.lowering.client import client_settings
    from sncc.lowering.engine_args import role_args
    from sncc.lowering.env import common_env, node_env, ready_timeout, setup_scripts, unread_plan_env
    from sncc.diagnostics import codes
    from sncc.lowering.hosts import address_var, check_hosts, node_address
    from sncc.lowering.launch import PortCounter, instance_processes, kv_base, port_clash
    from sncc.lowering.placement import PlacementError, place
    from sncc.lowering.proxy import proxy_spec

    ctx = make_context(plan, resolved)
    conn = None
    if ctx.connector_id:
        conn = ctx.adapter.connector(ctx.connector_id)
        if conn is None:
            raise LoweringError(f"sncc has no launch facts for the `{ctx.connector_id}` connector on "
                                f"{ctx.adapter.label} {ctx.pin.version}", ("kv_transfer", "connector"))
        unlaunched = [n for n in ctx.roles if n not in conn.roles]
        if unlaunched:
            raise LoweringError(f"sncc launches the `{ctx.connector_id}` connector on {ctx.adapter.label} "
                                f"{ctx.pin.version} for a {' or '.join(f'`{r}`' for r in conn.roles)} role only, "
                                f"not for {' or '.join(f'`{r}`' for r in unlaunched)}", ("kv_transfer", "connector"))
    try:
        slots, used = place([(n, rs.instances, rs.dp, rs.tp * rs.pp, rs.tp) for n, rs in ctx.roles.items()],
                            ctx.per_node, ctx.nodes_available)
    except PlacementError as e:
        raise LoweringError(str(e), e.path, help=e.help) from None
    ctx.slots = slots
    nodes_total = len(used)
    bad_hosts = check_hosts(plan, nodes_total)
    if bad_hosts:
        raise LoweringError(bad_hosts[0], ("hosts", bad_hosts[1]), codes.HOSTS_ADDRESSES)
    ports = PortCounter(ctx, kv_base(ctx, conn))
    kv_ranks = iter(range(sum(rs.instances for rs in ctx.roles.values())))
    roles = []
    for name, rs in ctx.roles.items():
        args = tuple(role_args(ctx, rs)) + tuple(ctx.adapter.role_extra_args(ctx, rs))
        insts = tuple(instance_processes(ctx, rs, s, ports, conn, next(kv_ranks), nodes_total)
                      for s in slots if s.role == name)
        roles.append(RoleDeployment(name=name, tp=rs.tp, dp=rs.dp, pp=rs.pp, devices=rs.devices,
                                    kv_role={"prefill": "kv_producer", "decode": "kv_consumer"}.get(name)
                                    if plan.disaggregated else None,
                                    launch=ctx.adapter.launch_mode(plan.disaggregated), args=args, instances=insts,
                                    files=ctx.adapter.role_files(ctx, rs)))
    roles_t = tuple(roles)
    nodes = []
    for k in range(nodes_total):
        lit, envref = node_address(plan, k)
        nodes.append(NodeDeployment(index=k, address_var=address_var(k), address=lit, address_env=envref,
                                    devices=used[k], env=node_env(ctx, k, nodes_total)))
    proxy = proxy_spec(ctx, roles_t)
    clash = port_clash(roles_t, proxy, conn, conn.listen_ports(ctx.pin.vllm) if conn is not None else "tp-rank")
    if clash:
        raise LoweringError(clash[0], ("hosts", clash[1]),
                            codes.PORT_CONFLICT if clash[2] == codes.PORT_CONFLICT.code else codes.PORT_OUT_OF_RANGE,
                            help=clash[3])
    gw = plan.gateway
    secrets = (gw.api_key.name,) if gw is not None and gw.api_key is not None else ()
    chip, system = resolved.chip, resolved.system
    facts = {
        "plan": plan.name, "engine": ctx.adapter.kind, "engine_version": ctx.pin.version,
        "engine_revision": ctx.pin.revision or None, "engine_version_note": ctx.pin_note or None,
        "vllm": ctx.pin.vllm, "vendor": ctx.vendor,
        "system": getattr(system, "id", None), "chip": getattr(chip, "id", None), "cann": plan.hardware.cann,
        "devices_per_node": ctx.per_node, "nodes": nodes_total, "model": plan.model.id,
        "model_loaded": {"path": resolved.model_ref or plan.model.id, "note": resolved.model_ref_note or None},
        "quantization": resolved.quant, "kv_cache_dtype": resolved.kv_dtype, "sncc_version": sncc.__version__,
    }
    unread = unread_plan_env(ctx)
    if unread:
        facts["env_not_written"] = {n: f"read by neither {who}" for n, who in unread.items()}
    ready = ready_timeout(ctx)
    if ready is not None:
        facts["ready_timeout"] = {"seconds": int(ready[1]), "variable": ready[0], "note": ready[2]}
    dep = Deployment(name=plan.name, engine=ctx.adapter.kind, engine_version=ctx.pin.version, pin_note=ctx.pin_note,
                     vllm_version=ctx.pin.vllm, vendor=ctx.vendor, model_path=resolved.model_ref or plan.model.weights or plan.model.id,
                     served_name=resolved.served_name or plan.model.id, disaggregated=plan.disaggregated,
                     roles=roles_t, nodes=tuple(nodes), common_env=common_env(ctx, nodes_total, conn), proxy=proxy,
                     bench=bench_spec(ctx, roles_t, proxy, plan_file), client=client_settings(ctx),
                     secrets=secrets, setup_scripts=setup_scripts(ctx), manifest_facts=facts,
                     system=str(getattr(system, "id", None) or ""))
    extra = ctx.adapter.extra_files(ctx, dep)
    if extra:
        import dataclasses

        dep = dataclasses.replace(dep, extra_files=extra)
    return dep

"""Runtime environment: the shared variables (``env/common.sh``) and each node's own.

Shared, in order: collective communication (Ascend: ``HCCL_BUFFSIZE``, ``HCCL_CONNECT_TIMEOUT``,
``HCCL_EXEC_TIMEOUT``; nothing on NVIDIA), the engine's own variables (the adapter's
:meth:`runtime_env`: vllm-ascend option switches, Omni-Infer's ``pd_run.sh`` set), then every
remaining plan ``env`` entry by name, except those nothing of the pinned release reads
(:func:`unread_plan_env`: not exported, reported by SN4044).  A plan ``env`` value replaces
sncc's value of the same name in place.  A role's own ``env { }`` entries (:func:`role_env`) go into each of its servers'
env file, after ``env/common.sh``, so they win for that role only.  Device visibility is per
process (each server's slice), mapped through the ``ASCEND_RT_VISIBLE_DEVICES`` /
``CUDA_VISIBLE_DEVICES`` mask in force for the role when there is one.

Before the exports, on Ascend, ``env/common.sh`` sources CANN's toolkit and NNAL ``set_env.sh``
(:func:`setup_scripts`), so sncc's values and the plan's win over what they set.  The engine's
variables include those vllm-ascend's tutorials export at the pinned tag (the adapter's
``tutorial_env`` rows), and a disaggregated deployment over several nodes gets its connector's
``cross_node_env`` rows (NIXL: the UCX variables vLLM's NIXL guide exports).

Per node: ``VLLM_HOST_IP`` (vLLM's ``get_ip``, which the KV connectors advertise), on Ascend
``HCCL_IF_IP``, and with more than one node the interface variables of the vendor
(``sncc/engines/data/nic.toml``: ``GLOO_SOCKET_IFNAME``, ``TP_SOCKET_IFNAME``,
``HCCL_SOCKET_IFNAME`` on Ascend, ``GLOO_SOCKET_IFNAME`` and ``NCCL_SOCKET_IFNAME`` on NVIDIA),
set to ``hosts.nic`` or ``$SNCC_NIC``.
No client secret is ever exported: the engines do not read the gateway's key.
"""

from __future__ import annotations

import re

from sncc.lowering.context import LowerCtx, LoweringError
from sncc.lowering.deployment import EnvVar, SetupScript, ShellValue
from sncc.lowering.hosts import NIC_VAR, address_var, node_nic

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")



def plan_env(ctx: LowerCtx) -> dict[str, str]:
    """The plan-level ``env`` entries.  Raises :class:`LoweringError` for a name (plan- or
    role-level) that is not a shell identifier."""
    for name, role in ctx.plan.roles():
        for k in sorted(role.env):
            if not _ENV_NAME.match(k):
                raise LoweringError(f"env name `{k}` is not a valid shell variable name", (name, "env", k))
    env = dict(ctx.plan.env)
    for k in sorted(env):
        if not _ENV_NAME.match(k):
            raise LoweringError(f"env name `{k}` is not a valid shell variable name", ("env", k))
    return env


def unread_plan_env(ctx: LowerCtx) -> dict[str, str]:
    """``{name: readers}`` of the plan's and roles' ``env`` entries that neither the pinned release,
    the vLLM it runs nor the stack below reads (their manifests,
    :func:`sncc.engines.runtime_env.unread_plan_variables`): they are not exported, SN4044
    reports each and ``manifest.json`` lists them."""
    from sncc.engines.runtime_env import unread_plan_variables

    if ctx.unread_env is None:
        names = set(ctx.plan.env) | {k for _, role in ctx.plan.roles() for k in role.env}
        ctx.unread_env = unread_plan_variables(ctx.adapter, ctx.plan.engine.version, ctx.vendor, names)
    return ctx.unread_env


def mask_var(ctx: LowerCtx) -> str:
    """The visible-devices variable of the vendor: ``CUDA_VISIBLE_DEVICES`` or ``ASCEND_RT_VISIBLE_DEVICES``."""
    return "CUDA_VISIBLE_DEVICES" if ctx.vendor == "nvidia" else "ASCEND_RT_VISIBLE_DEVICES"


def device_mask(ctx: LowerCtx, rs) -> list[str] | None:
    """The visible-devices mask in force for role ``rs`` (its ``env``, else the plan's) as a list
    of device ids, or None; server slices index into it."""
    raw = rs.env_value(mask_var(ctx))
    if raw is None:
        return None
    return [x.strip() for x in str(raw).split(",") if x.strip()]


def role_env(ctx: LowerCtx, rs) -> tuple[EnvVar, ...]:
    """The variables role ``rs`` sets in its own ``env { }`` block (over the plan's), exported in
    each of its servers' env file after ``env/common.sh`` so that they win; the visible-devices
    mask is applied per server slice instead."""
    common = set(ctx.plan.env)
    unread = unread_plan_env(ctx)
    out = []
    for k in sorted(rs.env):
        v = rs.env[k]
        if v.origin != rs.name or k == mask_var(ctx) or k in unread:
            continue
        note = f"from {rs.name}.env" + (" (over the plan env in env/common.sh)" if k in common else "")
        out.append(EnvVar(k, str(v.value), note, f"{rs.name} env"))
    return tuple(out)


def setup_scripts(ctx: LowerCtx) -> tuple[SetupScript, ...]:
    """The vendor scripts ``env/common.sh`` sources before its exports: on Ascend CANN's
    toolkit and NNAL ``set_env.sh`` under the plan's ``software.install_path`` or CANN's default
    root (:func:`sncc.engines.runtime_env.cann_setup_scripts`); none on NVIDIA."""
    if not ctx.ascend:
        return ()
    from sncc.engines.runtime_env import cann_setup_scripts

    sw = ctx.plan.software
    return tuple(SetupScript(p, w, src) for p, w, src in
                 cann_setup_scripts(sw.install_path if sw is not None else None))


def common_env(ctx: LowerCtx, nodes_total: int = 1, conn=None) -> tuple[EnvVar, ...]:
    """The shared ``export`` lines (see the module docstring); ``nodes_total`` the nodes the
    deployment spans and ``conn`` its KV connector (a connector's ``cross_node_env`` rows of the
    adapter's data are written when a disaggregated deployment spans nodes)."""
    overrides = plan_env(ctx)
    overrides.pop(mask_var(ctx), None)   # applied per server slice
    out: list[EnvVar] = []

    def put(section: str, name: str, value: str, note: str = "") -> None:
        if name in overrides:
            out.append(EnvVar(name, overrides.pop(name), "from plan env", section))
        else:
            out.append(EnvVar(name, value, note, section))

    if ctx.ascend:
        from sncc.capacity import hccl_buffsize_mb
        from sncc.catalog.engine_defaults import engine_defaults

        moe_ep = any(r.expert_parallel for r in ctx.roles.values())
        timeout_s = engine_defaults()["hccl_launch_timeout_s"]
        sec = "collective communication (CANN HCCL)"
        put(sec, "HCCL_BUFFSIZE", str(hccl_buffsize_mb({}, moe_ep)),
            "MB per communicator direction; " + ("sncc default for MoE expert parallelism (recipes: 512-1024)"
                                                 if moe_ep else "CANN default"))
        put(sec, "HCCL_CONNECT_TIMEOUT", str(timeout_s), "seconds, range [120, 7200]; sncc default (the value of Omni-Infer's launch template)")
        put(sec, "HCCL_EXEC_TIMEOUT", str(timeout_s), "seconds; sncc default (the value of Omni-Infer's launch template)")
    ready = ready_timeout(ctx)
    if ready is not None and ready[0] is not None:
        put("engine start-up (vLLM)", READY_TIMEOUT_VAR, ready[1], ready[2])
    for v in ctx.adapter.runtime_env(ctx):
        put(v.section, v.name, v.value, v.note)
    if conn is not None and nodes_total > 1 and ctx.plan.disaggregated:
        rows = ctx.adapter.data.get("connectors", {}).get(conn.id, {}).get("cross_node_env", ())
        for row in rows:
            put(f"KV transfer across nodes ({conn.class_name})", row["name"], str(row["value"]), row["source"])
    unread = unread_plan_env(ctx)
    for k in sorted(overrides):
        if k not in unread:
            out.append(EnvVar(k, overrides[k], "", "plan env"))
    return tuple(out)


#: the variable vLLM's API server reads for how long it waits for the engine cores to report ready
#: (vllm/envs.py of 0.23.0: default 600 s; hard-coded in vllm/v1/engine/core_client.py before 0.14.1,
#: catalog/data/engine_rules.toml [startup]); whether a release has it is read from its manifest
READY_TIMEOUT_VAR = "VLLM_ENGINE_READY_TIMEOUT_S"


def ready_timeout(ctx: LowerCtx) -> tuple[str | None, str, str] | None:
    """How ``engine.ready_timeout`` reaches the engine: ``(variable, value, note)`` with the
    variable None when the vLLM the pin runs reads none (its manifest lists no
    ``VLLM_ENGINE_READY_TIMEOUT_S``; the wait is then fixed by the release); None when the plan
    sets no ``ready_timeout``.  The value is whole seconds, rounded up (vLLM parses an int)."""
    import math

    seconds = ctx.plan.engine.ready_timeout
    if seconds is None:
        return None
    value = str(max(1, math.ceil(float(seconds))))
    manifest = ctx.adapter.vllm_manifest(ctx.pin.version)
    if manifest is not None and READY_TIMEOUT_VAR in manifest.env_vars:
        return READY_TIMEOUT_VAR, value, f"seconds; plan engine.ready_timeout (vLLM {ctx.pin.vllm} envs.py)"
    return None, value, (f"engine.ready_timeout = {value} s is not written: vLLM {ctx.pin.vllm} reads no "
                         f"{READY_TIMEOUT_VAR} (its wait is fixed; the variable exists from vLLM 0.14.1); "
                         "an orchestrator's health check may still use the bound")


def node_env(ctx: LowerCtx, k: int, nodes_total: int) -> tuple[EnvVar, ...]:
    """Node ``k``'s own variables (see the module docstring)."""
    addr = ShellValue("{" + address_var(k) + "}")
    sec = f"node {k}"
    out = [EnvVar("VLLM_HOST_IP", addr, "the address vLLM and its KV connectors advertise", sec)]
    if ctx.ascend:
        out.append(EnvVar("HCCL_IF_IP", addr, "HCCL's interface address on this node", sec))
    if nodes_total > 1:
        from sncc.engines.runtime_env import nic_vars

        nic = node_nic(ctx.plan)
        val = nic if nic is not None else ShellValue("{" + NIC_VAR + "}")
        note = "the cluster network interface" + (" (plan hosts.nic)" if nic is not None else "")
        for name in nic_vars(ctx.vendor):
            if name not in ctx.plan.env:
                out.append(EnvVar(name, val, note, sec))
    return tuple(out)


def map_devices(ctx: LowerCtx, rs, devices: tuple[int, ...]) -> str:
    """The visible-devices value of a server slice of role ``rs``: the slice's indices through
    the mask in force for the role."""
    mask = device_mask(ctx, rs)
    if mask is None:
        return ",".join(map(str, devices))
    return ",".join(mask[d] if d < len(mask) else str(d) for d in devices)

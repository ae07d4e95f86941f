"""Runtime environment: the shared variables (``env/common.sh``) and each node's own.

Shared, in order: collective communication (Ascend: ``HCCL_BUFFSIZE``, ``HCCL_CONNECT_TIMEOUT``,
``HCCL_EXEC_TIMEOUT``; nothing on NVIDIA), the engine's own variables (the adapter's
:meth:`runtime_env`: vllm-ascend option switches, Omni-Infer's ``pd_run.sh`` set), then every
remaining plan ``env`` entry by name.  A plan ``env`` value replaces sncc's value of the same
name in place.  Device visibility is per process (each server's slice), mapped through a plan
``ASCEND_RT_VISIBLE_DEVICES`` / ``CUDA_VISIBLE_DEVICES`` mask when the plan gives one.

Per node: ``VLLM_HOST_IP`` (vLLM's ``get_ip``, which the KV connectors advertise), on Ascend
``HCCL_IF_IP``, and with more than one node the interface variables ``GLOO_SOCKET_IFNAME``,
``TP_SOCKET_IFNAME``, ``HCCL_SOCKET_IFNAME`` (vllm-ascend multi-node tutorials, domain-facts §3.6).
No client secret is ever exported: the engines do not read the gateway's key.
"""

from __future__ import annotations

import re

from sncc.lowering.context import LowerCtx, LoweringError
from sncc.lowering.deployment import EnvVar, ShellValue
from sncc.lowering.hosts import NIC_VAR, address_var, node_nic

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

#: interface variables vllm-ascend's multi-node tutorials set on every node
ASCEND_NIC_VARS = ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME")


def plan_env(ctx: LowerCtx) -> dict[str, str]:
    """The plan's ``env`` entries.  Raises :class:`LoweringError` for a name that is not a shell identifier."""
    env = dict(ctx.plan.env)
    for k in sorted(env):
        if not _ENV_NAME.match(k):
            raise LoweringError(f"env name `{k}` is not a valid shell variable name", ("env", k))
    return env


def device_mask(ctx: LowerCtx) -> list[str] | None:
    """The plan's visible-devices mask (``ASCEND_RT_VISIBLE_DEVICES`` / ``CUDA_VISIBLE_DEVICES``) as a
    list of device ids, or None; server slices index into it."""
    var = "CUDA_VISIBLE_DEVICES" if ctx.vendor == "nvidia" else "ASCEND_RT_VISIBLE_DEVICES"
    raw = ctx.plan.env.get(var)
    if raw is None:
        return None
    return [x.strip() for x in str(raw).split(",") if x.strip()]


def common_env(ctx: LowerCtx) -> tuple[EnvVar, ...]:
    """The shared ``export`` lines (see the module docstring)."""
    overrides = plan_env(ctx)
    mask_var = "CUDA_VISIBLE_DEVICES" if ctx.vendor == "nvidia" else "ASCEND_RT_VISIBLE_DEVICES"
    overrides.pop(mask_var, None)   # applied per server slice
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
        put(sec, "HCCL_CONNECT_TIMEOUT", str(timeout_s), "seconds, range [120, 7200]; Omni-Infer template value")
        put(sec, "HCCL_EXEC_TIMEOUT", str(timeout_s), "seconds; Omni-Infer template value")
    for v in ctx.adapter.runtime_env(ctx):
        put(v.section, v.name, v.value, v.note)
    for k in sorted(overrides):
        out.append(EnvVar(k, overrides[k], "", "plan env"))
    return tuple(out)


def node_env(ctx: LowerCtx, k: int, nodes_total: int) -> tuple[EnvVar, ...]:
    """Node ``k``'s own variables (see the module docstring)."""
    addr = ShellValue("{" + address_var(k) + "}")
    sec = f"node {k}"
    out = [EnvVar("VLLM_HOST_IP", addr, "the address vLLM and its KV connectors advertise", sec)]
    if ctx.ascend:
        out.append(EnvVar("HCCL_IF_IP", addr, "HCCL's interface address on this node", sec))
    if nodes_total > 1 and ctx.ascend:
        nic = node_nic(ctx.plan)
        val = nic if nic is not None else ShellValue("{" + NIC_VAR + "}")
        for name in ASCEND_NIC_VARS:
            if name not in ctx.plan.env:
                out.append(EnvVar(name, val, "the cluster network interface", sec))
    return tuple(out)


def map_devices(ctx: LowerCtx, devices: tuple[int, ...]) -> str:
    """The visible-devices value of a server slice: the slice's indices through the plan's mask."""
    mask = device_mask(ctx)
    if mask is None:
        return ",".join(map(str, devices))
    return ",".join(mask[d] if d < len(mask) else str(d) for d in devices)

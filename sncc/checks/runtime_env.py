"""Runtime-environment checks (SN3007, SN4010, SN4014): the device mask, the
HCCL buffer for MoE dispatch/combine and the HCCL connect timeout.

Each rule reads the *effective* value: the plan's ``env`` override, else the
default sncc writes into ``env.sh`` (:func:`sncc.capacity.hccl_buffsize_mb`).  Facts and
thresholds: ``sncc/catalog/data/engines.toml`` (each with its source).
"""

from __future__ import annotations

import math

from sncc.catalog.engine_defaults import engine_defaults
from sncc.diagnostics import codes
from sncc.diagnostics.model import Edit, Fix, Related, diag


def _per_node(r) -> int | None:
    if r.system is not None:
        return r.system.devices_per_node
    return getattr(r.chip, "devices_per_node", None) if r.chip is not None else None


def _ascend(r) -> bool:
    return r.chip is not None and r.chip.vendor == "huawei"


def env_int(plan, name: str) -> int | None:
    """The plan's ``env`` value of ``name`` as an integer, or None when unset or not a number."""
    raw = plan.env.get(name)
    if raw is None:
        return None
    try:
        return int(float(raw))
    except (ValueError, OverflowError):  # not a number, or `1e400` (float infinity)
        return None


def check_device_mask(plan, r):
    """``ASCEND_RT_VISIBLE_DEVICES`` / ``CUDA_VISIBLE_DEVICES`` show every device one
    node of an instance uses (SN3007; misconfig BR-07, vllm-ascend#14628)."""
    name = "CUDA_VISIBLE_DEVICES" if r.chip is not None and r.chip.vendor == "nvidia" else "ASCEND_RT_VISIBLE_DEVICES"
    raw = plan.env.get(name)
    if raw is None:
        return
    span = plan.env_span(name)
    per_node = _per_node(r)
    ids = [t.strip() for t in raw.replace(" ", ",").split(",") if t.strip()]
    if not ids:
        yield diag(codes.DEVICE_MASK_MISMATCH, f"`{name}` is empty: the engine sees no device", span,
                   help="no device visible is a driver or container problem: mount the /dev/davinci* devices and the driver "
                        "(or the GPUs) into the container, or remove the override",
                   path=("env", name))
        return
    bad = [t for t in ids if not t.isdigit() or (per_node is not None and int(t) >= per_node)]
    if bad:
        yield diag(codes.DEVICE_MASK_MISMATCH,
                   f"`{name}` lists {', '.join(f'`{b}`' for b in bad)}, not a device id of a node"
                   + (f" (0 to {per_node - 1})" if per_node else ""), span,
                   help="list device ids of one node, e.g. `\"0,1,2,3\"`", path=("env", name))
        return
    visible = len(set(ids))
    for rname, role in plan.roles():
        inst = role.tp * role.ep * role.pp
        local = min(inst, per_node) if per_node else inst
        if local > visible:
            full = ",".join(str(i) for i in range(local))
            yield diag(codes.DEVICE_MASK_MISMATCH,
                       f"`{rname}` needs {local} devices per node (tp × ep × pp = {inst}) but `{name}` shows {visible}",
                       span, related=[Related(role.span_of("tp"), f"`{rname}.tp = {role.tp}`")],
                       help=f"show {local} devices (`{name} = \"{full}\"`) or lower tp/ep to {visible} devices",
                       fixes=[Fix(f"show {local} devices", (Edit(span, f'"{full}"'),), "unsafe")] if span else [],
                       path=("env", name))
            return


def dispatch_buffer_mb(arch, role, redundant: int, draft: int) -> float | None:
    """MB of HCCL buffer the fused MoE dispatch/combine needs on one rank of ``role``.

    ``2 × (maxBs × dispatch_bytes × ep_world × local_experts + maxBs × combine_bytes × (top_k + shared)) / 2^20``
    (vllm-ascend#5287) with maxBs = ``max_num_seqs × (1 + draft)`` decode tokens of one DP rank,
    ``ep_world = tp × ep``, ``local_experts = ceil(routed / ep_world) + redundant``.  None for a
    dense model or an EP group of one device.
    """
    if arch is None or not arch.is_moe:
        return None
    world = role.tp * role.ep
    if world <= 1:
        return None
    d = engine_defaults()
    hidden = arch.hidden_size
    disp = d["moe_dispatch_bytes_per_hidden"] * hidden + d["moe_dispatch_extra_bytes"]
    comb = d["moe_combine_bytes_per_hidden"] * hidden
    local = math.ceil(arch.n_routed_experts / world) + redundant
    max_bs = role.max_num_seqs * (1 + draft)
    k = arch.num_experts_per_tok + (arch.n_shared_experts or 0)
    return 2 * (max_bs * disp * world * local + max_bs * comb * k) / 2**20


def check_hccl_buffer(plan, r):
    """``HCCL_BUFFSIZE`` covers the MoE dispatch/combine window of each decoding role
    (SN4010; misconfig BR-09).  Prefill steps use the all-to-all path, not the fused kernel."""
    from sncc.capacity import hccl_buffsize_mb, plan_is_moe_ep

    if not _ascend(r) or r.arch is None or not r.arch.is_moe:
        return
    redundant = 0
    if plan.optimize is not None and plan.optimize.omni_placement is not None:
        redundant = plan.optimize.omni_placement.redundant_experts
    draft = plan.speculative.draft_tokens if plan.speculative is not None else 0
    set_mb = env_int(plan, "HCCL_BUFFSIZE")
    have = set_mb if set_mb is not None else hccl_buffsize_mb({}, plan_is_moe_ep(plan, r.arch))
    for name, role in plan.roles():
        if name == "prefill":
            continue
        need = dispatch_buffer_mb(r.arch, role, redundant, draft)
        if need is None or need <= have:
            continue
        want = int(math.ceil(need / 64.0) * 64)
        span = plan.env_span("HCCL_BUFFSIZE") if set_mb is not None else role.span_of("max_num_seqs")
        world = role.tp * role.ep
        local = math.ceil(r.arch.n_routed_experts / world) + redundant
        yield diag(codes.HCCL_BUFFER_TOO_SMALL,
                   f"HCCL_BUFFSIZE {have} MB is below the {need:.0f} MB the MoE dispatch/combine of `{name}` needs",
                   span,
                   related=[Related(role.span_of("max_num_seqs"), f"maxBs = max_num_seqs {role.max_num_seqs} × (1 + {draft}) tokens per rank")],
                   notes=[f"hidden {r.arch.hidden_size}, EP world {world} (tp × ep), {local} local experts, top-k {r.arch.num_experts_per_tok}"
                          f" + {r.arch.n_shared_experts or 0} shared" + ("" if set_mb is not None else f"; {have} MB is sncc's default")],
                   help=f"set `HCCL_BUFFSIZE = {want}` in `env`, or lower max_num_seqs",
                   fixes=[Fix(f"set HCCL_BUFFSIZE = {want}", (Edit(span, str(want)),), "unsafe")] if set_mb is not None and span else [],
                   path=("env", "HCCL_BUFFSIZE"))


def check_hccl_connect_timeout(plan, r):
    """``HCCL_CONNECT_TIMEOUT`` within CANN's [120, 7200] s (error) and, for a plan whose
    instances span nodes with a MoE model, at least the multi-node threshold (warning)
    (SN4014; misconfig BR-20)."""
    if not _ascend(r) or "HCCL_CONNECT_TIMEOUT" not in plan.env:
        return
    d = engine_defaults()
    lo, hi, warn = d["hccl_connect_timeout_min_s"], d["hccl_connect_timeout_max_s"], d["hccl_connect_timeout_multinode_warn_s"]
    span = plan.env_span("HCCL_CONNECT_TIMEOUT")
    val = env_int(plan, "HCCL_CONNECT_TIMEOUT")
    if val is None:
        raw = plan.env["HCCL_CONNECT_TIMEOUT"]
        yield diag(codes.HCCL_CONNECT_TIMEOUT,
                   f"HCCL_CONNECT_TIMEOUT `{raw}` is not a whole number of seconds (the runtime reads the variable as an integer)",
                   span, severity="error", help=f"write the seconds as a plain number in [{lo}, {hi}], e.g. `HCCL_CONNECT_TIMEOUT = 900`",
                   path=("env", "HCCL_CONNECT_TIMEOUT"))
        return
    if val < lo or val > hi:
        yield diag(codes.HCCL_CONNECT_TIMEOUT,
                   f"HCCL_CONNECT_TIMEOUT `{plan.env['HCCL_CONNECT_TIMEOUT']}` is outside CANN's range [{lo}, {hi}] seconds",
                   span, severity="error", help=f"use a whole number of seconds in [{lo}, {hi}], e.g. 1200",
                   path=("env", "HCCL_CONNECT_TIMEOUT"))
        return
    per_node = _per_node(r)
    if not per_node or r.arch is None or not r.arch.is_moe:
        return
    multi = [(n, role) for n, role in plan.roles() if role.tp * role.ep * role.pp > per_node]
    if not multi or val >= warn:
        return
    n, role = multi[0]
    inst = role.tp * role.ep * role.pp
    yield diag(codes.HCCL_CONNECT_TIMEOUT,
               f"HCCL_CONNECT_TIMEOUT {val}s is short for `{n}` instances spanning {-(-inst // per_node)} nodes of a MoE model",
               span, related=[Related(role.span_of("devices"), f"{inst} devices per instance, {per_node} per node")],
               help=f"ranks finish loading weights and compiling graphs at different times: use ≥ {warn}s on every rank (recipes: 900-1800)",
               fixes=[Fix("set 1200", (Edit(span, "1200"),), "unsafe")] if span else [],
               path=("env", "HCCL_CONNECT_TIMEOUT"))

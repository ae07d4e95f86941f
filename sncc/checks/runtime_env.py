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
        rf = r.roles.get(rname)
        if rf is None:
            continue
        inst = rf.devices
        local = min(inst, per_node) if per_node else inst
        if local > visible:
            full = ",".join(str(i) for i in range(local))
            yield diag(codes.DEVICE_MASK_MISMATCH,
                       f"`{rname}` needs {local} devices per node (tp × dp × pp = {inst}) but `{name}` shows {visible}",
                       span, related=[Related(role.span_of("tp"), f"`{rname}.tp = {role.tp}`")],
                       help=f"show {local} devices (`{name} = \"{full}\"`) or lower tp × dp to {visible} devices",
                       fixes=[Fix(f"show {local} devices", (Edit(span, f'"{full}"'),), "unsafe")] if span else [],
                       path=("env", name))
            return


def dispatch_buffer_mb(arch, role, redundant: int, draft: int) -> float | None:
    """Old signature of :func:`sncc.facts.buffers.dispatch_buffer_mb` (``role`` with ``tp``,
    ``ep``, ``max_num_seqs``; ``redundant`` per device), kept for callers not yet on the facts layer."""
    from sncc.facts.buffers import dispatch_buffer_mb as _mb

    world = role.tp * role.ep
    return _mb(arch, world, (arch.n_routed_experts if arch is not None and arch.is_moe else 0) + redundant * world,
               role.max_num_seqs * (1 + draft))


def check_hccl_buffer(plan, r):
    """``HCCL_BUFFSIZE`` covers the MoE dispatch/combine window of each decoding role that runs an
    EP dispatch (SN4010; misconfig BR-09).  Prefill steps use the all-to-all path, not the fused
    kernel; a TP-only MoE role (``expert_parallel = false``) dispatches nothing.  The buffer size is
    :func:`sncc.facts.buffers.role_dispatch_buffer_mb`, the one the simulator's what-ifs use."""
    from sncc.capacity import hccl_buffsize_mb
    from sncc.facts.buffers import role_dispatch_buffer_mb

    if not _ascend(r) or r.arch is None or not r.arch.is_moe:
        return
    for name, role in plan.roles():
        rf = r.roles.get(name)
        if name == "prefill" or rf is None:
            continue
        need = role_dispatch_buffer_mb(r.arch, rf)
        if need is None:
            continue
        raw = rf.env_value("HCCL_BUFFSIZE")
        set_mb = _int_or_none(raw)
        have = set_mb if set_mb is not None else hccl_buffsize_mb({}, r.moe_ep)
        if need <= have:
            continue
        want = int(math.ceil(need / 64.0) * 64)
        span = rf.env_span("HCCL_BUFFSIZE") if set_mb is not None else role.span_of("max_num_seqs")
        local = math.ceil(rf.routed_slots / rf.ep_size)
        draft = rf.draft_tokens
        where = "`env`" if set_mb is None or rf.env["HCCL_BUFFSIZE"].origin == "plan" else f"`{name}.env`"
        yield diag(codes.HCCL_BUFFER_TOO_SMALL,
                   f"HCCL_BUFFSIZE {have} MB is below the {need:.0f} MB the MoE dispatch/combine of `{name}` needs",
                   span,
                   related=[Related(role.span_of("max_num_seqs"), f"maxBs = max_num_seqs {role.max_num_seqs} × (1 + {draft}) tokens per rank")],
                   notes=[f"hidden {r.arch.hidden_size}, EP group {rf.ep_size} (tp × dp), {local} local experts, top-k {r.arch.num_experts_per_tok}"
                          f" + {r.arch.n_shared_experts or 0} shared" + ("" if set_mb is not None else f"; {have} MB is sncc's default")],
                   help=f"set `HCCL_BUFFSIZE = {want}` in {where}, or lower max_num_seqs",
                   fixes=[Fix(f"set HCCL_BUFFSIZE = {want}", (Edit(span, str(want)),), "unsafe")] if set_mb is not None and span else [],
                   path=("env", "HCCL_BUFFSIZE"))


def _int_or_none(raw: str | None) -> int | None:
    """An env value read as CANN reads an integer variable, or None when unset or not a number."""
    if raw is None:
        return None
    try:
        return int(float(raw))
    except (ValueError, OverflowError):
        return None


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
    multi = [(n, role) for n, role in plan.roles() if n in r.roles and r.roles[n].devices > per_node]
    if not multi or val >= warn:
        return
    n, role = multi[0]
    inst = r.roles[n].devices
    yield diag(codes.HCCL_CONNECT_TIMEOUT,
               f"HCCL_CONNECT_TIMEOUT {val}s is short for `{n}` instances spanning {-(-inst // per_node)} nodes of a MoE model",
               span, related=[Related(role.span_of("devices"), f"{inst} devices per instance, {per_node} per node")],
               help=f"ranks finish loading weights and compiling graphs at different times: use ≥ {warn}s on every rank (recipes: 900-1800)",
               fixes=[Fix("set 1200", (Edit(span, "1200"),), "unsafe")] if span else [],
               path=("env", "HCCL_CONNECT_TIMEOUT"))

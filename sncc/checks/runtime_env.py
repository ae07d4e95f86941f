"""Runtime-environment checks (SN3007, SN3020, SN4010, SN4014): the device mask, the
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
from sncc.units import format_count


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


def _host_devices(plan, r) -> tuple[int | None, str]:
    """(devices of one host, where the figure comes from): the system's devices per node; a plan
    with only a chip and a device count and no node count describes one host of that many devices."""
    hw = plan.hardware
    if r.system is not None:
        return r.system.devices_per_node, f"`{r.system.id}` has {format_count(r.system.devices_per_node, 'device')} per node"
    if hw.devices is not None and hw.nodes is None:
        return hw.devices, f"`hardware.devices = {hw.devices}` on one host"
    per = getattr(r.chip, "devices_per_node", None) if r.chip is not None else None
    return per, (f"`{r.chip.id}` hosts have {format_count(per, 'device')}" if per else "")


def _needed_per_node(plan, r, role_name: str | None, per_node: int | None) -> tuple[int, str]:
    """(devices the servers of one node use, how): with a role's own mask the devices one of its
    instances places on a node; with the plan's mask all roles' devices on one node."""
    if role_name is not None:
        rf = r.roles[role_name]
        n = min(rf.devices, per_node) if per_node else rf.devices
        return n, f"`{role_name}` uses {format_count(n, 'device')} per node (tp × dp × pp = {rf.devices})"
    used = sum(rf.instances * rf.devices for rf in r.roles.values())
    n = min(used, per_node) if per_node else used
    if len(r.roles) == 1:
        (name, rf), = r.roles.items()
        return n, f"`{name}` uses {format_count(n, 'device')} per node (tp × dp × pp = {rf.devices}" + (f", {rf.instances} instances)" if rf.instances > 1 else ")")
    return n, f"the roles use {format_count(n, 'device')} per node"


def check_device_mask(plan, r):
    """``ASCEND_RT_VISIBLE_DEVICES`` / ``CUDA_VISIBLE_DEVICES`` (plan ``env`` or a role's ``env``):
    every id a device index of the declared host, each once, ascending (SN3020); at least as many
    as the servers of one node use (SN3007; misconfig BR-07, vllm-ascend#14628), and a warning when
    more are shown (SN3020).  vllm-ascend#10227: CANN drops an invalid id silently and the worker
    fails later naming its rank; vllm-ascend#449: a non-contiguous mask failed with "Invalid device id"."""
    name = "CUDA_VISIBLE_DEVICES" if r.chip is not None and r.chip.vendor == "nvidia" else "ASCEND_RT_VISIBLE_DEVICES"
    masks = []
    if name in plan.env:
        masks.append((None, plan.env[name], plan.env_span(name), ("env", name)))
    for rname, role in plan.roles():
        if name in role.env and rname in r.roles:
            masks.append((rname, role.env[name], role.env_span(name), (rname, "env", name)))
    per_node, host_how = _host_devices(plan, r)
    for rname, raw, span, path in masks:
        yield from _check_one_mask(plan, r, name, raw, span, path, rname, per_node, host_how)


def _check_one_mask(plan, r, name, raw, span, path, rname, per_node, host_how):
    ids = [t.strip() for t in raw.replace(" ", ",").split(",") if t.strip()]
    where = f"`{rname}.env`" if rname else "`env`"
    if not ids:
        yield diag(codes.DEVICE_MASK_MISMATCH, f"`{name}` is empty: the engine sees no device", span,
                   help="no device visible is a driver or container problem: mount the /dev/davinci* devices and the driver "
                        "(or the GPUs) into the container, or remove the override",
                   path=path)
        return
    bad = [t for t in ids if not t.isdigit() or (per_node is not None and int(t) >= per_node)]
    if bad:
        yield diag(codes.DEVICE_MASK_INVALID,
                   f"`{name}` lists {', '.join(f'`{b}`' for b in bad)}, not a device index of the host"
                   + (f" (0 to {per_node - 1})" if per_node else ""), span,
                   notes=[host_how] if host_how else [],
                   help="list device indices as the host enumerates them (`npu-smi info` / `nvidia-smi -L` order, "
                        "from 0), not physical slot numbers: CANN drops an invalid id without an error and the worker "
                        "then fails naming its own rank (vllm-ascend#10227)",
                   path=path)
        return
    nums = [int(t) for t in ids]
    dup = sorted({n for n in nums if nums.count(n) > 1})
    if dup:
        yield diag(codes.DEVICE_MASK_INVALID, f"`{name}` repeats device {', '.join(map(str, dup))}", span,
                   help="list each device once; two ranks on one device fail at HCCL/NCCL init", path=path)
        return
    if nums != sorted(nums):
        yield diag(codes.DEVICE_MASK_INVALID, f"`{name}` = \"{raw}\" is not in ascending order", span,
                   help=f"write `\"{','.join(map(str, sorted(nums)))}\"`: ranks take the visible devices in order, and "
                        "sncc's slices index the mask in that order", path=path)
        return
    if nums != list(range(nums[0], nums[0] + len(nums))):
        from sncc.checks._rules import cmp_version, default_pin_help, engine_release, release_label, release_related, rows, sources

        release = engine_release(plan, r)   # written, else sncc's default pin (the release the build writes for)
        for row in rows("device_mask_contiguous") if release else ():
            c = cmp_version(release, row["fixed_in"])
            if plan.engine.kind in row.get("engines", ()) and c is not None and c < 0:
                pin_help = default_pin_help(plan, r, "discontinuous devices")
                yield diag(codes.DEVICE_MASK_INVALID,
                           f"`{name}` = \"{raw}\" is not contiguous, and {release_label(plan, r)} fails on "
                           "discontinuous devices (`AssertionError: Invalid device id`)", span,
                           related=release_related(plan, r),
                           notes=[row.get("notes", ""), "source: " + sources(row)],
                           help=f"use contiguous devices (e.g. `\"{','.join(str(i) for i in range(len(nums)))}\"`), or "
                                f"{plan.engine.kind} {row['fixed_in']} or later" + (f" ({pin_help})" if pin_help else ""),
                           path=path)
                return
    need, how = _needed_per_node(plan, r, rname, per_node)
    visible = len(nums)
    if need > visible:
        full = ",".join(str(i) for i in range(need))
        role = getattr(plan, rname) if rname else next((role for _, role in plan.roles()), None)
        yield diag(codes.DEVICE_MASK_MISMATCH,
                   f"{how} but `{name}` shows {visible}",
                   span, related=[Related(role.span_of("tp"), f"tp = {role.tp}")] if role is not None else [],
                   help=f"show {format_count(need, 'device')} (`{name} = \"{full}\"`) or lower tp × dp to {format_count(visible, 'device')}",
                   fixes=[Fix(f"show {format_count(need, 'device')}", (Edit(span, f'"{full}"'),), "unsafe")] if span else [],
                   path=path)
    elif need < visible:
        yield diag(codes.DEVICE_MASK_INVALID,
                   f"`{name}` shows {format_count(visible, 'device')} and {how}: the engine takes the first {need}",
                   span, severity="warning",
                   help=(f"list exactly the {need} devices these servers use" if need != 1 else "list exactly the one device these servers use") + (" (or give each role its own mask in its `env`)" if rname is None and len(r.roles) > 1 else ""),
                   path=path)


def dispatch_buffer_mb(arch, role, redundant: int, draft: int) -> float | None:
    """Old signature of :func:`sncc.facts.buffers.dispatch_buffer_mb` (``role`` with ``tp``,
    ``ep``, ``max_num_seqs``; ``redundant`` per device), kept for callers not yet on the facts layer."""
    from sncc.facts.buffers import dispatch_buffer_mb as _mb

    world = role.tp * role.ep
    return _mb(arch, world, (arch.n_routed_experts if arch is not None and arch.is_moe else 0) + redundant * world,
               role.max_num_seqs * (1 + draft))


def check_hccl_buffsize_range(plan, r):
    """``HCCL_BUFFSIZE`` is a whole number of MB of at least CANN's minimum
    (``engines.toml hccl_buffsize_min_mb``): a negative or zero size, or one that is not a whole
    number (``"1.5"``, ``"1GB"``), is a range error (SN2009), not a buffer below what the dispatch
    needs (SN4010 then says nothing of it).  Its ``path`` is the block that set it: ``["env", …]``
    for the plan's ``env``, ``["decode", "env", …]`` for a role's."""
    if not _ascend(r):
        return
    lo = int(engine_defaults()["hccl_buffsize_min_mb"])
    seen = set()
    for name, rf in r.roles.items():
        ev = rf.env.get("HCCL_BUFFSIZE")
        if ev is None or ev.span in seen:
            continue
        seen.add(ev.span)
        if _whole_mb(ev.value):
            continue
        text = str(ev.value).strip()
        whole = text.isdigit() and text.isascii()
        with_unit = _mb_of_unit(text)
        what = ("is not a buffer size" if whole else
                "is not a whole number of MB (it has a unit)" if with_unit is not None else "is not a whole number")
        path = _env_path(ev)
        if with_unit is not None and with_unit >= lo:
            size = f"a bare number of MB (`HCCL_BUFFSIZE = \"{with_unit}\"` for {text})"
        else:
            size = "a bare whole number of MB" + (
                f" (`HCCL_BUFFSIZE = \"{max(lo, int(float(text)))}\"`)" if _int_or_none(text) is not None and not whole
                else f" (e.g. `HCCL_BUFFSIZE = \"{_default_buffsize(r)[0]}\"`)")
        yield diag(codes.OUT_OF_RANGE, f"HCCL_BUFFSIZE = {ev.value} {what}: CANN takes a "
                                       f"{'bare ' if with_unit is not None else ''}whole number of MB, at least {lo}",
                   ev.span, notes=["source: " + engine_defaults()["hccl_buffsize_source"]],
                   help=f"remove it for {_default_buffsize(r)[1]}, or give the size as {size}",
                   path=path)


def _default_buffsize(r) -> tuple[int, str]:
    """(MB, words) of the ``HCCL_BUFFSIZE`` a plan without one runs with: what ``sncc build``
    writes (:func:`sncc.capacity.hccl_buffsize_mb`), sncc's MoE expert-parallel default when a
    role runs an EP dispatch, else CANN's default."""
    from sncc.capacity import hccl_buffsize_mb, plan_is_moe_ep

    moe_ep = plan_is_moe_ep(r)
    mb = hccl_buffsize_mb({}, moe_ep)
    if moe_ep:
        return mb, (f"sncc's default for MoE expert parallelism ({mb} MB, engines.toml hccl_buffsize_moe_ep_mb: "
                    "`sncc build` writes it for this plan)")
    return mb, f"CANN's default ({mb} MB)"


#: binary prefixes relative to MB, for a size written with a unit (`2GB` is 2048 MB to CANN)
_MB_PER_UNIT = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 ** 2}


def _mb_of_unit(text: str) -> int | None:
    """The whole MB of a size written with a byte unit (``2GB``, ``512 MiB``, ``1.5G``), else None."""
    import re

    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt])(?:i?b)?", text.strip(), flags=re.IGNORECASE | re.ASCII)
    if m is None:
        return None
    mb = float(m.group(1)) * _MB_PER_UNIT[m.group(2).lower()]
    return int(mb) if mb == int(mb) and mb < 2 ** 53 else None


def _whole_mb(raw) -> bool:
    """Whether an ``HCCL_BUFFSIZE`` value is one CANN takes: a whole number of MB (digits only)
    of at least ``engines.toml hccl_buffsize_min_mb``."""
    text = str(raw).strip()
    return text.isascii() and text.isdigit() and int(text) >= int(engine_defaults()["hccl_buffsize_min_mb"])


def _env_path(ev) -> tuple:
    """The plan path of an env variable: ``("env", NAME)`` in the plan's ``env``, ``(role, "env",
    NAME)`` in a role's (:attr:`sncc.facts.model.EnvValue.origin`)."""
    return ("env", "HCCL_BUFFSIZE") if ev.origin == "plan" else (ev.origin, "env", "HCCL_BUFFSIZE")


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
        if raw is not None and not _whole_mb(raw):
            continue   # SN2009 (check_hccl_buffsize_range)
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
                   path=_env_path(rf.env["HCCL_BUFFSIZE"]) if set_mb is not None else (name, "max_num_seqs"))


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
               span, related=[Related(role.span_of("devices"), f"{format_count(inst, 'device')} per instance, {per_node} per node")],
               help=f"ranks finish loading weights and compiling graphs at different times: use ≥ {warn}s on every rank (recipes: 900-1800)",
               fixes=[Fix("set 1200", (Edit(span, "1200"),), "unsafe")] if span else [],
               path=("env", "HCCL_CONNECT_TIMEOUT"))

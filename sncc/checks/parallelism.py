"""Parallelism and device-count checks (SN2011, SN3001–SN3006)."""

from __future__ import annotations

from sncc.diagnostics import codes
from sncc.diagnostics.model import Edit, Fix, Related, diag
from sncc.units import format_count


def check_roles(plan, r):
    """A plan is disaggregated (prefill + decode) or aggregated (serve), not a mix (SN2011).

    Its ``path`` is the role block it points at (``("prefill",)``), or ``("plan",)``, the plan
    block itself, when the plan has no role at all."""
    has = {n for n, _ in plan.roles()}
    if not has:
        yield diag(codes.ROLE_SHAPE, "the plan has no role", plan.name_span,
                   help="add `serve { devices = ... }`, or `prefill { ... }` and `decode { ... }`", path=("plan",))
    elif "serve" in has and has - {"serve"}:
        other = sorted(has - {"serve"})[0]
        yield diag(codes.ROLE_SHAPE, f"`{other}` cannot be combined with `serve`", getattr(plan, other).name_span,
                   related=[Related(plan.serve.name_span, "`serve` given here")],
                   help="use `serve` alone (aggregated) or `prefill` and `decode` (disaggregated)", path=(other,))
    elif has in ({"prefill"}, {"decode"}):
        missing = ({"prefill", "decode"} - has).pop()
        name = has.pop()
        yield diag(codes.ROLE_SHAPE, f"a disaggregated plan needs a `{missing}` role too", getattr(plan, name).name_span,
                   help=f"add `{missing} {{ ... }}`, or rename this role to `serve`", path=(name,))


def _dp_key(role) -> str:
    """The key the role wrote for its data-parallel size: ``ep`` (the seeds' form) or ``dp``."""
    return "ep" if not role.is_default("ep") else "dp"


def check_parallel_keys(plan, r):
    """Keys that exclude each other (SN2016): ``ep`` and ``dp`` together; ``ep`` (which means
    expert parallelism on) with ``expert_parallel = false``; redundant experts in both ``eplb``
    and ``optimize.omni_placement``."""
    for name, role in plan.roles():
        if not role.is_default("ep") and not role.is_default("dp"):
            yield diag(codes.CONFLICTING_KEYS, f"`{name}` gives both `ep` and `dp`", role.key_span("dp") or role.span_of("dp"),
                       related=[Related(role.span_of("ep"), "`ep` given here")],
                       help=f"write `dp = {role.dp}` with `expert_parallel = true|false`, or the seeds' `ep = {role.ep}` "
                            "(data parallelism with expert parallelism on), not both", path=(name, "dp"))
        if not role.is_default("ep") and role.expert_parallel is False:
            yield diag(codes.CONFLICTING_KEYS, f"`{name}`: `ep = {role.ep}` means expert parallelism, but `expert_parallel = false`",
                       role.span_of("expert_parallel"), related=[Related(role.span_of("ep"), "`ep` given here")],
                       help=f"for tensor-sharded experts write `dp = {role.ep}  expert_parallel = false`", path=(name, "expert_parallel"))
    pl = plan.optimize.omni_placement if plan.optimize is not None else None
    blocks = [plan.eplb] + [role.eplb for _, role in plan.roles()]
    if pl is not None and not pl.is_default("redundant_experts"):
        for b in blocks:
            if b is not None and not b.is_default("redundant_experts"):
                yield diag(codes.CONFLICTING_KEYS, "redundant experts are given in `eplb` and in `optimize.omni_placement`",
                           b.span_of("redundant_experts"),
                           related=[Related(pl.span_of("redundant_experts"), "per device, given here")],
                           help="keep one: `eplb { redundant_experts }` counts slots per instance, "
                                "`omni_placement { redundant_experts }` per device", path=("eplb", "redundant_experts"))
                break


def check_parallel_sizes(plan, r):
    """``tp × dp × pp`` (``tp × ep × pp`` in the seeds' form) equals each instance's ``devices`` (SN3001)."""
    for name, role in plan.roles():
        rf = r.roles.get(name)
        if rf is None:
            continue
        product = rf.devices
        if product == role.devices:
            continue
        k = _dp_key(role)
        related = [Related(role.span_of(x), f"`{x} = {getattr(role, x)}`" + (" (default)" if role.is_default(x) else ""))
                   for x in ("tp", k, "pp")]
        fixes = []
        help_ = f"make `tp × {k} × pp` equal {role.devices}"
        if role.devices % (role.tp * role.pp) == 0:
            good = role.devices // (role.tp * role.pp)
            help_ = f"with tp = {role.tp}, use {k} = {good}, or set devices = {product}"
            if not role.is_default(k):
                fixes.append(Fix(f"set {k} = {good}", (Edit(role.span_of(k), str(good)),), "unsafe"))
        yield diag(codes.PARALLEL_MISMATCH,
                   f"`{name}`: tp × {k} × pp = {role.tp} × {rf.dp} × {role.pp} = {product}, but each instance has {format_count(role.devices, 'device')}",
                   role.span_of("devices"), related=related, help=help_, fixes=fixes, path=(name, "devices"))


def _hardware_bound(plan, r) -> int | None:
    """The device count SN3002 holds the roles to: the hardware's (``nodes``/``devices``), else its
    system's ``max_devices``; None when there is none or the hardware's count is itself in error
    (:attr:`Facts.devices_in_error`, SN2009: nothing more is said of it)."""
    if r.devices_in_error:
        return None
    if r.devices_available is not None:
        return r.devices_available
    sysm = r.system
    return sysm.max_devices if sysm is not None and sysm.max_devices is not None else None


def check_plan_size(plan, r):
    """At most ``limits.toml [plan] max_devices`` devices (the hardware's, or the roles') and
    ``max_instances`` instances in one plan (SN3060): lowering and the simulator work per server
    process and instance, so a plan past the largest supernode announced is refused before them.

    Each value is said once: the hardware's count not when it is already past its system
    (SN2009, :attr:`Facts.devices_in_error`); the roles' not when they exceed the hardware
    (SN3002 says so, and blocks ``build`` alike), else after the hardware's finding, at the
    role's ``instances``.  The reason printed with each limit is ``limits.toml``'s."""
    from sncc.catalog import plan_limits

    lim = plan_limits()
    max_dev, max_inst = int(lim["max_devices"]), int(lim["max_instances"])
    source = f"limits.toml [plan] ({lim['source'][0]})"
    help_ = "check `nodes` and `instances` for a typo; a larger fleet is several deployments, one plan each"
    roles = list(plan.roles())
    hw = plan.hardware
    if r.devices_available is not None and r.devices_available > max_dev and not r.devices_in_error:
        yield diag(codes.PLAN_TOO_LARGE,
                   f"the hardware has {format_count(r.devices_available, 'device')}; one plan takes at most {max_dev} "
                   f"({lim['reason']['max_devices']})",
                   r.devices_span or hw.name_span, help=help_, notes=[source],
                   path=("hardware", "devices" if hw.devices is not None else "nodes"))
    used = sum(role.instances * role.devices for _, role in roles)
    count = sum(role.instances for _, role in roles)
    bound = _hardware_bound(plan, r)
    if not roles or (bound is not None and used > bound):
        return                                # SN3002 reports the roles' total
    if used <= max_dev and count <= max_inst:
        return
    name, role = max(roles, key=lambda nr: nr[1].instances * (nr[1].devices if used > max_dev else 1))
    what = (f"{format_count(used, 'device')}; one plan takes at most {max_dev} ({lim['reason']['max_devices']})"
            if used > max_dev else
            f"{format_count(count, 'instance')}; one plan takes at most {max_inst} ({lim['reason']['max_instances']})")
    yield diag(codes.PLAN_TOO_LARGE, f"the roles need {what}", role.span_of("instances"),
               related=[Related(other.span_of("instances"), f"{n}: {format_count(other.instances, 'instance')} × "
                                                            f"{format_count(other.devices, 'device')}")
                        for n, other in roles if n != name],
               help=help_, notes=[source], path=(name, "instances"))


def _nodes_taken(plan, per_node: int) -> int:
    """The nodes the roles' instances take under the placement rule (:func:`sncc.facts.packing.pack`:
    an instance smaller than a node stays inside one), not the devices divided by the node size."""
    from sncc.facts.packing import nodes_taken

    return nodes_taken([role.devices for _, role in plan.roles() for _ in range(role.instances)], per_node)


def check_device_count(plan, r):
    """All roles fit in the hardware (SN3002); unused devices are a warning (SN3003).  Nothing
    more is said of hardware whose `nodes`/`devices` is already in error (:attr:`Facts.devices_in_error`).
    Without `nodes` or `devices` the roles must still fit in their system (``max_nodes``)."""
    used = sum(role.instances * role.devices for _, role in plan.roles())
    parts = " + ".join(f"{n} {role.instances} × {role.devices}" for n, role in plan.roles())
    hw = plan.hardware
    sysm = r.system
    if r.devices_in_error:
        return
    hw_key = ("hardware", "devices" if hw.devices is not None else "nodes")
    if r.devices_available is None:
        if sysm is not None and sysm.max_devices is not None and used > sysm.max_devices:
            yield diag(codes.DEVICES_EXCEED, f"the roles need {format_count(used, 'device')} ({parts}) but system "
                                             f"`{sysm.id}` has {sysm.max_devices} ({sysm.max_nodes} × {sysm.devices_per_node})",
                       hw.span_of("system"),
                       related=[Related(role.span_of("instances"), f"{n} uses {role.instances * role.devices}") for n, role in plan.roles()],
                       help="shrink a role, or split the deployment into plans of one system each", path=("hardware", "system"))
        return
    avail = r.devices_available
    per_node = sysm.devices_per_node if sysm is not None else None
    if used > avail:
        need = f"; {_nodes_taken(plan, per_node)} nodes of {format_count(per_node, 'device')} would fit" if per_node else ""
        yield diag(codes.DEVICES_EXCEED, f"the roles need {format_count(used, 'device')} ({parts}) but the hardware has {avail}",
                   r.devices_span or hw.name_span,
                   related=[Related(role.span_of("instances"), f"{n} uses {role.instances * role.devices}") for n, role in plan.roles()],
                   help=f"add hardware or shrink a role{need}", path=hw_key)
    elif used < avail:
        why = f" ({parts} = {used})" if parts else " (the plan has no role)"
        yield diag(codes.IDLE_DEVICES, f"{avail - used} of {format_count(avail, 'device')} {'is' if avail - used == 1 else 'are'} not used by any role{why}",
                   r.devices_span or hw.name_span,
                   help="lower `nodes`/`devices`, or give the devices to a role", path=hw_key)


def check_heads_divisible(plan, r):
    """``tp`` divides the attention heads; KV heads divide or are replicated (SN3004).

    vLLM ``ModelConfig.verify_with_parallel_config`` and ``QKVParallelLinear``
    (domain-facts §3.2).  MLA models have one latent KV head: only the query
    heads constrain ``tp``.
    """
    a = r.arch
    if a is None:
        return
    for name, role in plan.roles():
        tp = role.tp
        heads = a.num_attention_heads
        problem = None
        if heads % tp:
            problem = f"{heads} attention heads are not divisible by tp = {tp}"
        elif not a.is_mla:
            kv = a.num_key_value_heads or heads
            if kv % tp and tp % kv:
                problem = f"{kv} KV heads neither divide nor are divided by tp = {tp}"
        if problem:
            padded = -(-a.vocab_size // 64) * 64   # VocabParallelEmbedding's padding (SN3021)
            ok = [d for d in (1, 2, 4, 8, 16, 32, 64) if heads % d == 0 and padded % d == 0
                  and (a.is_mla or (a.num_key_value_heads or heads) % d == 0 or d % (a.num_key_value_heads or heads) == 0)]
            yield diag(codes.HEADS_NOT_DIVISIBLE, f"`{name}`: {problem} (`{r.served_name}`)",
                       role.span_of("tp"), help="valid tp values: " + ", ".join(map(str, ok)),
                       notes=[f"architecture from {r.arch_source}"], path=(name, "tp"))


#: largest EP group size SN3005 considers when suggesting one (bounds the search, not the check)
_DIVISOR_SEARCH_LIMIT = 4096


def check_experts_spread(plan, r):
    """Experts spread evenly over the EP group where the engine needs it; expert parallelism
    only on MoE models (SN3005, SN3006).

    Static expert placement (``engines.toml [expert_placement]``: Omni-Infer; vllm-ascend before
    PR #16384) needs ``(routed + redundant) % ep_group == 0`` (misconfig BR-03); vLLM assigns the
    remainder to the first ranks and is not checked.  A role without an EP dispatch (a dense
    model, ``expert_parallel = false``, one device) has no EP group to split over.
    """
    a = r.arch
    if a is None:
        return
    for name, role in plan.roles():
        rf = r.roles.get(name)
        if rf is None:
            continue
        if not a.is_moe:
            if not role.is_default("ep") and role.ep > 1 or role.expert_parallel:
                k = "ep" if not role.is_default("ep") else "expert_parallel"
                yield diag(codes.EP_ON_DENSE, f"`{name}`: {k} = {str(getattr(role, k)).lower()} but `{r.served_name}` has no experts",
                           role.span_of(k), help="use tp, dp or more instances for a dense model" if k == "ep"
                           else "remove `expert_parallel`: a dense model has no experts to place", path=(name, k))
            continue
        eplb_row = _eplb_row(plan)
        eplb_on = rf.eplb is not None and (rf.eplb.dynamic or rf.redundant_experts > 0)
        by_eplb = bool(eplb_row and eplb_row.get("even_split_with_eplb") and eplb_on)
        if not rf.expert_parallel or not (r.even_expert_split or by_eplb):
            continue
        group, total = rf.ep_size, rf.routed_slots
        if total % group == 0:
            continue
        ep = rf.eplb
        red = rf.redundant_experts
        # (routed + redundant) % g == 0: a divisor search bounded by a constant, so that a huge
        # tp × dp or redundant count never becomes a huge loop
        fit = [g for g in range(2, min(2 * group, total, _DIVISOR_SEARCH_LIMIT) + 1) if total % g == 0]
        near = min(fit, key=lambda g: abs(g - group)) if fit else None
        pad = group - total % group
        related = [Related(ep.span, f"{format_count(red, 'redundant expert')} ({ep.source})")] if ep is not None and red else []
        k = _dp_key(role)
        yield diag(codes.EXPERTS_NOT_DIVISIBLE,
                   f"`{name}`: {rf.routed_experts} routed experts" + (f" + {red} redundant" if red else "")
                   + f" do not spread evenly over an EP group of {group} devices (tp × {k})",
                   role.span_of(k), related=related,
                   help=(f"use an EP group of {near} devices" if near else "change tp × " + k)
                        + f", or add {pad} redundant experts (`eplb {{ redundant_experts = {red + pad} }}`)",
                   notes=["this engine places experts statically and needs an even split (engines.toml [expert_placement])"
                          if r.even_expert_split else
                          f"with expert-load balancing {plan.engine.kind} asserts an even split: \"EPLB currently only supports "
                          "even distribution of experts across ranks\"; redundant experts count per instance, not per rank "
                          "(engine_rules.toml [[eplb]])"],
                   path=(name, k))


def _eplb_row(plan):
    """The ``engine_rules.toml [[eplb]]`` row of the plan's engine, or None."""
    from sncc.checks._rules import rows

    return next((row for row in rows("eplb") if row["engine"] == plan.engine.kind), None)


def check_redundant_needs_eplb(plan, r):
    """Redundant expert slots on an engine that refuses them without load balancing (SN3025;
    vLLM ``ParallelConfig``: ``num_redundant_experts`` needs ``--enable-eplb``)."""
    from sncc.checks._rules import sources

    row = _eplb_row(plan)
    if row is None or not row.get("redundant_needs_dynamic"):
        return
    for name, rf in r.roles.items():
        ep = rf.eplb
        if ep is None or ep.dynamic or not ep.redundant_experts or not rf.expert_parallel:
            continue
        yield diag(codes.EPLB_REDUNDANT_NEEDS_BALANCER,
                   f"`{name}`: {format_count(ep.redundant_experts, 'redundant expert')} without load balancing: {plan.engine.kind} refuses "
                   "num_redundant_experts unless --enable-eplb is on",
                   ep.span, notes=["source: " + sources(row)],
                   help="add `dynamic = true` to the `eplb` block, or remove `redundant_experts`",
                   path=(name, "eplb", "redundant_experts"))
        return

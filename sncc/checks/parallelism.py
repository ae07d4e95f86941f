"""Parallelism and device-count checks (SN2011, SN3001–SN3006)."""

from __future__ import annotations

from sncc.diagnostics import codes
from sncc.diagnostics.model import Edit, Fix, Related, diag


def check_roles(plan, r):
    """A plan is disaggregated (prefill + decode) or aggregated (serve), not a mix (SN2011)."""
    has = {n for n, _ in plan.roles()}
    if not has:
        yield diag(codes.ROLE_SHAPE, "the plan has no role", plan.name_span,
                   help="add `serve { devices = ... }`, or `prefill { ... }` and `decode { ... }`")
    elif "serve" in has and has - {"serve"}:
        other = sorted(has - {"serve"})[0]
        yield diag(codes.ROLE_SHAPE, f"`{other}` cannot be combined with `serve`", getattr(plan, other).name_span,
                   related=[Related(plan.serve.name_span, "`serve` given here")],
                   help="use `serve` alone (aggregated) or `prefill` and `decode` (disaggregated)")
    elif has in ({"prefill"}, {"decode"}):
        missing = ({"prefill", "decode"} - has).pop()
        present = getattr(plan, has.pop())
        yield diag(codes.ROLE_SHAPE, f"a disaggregated plan needs a `{missing}` role too", present.name_span,
                   help=f"add `{missing} {{ ... }}`, or rename this role to `serve`")


def check_parallel_sizes(plan, r):
    """``tp × ep × pp`` equals each instance's ``devices`` (SN3001)."""
    for name, role in plan.roles():
        product = role.tp * role.ep * role.pp
        if product == role.devices:
            continue
        related = [Related(role.span_of(k), f"`{k} = {getattr(role, k)}`" + (" (default)" if role.is_default(k) else ""))
                   for k in ("tp", "ep", "pp")]
        fixes = []
        help_ = f"make `tp × ep × pp` equal {role.devices}"
        if role.devices % (role.tp * role.pp) == 0:
            good_ep = role.devices // (role.tp * role.pp)
            help_ = f"with tp = {role.tp}, use ep = {good_ep}, or set devices = {product}"
            if not role.is_default("ep"):
                fixes.append(Fix(f"set ep = {good_ep}", (Edit(role.span_of("ep"), str(good_ep)),), "unsafe"))
        yield diag(codes.PARALLEL_MISMATCH,
                   f"`{name}`: tp × ep × pp = {role.tp} × {role.ep} × {role.pp} = {product}, but each instance has {role.devices} devices",
                   role.span_of("devices"), related=related, help=help_, fixes=fixes, path=(name, "devices"))


def check_device_count(plan, r):
    """All roles fit in the hardware (SN3002); unused devices are a warning (SN3003)."""
    if r.devices_available is None:
        return
    used = sum(role.instances * role.devices for _, role in plan.roles())
    parts = " + ".join(f"{n} {role.instances} × {role.devices}" for n, role in plan.roles())
    avail = r.devices_available
    hw = plan.hardware
    per_node = r.system.devices_per_node if r.system is not None else None
    if used > avail:
        need = f"; {-(-used // per_node)} nodes of {per_node} devices would fit" if per_node else ""
        yield diag(codes.DEVICES_EXCEED, f"the roles need {used} devices ({parts}) but the hardware has {avail}",
                   r.devices_span or hw.name_span,
                   related=[Related(role.span_of("instances"), f"{n} uses {role.instances * role.devices}") for n, role in plan.roles()],
                   help=f"add hardware or shrink a role{need}")
    elif used < avail:
        yield diag(codes.IDLE_DEVICES, f"{avail - used} of {avail} devices are not used by any role ({parts} = {used})",
                   r.devices_span or hw.name_span,
                   help="lower `nodes`/`devices`, or give the devices to a role")


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
            ok = [d for d in (1, 2, 4, 8, 16, 32, 64) if heads % d == 0 and (a.is_mla or (a.num_key_value_heads or heads) % d == 0 or d % (a.num_key_value_heads or heads) == 0)]
            yield diag(codes.HEADS_NOT_DIVISIBLE, f"`{name}`: {problem} (`{r.served_name}`)",
                       role.span_of("tp"), help="valid tp values: " + ", ".join(map(str, ok)),
                       notes=[f"architecture from {r.arch_source}"], path=(name, "tp"))


def check_experts_spread(plan, r):
    """Experts spread evenly over the EP group; EP only on MoE models (SN3005, SN3006).

    Static expert placement (Omni-Infer; vllm-ascend before PR #16384) needs
    ``(routed + redundant × group) % (tp × ep) == 0`` (misconfig case BR-03).
    """
    a = r.arch
    if a is None:
        return
    redundant = 0
    red_span = None
    if plan.optimize is not None and plan.optimize.omni_placement is not None:
        redundant = plan.optimize.omni_placement.redundant_experts
        red_span = plan.optimize.omni_placement.span_of("redundant_experts")
    for name, role in plan.roles():
        group = role.tp * role.ep
        if not a.is_moe:
            if role.ep > 1:
                yield diag(codes.EP_ON_DENSE, f"`{name}`: ep = {role.ep} but `{r.served_name}` has no experts",
                           role.span_of("ep"), help="set ep = 1; use tp or more instances for a dense model",
                           path=(name, "ep"))
            continue
        if group <= 1:
            continue
        total = a.n_routed_experts + redundant * group
        if total % group:
            # (routed + redundant × g) % g == routed % g: only divisors of `routed` fit, so the
            # search stops at `routed` (a huge tp × ep must not become a huge loop)
            fit = [g for g in range(2, min(2 * group, a.n_routed_experts) + 1) if a.n_routed_experts % g == 0]
            near = min(fit, key=lambda g: abs(g - group)) if fit else None
            related = [Related(red_span, f"{redundant} redundant experts per device")] if red_span and redundant else []
            yield diag(codes.EXPERTS_NOT_DIVISIBLE,
                       f"`{name}`: {a.n_routed_experts} routed experts" + (f" + {redundant * group} redundant" if redundant else "")
                       + f" do not spread evenly over {group} devices (tp × ep)",
                       role.span_of("ep"), related=related,
                       help=f"use an EP group of {near} devices" if near else "change tp × ep", path=(name, "ep"))

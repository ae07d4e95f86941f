"""vllm-ascend options by release (SN4015, SN4017): ``scheduler = ascend``,
``optimize.superkernel_layers`` and ``optimize.micro_batch = 2`` are written in the
spelling of the plan's vllm-ascend release, or reported.

* the release has no spelling for the option (removed, not yet added, or the key differs
  between releases and the plan names none): SN4015 at the option, saying which release
  removed it; nothing is written.  ``scheduler = ascend`` outside its releases is SN4013
  (:func:`sncc.checks.versions.check_removed_options`) instead.
* the plan breaks a precondition the release enforces at start-up (TorchAir graph mode,
  tensor_parallel_size = 1, no speculative decoding, a DeepSeek model_type): SN4017, with the
  conflicting value as related location; nothing is written.
* the release accepts the option but it does nothing for this plan (SuperKernel fusion on a
  model that is not MoE with W8A8 weights; dual-batch overlap on a non-MLA model): SN4015;
  nothing is written.

The decisions are the adapter's :meth:`~sncc.engines.base.EngineAdapter.release_options`
(:func:`sncc.engines.vllm_ascend.options.plan_options`), the same lowering follows.  Facts:
``sncc/engines/vllm_ascend/data/options.toml``, ``software.toml [[features]]``.
"""

from __future__ import annotations

from sncc.checks._rules import engine_release, release_related, vllm_label
from sncc.diagnostics import codes
from sncc.diagnostics.model import Edit, Fix, Related, diag

#: what to suggest when a precondition fails, by rule; {opt} is the plan option, {role} the role
_HELP = {
    "torchair_graph": "set `graph {{ mode = torchair }}` (decode and serve run graphs by default), or remove `{opt}`",
    "tp1": "set `{role}` tp = 1 and put the devices into ep, or remove `{opt}`",
    "moe_w8a8": "remove `{opt}`: it has no effect on this model",
    "mla": "remove `{opt}`: it has no effect on this model",
    "deepseek_type": "remove `{opt}`, or use another vllm-ascend release",
    "no_speculative": "remove `speculative` or `{opt}`, or use another vllm-ascend release",
}


def _option_span(plan, option: str, role_name: str | None):
    """(span, logical path) of the plan value that set ``option`` (for ``scheduler``: in ``role_name``)."""
    if option == "scheduler":
        name, role = next((n, ro) for n, ro in plan.roles() if ro.scheduler == "ascend" and role_name in (None, n))
        return role.span_of("scheduler"), (name, "scheduler")
    return plan.optimize.span_of(option), ("optimize", option)


def _related(plan, resolved, rule: str, role_name: str | None) -> list[Related]:
    out = release_related(plan, resolved)   # the release the build writes for (written, else sncc's default pin)
    roles = dict(plan.roles())
    if rule == "tp1" and role_name in roles:
        role = roles[role_name]
        out.append(Related(role.span_of("tp") or role.name_span, f"`{role_name}` tp = {role.tp}"))
    elif rule == "torchair_graph":
        g = plan.graph
        if g is not None and g.mode is not None:
            out.append(Related(g.span_of("mode"), f"graph mode `{g.mode}`"))
    elif rule == "no_speculative":
        sp = next((rf.speculative for rf in resolved.roles.values() if rf.speculative is not None), None)
        if sp is not None:
            out.append(Related(sp.span_of("method"), "speculative decoding"))
    elif rule in ("moe_w8a8",):
        out.append(Related(getattr(resolved, "quant_span", None) or plan.model.name_span, "model and weights"))
    elif rule in ("mla", "deepseek_type"):
        out.append(Related(plan.model.name_span, "model"))
    return [r for r in out if r.span is not None]


def check_vllm_ascend_options(plan, r):
    """Each of the plan's vllm-ascend options is written in its release's spelling, or reported (SN4015, SN4017)."""
    from sncc.engines.registry import plan_adapter

    adapter = plan_adapter(plan)
    if adapter is None or (r.chip is not None and r.chip.vendor != "huawei"):
        return  # other chips: sncc.checks.features.check_options_apply
    for use in adapter.release_options(plan, r):   # () for engines without release-specific options
        if use.option == "scheduler" and use.spelling is None:
            continue  # SN4013 (versions.check_removed_options) reports the Ascend scheduler outside its releases
        label = f"vllm-ascend {use.version}" if use.version else "an unversioned vllm-ascend"
        if use.spelling is None:
            span, path = _option_span(plan, use.option, None)
            yield diag(codes.OPTION_NOT_APPLIED, f"`{use.option}` is not written for {label}: {use.absent}", span,
                       related=release_related(plan, r),
                       help=f"remove `{use.option}`, or choose a release that has it" if use.version
                       else "set `engine { version = ... }` so sncc can write the release's keys",
                       path=path)
            continue
        for u in use.unmet:
            span, path = _option_span(plan, use.option, u.role)
            code = codes.OPTION_PRECONDITION if u.effect == "refused" else codes.OPTION_NOT_APPLIED
            tail = "; sncc does not write it" + ("" if u.effect == "refused" else " (it would have no effect)")
            yield diag(code, f"`{use.option}`: {u.message}{tail}", span,
                       related=_related(plan, r, u.rule, u.role),
                       help=_HELP[u.rule].format(opt=use.option, role=u.role or "the role"),
                       notes=[use.spelling.feature.notes] if use.spelling.feature.notes else [], path=path)


def check_env_read(plan, r):
    """Every plan or role ``env`` entry is read by the pinned release, its vLLM or the stack below
    (SN4044, info): the build leaves the others out of ``env/*.sh``.  A close spelling the release
    does read is suggested."""
    from sncc.engines.registry import plan_adapter
    from sncc.engines.runtime_env import close_spellings, last_read, unread_plan_variables

    adapter = plan_adapter(plan)
    if adapter is None:
        return
    vendor = "ascend" if r.is_ascend else "nvidia"
    where: dict[str, tuple] = {}
    for k in plan.env:
        where.setdefault(k, (plan.env_key_span(k), ("env", k)))
    for name, role in plan.roles():
        for k in role.env:
            where.setdefault(k, (role.env_key_span(k), (name, "env", k)))
    release = engine_release(plan, r)   # written, else sncc's default pin: the release the env files are for
    unread = unread_plan_variables(adapter, release, vendor, where)
    nearby = close_spellings(unread, adapter, release, vendor)
    default = getattr(r, "engine_version_default", False)
    for k, who in unread.items():
        if default:   # name the release judged as sncc's default pin, as the other release checks do
            pinned = f"{adapter.label} {release}"
            who = who.replace(pinned, f"{pinned} (sncc's default pin)") if pinned in who else f"{who} (sncc's default pin)"
        span, path = where[k]
        near = nearby.get(k)
        older = last_read(adapter, release, k)   # an older release's variable, still in old recipes
        notes = ([f"{older[0]} reads it: {older[1]}"] if older else
                 ["manifests: sncc/engines/<engine>/data/<version>.json; the stack below: sncc/engines/cann_env.json"])
        if near:   # a near-miss of a variable the release reads: the value the writer meant is lost
            notes.insert(0, f"`{near}` does not get this value: the servers run with sncc's or the engine's default for it")
        yield diag(codes.ENV_VARIABLE_UNREAD,
                   f"`{k}` is read by neither {who}"
                   + (f" (last read by {older[0]} of the releases sncc has manifests for)" if older else "")
                   + "; sncc does not export it",
                   span, help=(f"did you mean `{near}`?" if near else
                               "remove it: the pinned release reads it no more" if older else
                               "remove it, or use the release's own spelling"),
                   notes=notes, path=path, severity="warning" if near else None,
                   fixes=[Fix(f"rename to `{near}`", (Edit(span, near),), "unsafe")] if near and span is not None else ())


def _value_rules(adapter, vllm: str, vendor: str) -> list[dict]:
    """The adapter's ``[[value_rules]]`` (``data/pins.toml``) in force for vLLM ``vllm`` on ``vendor``
    (``ascend`` or ``nvidia``): rows whose ``since`` is at or below it and whose ``vendor``, when
    given, is the plan's.  Raises nothing: a row or version that does not parse is skipped."""
    from sncc import catalog

    out = []
    for row in adapter.data.get("value_rules", ()):
        if row.get("vendor") not in (None, vendor):
            continue
        try:
            if catalog.parse_version(vllm) >= catalog.parse_version(str(row.get("since", "0"))):
                out.append(row)
        except ValueError:
            continue
    return out


def check_engine_choices(plan, r):
    """A plan value the pinned vLLM's parser takes from a fixed set is one of them, and a value its
    parser takes freely passes the release's start-up rule (SN4045).

    Facts: the engine argument of each plan key (``sncc/engines/data/plan_keys.toml``, ``how =
    "value"`` rows), its ``choices`` in the manifest of the vLLM the engine pin runs, and the
    adapter's ``[[value_rules]]`` (``multiple_of``: vLLM 0.23.0 on CUDA needs a block size that is a
    multiple of 16)."""
    from sncc.engines.manifest import ManifestError, load
    from sncc.engines.registry import plan_adapter
    from sncc.engines.plan_keys import rows

    adapter = plan_adapter(plan)
    if adapter is None:
        return
    vllm = adapter.vllm_version(engine_release(plan, r))   # of the release written, else sncc's default pin
    try:
        args = load("vllm", vllm).data.get("arguments", {})
    except ManifestError:
        return
    shown = vllm_label(plan, r, vllm)   # names sncc's default pin when the plan names no release
    by_arg = {row["arg"]: row for row in rows().values() if row.get("how") == "value" and "." in row.get("plan", "")}
    for rule in _value_rules(adapter, vllm, "ascend" if r.is_ascend else "nvidia"):
        row, step = by_arg.get(rule.get("arg")), rule.get("multiple_of")
        if row is None or not isinstance(step, int) or step <= 0 or args.get(row["arg"], {}).get("choices"):
            continue
        block, key = row["plan"].split(".", 1)
        owners = plan.roles() if block == "role" else [(block, getattr(plan, block, None))]
        for name, node in owners:
            value = getattr(node, key, None) if node is not None else None
            if not isinstance(value, int) or isinstance(value, bool) or value % step == 0:
                continue
            near = sorted({max(step, value - value % step), value - value % step + step})
            yield diag(codes.ENGINE_VALUE_REFUSED,
                       f"`{name}.{key} = {value}`: {shown}" + (f" on {rule['platform']}" if rule.get("platform") else "")
                       + f" needs `--{row['arg']}` "
                       f"to be a multiple of {step}",
                       node.span_of(key), help="use " + " or ".join(map(str, near)),
                       notes=[f"{rule.get('refused', 'refused at start-up')} "
                              f"(sncc/engines/{adapter.package.rsplit('.', 1)[-1]}/data/pins.toml [[value_rules]])"],
                       path=(name, key))
    for row in rows().values():
        choices = args.get(row["arg"], {}).get("choices")
        if row.get("how") != "value" or not choices or "." not in row.get("plan", ""):
            continue
        block, key = row["plan"].split(".", 1)
        owners = plan.roles() if block == "role" else [(block, getattr(plan, block, None))]
        for name, node in owners:
            value = getattr(node, key, None) if node is not None else None
            if value is None or value in choices or str(value) in map(str, choices):
                continue
            yield diag(codes.ENGINE_VALUE_REFUSED,
                       f"`{name}.{key} = {value}`: {shown} takes `--{row['arg']}` only as one of "
                       + ", ".join(map(str, choices)),
                       node.span_of(key), help=f"use one of {', '.join(map(str, choices))}",
                       notes=[f"vLLM {vllm}'s argument parser (sncc/engines/vllm/data/{vllm}.json): "
                              f"\"argument --{row['arg']}: invalid choice\""],
                       path=(name, key))


def check_switches_in_release(plan, r):
    """A role switch the build passes as written (``plan_keys.toml`` ``build = "as-written"``:
    ``prefix_caching``) is an argument of the pinned release's vLLM, by its manifest; otherwise
    the build writes it nowhere and says so here (SN4041, warning).  The decision is the adapter's
    :meth:`~sncc.engines.base.EngineAdapter.switch_absent`, which lowering follows."""
    from sncc.engines.plan_keys import as_written_switches
    from sncc.engines.registry import plan_adapter

    adapter = plan_adapter(plan)
    if adapter is None:
        return
    args = as_written_switches()
    release = engine_release(plan, r)   # written, else sncc's default pin: the release the files are for
    roles = dict(plan.roles())
    for name, rf in r.roles.items():
        role = roles.get(name)
        for key, value in getattr(rf, "switches", {}).items():
            why = adapter.switch_absent(release, args[key], value)
            if why is None or role is None:
                continue
            yield diag(codes.OPTION_ABSENT_IN_PIN,
                       f"`{name}.{key} = {str(value).lower()}` is written nowhere: {why}",
                       role.span_of(key), related=release_related(plan, r),
                       help=f"remove `{key}` (the engine keeps its default), or choose a release that has `--{args[key]}`",
                       notes=["the release's arguments: sncc/engines/vllm/data/<version>.json"],
                       path=(name, key))

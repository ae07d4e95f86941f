"""Redundant experts and expert-load balancing in each engine release's own keys.

One table per adapter (``[[eplb]]`` rows in ``data/pins.toml``, each for a release range and with
its sources) says where a release reads the plan's ``eplb { }`` settings
(:class:`~sncc.facts.model.EplbFacts`, per role):

``where``
    ``arguments`` (vLLM: ``dynamic`` is a switch argument, the rest are keys of the JSON argument
    ``config_arg``), ``additional_config`` (vllm-ascend: dotted keys of ``--additional-config``,
    ``dynamic_env`` exported beside), or ``placement`` (Omni-Infer: keys of the OmniPlacement
    YAML; ``redundant`` is a count per device there).
``redundant`` / ``dynamic`` / ``interval`` / ``window``
    the release's key for each setting ("" = the release has none).
``redundant_needs_dynamic``
    "" when redundant slots work without run-time rebalancing, else the effect of writing them
    alone: ``refused`` (the engine raises at start-up) or ``ignored`` (accepted and inert);
    ``redundant_needs_dynamic_reported_by`` the code of the check that already reports it.
``requires_expert_parallel``
    the effect of load balancing on a role without expert parallelism.
``dynamic_model_types``
    the HF ``model_type`` values the release's run-time balancing can register (empty: any MoE
    model); ``dynamic = true`` on another model is refused (the engine raises at load).

:func:`lower_eplb` turns a role's settings into what lowering writes (:class:`EplbLowering`) and
what it cannot write (:class:`EplbIssue`: ``refused`` → SN4017, ``ignored`` → SN4015,
``absent`` → SN4041); check :func:`sncc.checks.features.check_eplb_effective` reports the issues
and lowering writes the rest, so the two never disagree and nothing is dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class EplbIssue:
    """A setting of ``eplb`` the release cannot take as written.

    ``field`` is the plan key (``redundant_experts``, ``dynamic``, ``interval``, ``window``);
    ``effect`` ``refused`` | ``ignored`` | ``absent``; ``honoured`` says how the intent is still
    carried when it is (an info, not a warning)."""

    field: str
    effect: str
    message: str
    help: str
    source: tuple[str, ...] = ()
    honoured: str = ""
    reported_by: str = ""


@dataclass(frozen=True)
class EplbLowering:
    """What one role's servers get for ``eplb``: engine ``args`` (dashed name, value),
    ``additional_config`` (nested object merged into ``--additional-config``), role ``env``
    (name, value), OmniPlacement ``placement`` keys; ``note`` how it was derived; ``issues``
    what was not written and why."""

    args: tuple[tuple[str, Any], ...] = ()
    additional_config: Mapping[str, Any] = field(default_factory=dict)
    env: tuple[tuple[str, str], ...] = ()
    placement: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""
    issues: tuple[EplbIssue, ...] = ()


@dataclass(frozen=True)
class EplbRow:
    """One ``[[eplb]]`` row of an adapter's ``pins.toml`` (see the module docstring)."""

    since: str
    before: str
    where: str
    redundant: str = ""
    dynamic: str = ""
    interval: str = ""
    window: str = ""
    config_arg: str = ""
    dynamic_env: Mapping[str, str] = field(default_factory=dict)
    redundant_needs_dynamic: str = ""
    redundant_needs_dynamic_reported_by: str = ""
    requires_expert_parallel: str = "ignored"
    static_roles: tuple[str, ...] = ()
    dynamic_model_types: tuple[str, ...] = ()
    source: tuple[str, ...] = ()
    notes: str = ""

    def covers(self, version: str | None) -> bool:
        """True when release ``version`` lies in ``[since, before)``."""
        from sncc.engines.base import _vkey

        key = _vkey(version) if version else None
        if key is None:
            return False
        lo = _vkey(self.since) if self.since else ()
        hi = _vkey(self.before) if self.before else None
        return (lo or ()) <= key and (hi is None or key < hi)

    @property
    def releases(self) -> str:
        """``v0.11.0rc0 to before v0.14.0rc1`` / ``from 0.11.0``."""
        return f"{self.since} to before {self.before}" if self.before else f"from {self.since}"


def eplb_rows(data: Mapping[str, Any]) -> tuple[EplbRow, ...]:
    """The ``[[eplb]]`` rows of an adapter's parsed ``pins.toml``."""
    out = []
    for d in data.get("eplb", ()):
        out.append(EplbRow(since=d.get("since", ""), before=d.get("before", ""), where=d["where"],
                           redundant=d.get("redundant", ""), dynamic=d.get("dynamic", ""),
                           interval=d.get("interval", ""), window=d.get("window", ""),
                           config_arg=d.get("config_arg", ""), dynamic_env=dict(d.get("dynamic_env", {})),
                           redundant_needs_dynamic=d.get("redundant_needs_dynamic", ""),
                           redundant_needs_dynamic_reported_by=d.get("redundant_needs_dynamic_reported_by", ""),
                           requires_expert_parallel=d.get("requires_expert_parallel", "ignored"),
                           static_roles=tuple(d.get("static_roles", ())),
                           dynamic_model_types=tuple(d.get("dynamic_model_types", ())),
                           source=tuple(d.get("source", ())), notes=d.get("notes", "")))
    return tuple(out)


def _set(d: dict, dotted: str, value) -> None:
    *head, last = dotted.split(".")
    for k in head:
        d = d.setdefault(k, {})
    d[last] = value


def lower_eplb(adapter, version: str | None, rf, from_component: bool = True,
               model_type: str | None = None) -> EplbLowering:
    """:class:`EplbLowering` of role ``rf`` (a :class:`~sncc.facts.model.RoleFacts`) for release
    ``version`` of ``adapter`` (see the module docstring).  ``from_component`` is False when the
    plan's seeds' ``optimize.omni_placement`` form is reported elsewhere (an engine without
    OmniPlacement: check SN4015 of :mod:`sncc.checks.features`), so nothing is said twice.
    ``model_type`` is the checkpoint's (``dynamic_model_types``; None: not judged)."""
    ep = rf.eplb
    if ep is None or (ep.source == "optimize.omni_placement" and not from_component):
        return EplbLowering()
    red, dyn = rf.eplb.redundant_experts, ep.dynamic
    wanted = [f for f, on in (("redundant_experts", red > 0), ("dynamic", dyn), ("interval", ep.interval is not None),
                              ("window", ep.window is not None)) if on]
    if not wanted:
        return EplbLowering()
    label = f"{adapter.label} {version}" if version else adapter.label
    row = next((r for r in eplb_rows(adapter.data) if r.covers(version)), None)
    if row is None:
        known = ", ".join(r.releases for r in eplb_rows(adapter.data)) or "none"
        return EplbLowering(issues=tuple(
            EplbIssue(f, "absent", f"`{_shown(ep, f)}` is written nowhere: sncc knows no expert-load-balancing keys "
                      f"of {label} (it has them for: {known})",
                      "remove it, or choose a release sncc has the keys of") for f in wanted))
    issues: list[EplbIssue] = []
    src = row.source[:1] + ((row.notes,) if row.notes else ())
    if not rf.expert_parallel:
        return EplbLowering(issues=tuple(
            EplbIssue(f, row.requires_expert_parallel,
                      f"`{_shown(ep, f)}`: `{rf.name}` runs no expert parallelism, so there are no expert slots to add "
                      "or balance", f"turn expert parallelism on for `{rf.name}` (tp × dp > 1), or remove it", src)
            for f in wanted))
    static = rf.name in row.static_roles and ep.source == "optimize.omni_placement"
    dynamic = dyn and not static
    unregistered = (dynamic and bool(row.dynamic_model_types) and model_type is not None
                    and model_type not in row.dynamic_model_types)
    if unregistered:
        issues.append(EplbIssue("dynamic", "refused",
                                f"`dynamic = true`: {label} balances only {', '.join(row.dynamic_model_types)} models "
                                f"at run time; its EPLB raises NotImplementedError(\"EPLB is not supported.\") at load "
                                f"for `{model_type}`", "remove `dynamic = true`, or use a release whose EPLB registers "
                                "this model", row.source + ((row.notes,) if row.notes else ())))
        dynamic = False
    keys: dict[str, Any] = {}
    env: list[tuple[str, str]] = []
    notes: list[str] = []
    seeds = ep.source == "optimize.omni_placement"
    shown = (f"redundant_experts = {ep.per_device}` per device (`{red}` per instance)" if ep.per_device is not None
             else f"redundant_experts = {red}`")
    on_help = "add `adjust_interval` to `omni_placement`" if seeds else "set `dynamic = true` in `eplb`"
    if red > 0:
        if not row.redundant:
            issues.append(EplbIssue("redundant_experts", "absent", f"`{shown} is written nowhere: "
                                    f"{label} has no redundant-expert key", "remove `redundant_experts`, or choose a "
                                    "release that has one", src))
        elif row.redundant_needs_dynamic and not dyn:
            verb = "refuses" if row.redundant_needs_dynamic == "refused" else "ignores"
            issues.append(EplbIssue("redundant_experts", row.redundant_needs_dynamic,
                                    f"`{shown}: {label} {verb} `{row.redundant}` without dynamic EPLB "
                                    f"(`{row.dynamic}`, run-time rebalancing); sncc does not write it",
                                    f"{on_help} (dynamic EPLB), or remove `redundant_experts`", src,
                                    reported_by=row.redundant_needs_dynamic_reported_by))
        elif row.where == "placement":
            per = ep.per_device if ep.per_device is not None else (red // rf.devices if red % rf.devices == 0 else None)
            if per is None:
                issues.append(EplbIssue("redundant_experts", "refused",
                                        f"`{shown} per instance cannot be written: {label} sets "
                                        f"redundant slots per rank (`{row.redundant}`) and {red} is not a multiple of "
                                        f"the {rf.devices} ranks of `{rf.name}`",
                                        f"use a multiple of {rf.devices} redundant experts", src))
            else:
                keys[row.redundant] = per
                notes.append(f"{row.redundant} = {per} per rank ({red} per instance over {rf.devices} ranks)")
        else:
            keys[row.redundant] = red
            notes.append(f"{row.redundant} = {red} per instance")
    if dyn and static:
        notes.append(f"{rf.name} keeps a static placement (the seeds' omni_placement form: Omni-Infer's own "
                     "prefill configs run without dynamic placement)")
    if row.dynamic and (dynamic or row.where == "placement"):
        keys[row.dynamic] = dynamic
        if dynamic:
            notes.append(f"{row.dynamic}: rebalance at run time")
            env += list(row.dynamic_env.items())
    elif dyn and not row.dynamic:
        issues.append(EplbIssue("dynamic", "absent", f"`dynamic = true` is written nowhere: {label} has no run-time "
                                "expert-load balancing", "remove `dynamic`", src))
    for f, key in (("interval", row.interval), ("window", row.window)):
        v = getattr(ep, f)
        if v is None or unregistered:   # the refusal of `dynamic` says it
            continue
        if not key:
            if static:
                continue  # a static role has nothing to pace; the dynamic roles report it
            if f == "window" and row.interval:
                honoured = f"the load window is the period between rebalances ({row.interval})" if dynamic else ""
            else:
                honoured = (f"sncc writes {row.dynamic} = true (the engine rebalances on its own schedule)"
                            if dynamic and row.dynamic else "")
            issues.append(EplbIssue(f, "absent", f"`{f} = {v}` is written nowhere: {label} has no such key"
                                    + (f"; {honoured}" if honoured else ""), f"remove `{f}`", src, honoured))
        elif not dynamic:
            if not static:
                issues.append(EplbIssue(f, "ignored", f"`{f} = {v}` has no effect without `dynamic = true` "
                                        f"({label} `{key}` paces run-time rebalancing)",
                                        "set `dynamic = true` in `eplb`, or remove it", src))
        else:
            keys[key] = v
            notes.append(f"{key} = {v} steps")
    out_args: tuple = ()
    ac: dict = {}
    placement: dict = {}
    if row.where == "arguments":
        on = keys.pop(row.dynamic, False) if row.dynamic else False
        cfg = {k: v for k, v in keys.items()}
        args = []
        if on:
            args.append((row.dynamic, True))
        if cfg and on:
            args.append((row.config_arg, cfg))
        out_args = tuple(args)
    elif row.where == "additional_config":
        if keys.get(row.dynamic) is False:
            keys.pop(row.dynamic)
        for k, v in keys.items():
            _set(ac, k, v)
    else:
        placement = keys
    note = f"{ep.source}: " + "; ".join(notes) + f" ({label}; the keys of releases {row.releases})" if notes else ""
    return EplbLowering(args=out_args, additional_config=ac, env=tuple(env), placement=placement, note=note,
                        issues=tuple(issues))


def _shown(ep, f: str) -> str:
    v = {"redundant_experts": ep.redundant_experts, "dynamic": ep.dynamic, "interval": ep.interval,
         "window": ep.window}[f]
    return f"{f} = {str(v).lower() if isinstance(v, bool) else v}"

"""vllm-ascend's part of lowering: ``--additional-config``, its environment, the Mooncake extra config.

``--additional-config`` of a role holds, in order:

* ``kv_cache_dtype = "int8"`` for an INT8 KV cache before v0.12.0rc1 (later releases take C8 from
  the weights' ModelSlim quant config);
* the role's ``eplb`` settings in the release's keys (``[[eplb]]`` rows of ``data/pins.toml``,
  :mod:`sncc.engines.eplb`): ``init_redundancy_expert`` / ``dynamic_eplb`` /
  ``num_iterations_eplb_update`` on v0.11.0-v0.13.x, ``eplb_config.*`` from v0.14.0rc1 (where
  redundant experts are inert without ``dynamic_eplb``: not written, check SN4015); run-time
  rebalancing also exports ``DYNAMIC_EPLB=true`` for the role (:func:`role_env`);
* TorchAir graphs (``graph { mode = torchair }``, v0.9.x-v0.11.x, graph roles only):
  ``torchair_graph_config.enabled``, and with ``optimize.graph_cache`` both ``use_cached_graph``
  and ``use_cached_kv_cache_bytes`` (v0.11.0 ascend_config.py: the cached graph is rebuilt unless
  the KV-cache size is cached too);
* the release's spelling of ``scheduler = ascend`` / ``superkernel_layers`` with the keys the
  release requires beside them (:func:`sncc.engines.vllm_ascend.options.plan_options`).
"""

from __future__ import annotations

from sncc.engines.vllm_ascend.options import V012, leaves, release_before


def _put(d: dict, path: tuple[str, ...], value) -> None:
    """Set ``path`` in nested dict ``d`` unless a value is already there; ``{}`` creates the table."""
    for k in path[:-1]:
        d = d.setdefault(k, {})
        if not isinstance(d, dict):
            return
    if path[-1] not in d:
        d[path[-1]] = value if value != {} else {}


def additional_config(ctx, rs) -> tuple[dict, list[str]]:
    """(the role's ``--additional-config`` object, notes), see the module docstring."""
    plan, resolved = ctx.plan, ctx.resolved
    legacy = release_before(plan, V012)
    ac: dict = {}
    notes: list[str] = []
    if resolved.kv_dtype == "int8" and legacy:
        ac["kv_cache_dtype"] = "int8"
        notes.append("kv_cache_dtype: vllm-ascend C8 KV cache (v0.9.1-v0.11.x key)")
    eplb = ctx.adapter.eplb_lowering(plan, resolved, rs)
    for path, value in leaves(eplb.additional_config):
        _put(ac, path, value)
    if eplb.note:
        notes.append(eplb.note)
    if rs.graph_mode and ctx.adapter.torchair_mode(plan):
        tg: dict = {"enabled": True}
        opt = plan.optimize
        if opt is not None and opt.graph_cache:
            tg["use_cached_graph"] = True
            tg["use_cached_kv_cache_bytes"] = True
            notes.append("torchair_graph_config.use_cached_graph with use_cached_kv_cache_bytes: "
                         "optimize.graph_cache (directory TORCHAIR_CACHE_HOME)")
        ac["torchair_graph_config"] = tg
    for use in ctx.adapter.release_options(plan, resolved):
        if not use.written or rs.name not in use.roles or not use.spelling.additional_config:
            continue
        sp = use.spelling
        for path, value in leaves(sp.additional_config) + leaves(sp.requires):
            _put(ac, path, value)
        notes.append(f"{sp.key}: plan {'scheduler' if use.option == 'scheduler' else 'optimize.' + use.option} "
                     f"= {use.value} ({sp.name}, {sp.releases})")
    return ac, notes


def runtime_env(ctx) -> list:
    """Engine variables: ``TORCHAIR_CACHE_HOME`` for ``graph_cache`` in TorchAir mode (the root
    vllm-ascend's ``torchair/utils.py`` reads, v0.11), and the env spelling of the options the
    release writes (``VLLM_ASCEND_ENABLE_DBO=1`` for ``micro_batch = 2``)."""
    from sncc.lowering.deployment import EnvVar

    plan = ctx.plan
    out = []
    sec = "vllm-ascend options"
    opt = plan.optimize
    if ctx.ascend and opt is not None and opt.graph_cache and ctx.adapter.torchair_mode(plan):
        out.append(EnvVar("TORCHAIR_CACHE_HOME", opt.graph_cache,
                          "optimize.graph_cache: TorchAir cache root (with torchair_graph_config.use_cached_graph)", sec))
    out += tutorial_env(ctx)
    if ctx.ascend:
        for use in ctx.adapter.release_options(plan, ctx.resolved):
            if not use.written:
                continue
            sp = use.spelling
            for name, value in sp.env.items():
                out.append(EnvVar(name, value, f"plan optimize.{use.option} = {use.value}: {sp.name} ({sp.releases})"
                                  + (f"; {sp.notes}" if sp.notes else ""), sec))
    return out


def tutorial_env(ctx) -> list:
    """The variables vllm-ascend's own tutorials export at the pinned tag (``pins.toml``
    ``[[tutorial_env."<version>"]]``: name, value, the chips' ``device_types`` the tutorial's block
    is for, an ``unless`` of plan ``env`` values it cannot run with, and its tag, file and line),
    each with its source as the note.  The caller gives a plan ``env`` entry of the same name
    precedence (:func:`sncc.lowering.env.common_env`)."""
    from sncc.lowering.deployment import EnvVar

    chip = ctx.resolved.chip
    dtype = getattr(chip, "device_type", None)
    plan_env = {k: str(v).strip().lower() for k, v in ctx.plan.env.items()}
    out = []
    for row in ctx.adapter.data.get("tutorial_env", {}).get(ctx.pin.version, ()):
        if row.get("device_types") and dtype not in row["device_types"]:
            continue
        if any(plan_env.get(k) == str(v).lower() for k, v in row.get("unless", {}).items()):
            continue
        out.append(EnvVar(row["name"], str(row["value"]), row["source"], f"vllm-ascend {ctx.pin.version} tutorials"))
    return out


def role_env(ctx, rs) -> list:
    """The role's own engine variables: ``DYNAMIC_EPLB=true`` when it rebalances experts at run
    time (the release's ``[[eplb]]`` row)."""
    from sncc.lowering.deployment import EnvVar

    low = ctx.adapter.eplb_lowering(ctx.plan, ctx.resolved, rs)
    return [EnvVar(k, v, "run-time expert-load balancing of this role", f"{rs.name} expert-load balancing")
            for k, v in low.env]


def kv_connector_extra(ctx, conn, rs) -> dict:
    """``kv_connector_extra_config`` of Mooncake: ``use_ascend_direct`` (required on Ascend,
    vllm-ascend#5635) and both roles' DP and TP sizes (``kv_transfer.<role>_dp`` / ``_tp`` override)."""
    from sncc import catalog

    if conn.id != "mooncake":
        return {}
    plan = ctx.plan
    xfer = plan.kv_transfer
    extra: dict = {}
    try:
        direct_needed = catalog.kv_connector(conn.id).ascend_requires_direct
    except KeyError:
        direct_needed = False
    if ctx.ascend and direct_needed:
        extra["use_ascend_direct"] = (xfer.use_ascend_direct if xfer is not None and xfer.use_ascend_direct is not None
                                      else True)
    for name in ("prefill", "decode"):
        other = ctx.roles.get(name)
        if other is None:
            continue
        dp = getattr(xfer, f"{name}_dp", None) if xfer is not None else None
        tp = getattr(xfer, f"{name}_tp", None) if xfer is not None else None
        extra[name] = {"dp_size": dp or other.dp, "tp_size": tp or other.tp}
    return extra

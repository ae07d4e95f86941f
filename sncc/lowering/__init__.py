"""Lowering: a typed :class:`~sncc.plan.model.Plan` plus its
:class:`~sncc.plan.resolve.Resolved` facts → an engine-neutral
:class:`Deployment` that the emitters in :mod:`sncc.emit` format.

Everything an output needs that is *derived* (not copied) is computed here, once,
with a short human-readable note saying how, so that every emitter agrees and the
TOML emitter can print the note as a comment:

* **parallelism** — one instance of a role is ``tp × ep × pp`` devices.  The plan's
  ``ep`` is vLLM's ``data_parallel_size`` (attention is replicated ``ep`` times,
  each replica tensor-parallel over ``tp`` devices) and Omni-Infer's
  ``model_parallel_config.dp_size``; routed experts are spread over all
  ``tp × ep`` devices, so ``enable_expert_parallel`` is on when the model is MoE
  and ``tp × ep > 1``.
* **KV dtype** — vLLM's ``kv_cache_dtype`` accepts ``auto``/``fp8`` only; an
  ``int8`` KV cache is vllm-ascend's ``additional_config.kv_cache_dtype``
  (legacy C8, "currently only int8", v0.9.1 to v0.11.x), so ``int8`` lowers to
  vLLM ``auto`` plus the Ascend key there; later releases read C8 from the
  weights' ModelSlim quant config, so only ``auto`` is written.
* **chunked prefill** — a PD decode instance receives its prompts as KV from
  prefill and never prefills them, so chunked prefill is switched on there unless
  the plan says ``chunked_prefill = off`` explicitly: vLLM refuses to start with
  chunked prefill off and ``max_num_batched_tokens < max_model_len``
  (``SchedulerConfig.verify_max_model_len``, domain-facts §3.2), and a decode
  step's budget (about ``max_num_seqs`` tokens) is far below ``max_model_len``.
  Check SN5002 covers an explicit ``off`` on decode.
* **engine-version switches** — keys that changed between releases are chosen by
  the vLLM version the engine runs (:func:`vllm_before`): vllm-ascend's release
  numbering follows vLLM's (domain-facts §2.1), Omni-Infer is built on vLLM
  v0.9; ``software.vllm`` wins when given.  An unversioned vllm-ascend is taken
  as the v0.9.1-v0.11.x line (the line whose ``additional_config`` keys sncc
  writes by default), an unversioned ``vllm`` as the current release.
* **rope scaling** — ``model.rope_scaling`` (a YaRN factor) becomes vLLM's
  ``--hf-overrides``: ``{"rope_scaling": {rope_type, factor,
  original_max_position_embeddings}}`` before vLLM v0.12, ``{"rope_parameters":
  {...}}`` from v0.12 (domain-facts §3.1, the v0.18.0 Qwen3-235B tutorial), with
  ``original_max_position_embeddings`` = the model's ``max_position_embeddings``
  so vLLM's derived limit (original × factor) is the one check SN5003 uses.
* **EPLB** — ``omni_placement.redundant_experts`` counts redundant experts *per
  device*; vllm-ascend counts them per instance, so the total is
  ``redundant_experts × tp × ep`` (:attr:`RoleDeployment.redundant_experts`).
* **runtime environment** — the ordered list of ``export`` lines of ``env.sh``
  (:attr:`Deployment.env`), with documented defaults (see :func:`_runtime_env`);
  Ascend / Omni-Infer variables only for Ascend devices and the engines that
  read them.

The functions here are pure: same input, same output, no I/O, no clock, no
hash-order dependence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sncc.plan.model import Plan, Role
from sncc.plan.resolve import Resolved

#: TCP port the emitted vLLM servers listen on (``[server] port``); settings.json's default local endpoint uses it.
SERVER_PORT = 8000

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class LoweringError(ValueError):
    """The plan cannot be lowered (e.g. an ``env`` name that is not a shell identifier).

    Checks normally report these first; the message is one line.
    """


@dataclass(frozen=True)
class RoleDeployment:
    """One role (``prefill``, ``decode`` or ``serve``) as the engine sees it.

    Counts are devices/instances; token budgets are tokens; ``memory_utilization``
    is a fraction of HBM.  ``devices`` is ``tp × dp × pp`` (what the engine
    actually occupies per instance); ``devices_declared`` is the plan's
    ``devices`` (checks compare the two).  ``dp_local`` is the data-parallel ranks
    per node when one instance spans several nodes, else None.  ``kv_role`` is
    ``kv_producer`` (prefill), ``kv_consumer`` (decode) or None (serve).
    ``enable_chunked_prefill`` is what the engine is started with (see the module
    docstring), ``chunked_prefill`` the chunk in tokens (None: no chunk limit).
    ``redundant_experts`` is the total number of redundant expert copies of one
    instance (plan value per device × tp × dp; 0 = none).
    """

    name: str
    instances: int
    tp: int
    dp: int
    pp: int
    devices: int
    devices_declared: int
    nodes_per_instance: int | None
    dp_local: int | None
    expert_parallel: bool
    expert_parallel_note: str
    max_num_seqs: int
    max_num_batched_tokens: int
    chunked_prefill: int | None
    enable_chunked_prefill: bool
    chunked_prefill_note: str
    memory_utilization: float
    memory_utilization_note: str
    graph_mode: bool
    graph_mode_note: str
    kv_role: str | None
    redundant_experts: int = 0
    redundant_experts_note: str = ""


@dataclass(frozen=True)
class EnvVar:
    """One ``export NAME=value`` of env.sh; ``note`` becomes a trailing comment, ``section`` a heading."""

    section: str
    name: str
    value: str
    note: str = ""


@dataclass(frozen=True)
class Deployment:
    """Engine-neutral description of what to run; see the module docstring.

    ``max_model_len``, ``max_input_len``, ``max_output_len`` and ``block_size`` are
    tokens; ``devices_per_node`` devices (None when the system/chip is unknown).
    ``vllm_kv_cache_dtype`` is the vLLM ``--kv-cache-dtype`` value and
    ``ascend_kv_cache_dtype`` the vllm-ascend ``additional_config.kv_cache_dtype``
    (None when not needed).  ``secrets`` are the names of environment variables the
    plan references (values are never read).  ``graph_mode_kind`` is the plan's
    ``graph.mode`` (None: the release's default).  ``hf_overrides`` is vLLM's
    ``--hf-overrides`` object (None when not needed) and ``hf_overrides_note`` says
    why that key.  ``vllm_legacy`` is true when the engine runs a vLLM older than
    v0.12 (see :func:`vllm_before`).
    """

    name: str
    engine: str
    engine_version: str | None
    served_name: str
    model_id: str
    model_path: str
    quant: str | None
    vllm_quantization: str | None
    dtype: str
    kv_dtype: str
    vllm_kv_cache_dtype: str
    ascend_kv_cache_dtype: str | None
    block_size: int
    max_model_len: int
    max_model_len_note: str
    max_input_len: int
    max_output_len: int
    is_moe: bool
    routed_experts: int
    vendor: str
    cann: str | None
    devices_per_node: int | None
    roles: tuple[RoleDeployment, ...]
    disaggregated: bool
    env: tuple[EnvVar, ...] = ()
    secrets: tuple[str, ...] = ()
    graph_mode_kind: str | None = None
    hf_overrides: dict | None = None
    hf_overrides_note: str = ""
    vllm_legacy: bool = True

    def role(self, name: str) -> RoleDeployment | None:
        """The :class:`RoleDeployment` called ``name``, or None."""
        for r in self.roles:
            if r.name == name:
                return r
        return None


#: first vLLM / vllm-ascend release of the "new" key set: torchair_graph_config, the Ascend scheduler
#: and additional_config.kv_cache_dtype removed (software.toml [[features]] torchair_graph, removed_in),
#: rope_scaling → rope_parameters (domain-facts §3.1)
V012 = "v0.12.0rc1"


def vllm_before(plan: Plan, version: str = V012) -> bool:
    """True when the engine of ``plan`` runs a vLLM (vllm-ascend) release older than ``version``.

    The version compared is ``software.vllm`` when the plan gives it, else the engine's
    release (vllm-ascend numbers its releases after the vLLM they run, domain-facts §2.1).
    Omni-Infer is built on vLLM v0.9: always True.  No version: True for vllm-ascend (the
    v0.9.1-v0.11.x line, as the checks assume), False for ``vllm`` (the current release).
    An unparsable version counts as unknown.
    """
    from sncc import catalog

    eng = plan.engine
    if eng.kind == "omni-infer":
        return True
    v = plan.software.vllm if plan.software is not None and plan.software.vllm else eng.version
    if v is None:
        return eng.kind != "vllm"
    try:
        return catalog.parse_version(v) < catalog.parse_version(version)
    except ValueError:
        return eng.kind != "vllm"


def _legacy_kv_config(plan: Plan) -> bool:
    """True when an int8 KV cache is requested through ``additional_config.kv_cache_dtype``:
    vllm-ascend v0.9.1 to v0.11.x (and an unversioned vllm-ascend, or Omni-Infer, which is
    based on vLLM v0.9).  Later releases take C8 from the weights' ModelSlim quant config."""
    from sncc import catalog

    if plan.engine.kind == "omni-infer" or plan.engine.version is None:
        return True
    try:
        return catalog.parse_version(plan.engine.version) < catalog.parse_version(V012)
    except ValueError:
        return True


def _hf_overrides(plan: Plan, resolved: Resolved, legacy: bool) -> tuple[dict | None, str]:
    """vLLM ``--hf-overrides`` for ``model.rope_scaling`` (YaRN), and a note; (None, "") when the
    plan sets no factor (a factor already in the checkpoint's config.json needs no override).

    ``original_max_position_embeddings`` is the model's native context (``ModelArch.yarn_base_positions``:
    the card's value when it differs from ``max_position_embeddings``, as Qwen3's 32,768): vLLM derives
    the longest context as original × factor, the limit check SN5003 applies.  From vLLM v0.12
    the object is ``rope_parameters``, which replaces the checkpoint's whole RoPE dict, so
    ``rope_theta`` is copied from config.json when the checkpoint gives it.
    Raises :class:`LoweringError` when the model's position count is unknown.
    """
    factor = plan.model.rope_scaling
    if factor is None:
        return None, ""
    arch = resolved.arch
    mpe = getattr(arch, "yarn_base_positions", None) if arch is not None else None
    if not mpe:
        raise LoweringError("model.rope_scaling needs the model's max_position_embeddings "
                            "(catalog or config.json) to write original_max_position_embeddings")
    rope: dict = {"rope_type": "yarn", "factor": int(factor) if float(factor).is_integer() else float(factor),
                  "original_max_position_embeddings": int(mpe)}
    if legacy:
        return {"rope_scaling": rope}, (f"model.rope_scaling = {_num(factor)}: YaRN over {mpe} positions "
                                        f"= {int(mpe * factor)} (vLLM < v0.12 key rope_scaling)")
    raw = getattr(resolved.checkpoint, "raw", None) or {}
    theta = raw.get("rope_theta") if isinstance(raw, dict) else None
    if theta is None and isinstance(raw, dict) and isinstance(raw.get("rope_parameters"), dict):
        theta = raw["rope_parameters"].get("rope_theta")
    note = (f"model.rope_scaling = {_num(factor)}: YaRN over {mpe} positions = {int(mpe * factor)} "
            "(vLLM >= v0.12 key rope_parameters")
    if isinstance(theta, (int, float)) and not isinstance(theta, bool):
        rope["rope_theta"] = int(theta) if float(theta).is_integer() else float(theta)
        note += "; rope_theta from config.json)"
    else:
        note += "; no rope_theta: config.json not read, add the checkpoint's if your vLLM drops it)"
    return {"rope_parameters": rope}, note


def _num(x: float) -> str:
    """``0.9`` → ``"0.9"``, ``2.0`` → ``"2"`` (for notes and env values)."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _lower_role(name: str, role: Role, plan: Plan, is_moe: bool, routed: int, per_node: int | None) -> RoleDeployment:
    tp, dp, pp = role.tp, role.ep, role.pp
    devices = tp * dp * pp
    if not is_moe:
        ep_on, ep_note = False, "dense model: no routed experts"
    elif tp * dp <= 1:
        ep_on, ep_note = False, "tp × ep = 1: a single device holds every expert"
    else:
        ep_on, ep_note = True, f"MoE ({routed} routed experts) spread over tp × ep = {tp * dp} devices"
    nodes = dp_local = None
    if per_node:
        nodes = -(-devices // per_node)
        if nodes > 1 and per_node % (tp * pp) == 0:
            dp_local = per_node // (tp * pp)
    if role.memory_utilization is not None:
        mu, mu_note = role.memory_utilization, f"plan {name}.memory_utilization"
    else:
        mu, mu_note = plan.hardware.memory_utilization, (
            "hardware.memory_utilization" if not plan.hardware.is_default("memory_utilization")
            else "sncc default (vllm-ascend docs use 0.9)")
    if role.graph_mode is not None:
        gm, gm_note = role.graph_mode, f"plan {name}.graph_mode = {str(role.graph_mode).lower()}"
    else:
        gm = name != "prefill"
        gm_note = "default: eager for prefill" if name == "prefill" else f"default: graph mode for {name}"
    kv_role = {"prefill": "kv_producer", "decode": "kv_consumer"}.get(name) if plan.disaggregated else None
    if role.chunked_prefill is not None:
        cp_on, cp_note = True, f"plan {name}.chunked_prefill = {role.chunked_prefill}"
    elif name == "decode" and plan.disaggregated and role.is_default("chunked_prefill"):
        cp_on, cp_note = True, ("decode receives prompts as KV and never prefills; on so vLLM accepts "
                                "max_num_batched_tokens < max_model_len (set chunked_prefill = off to turn it off)")
    elif role.is_default("chunked_prefill"):
        cp_on, cp_note = False, f"plan {name}.chunked_prefill = off (default)"
    else:
        cp_on, cp_note = False, f"plan {name}.chunked_prefill = off"
    opt = plan.optimize
    pl = opt.omni_placement if opt is not None else None
    red, red_note = 0, ""
    if pl is not None and pl.redundant_experts > 0 and ep_on:
        red = pl.redundant_experts * tp * dp
        red_note = (f"omni_placement.redundant_experts = {pl.redundant_experts} per device × tp {tp} × ep {dp} "
                    f"= {red} per instance")
    return RoleDeployment(
        name=name, instances=role.instances, tp=tp, dp=dp, pp=pp, devices=devices,
        devices_declared=role.devices, nodes_per_instance=nodes, dp_local=dp_local,
        expert_parallel=ep_on, expert_parallel_note=ep_note,
        max_num_seqs=role.max_num_seqs, max_num_batched_tokens=role.max_num_batched_tokens,
        chunked_prefill=role.chunked_prefill, enable_chunked_prefill=cp_on, chunked_prefill_note=cp_note,
        memory_utilization=mu, memory_utilization_note=mu_note,
        graph_mode=gm, graph_mode_note=gm_note, kv_role=kv_role,
        redundant_experts=red, redundant_experts_note=red_note,
    )


def _visible_devices(roles: tuple[RoleDeployment, ...], per_node: int | None, vendor: str) -> tuple[str, str]:
    """``("0,1,…,15", note)``: the devices of one node that the engine may use."""
    used = sum(r.devices * r.instances for r in roles)
    if per_node:
        n = min(per_node, used) if used else per_node
        note = f"all {n} devices of one node" if n == per_node else f"the plan uses {n} devices in total"
    else:
        n = max((r.devices for r in roles), default=1)
        note = f"node size unknown: the largest instance ({n} devices)"
    return ",".join(str(i) for i in range(n)), note


def torchair_mode(plan: Plan) -> bool:
    """True when a vllm-ascend plan runs TorchAir graphs: ``graph { mode = torchair }`` on a
    release that still has ``additional_config.torchair_graph_config`` (v0.9.x-v0.11.x;
    removed in v0.12.0rc1, software.toml [[features]] torchair_graph)."""
    g = plan.graph
    return (plan.engine.kind == "vllm-ascend" and g is not None and g.mode == "torchair"
            and vllm_before(plan))


def _runtime_env(plan: Plan, roles: tuple[RoleDeployment, ...], per_node: int | None, vendor: str,
                 is_moe_ep: bool) -> tuple[EnvVar, ...]:
    """The ordered ``export`` lines of env.sh.

    Sections, in order: device visibility; collective communication (HCCL on
    Ascend: buffer and timeouts; nothing on NVIDIA); optimisations enabled in the
    plan; then every remaining plan ``env`` override, sorted by name.  A plan
    ``env`` value always replaces the default of the same name in place.

    Optimisation variables go only to the engine that reads them, on Ascend:
    Omni-Infer gets the seed-000 variables (micro-batch overlap
    ``ASCEND_OMNI_*``, SuperKernel ``ASCEND_SUPERKERNEL_*``, TorchAir graph cache
    ``TORCHAIR_CACHE_*``); vllm-ascend in TorchAir mode gets
    ``TORCHAIR_CACHE_HOME`` for ``graph_cache`` (the root its
    ``vllm_ascend/torchair/utils.py`` reads, v0.11); ``vllm`` and NVIDIA devices
    get none (the checks warn about such options).
    """
    overrides = dict(plan.env)
    for k in sorted(overrides):
        if not _ENV_NAME.match(k):
            raise LoweringError(f"env name `{k}` is not a valid shell variable name")
    out: list[EnvVar] = []

    def put(section: str, name: str, value: str, note: str = "") -> None:
        if name in overrides:
            out.append(EnvVar(section, name, overrides.pop(name), "from plan env"))
        else:
            out.append(EnvVar(section, name, value, note))

    devs, devs_note = _visible_devices(roles, per_node, vendor)
    if vendor == "nvidia":
        put("devices", "CUDA_VISIBLE_DEVICES", devs, devs_note)
    else:
        put("devices", "ASCEND_RT_VISIBLE_DEVICES", devs, devs_note)
        from sncc.capacity import hccl_buffsize_mb
        from sncc.catalog.engine_defaults import engine_defaults

        timeout_s = engine_defaults()["hccl_launch_timeout_s"]
        put("collective communication", "HCCL_BUFFSIZE", str(hccl_buffsize_mb({}, is_moe_ep)),
            "MB per communicator direction; " + ("sncc default for MoE expert parallelism (recipes: 512-1024)"
                                                 if is_moe_ep else "CANN default"))
        put("collective communication", "HCCL_CONNECT_TIMEOUT", str(timeout_s),
            "seconds, range [120, 7200]; Omni-Infer template value")
        put("collective communication", "HCCL_EXEC_TIMEOUT", str(timeout_s),
            "seconds; Omni-Infer template value")
    opt = plan.optimize
    sec = "optimisations"
    if opt is not None and vendor == "ascend" and plan.engine.kind == "vllm-ascend":
        if opt.graph_cache and torchair_mode(plan):
            put(sec, "TORCHAIR_CACHE_HOME", opt.graph_cache,
                "optimize.graph_cache: TorchAir cache root vllm-ascend reads (with torchair_graph_config.use_cached_graph)")
    if opt is not None and vendor == "ascend" and plan.engine.kind == "omni-infer":
        if opt.micro_batch >= 2:
            put(sec, "ASCEND_OMNI_MICRO_BATCH", str(opt.micro_batch), "optimize.micro_batch: two-micro-batch overlap")
            put(sec, "ASCEND_OMNI_STREAM_SPLIT", "1", "split attention and MoE onto separate streams")
        if opt.superkernel_layers > 0:
            put(sec, "ASCEND_SUPERKERNEL_ENABLE", "1", "optimize.superkernel_layers > 0")
            put(sec, "ASCEND_SUPERKERNEL_FUSION_LAYERS", str(opt.superkernel_layers), "optimize.superkernel_layers")
        if opt.graph_cache:
            put(sec, "TORCHAIR_CACHE_COMPILE", "1", "optimize.graph_cache: keep compiled graphs on disk")
            put(sec, "TORCHAIR_CACHE_DIR", opt.graph_cache, "optimize.graph_cache")
            put(sec, "TORCHAIR_CACHE_HOME", opt.graph_cache, "the name Omni-Infer's envs.py reads")
    for k in sorted(overrides):
        out.append(EnvVar("plan env", k, overrides[k], ""))
    return tuple(out)


def lower(plan: Plan, resolved: Resolved) -> Deployment:
    """Lower ``plan`` (with its ``resolved`` facts) to a :class:`Deployment`.

    Never reads files or environment variables.  Missing catalog facts degrade
    gracefully (dense model assumed when the architecture is unknown, no
    ``--quantization`` when the quant format is unknown).  Raises
    :class:`LoweringError` only for values no output can represent.
    """
    from sncc import catalog

    arch = resolved.arch
    is_moe = bool(getattr(arch, "is_moe", False))
    routed = int(getattr(arch, "n_routed_experts", 0) or 0)
    chip = resolved.chip
    vendor = "nvidia" if getattr(chip, "vendor", "") == "nvidia" else "ascend"
    per_node = None
    if resolved.system is not None:
        per_node = resolved.system.devices_per_node
    elif chip is not None:
        per_node = getattr(chip, "devices_per_node", None)
    roles = tuple(_lower_role(n, r, plan, is_moe, routed, per_node) for n, r in plan.roles())

    vq = None
    if resolved.quant:
        try:
            vq = catalog.quant(resolved.quant).vllm_quantization
        except KeyError:
            vq = None
    kv = resolved.kv_dtype
    if kv == "fp8":
        vllm_kv, ascend_kv = "fp8", None
    elif kv == "int8":
        vllm_kv, ascend_kv = "auto", ("int8" if _legacy_kv_config(plan) else None)
    else:
        vllm_kv, ascend_kv = "auto", None
    dtype = "float16" if resolved.quant == "fp16" or (
        chip is not None and "bf16" not in getattr(chip, "peak_flops", {"bf16": 1})) else "bfloat16"

    secrets: list[str] = []
    gw = plan.gateway
    if gw is not None and gw.api_key is not None:
        if not _ENV_NAME.match(gw.api_key.name):
            raise LoweringError(f"env(\"{gw.api_key.name}\") does not name a valid environment variable")
        secrets.append(gw.api_key.name)
    env = _runtime_env(plan, roles, per_node, vendor, any(r.expert_parallel for r in roles))
    legacy = vllm_before(plan)
    hf, hf_note = _hf_overrides(plan, resolved, legacy)
    wl = plan.workload
    if plan.model.max_model_len is not None:
        mml_note = "plan model.max_model_len"
    else:
        mml_note = f"max input {wl.input.max} + max output {wl.output.max} (workload)"
    return Deployment(
        name=plan.name, engine=plan.engine.kind, engine_version=plan.engine.version,
        served_name=resolved.served_name or plan.model.id, model_id=plan.model.id,
        model_path=plan.model.weights or plan.model.id, quant=resolved.quant, vllm_quantization=vq,
        dtype=dtype, kv_dtype=kv, vllm_kv_cache_dtype=vllm_kv, ascend_kv_cache_dtype=ascend_kv,
        block_size=plan.kv_cache.block_size, max_model_len=resolved.max_model_len,
        max_model_len_note=mml_note, max_input_len=wl.input.max,
        max_output_len=wl.output.max, is_moe=is_moe, routed_experts=routed, vendor=vendor,
        cann=plan.hardware.cann, devices_per_node=per_node, roles=roles,
        disaggregated=plan.disaggregated, env=env, secrets=tuple(sorted(set(secrets))),
        graph_mode_kind=plan.graph.mode if plan.graph is not None else None,
        hf_overrides=hf, hf_overrides_note=hf_note, vllm_legacy=legacy,
    )

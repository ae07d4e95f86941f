"""Per-role derived facts (:class:`~sncc.facts.model.RoleFacts`), computed once.

Rules, each written once here (docs/design.md §2–§3):

* **parallelism** — an instance is ``tp × dp × pp`` devices; ``dp`` is the plan's ``dp``, or
  its ``ep`` in the seeds' form (``ep = N`` is ``dp = N`` with expert parallelism on).
* **expert parallelism** — on for a MoE model when ``tp × dp > 1`` unless the role says
  ``expert_parallel = false``; then routed experts are tensor-sharded over the same ranks and
  no EP dispatch happens (vLLM ``FusedMoEParallelConfig.make``: ``use_ep = dp × tp > 1 and
  enable_expert_parallel``, domain-facts §3.2).  The EP group is then ``tp × dp`` devices.
* **redundant experts** — ``eplb.redundant_experts`` (per instance; the role's block over the
  plan's), or the seeds' ``optimize.omni_placement.redundant_experts`` per device × the EP group.
  Redundant slots only exist under expert parallelism.
* **budgets** — ``max_num_seqs`` and ``max_num_batched_tokens`` apply per data-parallel rank:
  each DP rank runs its own engine core and scheduler (vLLM ``DPEngineCoreProc``).
* **chunked prefill** — on when the role sets a chunk; on for a disaggregated decode role unless
  it says ``chunked_prefill = off`` (decode receives prompts as KV; vLLM refuses to start with
  chunked prefill off and ``max_num_batched_tokens < max_model_len``,
  ``SchedulerConfig.verify_max_model_len``, domain-facts §3.2); otherwise off.
* **graph mode** — the role's ``graph_mode``, else eager for prefill and graphs for decode/serve.
* **prefix caching** — the role's ``prefix_caching``, else the engine's default (on: vLLM V1,
  ``plan_keys.toml [engine_defaults]``), which the build leaves unwritten; Omni-Infer's OmniAttn KV
  consumers run without it whatever the flag says (:func:`sncc.facts._derive_omni_attn`).
* **speculative** — the role's ``speculative`` block merged key by key over the plan's;
  ``method = none`` turns it off for the role.
* **env** — the plan's ``env`` with the role's ``env`` over it.
* **DP lockstep** — the ``dp`` ranks of an instance step together only for a MoE model: its MoE
  layers exchange tokens (or all-reduce tensor-sharded experts) over the ``tp × dp`` ranks every
  step, so an idle rank runs dummy forward passes and the slowest rank sets the step.  A dense
  model's DP ranks share no collective in the forward pass: each is an engine of its own
  (vllm 0.23.0 / 0.33.0 wheels ``vllm/v1/engine/core.py`` ``EngineCoreProc.run_engine_core``:
  ``DPEngineCoreProc`` only ``if data_parallel and vllm_config.model_config.is_moe``, else "Non-MoE
  DP ranks are completely independent, so treat like DP=1"; the 0.9.0 / 0.11.0 wheels start
  ``DPEngineCoreProc`` for a dense model too, but its only cross-rank step is the unfinished-requests
  all-reduce every 24 / 32 steps (``_has_global_unfinished_reqs``), which the simulator does not model).
* **all-to-all backend** — under expert parallelism, the dispatch/combine implementation the
  engine runs (:func:`all2all_backend`): the role's ``env { VLLM_ALL2ALL_BACKEND }`` where the
  release reads it (checked against the release's choices, SN4082), else the release's default
  (vLLM 0.11.0: ``allgather_reducescatter``), from the adapter's ``[[all2all]]`` data.
"""

from __future__ import annotations

from sncc.facts.model import EnvValue, EplbFacts, RoleFacts, SpeculativeFacts
from sncc.facts.speculative import expected_tokens
from sncc.plan.model import Plan, Role
from sncc.units import format_count

_SPEC_FIELDS = ("method", "draft_tokens", "model", "acceptance", "draft_cost", "prompt_lookup_max", "prompt_lookup_min")
_EPLB_FIELDS = ("redundant_experts", "dynamic", "interval", "window")


def _merged(top, own, fields):
    """{field: (value, span)} of block ``own`` merged over ``top`` (either may be None):
    a field ``own`` wrote wins, else ``top``'s value (written or default).  A default's span is
    its block's name (``Node.span_of``), so every diagnostic has a location."""
    return {f: (getattr(node, f), node.span_of(f)) for f, node in _sources(top, own, fields).items()}


def _sources(top, own, fields):
    """{field: the block its value comes from} (:func:`_merged`'s choice)."""
    out = {}
    for f in fields:
        if own is not None and not own.is_default(f):
            out[f] = own
        elif top is not None:
            out[f] = top
        elif own is not None:
            out[f] = own
    return out


def speculative_facts(plan: Plan, role: Role) -> SpeculativeFacts | None:
    """The speculative setting in force for ``role`` (None when off or when acceptance is
    missing, which the plan builder reports as SN2005)."""
    top, own = plan.speculative, role.speculative
    if top is None and own is None:
        return None
    m = _merged(top, own, _SPEC_FIELDS)
    method = m["method"][0]
    acc = m["acceptance"][0]
    if method == "none" or acc is None:
        return None
    k = int(m["draft_tokens"][0])
    return SpeculativeFacts(method=method, draft_tokens=k, acceptance=float(acc), model=m["model"][0],
                            draft_cost=m["draft_cost"][0], tokens_per_step=expected_tokens(acc, k),
                            prompt_lookup_max=m["prompt_lookup_max"][0], prompt_lookup_min=m["prompt_lookup_min"][0],
                            spans={f: sp for f, (_, sp) in m.items()},
                            texts={f: node.value_text(f) for f, node in _sources(top, own, _SPEC_FIELDS).items()})


def eplb_facts(plan: Plan, name: str, role: Role, ep_size: int) -> EplbFacts | None:
    """Redundant experts and load balancing declared for ``role`` (None when none is declared).

    ``ep_size`` converts the seeds' per-device ``omni_placement.redundant_experts``."""
    top, own = plan.eplb, role.eplb
    if top is not None or own is not None:
        m = _merged(top, own, _EPLB_FIELDS)
        src = f"{name}.eplb" if own is not None else "eplb"
        span = (own or top).span_of("redundant_experts")
        return EplbFacts(redundant_experts=int(m["redundant_experts"][0]), dynamic=bool(m["dynamic"][0]),
                         interval=m["interval"][0], window=m["window"][0], per_device=None, source=src, span=span)
    opt = plan.optimize
    pl = opt.omni_placement if opt is not None else None
    if pl is None:
        return None
    return EplbFacts(redundant_experts=pl.redundant_experts * ep_size, dynamic=pl.adjust_interval is not None,
                     interval=pl.adjust_interval, window=None, per_device=pl.redundant_experts,
                     source="optimize.omni_placement", span=pl.span_of("redundant_experts"))


def role_env(plan: Plan, name: str, role: Role) -> dict[str, EnvValue]:
    """The plan's ``env`` with the role's ``env`` over it, each value with its span and origin."""
    env = {k: EnvValue(v, plan.env_span(k), "plan") for k, v in plan.env.items()}
    env.update({k: EnvValue(v, role.env_span(k), name) for k, v in role.env.items()})
    return env


def dp_lockstep(is_moe: bool, dp: int) -> tuple[bool, str]:
    """(lockstep, note): whether the ``dp`` ranks of an instance step together (module docstring)."""
    if dp <= 1:
        return False, "dp = 1: one engine core per instance"
    if is_moe:
        return True, (f"MoE model: the {dp} DP ranks meet in every MoE layer's collective, so they step together "
                      "(idle ranks run dummy batches; vllm/v1/engine/core.py DPEngineCoreProc)")
    return False, (f"dense model: the {dp} DP ranks share no collective and step independently, like {dp} instances "
                   "(vllm 0.23.0 vllm/v1/engine/core.py: \"Non-MoE DP ranks are completely independent\")")


def all2all_backend(adapter, version: str | None, rf: RoleFacts) -> tuple[str | None, str, str | None]:
    """(backend, note, problem) of role ``rf`` on engine ``adapter`` at release ``version``.

    ``backend`` is None without expert parallelism or when the engine has no such choice
    (:meth:`sncc.engines.base.EngineAdapter.all2all_release` None).  ``problem`` is the message of
    a plan value outside the release's choices (the backend is then the release default, which
    the simulator prices; the engine would refuse to start).  Raises nothing for plan input."""
    if not rf.expert_parallel or adapter is None:
        return None, "", None
    rel = adapter.all2all_release(version)
    if rel is None:
        return None, f"{adapter.label} runs its own fused MoE dispatch (no all-to-all backend to choose)", None
    ev = rf.env.get("VLLM_ALL2ALL_BACKEND")
    value = ev.value if ev is not None and isinstance(ev.value, str) else None
    if rel.where == "env" and value is not None:
        if value in rel.choices:
            return value, f"{rel.name} = {value} ({ev.origin} env)", None
        return rel.default, f"vLLM {rel.version} default {rel.default}", (
            f"vLLM {rel.version} has no all-to-all backend `{value}`: {rel.name} takes {', '.join(rel.choices)}")
    if rel.where == "env":
        return rel.default, f"vLLM {rel.version} default: {rel.name} unset, so {rel.default}", None
    unread = " (the plan's VLLM_ALL2ALL_BACKEND is not read by this release)" if value is not None else ""
    return rel.default, f"vLLM {rel.version} default of --{rel.name}: {rel.default} (sncc writes no --{rel.name}){unread}", None


def role_facts(plan: Plan, name: str, role: Role, arch, hw_utilization: float) -> RoleFacts:
    """Derive the :class:`RoleFacts` of ``role`` (see the module docstring); ``arch`` may be None
    (an unknown model: treated as dense)."""
    notes: dict[str, str] = {}
    tp, pp = role.tp, role.pp
    dp = role.dp_size
    notes["dp"] = f"ep = {role.ep} (the seeds' form: dp with expert parallelism)" if not role.is_default("ep") else (
        f"dp = {role.dp}" if not role.is_default("dp") else "dp = 1 (default)")
    is_moe = bool(arch is not None and getattr(arch, "is_moe", False))
    routed = int(getattr(arch, "n_routed_experts", 0) or 0) if is_moe else 0
    if not is_moe:
        ep_on, notes["expert_parallel"] = False, "dense model: no routed experts" if arch is not None else "model unknown"
    elif role.expert_parallel is False:
        ep_on, notes["expert_parallel"] = False, f"expert_parallel = false: {routed} routed experts tensor-sharded over tp × dp = {format_count(tp * dp, 'rank')}"
    elif tp * dp <= 1:
        ep_on, notes["expert_parallel"] = False, "tp × dp = 1: a single device holds every expert"
    else:
        how = "expert_parallel = true" if role.expert_parallel else "default for a MoE model"
        ep_on, notes["expert_parallel"] = True, f"{how}: {routed} routed experts over tp × dp = {tp * dp} devices"
    ep_size = tp * dp if ep_on else 1
    eplb = eplb_facts(plan, name, role, ep_size)
    redundant = eplb.redundant_experts if (eplb is not None and ep_on) else 0
    if eplb is not None and eplb.redundant_experts:
        notes["redundant_experts"] = (
            f"{eplb.source}.redundant_experts = {eplb.per_device} per device × EP group {ep_size} = {eplb.redundant_experts}"
            if eplb.per_device is not None else f"{eplb.source}.redundant_experts = {eplb.redundant_experts} per instance")
        if not ep_on:
            notes["redundant_experts"] += " (inert: no expert parallelism)"
    spec = speculative_facts(plan, role)
    if role.memory_utilization is not None:
        mu, notes["memory_utilization"] = role.memory_utilization, f"{name}.memory_utilization"
    else:
        mu = hw_utilization
        notes["memory_utilization"] = ("hardware.memory_utilization" if not plan.hardware.is_default("memory_utilization")
                                       else "sncc default (`hardware.memory_utilization`)")
    if role.graph_mode is not None:
        gm, notes["graph_mode"] = role.graph_mode, f"{name}.graph_mode = {str(role.graph_mode).lower()}"
    else:
        gm = name != "prefill"
        notes["graph_mode"] = "default: eager for prefill" if name == "prefill" else f"default: graph mode for {name}"
    if role.chunked_prefill is not None:
        cp_on, notes["enable_chunked_prefill"] = True, f"{name}.chunked_prefill = {role.chunked_prefill}"
    elif name == "decode" and plan.disaggregated and role.is_default("chunked_prefill"):
        cp_on = True
        notes["enable_chunked_prefill"] = ("decode receives prompts as KV and never prefills; on so vLLM accepts "
                                           "max_num_batched_tokens < max_model_len (set chunked_prefill = off to turn it off)")
    else:
        cp_on = False
        notes["enable_chunked_prefill"] = f"{name}.chunked_prefill = off" + (" (default)" if role.is_default("chunked_prefill") else "")
    pc, notes["prefix_caching"] = prefix_caching(name, role)
    lockstep, notes["dp_lockstep"] = dp_lockstep(is_moe, dp)
    kv_role = {"prefill": "kv_producer", "decode": "kv_consumer"}.get(name) if plan.disaggregated else None
    k = spec.draft_tokens if spec is not None else 0
    dispatch = role.max_num_batched_tokens if name == "prefill" else role.max_num_seqs * (1 + k)
    notes["dispatch_tokens_per_rank"] = ("max_num_batched_tokens of one DP rank (prefill)" if name == "prefill"
                                         else f"max_num_seqs {role.max_num_seqs} × (1 + {k} draft tokens)")
    return RoleFacts(
        name=name, instances=role.instances, tp=tp, dp=dp, pp=pp, devices=tp * dp * pp,
        devices_declared=role.devices, expert_parallel=ep_on, ep_size=ep_size, routed_experts=routed,
        redundant_experts=redundant, max_num_seqs=role.max_num_seqs,
        max_num_batched_tokens=role.max_num_batched_tokens, chunk=role.chunked_prefill,
        enable_chunked_prefill=cp_on, graph_mode=gm, memory_utilization=mu, kv_role=kv_role,
        speculative=spec, eplb=eplb, env=role_env(plan, name, role), dispatch_tokens_per_rank=dispatch,
        notes=notes, dp_lockstep=lockstep, prefix_caching=pc, switches=as_written_switches(role),
    )


def prefix_caching(name: str, role: Role) -> tuple[bool, str]:
    """(automatic prefix caching in force, its note) of role ``name``: the plan's ``prefix_caching``
    when written, else the engine default of ``plan_keys.toml [engine_defaults]`` (on: vLLM V1),
    which the build leaves to the engine (nothing written)."""
    from sncc.engines.plan_keys import engine_default

    if role.prefix_caching is not None:
        return role.prefix_caching, f"{name}.prefix_caching = {str(role.prefix_caching).lower()}"
    on, _ = engine_default("prefix_caching")
    return bool(on), f"engine default: automatic prefix caching {'on' if on else 'off'} (vLLM V1; not written)"


def as_written_switches(role: Role) -> dict[str, bool]:
    """``{role key: value}`` of the ``build = "as-written"`` switches (``plan_keys.toml``) the role
    writes: what the build passes as written (``{"prefix_caching": False}``)."""
    from sncc.engines import plan_keys

    return {k: v for k in plan_keys.as_written_switches() if isinstance(v := getattr(role, k, None), bool)}

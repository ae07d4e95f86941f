"""Role-level engine arguments in the pinned vLLM's dashed spelling (``tensor-parallel-size``).

These are the arguments every server of a role shares: the YAML, the TOML and (for false
booleans) the launch command line carry exactly these (:mod:`sncc.emit.args` is the one rule).
Engine-specific arguments (``additional-config``) are added by the adapter's lowering.

The role's values are the facts layer's (:class:`~sncc.facts.model.RoleFacts`: parallelism,
expert parallelism, budgets per DP rank, chunked prefill, graph mode, memory utilisation, the
speculative setting in force), each with the note the facts give.  Decisions taken here:

* **parallelism** — an instance is ``tp × dp × pp`` devices: ``tensor-parallel-size`` = tp,
  ``data-parallel-size`` = dp (attention replicas), ``pipeline-parallel-size`` = pp,
  ``enable-expert-parallel`` when the role runs expert parallelism
  (vLLM's FusedMoEParallelConfig: EP size = dp × tp).
* **KV dtype** — vLLM's ``kv-cache-dtype`` takes ``auto``/``fp8``; an ``int8`` KV cache is
  ``auto`` here plus the engine's own key (vllm-ascend's legacy ``additional_config.kv_cache_dtype``).
* **chunked prefill** — ``enable-chunked-prefill`` as the facts decide (on for a P/D decode
  role unless ``chunked_prefill = off``); the chunk becomes ``long-prefill-token-threshold``.
* **speculative decoding** — ``speculative-config`` per role, from the setting in force for it.
* **expert-load balancing** — the adapter's spelling for the pinned release (vLLM:
  ``enable-eplb`` + ``eplb-config``; vllm-ascend and Omni-Infer write theirs elsewhere).
* **rope scaling** — ``model.rope_scaling`` becomes ``hf-overrides``: ``{"rope_scaling": ...}``
  before vLLM 0.12, ``{"rope_parameters": ...}`` from 0.12 (domain-facts §3.1), with
  ``original_max_position_embeddings`` = the model's native context.
* **booleans** — written only when they differ from vLLM's default (``enforce-eager``,
  ``enable-expert-parallel`` only when true); ``enable-chunked-prefill`` always, since the plan's
  default (off) differs from vLLM V1's (on).
* **as-written switches** — a role key of a ``build = "as-written"`` row of
  ``sncc/engines/data/plan_keys.toml`` (``prefix_caching`` → ``enable-prefix-caching``) is written
  as the plan gives it, and not at all when the plan leaves it out (the engine's default stays).
"""

from __future__ import annotations

from sncc.engines.base import DRAFT_CHECKPOINT_METHODS
from sncc.lowering.context import LowerCtx, LoweringError
from sncc.lowering.deployment import Arg
from sncc.lowering.roles import RoleFacts
from sncc.units import format_count

#: first vLLM release whose ``hf-overrides`` RoPE object is ``rope_parameters`` (domain-facts §3.1)
ROPE_PARAMETERS_SINCE = "0.12.0"


def num(x):
    """``2.0`` → ``2``; other values unchanged."""
    if isinstance(x, float) and not isinstance(x, bool) and x.is_integer():
        return int(x)
    return x


def hf_overrides(ctx: LowerCtx) -> tuple[dict | None, str]:
    """vLLM ``--hf-overrides`` for ``model.rope_scaling`` (YaRN) and a note; (None, "") without a factor.

    Raises :class:`LoweringError` when the model's position count is unknown."""
    plan, resolved = ctx.plan, ctx.resolved
    factor = plan.model.rope_scaling
    if factor is None:
        return None, ""
    arch = resolved.arch
    mpe = getattr(arch, "yarn_base_positions", None) if arch is not None else None
    if not mpe:
        raise LoweringError("model.rope_scaling needs the model's max_position_embeddings "
                            "(catalog or config.json) to write original_max_position_embeddings", ("model", "rope_scaling"))
    rope: dict = {"rope_type": "yarn", "factor": num(float(factor)), "original_max_position_embeddings": int(mpe)}
    head = f"model.rope_scaling = {num(float(factor))}: YaRN over {mpe} positions = {int(mpe * factor)}"
    if not ctx.vllm_at_least(ROPE_PARAMETERS_SINCE):
        return {"rope_scaling": rope}, head + " (vLLM < 0.12 key rope_scaling)"
    raw = getattr(resolved.checkpoint, "raw", None) or {}
    theta = raw.get("rope_theta") if isinstance(raw, dict) else None
    if theta is None and isinstance(raw, dict) and isinstance(raw.get("rope_parameters"), dict):
        theta = raw["rope_parameters"].get("rope_theta")
    if isinstance(theta, (int, float)) and not isinstance(theta, bool):
        rope["rope_theta"] = num(float(theta))
        return {"rope_parameters": rope}, head + " (vLLM >= 0.12 key rope_parameters; rope_theta from config.json)"
    return {"rope_parameters": rope}, head + (" (vLLM >= 0.12 key rope_parameters; no rope_theta: config.json not read,"
                                              " add the checkpoint's if your vLLM drops it)")


def _block_size_note(vendor: str, size: int) -> str:
    """The YAML comment of an unset ``kv_cache.block_size`` (sncc writes its default ``size`` on
    every platform) on ``vendor`` (``ascend`` or ``nvidia``), saying whether it is the platform's
    own default (``[engine_defaults] block_size`` of ``sncc/engines/data/plan_keys.toml``: 128 on
    Ascend, 16 on CUDA) and, when not, how to get that one."""
    from sncc.engines.plan_keys import table

    own = table().get("engine_defaults", {}).get("block_size", {}).get(vendor)
    platform = {"ascend": "vllm-ascend on Ascend", "nvidia": "vLLM on CUDA"}.get(vendor, vendor)
    if own is None or int(own) == size:
        return f"sncc default (`kv_cache.block_size`), the default of {platform} too"
    return (f"sncc default (`kv_cache.block_size`, {size} on every platform); {platform} would pick {own}: "
            f"`kv_cache {{ block_size = {own} }}` writes that")


def role_args(ctx: LowerCtx, rs: RoleFacts) -> list[Arg]:
    """The generic role-level arguments of role ``rs`` (see the module docstring), in output order."""
    plan, resolved = ctx.plan, ctx.resolved
    name = rs.name
    out: list[Arg] = []
    out.append(Arg("served-model-name", resolved.served_name or plan.model.id,
                   "plan model.served_name" if plan.model.served_name else "the model id (clients send this name)"))
    chip = resolved.chip
    dtype = "float16" if resolved.quant == "fp16" or (
        chip is not None and "bf16" not in getattr(chip, "peak_flops", {"bf16": 1})) else "bfloat16"
    out.append(Arg("dtype", dtype))
    if resolved.trust_remote_code:
        out.append(Arg("trust-remote-code", True, "plan model.trust_remote_code" if plan.model.trust_remote_code
                       else f"the checkpoint of {plan.model.id} runs its own tokenizer code (catalog)"))
    if resolved.quant:
        # the engine adapter's spelling (sncc/engines/<engine>/data/pins.toml [quantization]): CUDA vLLM
        # has no `ascend`; a format it refuses is SN4002 at check time, so nothing is written here
        qa = ctx.adapter.quantization(resolved.quant)
        if qa.method and not qa.refused:
            out.append(Arg("quantization", qa.method, qa.note))
    if plan.model.max_model_len != "auto":   # `auto`: not passed, the engine derives it from config.json
        out.append(Arg("max-model-len", resolved.max_model_len,
                       "plan model.max_model_len" if plan.model.max_model_len is not None
                       else f"max input {plan.workload.input.max} + max output {plan.workload.output.max} (workload)"))
    hf, hf_note = hf_overrides(ctx)
    if hf:
        out.append(Arg("hf-overrides", hf, hf_note))
    layout = f"one instance = tp × dp × pp = {rs.tp} × {rs.dp} × {rs.pp} = {format_count(rs.devices, 'device')}"
    out.append(Arg("tensor-parallel-size", rs.tp, f"plan {name}.tp; {layout}"))
    if not ctx.adapter.data.get("dp_from_env"):
        out.append(Arg("data-parallel-size", rs.dp, f"plan {name}: {rs.notes.get('dp', 'dp')}; attention data-parallel replicas"))
    out.append(Arg("pipeline-parallel-size", rs.pp, f"plan {name}.pp"))
    if rs.expert_parallel:
        out.append(Arg("enable-expert-parallel", True, rs.notes.get("expert_parallel", "")))
    if not rs.graph_mode:
        out.append(Arg("enforce-eager", True, rs.notes.get("graph_mode", "")))
    out.append(Arg("block-size", plan.kv_cache.block_size,
                   "plan kv_cache.block_size" if not plan.kv_cache.is_default("block_size")
                   else _block_size_note(ctx.vendor, plan.kv_cache.block_size)))
    out.append(Arg("gpu-memory-utilization", num(float(rs.memory_utilization)), rs.notes.get("memory_utilization", "")))
    kv = resolved.kv_dtype
    runs, ignored = ctx.adapter.kv_dtype_run(kv)
    out.append(Arg("kv-cache-dtype", "fp8" if kv == "fp8" else "auto",
                   f"plan kv_cache.dtype resolves to {kv}" if not ignored
                   else f"plan kv_cache.dtype resolves to {kv}, which {ctx.adapter.label} does not read (SN4041): "
                        f"the servers run {runs}"))
    out.append(Arg("max-num-seqs", rs.max_num_seqs,
                   f"per DP rank; × {rs.dp} × {format_count(rs.instances, 'instance')} "
                   f"= {format_count(rs.max_num_seqs * rs.dp * rs.instances, 'sequence')}"))
    out.append(Arg("max-num-batched-tokens", rs.max_num_batched_tokens, f"plan {name}.max_num_batched_tokens (per DP rank)"))
    out.append(Arg("enable-chunked-prefill", rs.enable_chunked_prefill, rs.notes.get("enable_chunked_prefill", "")))
    if rs.chunk is not None:
        out.append(Arg("long-prefill-token-threshold", rs.chunk, "prompt tokens of one request per step (the chunk)"))
    out += switch_args(ctx, rs)
    g = plan.graph
    if rs.graph_mode and g is not None and (g.cudagraph_mode or g.capture_sizes):
        cc: dict = {}
        if g.cudagraph_mode:
            cc["cudagraph_mode"] = g.cudagraph_mode.upper()
        if g.capture_sizes:
            cc["cudagraph_capture_sizes"] = list(g.capture_sizes)
        out.append(Arg("compilation-config", cc, "plan graph.cudagraph_mode / capture_sizes"))
    spec = speculative_config(ctx, rs)
    if spec is not None:
        out.append(spec)
    out += eplb_args(ctx, rs)
    return out


def switch_args(ctx: LowerCtx, rs: RoleFacts) -> list[Arg]:
    """The role switches the plan writes, as written (``RoleFacts.switches``: the ``build =
    "as-written"`` rows of ``sncc/engines/data/plan_keys.toml``, whose ``arg`` is the engine
    argument): ``prefix_caching = false`` → ``enable-prefix-caching`` false (``--no-enable-prefix-caching``).
    A switch the pinned release's vLLM lacks is written nowhere (the adapter's
    :meth:`~sncc.engines.base.EngineAdapter.switch_absent`; SN4041 says so)."""
    from sncc.engines.plan_keys import as_written_switches

    args = as_written_switches()
    out = []
    for key, value in rs.switches.items():
        name = args[key]
        if ctx.adapter.switch_absent(ctx.pin.version, name, value) is None:
            out.append(Arg(name, value, rs.notes.get(key, f"plan {rs.name}.{key}")))
    return out


def speculative_config(ctx: LowerCtx, rs: RoleFacts) -> Arg | None:
    """``--speculative-config`` of role ``rs`` from the speculative setting in force for it (the
    role's ``speculative`` block merged over the plan's; None when off for the role).  Raises
    :class:`LoweringError` for a drafter method without its checkpoint."""
    sp = rs.speculative
    if sp is None:
        return None
    arch = ctx.resolved.arch
    method, method_note = ctx.adapter.speculative_method(sp.method, ctx.vllm_version,
                                                         getattr(arch, "model_type", None) if arch is not None else None)
    spec: dict = {"method": method, "num_speculative_tokens": sp.draft_tokens}
    own = dict(ctx.plan.roles())[rs.name].speculative is not None
    where = f"{rs.name}.speculative" + (" over the plan's" if own and ctx.plan.speculative is not None else "") \
        if own else "plan speculative"
    note = f"{where} {{ method = {sp.method}  draft_tokens = {sp.draft_tokens} }}" + (f"; {method_note}" if method_note else "")
    from sncc.engines.plan_keys import lookup_window

    window = lookup_window()
    if sp.method in window.get("methods", ()):   # the n-gram drafter's window, in vLLM's spelling
        for key, engine_key in window.get("keys", {}).items():
            if getattr(sp, key) is not None:
                spec[engine_key] = getattr(sp, key)
    if sp.model:
        spec["model"] = sp.model
    elif sp.method in DRAFT_CHECKPOINT_METHODS:
        raise LoweringError(f"speculative method `{sp.method}` needs the draft checkpoint: set speculative.model "
                            "(vLLM refuses to start without speculative_config.model)",
                            ((rs.name,) if own else ()) + ("speculative", "model"))
    return Arg("speculative-config", spec, note)


def eplb_args(ctx: LowerCtx, rs: RoleFacts) -> list[Arg]:
    """The role's expert-load-balancing arguments in the pinned release's own spelling (the
    adapter's :meth:`~sncc.engines.base.EngineAdapter.eplb_lowering`; vLLM: ``--enable-eplb``
    and ``--eplb-config``)."""
    low = ctx.adapter.eplb_lowering(ctx.plan, ctx.resolved, rs)
    return [Arg(name, value, low.note) for name, value in low.args]

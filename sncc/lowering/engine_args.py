"""Role-level engine arguments in the pinned vLLM's dashed spelling (``tensor-parallel-size``).

These are the arguments every server of a role shares: the YAML, the TOML and (for false
booleans) the launch command line carry exactly these (:mod:`sncc.emit.args` is the one rule).
Engine-specific arguments (``additional-config``) are added by the adapter's lowering.

Decisions (each derived value carries a note):

* **parallelism** — an instance is ``tp × dp × pp`` devices: ``tensor-parallel-size`` = tp,
  ``data-parallel-size`` = dp (the plan's ``ep``: attention replicas), ``pipeline-parallel-size``
  = pp, ``enable-expert-parallel`` when the model is MoE and ``tp × dp > 1``
  (vLLM's FusedMoEParallelConfig: EP size = dp × tp).
* **KV dtype** — vLLM's ``kv-cache-dtype`` takes ``auto``/``fp8``; an ``int8`` KV cache is
  ``auto`` here plus the engine's own key (vllm-ascend's legacy ``additional_config.kv_cache_dtype``).
* **chunked prefill** — a P/D decode role receives prompts as KV and never prefills: on unless
  the plan writes ``chunked_prefill = off`` (vLLM refuses ``max_num_batched_tokens <
  max_model_len`` with chunked prefill off, ``SchedulerConfig.verify_max_model_len``); the
  chunk becomes ``long-prefill-token-threshold``.
* **rope scaling** — ``model.rope_scaling`` becomes ``hf-overrides``: ``{"rope_scaling": ...}``
  before vLLM 0.12, ``{"rope_parameters": ...}`` from 0.12 (domain-facts §3.1), with
  ``original_max_position_embeddings`` = the model's native context.
* **booleans** — written only when they differ from vLLM's default (``enforce-eager``,
  ``enable-expert-parallel`` only when true); ``enable-chunked-prefill`` always, since the plan's
  default (off) differs from vLLM V1's (on).
"""

from __future__ import annotations

from sncc.engines.base import DRAFT_CHECKPOINT_METHODS
from sncc.lowering.context import LowerCtx, LoweringError
from sncc.lowering.deployment import Arg
from sncc.lowering.roles import RoleSettings

#: first vLLM release whose ``hf-overrides`` RoPE object is ``rope_parameters`` (domain-facts §3.1)
ROPE_PARAMETERS_SINCE = "0.12.0"



def num(x):
    """``2.0`` → ``2``; other values unchanged."""
    if isinstance(x, float) and not isinstance(x, bool) and x.is_integer():
        return int(x)
    return x


def graph_mode(plan, name: str) -> tuple[bool, str]:
    """(the role runs captured graphs, why): the role's ``graph_mode``, else eager for prefill."""
    role = dict(plan.roles())[name]
    if role.graph_mode is not None:
        return role.graph_mode, f"plan {name}.graph_mode = {str(role.graph_mode).lower()}"
    return name != "prefill", ("default: eager for prefill" if name == "prefill" else f"default: graph mode for {name}")


def chunked_prefill(plan, name: str) -> tuple[bool, str]:
    """(chunked prefill on, why); see the module docstring."""
    role = dict(plan.roles())[name]
    if role.chunked_prefill is not None:
        return True, f"plan {name}.chunked_prefill = {role.chunked_prefill}"
    if name == "decode" and plan.disaggregated and role.is_default("chunked_prefill"):
        return True, ("decode receives prompts as KV and never prefills; on so vLLM accepts "
                      "max_num_batched_tokens < max_model_len (set chunked_prefill = off to turn it off)")
    return False, f"plan {name}.chunked_prefill = off" + (" (default)" if role.is_default("chunked_prefill") else "")


def memory_utilization(plan, name: str) -> tuple[float, str]:
    """(gpu-memory-utilization, why): the role's value, else hardware.memory_utilization."""
    role = dict(plan.roles())[name]
    if role.memory_utilization is not None:
        return role.memory_utilization, f"plan {name}.memory_utilization"
    hw = plan.hardware
    return hw.memory_utilization, ("hardware.memory_utilization" if not hw.is_default("memory_utilization")
                                   else "sncc default (vllm-ascend docs use 0.9)")


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


def role_args(ctx: LowerCtx, rs: RoleSettings) -> list[Arg]:
    """The generic role-level arguments of role ``rs`` (see the module docstring), in output order."""
    from sncc import catalog

    plan, resolved = ctx.plan, ctx.resolved
    name = rs.name
    out: list[Arg] = []
    out.append(Arg("served-model-name", resolved.served_name or plan.model.id,
                   "plan model.served_name" if plan.model.served_name else "the model id (clients send this name)"))
    chip = resolved.chip
    dtype = "float16" if resolved.quant == "fp16" or (
        chip is not None and "bf16" not in getattr(chip, "peak_flops", {"bf16": 1})) else "bfloat16"
    out.append(Arg("dtype", dtype))
    if resolved.quant:
        try:
            vq = catalog.quant(resolved.quant).vllm_quantization
        except KeyError:
            vq = None
        if vq:
            out.append(Arg("quantization", vq, f"catalog quant {resolved.quant} → vLLM --quantization"))
    out.append(Arg("max-model-len", resolved.max_model_len,
                   "plan model.max_model_len" if plan.model.max_model_len is not None
                   else f"max input {plan.workload.input.max} + max output {plan.workload.output.max} (workload)"))
    hf, hf_note = hf_overrides(ctx)
    if hf:
        out.append(Arg("hf-overrides", hf, hf_note))
    layout = f"one instance = tp × ep × pp = {rs.tp} × {rs.dp} × {rs.pp} = {rs.devices} devices"
    out.append(Arg("tensor-parallel-size", rs.tp, f"plan {name}.tp; {layout}"))
    if not ctx.adapter.data.get("dp_from_env"):
        out.append(Arg("data-parallel-size", rs.dp, f"plan {name}.ep (attention data-parallel replicas)"))
    out.append(Arg("pipeline-parallel-size", rs.pp, f"plan {name}.pp"))
    if rs.expert_parallel:
        out.append(Arg("enable-expert-parallel", True, rs.expert_parallel_note))
    graph, gnote = graph_mode(plan, name)
    if not graph:
        out.append(Arg("enforce-eager", True, gnote))
    out.append(Arg("block-size", plan.kv_cache.block_size, "plan kv_cache.block_size"))
    mu, mu_note = memory_utilization(plan, name)
    out.append(Arg("gpu-memory-utilization", num(float(mu)), mu_note))
    kv = resolved.kv_dtype
    out.append(Arg("kv-cache-dtype", "fp8" if kv == "fp8" else "auto", f"plan kv_cache.dtype resolves to {kv}"))
    role = dict(plan.roles())[name]
    out.append(Arg("max-num-seqs", role.max_num_seqs,
                   f"per DP rank; × {rs.dp} × {rs.instances} instance{'s' if rs.instances != 1 else ''} "
                   f"= {role.max_num_seqs * rs.dp * rs.instances} sequences"))
    out.append(Arg("max-num-batched-tokens", role.max_num_batched_tokens, f"plan {name}.max_num_batched_tokens"))
    cp, cp_note = chunked_prefill(plan, name)
    out.append(Arg("enable-chunked-prefill", cp, cp_note))
    if role.chunked_prefill is not None:
        out.append(Arg("long-prefill-token-threshold", role.chunked_prefill,
                       "prompt tokens of one request per step (the chunk)"))
    g = plan.graph
    if graph and g is not None and (g.cudagraph_mode or g.capture_sizes):
        cc: dict = {}
        if g.cudagraph_mode:
            cc["cudagraph_mode"] = g.cudagraph_mode.upper()
        if g.capture_sizes:
            cc["cudagraph_capture_sizes"] = list(g.capture_sizes)
        out.append(Arg("compilation-config", cc, "plan graph.cudagraph_mode / capture_sizes"))
    sp = rs.speculative
    if sp is not None:
        method = ctx.adapter.data.get("speculative_methods", {}).get(sp.method, sp.method)
        spec: dict = {"method": method, "num_speculative_tokens": sp.draft_tokens}
        note = f"plan speculative {{ method = {sp.method}  draft_tokens = {sp.draft_tokens} }}"
        if sp.model:
            spec["model"] = sp.model
        elif sp.method in DRAFT_CHECKPOINT_METHODS:
            raise LoweringError(f"speculative method `{sp.method}` needs the draft checkpoint: set speculative.model "
                                "(vLLM refuses to start without speculative_config.model)", ("speculative", "model"))
        out.append(Arg("speculative-config", spec, note))
    return out

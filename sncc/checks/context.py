"""Context-length checks (SN5003, SN5004): ``max_model_len`` within the model's
positions, the client's ``max_tokens`` within the model's maximum output."""

from __future__ import annotations

from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag
from sncc.units import format_tokens


def rope_factor(plan, r) -> tuple[float, str]:
    """(rope-scaling factor, where it comes from): the plan's ``model.rope_scaling``, else the
    checkpoint's ``rope_scaling``/``rope_parameters`` ``factor``, else (1.0, "")."""
    if plan.model.rope_scaling is not None:
        return plan.model.rope_scaling, "model.rope_scaling"
    raw = getattr(r.checkpoint, "raw", None) or {}
    for key in ("rope_scaling", "rope_parameters"):
        rs = raw.get(key) if isinstance(raw, dict) else None
        if isinstance(rs, dict) and isinstance(rs.get("factor"), (int, float)) and rs["factor"] > 1:
            return float(rs["factor"]), f"config.json {key}.factor"
    return 1.0, ""


def check_context_within_model(plan, r):
    """``max_model_len ≤ max_position_embeddings``, or with a rope-scaling factor ``≤ native
    context × factor`` (``ModelArch.yarn_base_positions``: Qwen3's card gives 32,768 native of
    40,960 positions, 131,072 with YaRN x4) (SN5003; misconfig BR-28).

    ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`` only silences vLLM's start-up check: the
    first longer request indexes past the position table, so it changes nothing here.
    """
    a = r.arch
    if a is None or not a.max_position_embeddings:
        return
    factor, src = rope_factor(plan, r)
    base = a.max_position_embeddings if factor == 1.0 else (a.yarn_base_positions or a.max_position_embeddings)
    limit = int(base * factor)
    if r.max_model_len <= limit:
        return
    what = (f"{a.max_position_embeddings} positions" if factor == 1.0 else
            f"{base} native positions × rope scaling {factor:g} = {limit}")
    notes = [r.max_model_len_note, f"architecture from {r.arch_source}"]
    related = []
    if plan.env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN") not in (None, "0", "false"):
        notes.append("VLLM_ALLOW_LONG_MAX_MODEL_LEN only skips vLLM's check; requests past the position table crash or return garbage")
        related.append(Related(plan.env_span("VLLM_ALLOW_LONG_MAX_MODEL_LEN"), "the override does not extend the positions"))
    yield diag(codes.CONTEXT_EXCEEDS_MODEL,
               f"max_model_len {format_tokens(r.max_model_len)} ({r.max_model_len}) exceeds `{r.served_name}`'s {what}",
               r.max_model_len_span, notes=notes, related=related,
               help=f"keep max input + max output ≤ {limit}, or extend the context properly "
                    f"(`model {{ rope_scaling = {max(2, -(-r.max_model_len // a.max_position_embeddings))} }}`, YaRN) where the model supports it",
               path=("model", "max_model_len"))


def check_max_tokens_within_model(plan, r):
    """Client ``max_tokens`` (gateway, else max output) ≤ the model's maximum output (SN5004)."""
    a = r.arch
    limit = getattr(a, "max_output_tokens", None) if a is not None else None
    if not limit or r.max_tokens <= limit:
        return
    gw = plan.gateway
    if gw is not None and gw.max_tokens is not None:
        span, note = gw.span_of("max_tokens"), "gateway max_tokens"
    else:
        span, note = plan.workload.output.span_of("max"), "workload output max (the client's max_tokens)"
    yield diag(codes.MAX_TOKENS_EXCEEDS_MODEL,
               f"{note} {format_tokens(r.max_tokens)} exceeds `{r.served_name}`'s maximum output of {format_tokens(limit)}",
               span, help=f"set it to at most {format_tokens(limit)}", path=("gateway", "max_tokens"))

"""Length ceilings (SN5020–SN5022): the engine's default ``max_model_len`` against the platform's
known limit, a separate draft model's window against ``max_model_len``, and the target's rope
scaling reaching the draft.

Rules (docs/research/rule-kinds.md K1–K3; facts in ``engine_rules.toml [[length_ceilings]]``):

* **K1** vLLM applies its platform ceiling only when ``max_model_len`` is left to the default and
  vllm-ascend never overrides the hook: with ``max_model_len = auto`` a derived length above the
  row's limit is a warning (vllm-ascend#3795 hang, #3314 host memory).  A written length is not
  compared (working deployments write 133,120 and 262,144 on A2).
* **K2** a separate draft (``eagle``, ``eagle3``, ``dflash``, ``draft_model``) is capped at
  ``min(draft, target)`` positions without an error and speculated past it: its window — its
  config.json positions × its own rope scaling — must cover ``max_model_len`` (vllm#22935, #57941).
* **K3** the target's ``--hf-overrides`` rope (``model.rope_scaling``) is not applied to the draft:
  an MTP draft keeps the native window (vllm#58080); a separate draft needs the target's rope type
  (speculators#574).  Error past the draft's window, warning otherwise.
"""

from __future__ import annotations

from sncc.checks._rules import rows, sources
from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag
from sncc.units import format_tokens

#: methods whose drafter is a separate checkpoint with its own config.json
SEPARATE_DRAFT_METHODS = ("eagle", "eagle3", "dflash", "draft_model")


def check_engine_default_length(plan, r):
    """``max_model_len = auto`` whose derived value exceeds the platform's known start-up limit (SN5020)."""
    if r.max_model_len_origin != "engine-default" or not r.max_model_len or r.chip is None:
        return
    eng = plan.engine
    for row in rows("length_ceilings"):
        if eng.kind not in row.get("engines", ()) or r.chip.device_type not in row.get("device_types", ()):
            continue
        limit = int(row["tokens"])
        if r.max_model_len <= limit:
            continue
        need = plan.workload.input.max + r.max_tokens
        yield diag(codes.ENGINE_DEFAULT_LENGTH,
                   f"`max_model_len = auto` leaves the length to {eng.kind}, which derives {format_tokens(r.max_model_len)} "
                   f"({r.max_model_len}) — above the {format_tokens(limit)} {eng.kind} is known to start with on {r.chip.device_type}",
                   r.max_model_len_span, notes=[r.max_model_len_note, row.get("notes", ""), "source: " + sources(row)],
                   help=f"write the length the workload needs (max input + output = {format_tokens(need)}), at most "
                        f"`max_model_len = {limit}`; vLLM checks a written length against config.json only",
                   path=("model", "max_model_len"))
        return


def _draft_window(info) -> tuple[int, str]:
    """(positions, how) a draft checkpoint covers: its config.json derivation, without the target's overrides."""
    from sncc.facts.lengths import engine_default_max_model_len

    return engine_default_max_model_len(info.arch, info.raw, None)


def _speculating(r):
    """``[(role name, SpeculativeFacts)]``, each distinct setting once."""
    out, seen = [], set()
    for name, rf in r.roles.items():
        sp = rf.speculative
        if sp is None:
            continue
        key = (sp.method, sp.model, sp.span_of("method"))
        if key not in seen:
            seen.add(key)
            out.append((name, sp))
    return out


def check_draft_window(plan, r):
    """A separate draft's positions cover ``max_model_len`` (SN5021)."""
    if not r.max_model_len:
        return
    for _, sp in _speculating(r):
        if sp.method not in SEPARATE_DRAFT_METHODS or not sp.model:
            continue
        info = r.draft_checkpoints.get(sp.model)
        if info is None:
            continue
        window, how = _draft_window(info)
        if not window or r.max_model_len <= window:
            continue
        yield diag(codes.DRAFT_WINDOW_TOO_SHORT,
                   f"the {sp.method} draft `{sp.model}` covers {format_tokens(window)} ({window}) positions, fewer than "
                   f"max_model_len {format_tokens(r.max_model_len)} ({r.max_model_len})",
                   r.max_model_len_span, related=[Related(sp.span_of("model"), f"draft: {how}")],
                   notes=[r.max_model_len_note,
                          "vLLM caps the draft at min(draft, target) and only logs it; longer requests are still "
                          "speculated and index past the draft's rotary table (vllm#57941: illegal memory access; vllm#22935)"],
                   help=f"lower max_model_len to {window}, or use a draft whose config.json covers the target's length",
                   path=("model", "max_model_len"))


def check_draft_rope(plan, r):
    """The target's rope extension reaches the draft (SN5022): an ``--hf-overrides`` rope
    (``model.rope_scaling``) never does; a separate draft must carry the target's rope type."""
    a = r.arch
    if a is None or not r.max_model_len:
        return
    from sncc.facts.lengths import checkpoint_rope, engine_default_max_model_len

    override = plan.model.rope_scaling if plan.model.rope_scaling and plan.model.rope_scaling > 1 else None
    target_rope = checkpoint_rope(getattr(r.checkpoint, "raw", None))
    for _, sp in _speculating(r):
        if sp.method == "mtp":
            if override is None:
                continue
            native, how = engine_default_max_model_len(a, getattr(r.checkpoint, "raw", None), None)
            if not native:
                continue
            over = r.max_model_len > native
            yield diag(codes.DRAFT_ROPE_NOT_INHERITED,
                       f"the MTP draft does not get `model.rope_scaling = {override:g}`: it keeps the native "
                       f"{format_tokens(native)} window" + (f", and max_model_len is {format_tokens(r.max_model_len)}" if over else ""),
                       plan.model.span_of("rope_scaling"), related=[Related(sp.span_of("method"), "MTP speculative decoding")],
                       severity=None if over else "warning",
                       notes=[f"native window: {how}",
                              "vLLM loads the draft's config with SpeculativeConfig.hf_config_override only, not the target's "
                              "--hf-overrides; past the native window every draft is a dummy and acceptance falls to "
                              "almost nothing (vllm#58080: 0.05 % with two 312K-token sessions)"],
                       help="write the rope block into the checkpoint's config.json (`rope_parameters`), so that target and "
                            f"draft derive the same window; or keep max_model_len ≤ {native}; or turn MTP off",
                       path=("model", "rope_scaling"))
            continue
        if sp.method not in SEPARATE_DRAFT_METHODS or not sp.model:
            continue
        info = r.draft_checkpoints.get(sp.model)
        if info is None:
            continue
        t_type, t_factor = ("override", override) if override else (
            (target_rope.type, target_rope.factor) if target_rope is not None else (None, 1.0))
        if t_type is None:
            continue
        d_rope = checkpoint_rope(info.raw)
        same = d_rope is not None and abs(d_rope.factor - t_factor) < 1e-9 and (
            (t_type == "override" and d_rope.extends) or d_rope.type == t_type)
        if same:
            continue
        window, _ = _draft_window(info)
        if window and r.max_model_len > window:
            continue   # SN5021 reports the window itself
        # the rope blocks differ only past the context they scale: the target's native window
        # (an override) or its rope's original_max_position_embeddings
        if t_type == "override":
            scaled_from = a.yarn_base_positions or a.max_position_embeddings or 0
        else:
            scaled_from = target_rope.original or 0
        if scaled_from and r.max_model_len <= scaled_from:
            continue
        what = f"rope {d_rope.type} × {d_rope.factor:g}" if d_rope is not None else "no rope scaling"
        yield diag(codes.DRAFT_ROPE_NOT_INHERITED,
                   f"the {sp.method} draft `{sp.model}` has {what}, the target "
                   + (f"`model.rope_scaling = {t_factor:g}`" if t_type == "override" else f"rope {t_type} × {t_factor:g}"),
                   sp.span_of("model"), severity="warning",
                   notes=["the draft computes positions with its own rope: at long context its drafts are off and "
                          "acceptance drops (vllm-project/speculators#574: the converter forwarded rope_theta only)"],
                   help="use a draft converted with the target's rope block (`rope_scaling` / `rope_parameters` in its config.json)",
                   path=("speculative", "model"))

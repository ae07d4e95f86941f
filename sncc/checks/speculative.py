"""Speculative decoding without its draft checkpoint (SN4018) or that slows decode down
(SN7002, warning; misconfig BR-24).

Expected tokens per step with ``k`` draft tokens of acceptance ``α``
(Leviathan et al.; the rule of BR-24)::

    E = (1 − α^(k+1)) / (1 − α)        (E = k + 1 when α = 1)

Step cost relative to a plain decode step ``t_target`` (batch 1, the
latency-critical case): ``t_verify + k × draft_cost × t_target`` with ``t_verify ≈
t_target`` (batch-1 decode reads the same weights for 1 or k + 1 tokens); for
MTP / EAGLE / DFlash without ``draft_cost`` the drafter is one decoder layer per
draft token, ``draft_cost = 1 / num_hidden_layers``.  ``draft_cost``
defaults to 0 for n-gram and to engines.toml ``draft_model_cost_fraction`` for
a separate draft model.  Warn when ``E × t_target / step < 1``.

When the cost model can cost the decoding role (:func:`_costed_ratio`), ``t_target`` and the
speculative step come from it instead, at the role's ``max_num_seqs`` per DP rank: the
simulator's own step cost, so ``check`` and ``simulate`` agree on the slowdown.
"""

from __future__ import annotations

from sncc.catalog.engine_defaults import engine_defaults
from sncc.diagnostics import codes
from sncc.diagnostics.model import diag


def expected_tokens(alpha: float, k: int) -> float:
    """Tokens per verification step, ``(1 − α^(k+1)) / (1 − α)``: the facts layer's
    :func:`sncc.facts.speculative.expected_tokens`, which the simulator reads too."""
    from sncc.facts.speculative import expected_tokens as _e

    return _e(alpha, k)


def _speculating_roles(plan, r):
    """``[(role name, SpeculativeFacts)]`` of the roles that run speculative decoding, each
    distinct setting once (a plan-level block shared by every role is reported once)."""
    out, seen = [], set()
    for name, _ in plan.roles():
        rf = r.roles.get(name)
        sp = rf.speculative if rf is not None else None
        if sp is None:
            continue
        key = (sp.method, sp.draft_tokens, sp.acceptance, sp.model, sp.draft_cost, tuple(sorted((k, v) for k, v in sp.spans.items() if v)))
        if key in seen:
            continue
        seen.add(key)
        out.append((name, sp))
    return out


def check_draft_model(plan, r):
    """A drafter method (``draft_model``, ``eagle``, ``eagle3``) names its checkpoint (SN4018).

    vLLM's ``SpeculativeConfig`` raises at start-up when ``speculative_config.model`` is
    missing for these methods (the methods are :data:`sncc.engines.base.DRAFT_CHECKPOINT_METHODS`,
    with that source); reported at ``speculative.method``."""
    roles = _speculating_roles(plan, r)
    if not roles:
        return  # most plans do not speculate: skip the adapter import (issue 14 item 16)
    from sncc.engines.base import DRAFT_CHECKPOINT_METHODS

    for _, sp in roles:
        if sp.model or sp.method not in DRAFT_CHECKPOINT_METHODS:
            continue
        yield diag(codes.DRAFT_MODEL_MISSING,
               f"speculative method `{sp.method}` needs a draft checkpoint, and `speculative.model` is not set",
               sp.span_of("method"),
               notes=["vLLM refuses to start without speculative_config.model for this method "
                      "(vllm/config/speculative.py, SpeculativeConfig)"],
               help="set `model = \"<path or Hugging Face id of the draft>\"` in `speculative`, or use "
                    "`method = ngram` (no checkpoint) or `method = mtp` (a model with MTP layers)",
               path=("speculative", "method"))


def check_speculative_gain(plan, r):
    """Warn when speculation is predicted to lower decode throughput (SN7002), for the decoding
    role (decode or serve) and the speculative setting in force there."""
    role_name = "decode" if plan.decode is not None else "serve" if plan.serve is not None else None
    rf = r.roles.get(role_name) if role_name is not None else None
    sp = rf.speculative if rf is not None else None
    if sp is None:
        return
    k, a = sp.draft_tokens, sp.acceptance
    e = expected_tokens(a, k)
    if sp.draft_cost is None and sp.method in ("mtp", "eagle", "eagle3", "dflash"):
        # the drafter is one decoder layer of the target's width per draft token (an MTP module, an
        # EAGLE head): a fraction 1 / num_hidden_layers of a target step (I: BR-24's rule with the
        # layer count as the cost; the batch-1 verify of k + 1 tokens reads the same weights as one)
        layers = getattr(r.arch, "num_hidden_layers", 0) if r.arch is not None else 0
        if not layers:
            return
        c = 1.0 / layers
        how = f"step ≈ verify (1 target step) + {k} draft layers of {layers} = {1 + k * c:.2f} target steps"
    else:
        from sncc.engines.base import HOST_DRAFT_METHODS

        c = sp.draft_cost if sp.draft_cost is not None else (
            0.0 if sp.method in HOST_DRAFT_METHODS else float(engine_defaults()["draft_model_cost_fraction"]))
        how = f"step ≈ verify (1 target step) + {k} × {c:g} draft = {1 + k * c:.2f} target steps"
    ratio = e / (1.0 + k * c)
    costed = _costed_ratio(plan, r, role_name, rf, k, a, e)
    if costed is not None:
        ratio, batch, steps = costed
        how = (f"cost model (sncc.cost, the simulator's step cost) at {batch} sequences per DP rank: "
               f"a step with {k} drafts and their verification = {steps:.2f} plain decode steps")
    if ratio >= 1.0:
        return
    span = sp.span_of("acceptance")
    yield diag(codes.SPECULATIVE_SLOWDOWN,
               f"speculative decoding is predicted to run decode at {ratio:.2f}× the speed without it: "
               f"acceptance {sp.text_of('acceptance')} with {k} draft tokens gives E = {e:.2f} tokens per step",
               span, notes=[how, "E = (1 − α^(k+1)) / (1 − α)"],
               help="use a draft with higher acceptance (MTP), fewer draft tokens (k = 1), or turn speculation off; measure α on your traffic",
               path=("speculative", "acceptance"))


def _costed_ratio(plan, r, role_name: str, rf, k: int, a: float, e: float):
    """``(E × t_plain / t_speculative, batch, t_speculative / t_plain)`` of the decoding role from
    the cost model the simulator steps with (:func:`sncc.checks._cost.decode_step_s`), at the
    role's ``max_num_seqs`` per DP rank (the batch a loaded server runs: verifying ``k + 1``
    tokens per sequence there can turn a memory-bound step compute-bound, which the batch-1 rule
    above cannot see) and the workload's mean context; None when the cost model cannot tell
    (a fact it needs is missing), and the batch-1 rule stands."""
    batch = max(1, int(rf.max_num_seqs))
    wl = plan.workload
    try:
        context = int(wl.input.mean + wl.output.mean / 2) if wl is not None and wl.input and wl.output else 2048
    except (AttributeError, TypeError):
        context = 2048
    from sncc.checks._cost import decode_step_pair

    try:
        plain, spec = decode_step_pair(plan, r, role_name, batch, graph=rf.graph_mode, context=context, mtp=(k, a))
    except (ValueError, KeyError):  # a fact the cost model needs is missing (MissingChipFact, ProfileError)
        return None
    if not plain or not spec:
        return None
    return e * plain / spec, batch, spec / plain


def check_lookup_window_method(plan, r):
    """``prompt_lookup_max`` / ``prompt_lookup_min`` on a method whose drafter does not read them
    (plan_keys.toml ``[speculative.lookup_window] methods``: the n-gram drafter): not written into
    ``--speculative-config``, so a warning (SN4015) at the key."""
    roles = _speculating_roles(plan, r)
    if not roles:
        return
    from sncc.engines.plan_keys import lookup_window

    window = lookup_window()
    methods = window.get("methods", ())
    for _, sp in roles:
        if sp.method in methods:
            continue
        for key in window.get("keys", {}):
            if getattr(sp, key) is None:
                continue
            yield diag(codes.OPTION_NOT_APPLIED,
                       f"`{key}` is read by the n-gram drafter only (`method = {' | '.join(methods)}`): with "
                       f"`method = {sp.method}` it is not written",
                       sp.span_of(key) or sp.span_of("method"),
                       help=f"remove `{key}`, or use `method = {methods[0]}`" if methods else f"remove `{key}`",
                       path=("speculative", key))


def check_lookup_window_per_role(plan, r):
    """The n-gram window in force for each role (a role's ``speculative { }`` over the plan-level one,
    key by key, ``sncc/facts/roles.py``) has ``prompt_lookup_min <= prompt_lookup_max``: vLLM's
    SpeculativeConfig refuses the inverted window at start-up (plan_keys.toml
    ``[speculative.lookup_window]``).  One block's own inverted window is its validator's SN2004;
    this is the case of the two ends coming from different blocks, reported at the role's value with
    the plan-level one as related."""
    from sncc.diagnostics.model import Related
    from sncc.engines.plan_keys import lookup_window
    from sncc.facts.roles import _sources

    methods = lookup_window().get("methods", ())
    top = plan.speculative
    lo, hi = "prompt_lookup_min", "prompt_lookup_max"
    for name, role in plan.roles():
        own = role.speculative
        if top is None or own is None:
            continue
        rf = r.roles.get(name)
        sp = rf.speculative if rf is not None else None
        if sp is None or sp.method not in methods:
            continue   # off, or a drafter that reads no window (SN4015 for the keys)
        src = _sources(top, own, (lo, hi))
        vmin, vmax = sp.prompt_lookup_min, sp.prompt_lookup_max
        if vmin is None or vmax is None or vmin <= vmax or src.get(lo) is src.get(hi):
            continue
        key, other = (lo, hi) if src[lo] is own else (hi, lo)
        where = {lo: vmin, hi: vmax}
        yield diag(codes.INVALID_VALUE,
                   f"`{name}`: the n-gram window in force is `prompt_lookup_min = {vmin}` above "
                   f"`prompt_lookup_max = {vmax}` (`{name}.speculative.{key} = {where[key]}` over the plan-level "
                   f"`speculative.{other} = {where[other]}`): vLLM refuses an n-gram window whose minimum exceeds "
                   "its maximum (SpeculativeConfig)",
                   own.span_of(key),
                   related=[Related(top.span_of(other),
                                    f"`{other} = {where[other]}`: the plan-level value `{name}` inherits")],
                   help=f"make `{lo}` at most `{hi}` in `{name}`: write both ends of the window in `{name}.speculative`, "
                        f"or change the plan-level `{other}`",
                   path=(name, "speculative", key))

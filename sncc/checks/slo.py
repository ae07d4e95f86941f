"""SLO feasibility before simulation (SN7001).

Lower bound on TPOT at batch 1: one decode step reads at least, on the busiest
device, its share of the attention, dense-FFN and shared-expert weights, the
LM head, and one routed expert per MoE layer for each expert group the token
is routed to, at the chip's full HBM bandwidth (no efficiency factor: a bound,
not an estimate).  Speculative decoding divides it by the expected tokens per
step ``1 + acceptance × draft_tokens``.
"""

from __future__ import annotations

import math

from sncc import catalog
from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag
from sncc.units import format_duration


def tpot_floor_s(plan, r, role, rf=None) -> float | None:
    """TPOT lower bound in seconds for ``role`` (None when facts are missing).

    One device must read its share of the weights per decode step: attention, dense FFN and
    shared experts split over ``tp``; of the routed experts, the ``top_k`` touched per token —
    whole experts over an EP group (at least ``ceil(top_k / group)`` per device), or a
    ``1 / (tp × dp)`` shard of each when experts are tensor-sharded.  With speculative
    decoding a step yields E(α, k) tokens (:func:`sncc.facts.speculative.expected_tokens`).
    ``rf`` is the role's :class:`~sncc.facts.model.RoleFacts` (looked up when None)."""
    from sncc.catalog.arch import param_breakdown

    a, chip = r.arch, r.chip
    if a is None or chip is None or not getattr(chip, "hbm_bandwidth", None):
        return None
    p = param_breakdown(a)
    wb = catalog.quant(r.quant).weight_bytes if r.quant else 2.0
    bytes_ = (p["attention"] + p["dense_ffn"] + p["shared_experts"]) * wb / role.tp + (p["lm_head"] or p["embedding"]) * 2.0 / role.tp  # a tied head reads the embedding
    if rf is None:
        rf = next((f for n, f in r.roles.items() if getattr(plan, n, None) is role), None)
    if a.is_moe and rf is not None:
        group = rf.tp * rf.dp
        if rf.expert_parallel:
            per_dev = math.ceil(a.num_experts_per_tok / group)
        else:
            per_dev = a.num_experts_per_tok / group
        bytes_ += p["moe_layers"] * p["routed_expert_one"] * wb * per_dev
    # pipeline stages run one after another for a token: the whole model is read per token
    t = bytes_ / chip.hbm_bandwidth
    if rf is not None and rf.speculative is not None:
        t /= rf.speculative.tokens_per_step
    return t


def check_slo_targets_plausible(plan, r):
    """A latency target below ``limits.toml [slo]``'s physical minimum is a warning (SN7060):
    ``ttft``, ``engine_ttft`` and ``e2e`` below ``min_ttft_s``, ``tpot`` below ``min_tpot_s``
    (unless it is also below the plan's batch-1 floor: the error SN7001 says so)."""
    lim = catalog.slo_limits()
    bounds = {"ttft": float(lim["min_ttft_s"]), "engine_ttft": float(lim["min_ttft_s"]),
              "e2e": float(lim["min_ttft_s"]), "tpot": float(lim["min_tpot_s"])}
    role = plan.decode or plan.serve
    for t in plan.slo:
        low = bounds.get(t.metric)
        if low is None or t.target >= low:
            continue
        if t.metric == "tpot" and role is not None:
            floor = tpot_floor_s(plan, r, role)
            if floor is not None and t.target < floor:
                continue
        why = lim["reason"]["min_tpot_s" if t.metric == "tpot" else "min_ttft_s"]
        yield diag(codes.SLO_TARGET_IMPLAUSIBLE,
                   f"{t.label} target {format_duration(t.target)} is below {format_duration(low)}, less than any "
                   f"deployment can reach ({why})",
                   t.span, notes=["limits.toml [slo]; source: " + "; ".join(lim["source"])],
                   help="check the unit: `ms` is milliseconds (`ttft < 500ms`, `tpot < 50ms`)", path=("slo", t.label))


def check_tpot_reachable(plan, r):
    """A TPOT target below the batch-1 floor of the decode (or serve) role is an error."""
    targets = [t for t in plan.slo if t.metric == "tpot"]
    role = plan.decode or plan.serve
    if not targets or role is None:
        return
    floor = tpot_floor_s(plan, r, role)
    if floor is None:
        return
    for t in targets:
        if t.target < floor:
            yield diag(codes.TPOT_UNREACHABLE,
                       f"TPOT target {format_duration(t.target)} is below {format_duration(floor)}, the time one decode step needs just to read the weights at batch 1",
                       t.span, related=[Related(role.span_of("tp"), "weights per device follow from tp and ep")],
                       help="raise the target, spread weights over more devices (tp), quantize further, or add speculative decoding",
                       notes=[f"{r.chip.id}: {r.chip.hbm_bandwidth / 1e12:g} TB/s HBM; weights `{r.quant}`"],
                       path=("slo", t.label))

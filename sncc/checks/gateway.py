"""Gateway checks (SN6001, SN6002)."""

from __future__ import annotations

from sncc.diagnostics import codes
from sncc.diagnostics.model import Edit, Fix, Related, diag
from sncc.units import format_duration


def check_model_id(plan, r):
    """The gateway's ``model_id`` equals the served model name (SN6001)."""
    gw = plan.gateway
    if gw is None or gw.model_id is None or gw.model_id == r.served_name:
        return
    src = plan.model.span_of("served_name") if plan.model.served_name else plan.model.span_of("id")
    yield diag(codes.GATEWAY_MODEL_MISMATCH, f"gateway model_id `{gw.model_id}` is not the served model name `{r.served_name}`",
               gw.span_of("model_id"), related=[Related(src, "served name comes from here")],
               help=f'set `model_id = "{r.served_name}"`; requests for `{gw.model_id}` get "model not found"',
               fixes=[Fix(f"use `{r.served_name}`", (Edit(gw.span_of("model_id"), f'"{r.served_name}"'),), "safe")],
               path=("gateway", "model_id"))


def _slo(plan, metric: str):
    """The p99 target of ``metric`` when given (the tail decides timeouts), else the first."""
    from sncc.checks.timeouts import slo_target

    return slo_target(plan, metric)


def check_timeout(plan, r):
    """The gateway timeout exceeds the longest generation (SN6002; seed 004, misconfig BR-35:
    a shorter timeout cuts streams).  The longest generation is the TTFT target (0 without
    one) + ``max_tokens`` × the TPOT target, or × the batch-1 TPOT floor
    (:func:`sncc.checks.slo.tpot_floor_s`: weights / HBM bandwidth, a lower bound) when no
    TPOT target is given; an ``e2e`` target above that bounds it instead."""
    gw = plan.gateway
    if gw is None or gw.timeout is None:
        return
    from sncc.checks.slo import tpot_floor_s

    ttft, tpot, e2e = _slo(plan, "ttft"), _slo(plan, "tpot"), _slo(plan, "e2e")
    related = []
    if tpot is not None:
        per_tok = tpot.target
        related.append(Related(tpot.span, f"TPOT target {format_duration(tpot.target)} × max_tokens {r.max_tokens}"))
    else:
        role = plan.decode or plan.serve
        per_tok = tpot_floor_s(plan, r, role) if role is not None else None
    worst, what = None, ""
    if per_tok:
        worst = (ttft.target if ttft is not None else 0.0) + r.max_tokens * per_tok
        what = (f"the longest generation the SLO targets allow ("
                + (f"{ttft.metric} target {format_duration(ttft.target)} + " if ttft is not None else "")
                + f"max_tokens {r.max_tokens} × tpot target {format_duration(per_tok)})") if tpot is not None else (
            f"the fastest possible longest generation (max_tokens {r.max_tokens} × the batch-1 TPOT floor "
            f"{format_duration(per_tok)}, weights read from HBM per token)")
        if ttft is not None:
            related.append(Related(ttft.span, f"TTFT target {format_duration(ttft.target)}"))
    if e2e is not None and (worst is None or e2e.target > worst):
        worst, what, related = e2e.target, "the e2e target", [Related(e2e.span, f"e2e target {format_duration(e2e.target)}")]
    if worst is None or gw.timeout >= worst:
        return
    yield diag(codes.GATEWAY_TIMEOUT_SHORT,
               f"gateway timeout {format_duration(gw.timeout)} is shorter than {what}, {format_duration(worst)}",
               gw.span_of("timeout"), related=related,
               help=f"raise the timeout above {format_duration(worst)} (e.g. `timeout = {int(worst // 60) + 1}min`)"
                    + (", or check the TPOT target" if tpot is not None and worst > 2 * gw.timeout and worst > 86400 else ""),
               path=("gateway", "timeout"))

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
    """The gateway timeout exceeds the worst-case generation: TTFT target +
    max_tokens × TPOT target (SN6002; seed 004: the gateway timeout must exceed
    the longest generation or streams are cut)."""
    gw = plan.gateway
    if gw is None or gw.timeout is None:
        return
    ttft, tpot = _slo(plan, "ttft"), _slo(plan, "tpot")
    if ttft is None or tpot is None:
        return
    worst = ttft.target + r.max_tokens * tpot.target
    if gw.timeout >= worst:
        return
    yield diag(codes.GATEWAY_TIMEOUT_SHORT,
               f"gateway timeout {format_duration(gw.timeout)} is shorter than the longest generation, {format_duration(worst)}",
               gw.span_of("timeout"),
               related=[Related(ttft.span, f"TTFT target {format_duration(ttft.target)}"),
                        Related(tpot.span, f"TPOT target {format_duration(tpot.target)} × max_tokens {r.max_tokens}")],
               help=f"raise the timeout above {format_duration(worst)} (e.g. `timeout = {int(worst // 60) + 1}min`)",
               path=("gateway", "timeout"))

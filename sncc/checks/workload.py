"""Workload checks: length distributions that can exist (SN2009) and requests
that fit in ``max_model_len`` (SN5008)."""

from __future__ import annotations

from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag
from sncc.units import format_tokens


def check_length_distributions(plan, r):
    """``min ≤ mean ≤ max`` for input and output lengths (SN2009)."""
    for which in ("input", "output"):
        d = getattr(plan.workload, which)
        if d.mean > d.max:
            yield diag(codes.OUT_OF_RANGE, f"`{which}` mean {format_tokens(d.mean)} exceeds its max {format_tokens(d.max)}",
                       d.span_of("mean"), related=[Related(d.span_of("max"), "max given here")],
                       help="the mean of a distribution lies between its min and its max", path=("workload", which, "mean"))
        elif d.min > d.mean:
            yield diag(codes.OUT_OF_RANGE, f"`{which}` min {format_tokens(d.min)} exceeds its mean {format_tokens(d.mean)}",
                       d.span_of("min"), related=[Related(d.span_of("mean"), "mean given here")],
                       help="the mean of a distribution lies between its min and its max", path=("workload", which, "min"))


def check_requests_fit_context(plan, r):
    """With ``max_model_len`` set, max input + client max_tokens ≤ max_model_len (SN5008)."""
    mdl = plan.model
    if mdl.max_model_len is None:
        return
    longest = plan.workload.input.max + r.max_tokens
    if longest <= mdl.max_model_len:
        return
    gw = plan.gateway
    tok_note = "gateway max_tokens" if gw is not None and gw.max_tokens is not None else "max output (the client's max_tokens)"
    yield diag(codes.WORKLOAD_EXCEEDS_CONTEXT,
               f"the longest request, {format_tokens(plan.workload.input.max)} input + {format_tokens(r.max_tokens)} output = "
               f"{format_tokens(longest)} tokens, exceeds max_model_len {format_tokens(mdl.max_model_len)}",
               mdl.span_of("max_model_len"),
               related=[Related(plan.workload.input.span_of("max"), "max input given here")],
               help=f"raise max_model_len to {format_tokens(longest)}, or cap the input or {tok_note}",
               path=("model", "max_model_len"))

"""Workload checks: length distributions that can exist (SN2009), burstiness only with a rate
(SN2016), requests that fit in ``max_model_len`` (SN5008) and multi-turn conversations
that stay within it (SN5009).

The registry (:data:`sncc.checks.CHECKS`) runs :func:`check_length_distributions` and
:func:`check_requests_fit_context`; they also yield :func:`check_arrival_mode` and
:func:`check_conversations_fit_context` respectively."""

from __future__ import annotations

from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag
from sncc.units import format_tokens


def check_length_distributions(plan, r):
    """``min ≤ mean ≤ max`` for input and output lengths (SN2009); then
    :func:`check_arrival_mode` (SN2016)."""
    yield from check_arrival_mode(plan, r)
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


def check_arrival_mode(plan, r):
    """``burstiness`` is given only with ``rate`` (SN2016).

    ``rate`` and ``concurrency`` together are a benchmark client's ``--request-rate`` under
    ``--max-concurrency`` (vllm 0.11.0 wheel ``vllm/benchmarks/serve.py``: "While the
    --request-rate argument controls the rate at which requests are initiated, this argument will
    control how many are actually allowed to execute at a time"): requests start at the rate and
    wait at the client for a free slot; ``bench.sh`` writes both flags and the simulator runs it.
    With neither, the simulator runs ``min(requests, 64)`` closed-loop clients (or replays a
    trace's arrival times); the field docs say so."""
    wl = plan.workload
    if wl.rate is None and not wl.is_default("burstiness"):
        # burstiness shapes the gaps of an open loop at `rate`; anything else ignores it
        other = ("`concurrency` (a closed loop: clients wait for each reply)" if wl.concurrency is not None
                 else "no `rate` (a closed loop of default clients, or a trace's own arrival times)")
        yield diag(codes.CONFLICTING_KEYS,
                   f"`burstiness` shapes the arrival gaps of an open loop at `rate`, and the workload has {other}",
                   wl.span_of("burstiness"),
                   related=[Related(wl.span_of("concurrency"), "concurrency given here")] if wl.concurrency is not None else [],
                   help="give `rate` with `burstiness`, or remove `burstiness`", path=("workload", "burstiness"))


def check_conversations_fit_context(plan, r):
    """A multi-turn conversation's final context, ``turns × (input mean + output mean)``
    tokens, within ``max_model_len`` and the model's positions (SN5009, a warning: vLLM
    rejects the later turns; the simulator caps follow-up prompts at the input max)."""
    wl = plan.workload
    if wl.turns <= 1 or not r.max_model_len:
        return
    total = wl.turns * (wl.input.mean + wl.output.mean)
    limit, what = r.max_model_len, "max_model_len"
    a = r.arch
    if a is not None and a.max_position_embeddings:
        from sncc.checks.context import rope_factor

        pos = int(a.max_position_embeddings * rope_factor(plan, r)[0])
        if pos < limit:
            limit, what = pos, "the model's positions"
    if total <= limit:
        return
    related = [Related(r.max_model_len_span, r.max_model_len_note)] if r.max_model_len_span else []
    yield diag(codes.CONVERSATION_EXCEEDS_CONTEXT,
               f"a {wl.turns}-turn conversation grows to about {wl.turns} × ({format_tokens(wl.input.mean)} input + "
               f"{format_tokens(wl.output.mean)} output) = {format_tokens(total)} tokens, past {what} "
               f"{format_tokens(limit)}",
               wl.span_of("turns"), related=related,
               notes=[f"vLLM rejects a request longer than {what}; `sncc simulate` caps each follow-up prompt at "
                      f"the input max {format_tokens(wl.input.max)} and reports how many it capped"],
               help=f"lower `turns` to {max(1, int(limit // (wl.input.mean + wl.output.mean)))}, or raise max_model_len "
                    f"and the input max to {format_tokens(total)}",
               path=("workload", "turns"))


def check_requests_fit_context(plan, r):
    """With ``max_model_len`` set, max input + client max_tokens ≤ max_model_len (SN5008);
    then :func:`check_conversations_fit_context` (SN5009)."""
    yield from check_conversations_fit_context(plan, r)
    mdl = plan.model
    if mdl.max_model_len is None or not r.max_model_len:
        return
    longest = plan.workload.input.max + r.max_tokens
    if longest <= r.max_model_len:
        return
    gw = plan.gateway
    tok_note = "gateway max_tokens" if gw is not None and gw.max_tokens is not None else "max output (the client's max_tokens)"
    yield diag(codes.WORKLOAD_EXCEEDS_CONTEXT,
               f"the longest request, {format_tokens(plan.workload.input.max)} input + {format_tokens(r.max_tokens)} output = "
               f"{format_tokens(longest)} tokens, exceeds max_model_len {format_tokens(r.max_model_len)}"
               + (" (the engine's default)" if r.max_model_len_origin == "engine-default" else ""),
               mdl.span_of("max_model_len"),
               related=[Related(plan.workload.input.span_of("max"), "max input given here")],
               help=f"raise max_model_len to {format_tokens(longest)}, or cap the input or {tok_note}",
               path=("model", "max_model_len"))


def check_bench_reproduces_workload(plan, r):
    """A warning (SN5084) at each workload key ``bench.sh`` cannot reproduce
    (:func:`sncc.facts.workload.bench_gaps`: multi-turn conversations, think time, prefix-cache
    hits), as SN5082 warns of trace lengths the benchmark does not send."""
    from sncc.facts.workload import bench_gaps

    for path, what in bench_gaps(plan):
        node = plan.workload if path[0] == "workload" else plan.optimize
        yield diag(codes.BENCH_WORKLOAD_DIFFERS, f"bench.sh does not reproduce {what}; `sncc simulate` models it",
                   node.span_of(path[1]) or node.block_span,
                   help="compare with a benchmark that replays the conversations, or read bench.sh's results as a "
                        "single-turn workload without prefix reuse", path=path)

"""Workload facts: the trace's rows and the number of requests one run sends.

``workload { trace = "t.csv" }`` replays one request per row.  The rows are read here once
(:func:`sncc.workload.trace.read_trace`, bounded, regular files only) and read by the check
(SN2015, SN5081, SN5082), the simulator and ``bench.sh``:

* ``requests`` not written: one request per trace row (``Facts.requests`` = the row count);
* ``requests`` written and different from the row count: honoured (fewer = the first rows; more =
  the rows cycled, arrival times shifted by the trace's span), with the SN5081 note at
  ``requests`` (a short preview of a long trace, or a cycled one long enough for a steady state,
  are real uses a refusal would forbid; the note makes it visible);
* without a trace, ``Facts.requests`` is ``workload.requests`` (default 1000).
"""

from __future__ import annotations


def derive_workload(plan, f) -> None:
    """Set ``f.trace``, ``f.trace_error``, ``f.requests`` and ``f.requests_note`` of ``plan``."""
    wl = getattr(plan, "workload", None)
    if wl is None:
        return
    f.requests = wl.requests
    if not wl.trace:
        return
    from sncc.workload.trace import TraceError, read_trace, trace_path

    span = wl.span_of("trace")
    try:
        f.trace = tuple(read_trace(trace_path(wl.trace, span.file if span is not None else None),
                                   max_input=wl.input.max, max_output=wl.output.max))
    except TraceError as e:     # SN2015 (sncc.workload.trace.check_trace) reports it
        f.trace_error = e
        return
    if wl.is_default("requests"):
        f.requests = len(f.trace)
        f.requests_note = f"one request per row of the trace `{wl.trace}`"


def bench_gaps(plan) -> list:
    """What ``bench.sh`` (``vllm bench serve``'s random dataset: independent single-turn prompts of
    random tokens, each sent as soon as a client is free) does not reproduce of the workload the
    simulator runs: ``(path, what)`` per gap, ``path`` the plan key that asks for it, ``what`` a
    phrase.  Read by the warning SN5084 and by ``bench.sh``'s header comment, so both say the same:

    * ``workload.turns > 1``: conversations whose follow-up prompts hold the previous turns;
    * ``workload.think_time > 0``: a pause between a reply and the next turn;
    * ``optimize.prefix_cache_hit > 0``: prompt tokens served from the prefix cache (random
      prompts share no prefix, so the benchmark finds none).
    """
    wl = getattr(plan, "workload", None)
    if wl is None:
        return []
    gaps = []
    if wl.turns > 1:
        gaps.append((("workload", "turns"), f"{wl.turns}-turn conversations (each follow-up prompt holding the previous "
                                             "turns): it sends single-turn prompts"))
    if wl.think_time > 0 and wl.turns > 1:
        gaps.append((("workload", "think_time"), f"the {wl.think_time:g} s think time between turns: it sends the next "
                                                  "request as soon as a client is free"))
    opt = getattr(plan, "optimize", None)
    hit = getattr(opt, "prefix_cache_hit", 0.0) if opt is not None else 0.0
    if hit > 0:
        gaps.append((("optimize", "prefix_cache_hit"), f"a prefix-cache hit of {opt.ratio_text('prefix_cache_hit')}: its random prompts share no "
                                                        "prefix, so none hits the cache"))
    return gaps

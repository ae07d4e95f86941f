"""Workload inputs read from files outside the plan: request traces (:mod:`sncc.workload.trace`).

Used by ``sncc check`` (SN2015 on a malformed trace) and ``sncc simulate`` (the trace's lengths
and arrivals); it imports neither of them.
"""

"""Proxy timeouts (SN6003; misconfig BR-21, BR-35): every hop bounded, and
client total (``gateway.timeout``) ≥ proxy read timeout ≥ the longest silent gap.

The silent gap is TTFT for a streaming client and TTFT + max_tokens × TPOT
without streaming, from the plan's SLO targets (p99 when given, else mean).
"""

from __future__ import annotations

from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag
from sncc.units import format_duration


def slo_target(plan, metric: str):
    """The plan's p99 target of ``metric``, else its mean target, else None."""
    best = None
    for t in plan.slo:
        if t.metric == metric and (best is None or t.stat == "p99"):
            best = t
    if best is None and metric == "ttft":      # a server-side TTFT bounds the client's from below
        return slo_target(plan, "engine_ttft")
    return best


def silent_gap(plan, r):
    """(seconds, explanation) of the longest silence a client sees, or (None, "")."""
    ttft, tpot = slo_target(plan, "ttft"), slo_target(plan, "tpot")
    if ttft is None:
        return None, ""
    stream = plan.gateway.stream if plan.gateway is not None else True
    if stream:
        return ttft.target, f"streaming: TTFT target {format_duration(ttft.target)}"
    if tpot is None:
        return None, ""
    gap = ttft.target + r.max_tokens * tpot.target
    return gap, f"non-streaming: TTFT {format_duration(ttft.target)} + max_tokens {r.max_tokens} × TPOT {format_duration(tpot.target)}"


def check_proxy_timeouts(plan, r):
    """No unbounded proxy timeout; ``gateway.timeout ≥ read_timeout ≥ silent gap`` (SN6003)."""
    px = plan.proxy
    if px is None:
        return
    for f in ("connect_timeout", "read_timeout", "write_timeout", "pool_timeout"):
        v = getattr(px, f)
        if v is not None and v <= 0:
            yield diag(codes.PROXY_TIMEOUT, f"proxy `{f}` is unbounded: a stalled upstream holds its prefill/decode load forever",
                       px.span_of(f), help={"connect_timeout": "e.g. `connect_timeout = 10s`", "write_timeout": "e.g. `write_timeout = 30s`",
                                            "pool_timeout": "e.g. `pool_timeout = 10s`"}.get(f, "e.g. `read_timeout = 300s`"),
                       path=("proxy", f))
    if px.read_timeout is None:
        yield diag(codes.PROXY_TIMEOUT, "the proxy has no read timeout: a stalled upstream holds its prefill/decode load forever",
                   px.name_span, help="set `read_timeout` (inactivity) above the longest silent gap, e.g. `read_timeout = 300s`",
                   path=("proxy", "read_timeout"))
        return
    read = px.read_timeout
    if read <= 0:
        return
    gap, why = silent_gap(plan, r)
    if gap is not None and read < gap:
        yield diag(codes.PROXY_TIMEOUT, f"proxy read timeout {format_duration(read)} is shorter than the longest silent gap, {format_duration(gap)}",
                   px.span_of("read_timeout"), notes=[why],
                   help=f"raise it above {format_duration(gap)}" + ("; or stream responses" if plan.gateway is not None and not plan.gateway.stream else ""),
                   path=("proxy", "read_timeout"))
    gw = plan.gateway
    if gw is not None and gw.timeout is not None and gw.timeout < read:
        yield diag(codes.PROXY_TIMEOUT, f"gateway timeout {format_duration(gw.timeout)} is shorter than the proxy read timeout {format_duration(read)}",
                   gw.span_of("timeout"), related=[Related(px.span_of("read_timeout"), "proxy read timeout")],
                   help="order the hops: client total ≥ proxy read ≥ silent gap; the client gives up while the proxy keeps the upstream busy",
                   path=("gateway", "timeout"))


def check_gateway_timeout_set(plan, r):
    """A gateway without ``timeout`` gives clients an unbounded wait (SN6003 as a
    warning; misconfig BR-21: a stalled upstream then holds capacity forever)."""
    gw = plan.gateway
    if gw is None or gw.timeout is not None or gw.written("timeout"):
        return
    ttft, tpot = slo_target(plan, "ttft"), slo_target(plan, "tpot")
    if ttft is not None and tpot is not None:
        worst = ttft.target + r.max_tokens * tpot.target
        hint = f"above the longest generation, {format_duration(worst)} (TTFT + max_tokens × TPOT targets)"
    else:
        hint = "above the longest generation, e.g. `timeout = 30min`"
    yield diag(codes.PROXY_TIMEOUT, "the gateway has no `timeout`: clients wait without bound when an upstream stalls",
               gw.name_span, severity="warning", help=f"set `timeout` {hint}", path=("gateway", "timeout"))

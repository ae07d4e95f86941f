"""``settings.json``: the client's file, written from what the plan's ``gateway`` says.

Keys (in order): ``api_base`` (``gateway.base_url``), ``api_key_env`` (the *name* of the variable
holding the key: ``api_key = env("NAME")``; the value is never written), ``model``
(``gateway.model_id``, else the served model name the plan gives), ``max_tokens``
(``gateway.max_tokens``, else the workload's max output, the default the README documents),
``temperature`` / ``top_p`` / ``stream`` / ``timeout`` (seconds) only when the plan writes them,
``retry`` with the keys the plan writes, and ``local_inference`` when the plan names a
``local_endpoint`` (``fallback_to_remote`` false: seed 001's settings.json, no silent traffic to
the remote gateway).  Nothing else: no invented defaults.
"""

from __future__ import annotations

from sncc.lowering.context import LowerCtx
from sncc.lowering.engine_args import num


def client_settings(ctx: LowerCtx) -> dict | None:
    """The settings.json object (without ``$schema``), or None when the plan has no gateway."""
    gw = ctx.plan.gateway
    if gw is None:
        return None
    doc: dict = {}
    if gw.base_url is not None:
        doc["api_base"] = gw.base_url
    if gw.api_key is not None:
        doc["api_key_env"] = gw.api_key.name
    doc["model"] = gw.model_id or ctx.resolved.served_name or ctx.plan.model.id
    doc["max_tokens"] = ctx.resolved.max_tokens or ctx.plan.workload.output.max
    for key in ("temperature", "top_p"):
        if not gw.is_default(key):
            doc[key] = num(float(getattr(gw, key)))
    if not gw.is_default("stream"):
        doc["stream"] = gw.stream
    if gw.timeout is not None:
        doc["timeout"] = num(float(gw.timeout))
    rt = gw.retry
    if rt is not None:
        r: dict = {}
        if not rt.is_default("max_attempts"):
            r["max_attempts"] = rt.max_attempts
        if not rt.is_default("backoff_factor"):
            r["backoff_factor"] = num(float(rt.backoff_factor))
        doc["retry"] = r
    if gw.local_endpoint is not None:
        doc["local_inference"] = {"enabled": True, "endpoint": gw.local_endpoint, "fallback_to_remote": False}
    return doc

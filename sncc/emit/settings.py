"""``settings.json``: the client/gateway settings of a plan that has a ``gateway`` block.

Shape (seed 001, fixed key order)::

    $schema, api_base, api_key_env, model, max_tokens, temperature, top_p, stream,
    timeout, retry{max_attempts, backoff_factor},
    local_inference{enabled, endpoint, fallback_to_remote}

Decisions:

* **Secret reference form**: the API key is never written.  ``api_key_env``
  holds the *name* of the environment variable the client must read the key
  from (``"api_key_env": "GATEWAY_API_KEY"``).  A ``"${VAR}"`` placeholder was
  rejected: a client that does not expand it would send the placeholder as its
  key.  The schema forbids an ``api_key`` property.
* ``model`` is ``gateway.model_id``, else the served model name.
* ``max_tokens`` is ``gateway.max_tokens``, else the workload's max output
  (tokens).  ``timeout`` is in seconds and written only when the plan sets it.
* ``api_base`` is written only when the plan sets ``gateway.base_url``.
* ``retry`` is always written (plan values, else 3 attempts, factor 2).
* ``local_inference.enabled`` is true when ``gateway.local_endpoint`` is set;
  the endpoint defaults to the local vLLM server sncc configures
  (``http://127.0.0.1:8000/v1``).  ``fallback_to_remote`` is false (seed
  default: no silent traffic to the remote gateway).
"""

from __future__ import annotations

from typing import Any

from sncc.emit._common import dump_json, num, schema_ref
from sncc.lowering import SERVER_PORT
from sncc.plan.model import Plan, Retry
from sncc.plan.resolve import Resolved

SCHEMA = "settings"
DEFAULT_LOCAL_ENDPOINT = f"http://127.0.0.1:{SERVER_PORT}/v1"


def build(plan: Plan, resolved: Resolved) -> dict[str, Any]:
    """The settings.json document as a dict; raises ``ValueError`` if the plan has no gateway.

    Units: ``max_tokens`` tokens, ``timeout`` seconds, ``temperature``/``top_p``
    plain numbers, ``backoff_factor`` a multiplier between attempts.
    """
    gw = plan.gateway
    if gw is None:
        raise ValueError(f"plan {plan.name!r} has no gateway block")
    doc: dict[str, Any] = {"$schema": schema_ref(SCHEMA)}
    if gw.base_url is not None:
        doc["api_base"] = gw.base_url
    if gw.api_key is not None:
        doc["api_key_env"] = gw.api_key.name
    doc["model"] = gw.model_id or resolved.served_name or plan.model.id
    doc["max_tokens"] = resolved.max_tokens or plan.workload.output.max
    doc["temperature"] = num(gw.temperature)
    doc["top_p"] = num(gw.top_p)
    doc["stream"] = gw.stream
    if gw.timeout is not None:
        doc["timeout"] = num(gw.timeout)
    rt = gw.retry or Retry()
    doc["retry"] = {"max_attempts": rt.max_attempts, "backoff_factor": num(rt.backoff_factor)}
    doc["local_inference"] = {
        "enabled": gw.local_endpoint is not None,
        "endpoint": gw.local_endpoint or DEFAULT_LOCAL_ENDPOINT,
        "fallback_to_remote": False,
    }
    return doc


def emit(plan: Plan, resolved: Resolved) -> str:
    """``settings.json`` text (deterministic, trailing newline); never contains a secret value."""
    return dump_json(build(plan, resolved))

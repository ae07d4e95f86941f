"""``settings.json``: the client's file (:func:`sncc.lowering.client.client_settings` says what
goes in it and why: only what the plan's ``gateway`` says).  The API key is never written:
``api_key_env`` holds the name of the variable the client reads it from."""

from __future__ import annotations

from sncc.emit._common import dump_json, schema_ref
from sncc.lowering.deployment import Deployment

SCHEMA = "settings"


def emit(dep: Deployment) -> dict[str, str]:
    """``{"settings.json": text}``, or {} when the plan has no gateway."""
    if dep.client is None:
        return {}
    return {"settings.json": dump_json({"$schema": schema_ref(SCHEMA), **dep.client})}

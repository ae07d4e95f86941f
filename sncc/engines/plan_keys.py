"""The plan-key table ``sncc/engines/data/plan_keys.toml``: engine argument → plan key.

Read by the importer (:mod:`sncc.importer.plan_keys` adds the readers that turn an argument's
value into plan values) and by the checks (SN4045 reads the ``how = "value"`` rows), which must
not import the importer package: ``sncc check`` would pay for the script reader and the
release manifests' parsers on every start (tests/test_cold_imports.py).
"""

from __future__ import annotations

from functools import lru_cache

from sncc.cache import package_toml


@lru_cache(maxsize=1)
def table() -> dict:
    """The whole parsed table (``[[arg]]`` rows, ``[speculative]``, ``[engine_defaults]``, ...)."""
    return package_toml("sncc.engines", "data/plan_keys.toml")


def rows() -> dict[str, dict]:
    """``{argument name: row}`` of ``plan_keys.toml`` (row keys ``arg``, ``plan``, ``how``)."""
    return {r["arg"]: r for r in table()["arg"]}


def as_written_switches() -> dict[str, str]:
    """``{role plan key: engine argument}`` of the ``build = "as-written"`` rows (``prefix_caching`` →
    ``enable-prefix-caching``): role switches ``sncc build`` passes as the plan writes them, and only then."""
    return {r["plan"].split(".", 1)[1]: r["arg"] for r in table()["arg"]
            if r.get("build") == "as-written" and r.get("plan", "").startswith("role.")}


def engine_default(key: str):
    """``[engine_defaults]`` value ``key`` (``prefix_caching``) and its ``<key>_source``: (value, source);
    ``KeyError`` when the table has no such key."""
    d = table()["engine_defaults"]
    return d[key], str(d.get(f"{key}_source", ""))


def lookup_window() -> dict:
    """``[speculative.lookup_window]``: the n-gram window's plan keys → vLLM's ``--speculative-config``
    keys (``keys``), and the plan methods whose drafter reads them (``methods``)."""
    return dict(table().get("speculative", {}).get("lookup_window", {}))

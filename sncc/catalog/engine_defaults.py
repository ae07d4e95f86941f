"""Engine-wide defaults for memory and timing (``data/engines.toml``, each with its source)."""

from __future__ import annotations

from functools import lru_cache

from sncc.cache import package_toml


@lru_cache(maxsize=1)
def engine_defaults() -> dict:
    """The ``engines.toml`` table: ``activation_reserve_bytes`` (bytes),
    ``hccl_buffsize_default_mb`` (MB), ``hccl_connect_timeout_default_s`` (s), with sources."""
    return package_toml("sncc.catalog", "data/engines.toml")

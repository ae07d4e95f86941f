"""Load calibration profiles (``sncc/catalog/data/profiles/<id>.toml``).

Every constant in a profile is a table ``{value = ..., source = "..."}`` or
``{value = ..., fitted = "fitted to ... (figures)"}``.  :class:`Profile` reads
them by dotted key and remembers which fitted constants a simulation used, so
:class:`sncc.sim.metrics.SimResult` can list them.
"""
from __future__ import annotations

import functools
import os
import sys
from typing import Any, Dict, Optional

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover - Python 3.10
    import tomli as _toml

PROFILE_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "catalog", "data", "profiles")


class Profile:
    """Read-only view of a profile with usage tracking of fitted constants."""

    def __init__(self, pid: str, data: Dict[str, Any]):
        self.id = pid
        self._data = data
        self.used_fitted: Dict[str, Dict[str, Any]] = {}

    def entry(self, key: str) -> Dict[str, Any]:
        """The raw table of dotted ``key`` (KeyError if absent)."""
        node: Any = self._data
        for part in key.split("."):
            node = node[part]
        if not isinstance(node, dict) or "value" not in node:
            raise KeyError(f"profile {self.id}: {key} is not a constant table")
        return node

    def get(self, key: str, default: Any = None) -> Any:
        """Value of constant ``key``; ``default`` when absent (None default -> KeyError)."""
        try:
            e = self.entry(key)
        except KeyError:
            if default is None:
                raise KeyError(f"profile {self.id}: missing constant {key}")
            return default
        if "fitted" in e:
            self.used_fitted[key] = {"value": e["value"], "fitted": e["fitted"]}
        return e["value"]

    def has(self, key: str) -> bool:
        """True when constant ``key`` exists."""
        try:
            self.entry(key)
            return True
        except KeyError:
            return False

    def fresh(self) -> "Profile":
        """A copy with empty usage tracking (one per simulation)."""
        return Profile(self.id, self._data)


@functools.lru_cache(maxsize=None)
def _load_raw(pid: str) -> Dict[str, Any]:
    path = os.path.join(PROFILE_DIR, f"{pid}.toml")
    with open(path, "rb") as fh:
        return _toml.load(fh)


def load_profile(pid: str) -> Profile:
    """Load profile ``pid`` (cached parse; returns a fresh usage tracker)."""
    return Profile(pid, _load_raw(pid))


def profile_for_chip(chip: Any) -> Optional[str]:
    """Default profile id for a catalog chip (by vendor/device type), or None."""
    dev = str(getattr(chip, "device_type", "")).lower()
    if dev in ("a3",):
        return "ascend-a3"
    if dev.startswith("sm9"):
        return "nvidia-h200"
    return None

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


_MISSING = object()


class Profile:
    """Read-only view of a profile with usage tracking of fitted constants."""

    def __init__(self, pid: str, data: Dict[str, Any]):
        self.id = pid
        self._data = data
        self.used_fitted: Dict[str, Dict[str, Any]] = {}
        self._values: Dict[str, Any] = {}     # memo of get(): step models read constants per step

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
        v = self._values.get(key, _MISSING)
        if v is not _MISSING:
            return v
        try:
            e = self.entry(key)
        except KeyError:
            if default is None:
                raise KeyError(f"profile {self.id}: missing constant {key}")
            return default
        if "fitted" in e:
            self.used_fitted[key] = {"value": e["value"], "fitted": e["fitted"]}
        self._values[key] = e["value"]
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


class ProfileError(ValueError):
    """A profile file that cannot be read or parsed (message says which and why)."""


def profile_path(pid: str) -> str:
    """File of profile ``pid``: a path to a ``.toml`` file, or an id under PROFILE_DIR."""
    if pid.endswith(".toml") or os.sep in pid or "/" in pid:
        return pid
    return os.path.join(PROFILE_DIR, f"{pid}.toml")


#: in-memory profiles by id (``sncc calibrate`` trial profiles); looked up before files
_CUSTOM: Dict[str, Dict[str, Any]] = {}


def available_profiles() -> list:
    """Ids of the shipped profiles (files under PROFILE_DIR), sorted."""
    try:
        return sorted(f[:-5] for f in os.listdir(PROFILE_DIR) if f.endswith(".toml"))
    except OSError:
        return []


@functools.lru_cache(maxsize=None)
def _load_raw(pid: str) -> Dict[str, Any]:
    if pid in _CUSTOM:
        return _CUSTOM[pid]
    path = profile_path(pid)
    try:
        with open(path, "rb") as fh:
            return _toml.load(fh)
    except FileNotFoundError:
        if path != pid:     # an id, not a path: say which ids exist
            raise ProfileError(f"unknown profile `{pid}`; available: {', '.join(available_profiles())} "
                               "(or a .toml file from `sncc calibrate`)") from None
        raise ProfileError(f"cannot read profile {path}: no such file") from None
    except OSError as e:
        raise ProfileError(f"cannot read profile {path}: {e.strerror or e}") from None
    except _toml.TOMLDecodeError as e:
        raise ProfileError(f"profile {path} is not valid TOML: {e}") from None


def load_profile(pid: str) -> Profile:
    """Load profile ``pid`` (an id or a ``.toml`` path; cached parse, fresh usage tracker).

    Raises :class:`ProfileError` when the file cannot be read or parsed."""
    raw = _load_raw(pid)
    return Profile(str(raw.get("id", pid)) if profile_path(pid) == pid else pid, raw)


def profile_for_chip(chip: Any) -> Optional[str]:
    """Default profile id for a catalog chip (by vendor/device type), or None."""
    dev = str(getattr(chip, "device_type", "")).lower()
    if dev in ("a3",):
        return "ascend-a3"
    if dev.startswith("sm9"):
        return "nvidia-h200"
    return None

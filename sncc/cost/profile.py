"""Load calibration profiles (``sncc/catalog/data/profiles/<id>.toml``).

Every constant in a profile is a table ``{value = ..., source = "..."}`` or
``{value = ..., fitted = "fitted to ... (figures)"}``.  :class:`Profile` reads
them by dotted key and remembers which fitted constants a simulation used, so
:class:`sncc.sim.engine.metrics.SimResult` can list them.

:data:`CONSTANTS` lists every constant the simulator reads with its kind (efficiency,
seconds, bytes, ...); :func:`validate` checks a profile against it when it is loaded, so a
malformed ``--profile`` file is a :class:`ProfileError` naming the file, the key and the
problem instead of a KeyError or ZeroDivisionError deep inside a run.
"""
from __future__ import annotations

import functools
import math
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

PROFILE_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "catalog", "data", "profiles")


_MISSING = object()


class Profile:
    """Read-only view of a profile with usage tracking of fitted constants."""

    def __init__(self, pid: str, data: Dict[str, Any]):
        self.id = pid
        self._data = data
        self.used_fitted: Dict[str, Dict[str, Any]] = {}
        self._values: Dict[str, Any] = {}     # memo of get(): step models read constants per step

    def get_raw(self, key: str, default: Any = None) -> Any:
        """A top-level non-constant field of the profile file (``id``, ``derived_from``)."""
        return self._data.get(key, default)

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
    """A profile file that cannot be read, parsed or validated (message says which and why)."""


#: kind of a profile constant -> what its ``value`` must be (the text goes into the error)
KINDS: Dict[str, str] = {
    "efficiency": "a number in (0, 1] (an efficiency)",
    "fraction": "a number in [0, 1]",
    "fraction_lt1": "a number in [0, 1)",
    "seconds": "a time in seconds >= 0",
    "bytes": "a size in bytes >= 0",
    "tokens": "a number of tokens >= 0",
    "nonnegative": "a number >= 0",
    "ratio_ge1": "a number >= 1 (max/mean load)",
    "bool": "true or false",
    "graph_gears": '"max-only" or "pow2"',
    "ep_table": ("a table {ep = [...], dispatch_GBps = [...], combine_GBps = [...]} of equal-length lists, "
                 "ep ascending integers >= 1, bandwidths > 0, optional spans_nodes = true|false"),
    "model_quant": "a table {model = \"...\", quant = \"...\"}",
    "text": "a string",
    "text_list": "a list of strings",
    "loo_records": ("a list of leave-one-out records {id, group, metric, family, residual > -1, features} "
                    "(bench/calibration.py --write)"),
    "residuals": ("a table of residual families (ttft, tpot, throughput, ...) -> lists of numbers "
                  "predicted/measured - 1, each > -1 for ttft, tpot and throughput"),
}

#: Every constant the simulator reads (sncc.cost.step, cost_comm, memory, runner), with its
#: kind (:data:`KINDS`); the one list :func:`validate` checks a profile against.  The keys are
#: those of the shipped ``ascend-a3.toml``/``nvidia-h200.toml``; tests/test_calibrate_fixes.py
#: runs plans with a tracking profile and fails when the simulator reads a key missing here.
CONSTANTS: Dict[str, str] = {
    "compute.eta_m": "efficiency",
    "compute.eta_c_gemm_dense": "efficiency",
    "compute.eta_c_gemm_grouped": "efficiency",
    "compute.eta_c_attn_prefill": "efficiency",
    "compute.eta_c_attn_decode": "efficiency",
    "compute.eta_c_indexer": "efficiency",
    "compute.op_t0_s": "seconds",
    "compute.eta_vector": "efficiency",
    "compute.dequant_s_per_weight_element": "seconds",
    "overlap.microbatch_hide_fraction": "fraction",
    "overhead.decode_graph_step_s": "seconds",
    "overhead.eager_launch_per_layer_s": "seconds",
    "overhead.superkernel_launch_factor": "nonnegative",
    "overhead.prefill_step_s": "seconds",
    "moe.imbalance": "ratio_ge1",
    "moe.redundancy_exponent": "nonnegative",
    "comm.allreduce_alpha_s": "seconds",
    "comm.allreduce_link_efficiency": "efficiency",
    "comm.ep_alpha_normal_s": "seconds",
    "comm.ep_alpha_low_latency_s": "seconds",
    "kv_transfer.link_efficiency": "efficiency",
    "kv_transfer.setup_s": "seconds",
    "kv_transfer.per_descriptor_s": "seconds",
    "kv_transfer.layerwise": "bool",
    "mtp.draft_layer_cost_factor": "nonnegative",
    "mtp.draft_forward_s": "seconds",
    "workload.lognormal_cv_input": "nonnegative",
    "workload.lognormal_cv_output": "nonnegative",
    "workload.acceptance_logit_sd": "nonnegative",
    "policy.graph_gears": "graph_gears",
}

#: Constants read only when present (checked when present).  Each EP mode needs its measured
#: table ``comm.ep_<mode>`` or else ``comm.ep_link_efficiency`` (sncc.cost.comm.ep_bandwidths);
#: ``calibration.other_generation_residual`` is needed with ``calibration.generations``
#: (sncc.cost.inputs.profile_match); ``moe.eplb_step_ratio`` makes ``moe.imbalance`` derived.
OPTIONAL: Dict[str, str] = {
    # a whole-step perfect-EPLB ratio that moe.imbalance is derived from when fitting
    # (sncc.sim.calibration.refit.derived_values)
    "moe.eplb_step_ratio": "ratio_ge1",
    "comm.ep_normal": "ep_table",
    "comm.ep_low_latency": "ep_table",
    "comm.ep_link_efficiency": "efficiency",
    "calibration.residuals": "residuals",
    "calibration.chips": "text_list",
    "calibration.generations": "text_list",
    "calibration.fitted_on": "text",
    "calibration.other_generation_residual": "fraction_lt1",
    "calibration.serving_uncertainty": "fraction_lt1",
    "calibration.derived_residual": "fraction_lt1",
    "calibration.loo": "loo_records",
    "calibration.typical_distance": "nonnegative",
}

#: residual families that bound SLO intervals (sncc.sim.engine.metrics.interval needs r > -1)
SLO_FAMILIES = ("ttft", "tpot", "throughput")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _value_problem(kind: str, v: Any) -> Optional[str]:
    """None when ``v`` is a valid value of ``kind``, else what is wrong (without the key)."""
    num_range = {"efficiency": lambda x: 0 < x <= 1, "fraction": lambda x: 0 <= x <= 1,
                 "fraction_lt1": lambda x: 0 <= x < 1, "seconds": lambda x: x >= 0, "bytes": lambda x: x >= 0,
                 "tokens": lambda x: x >= 0, "nonnegative": lambda x: x >= 0, "ratio_ge1": lambda x: x >= 1}
    if kind in num_range:
        return None if _is_number(v) and num_range[kind](v) else f"must be {KINDS[kind]}, got {v!r}"
    if kind == "bool":
        return None if isinstance(v, bool) else f"must be {KINDS[kind]}, got {v!r}"
    if kind == "graph_gears":
        return None if v in ("max-only", "pow2") else f"must be {KINDS[kind]}, got {v!r}"
    if kind == "text":
        return None if isinstance(v, str) else f"must be {KINDS[kind]}, got {v!r}"
    if kind == "text_list":
        ok = isinstance(v, list) and all(isinstance(x, str) for x in v)
        return None if ok else f"must be {KINDS[kind]}, got {v!r}"
    if kind == "model_quant":
        ok = isinstance(v, dict) and all(isinstance(v.get(k), str) for k in ("model", "quant"))
        return None if ok else f"must be {KINDS[kind]}, got {v!r}"
    if kind == "ep_table":
        cols = ("ep", "dispatch_GBps", "combine_GBps")
        if not (isinstance(v, dict) and all(isinstance(v.get(c), list) for c in cols)):
            return f"must be {KINDS[kind]}"
        ep, d, c = (v[x] for x in cols)
        ok = (len(ep) >= 1 and len(ep) == len(d) == len(c)
              and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in ep)
              and all(a < b for a, b in zip(ep, ep[1:]))
              and all(_is_number(x) and x > 0 for x in d + c)
              and isinstance(v.get("spans_nodes", False), bool))
        return None if ok else f"must be {KINDS[kind]}, got {v!r}"
    if kind == "loo_records":
        ok = isinstance(v, list) and all(
            isinstance(r, dict) and isinstance(r.get("family"), str) and _is_number(r.get("residual"))
            and r["residual"] > -1 and isinstance(r.get("features"), dict) for r in v)
        return None if ok else f"must be {KINDS[kind]}"
    if kind == "residuals":
        if not isinstance(v, dict):
            return f"must be {KINDS[kind]}, got {v!r}"
        for fam, rs in v.items():
            if not (isinstance(rs, list) and all(_is_number(x) for x in rs)):
                return f"family {fam!r} must be a list of numbers, got {rs!r}"
            if fam in SLO_FAMILIES and any(x <= -1 for x in rs):
                return (f"family {fam!r} has a residual <= -1 ({min(rs)}): predicted/measured - 1 <= -100 % "
                        "cannot bound a prediction")
        return None
    raise ValueError(f"unknown constant kind {kind!r}")      # a bug in CONSTANTS, not in the file


def _lookup(data: Dict[str, Any], key: str) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """(constant table, None) of dotted ``key``, (None, None) when absent, (None, problem)."""
    node: Any = data
    parts = key.split(".")
    for i, part in enumerate(parts):
        if not isinstance(node, dict):
            return None, f"[{'.'.join(parts[:i])}] is not a table"
        if part not in node:
            return None, None
        node = node[part]
    if not isinstance(node, dict) or "value" not in node:
        return None, f"must be a table {{ value = ..., source = \"...\" }}, got {node!r}"
    return node, None


def profile_problems(data: Dict[str, Any]) -> List[str]:
    """Problems of a parsed profile against :data:`CONSTANTS` / :data:`OPTIONAL`, as
    ``"<key>: <problem>"`` strings in table order; ``[]`` when it is valid.

    A required constant must be present, a table with ``value`` and a ``source`` or ``fitted``
    string (where the number comes from), and its value of its kind (:data:`KINDS`: an
    efficiency in (0, 1], times/bytes/tokens >= 0, ...).  Optional ones are checked when
    present; each EP mode needs ``comm.ep_<mode>`` or ``comm.ep_link_efficiency``, and
    ``calibration.generations`` needs ``calibration.other_generation_residual``."""
    out: List[str] = []
    for key, kind in list(CONSTANTS.items()) + list(OPTIONAL.items()):
        e, problem = _lookup(data, key)
        if problem:
            out.append(f"{key}: {problem}")
            continue
        if e is None:
            if key in CONSTANTS:
                out.append(f"{key}: missing (the simulator reads it; expected "
                           f"{{ value = <{KINDS[kind]}>, source = \"...\" }})")
            continue
        if key in CONSTANTS and not (isinstance(e.get("source"), str) or isinstance(e.get("fitted"), str)):
            out.append(f"{key}: has no `source` or `fitted` string saying where its value comes from")
            continue
        bad = _value_problem(kind, e["value"])
        if bad:
            out.append(f"{key}: {bad}")
    for mode in ("normal", "low_latency"):
        tab = _lookup(data, f"comm.ep_{mode}")[0]
        only_across = isinstance(tab, dict) and isinstance(tab.get("value"), dict) and tab["value"].get("spans_nodes") is True
        if (tab is None or only_across) and _lookup(data, "comm.ep_link_efficiency")[0] is None:
            what = "is read only across nodes (spans_nodes)" if only_across else "missing"
            out.append(f"comm.ep_{mode}: {what}, and no comm.ep_link_efficiency to fall back on "
                       "(sncc.cost.comm.ep_bandwidths needs one of them)")
    if (_lookup(data, "calibration.generations")[0] is not None
            and _lookup(data, "calibration.other_generation_residual")[0] is None):
        out.append("calibration.other_generation_residual: missing (needed with calibration.generations, "
                   f"value {KINDS['fraction_lt1']})")
    return out


def validate(data: Dict[str, Any], where: str) -> None:
    """Raise :class:`ProfileError` ``"profile <where>: <key>: <problem>"`` (first problem, and
    how many more) when :func:`profile_problems` finds any."""
    probs = profile_problems(data)
    if probs:
        more = f" (and {len(probs) - 1} more problem{'s' if len(probs) > 2 else ''})" if len(probs) > 1 else ""
        raise ProfileError(f"profile {where}: {probs[0]}{more}")


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
    """Parsed and validated profile ``pid`` (cached); ProfileError when it cannot be read,
    parsed or fails :func:`validate`."""
    if pid in _CUSTOM:
        validate(_CUSTOM[pid], pid)
        return _CUSTOM[pid]
    path = profile_path(pid)
    data = _derive(_read(pid, path), path)
    validate(data, path)
    return data


def _derive(data: Dict[str, Any], path: str, seen: Tuple[str, ...] = ()) -> Dict[str, Any]:
    """``data`` over the profile it names in ``derived_from`` (an id under PROFILE_DIR): every
    constant table the file writes replaces the base's, the rest is the base's.  A profile
    derived from another (A2 and 950 from A3) carries the base's fitted efficiencies and its own
    chips, generations and widened intervals; the chip facts (peaks, bandwidth, links) come
    from the catalog as always.  Raises :class:`ProfileError` for an unknown base or a cycle."""
    base_id = data.get("derived_from")
    if not base_id:
        return data
    if not isinstance(base_id, str) or base_id in seen:
        raise ProfileError(f"profile {path}: derived_from {base_id!r} is not a profile id (or makes a cycle)")
    base_path = profile_path(base_id)
    base = _derive(_read(base_id, base_path), base_path, seen + (base_id,))

    def merge(b: Dict[str, Any], o: Dict[str, Any]) -> Dict[str, Any]:
        out = dict(b)
        for k, v in o.items():
            if isinstance(v, dict) and "value" not in v and isinstance(out.get(k), dict):
                out[k] = merge(out[k], v)
            else:
                out[k] = v
        return out

    merged = merge(base, {k: v for k, v in data.items() if k != "derived_from"})
    merged["derived_from"] = base_id
    return merged


def _read(pid: str, path: str) -> Dict[str, Any]:
    """The parsed profile file at ``path``, memoised in sncc's disk cache under a hash of its
    text (:func:`sncc.cache.cached`: a warm ``sncc check`` that costs a step, SN5006/SN7002, does
    not parse TOML).  Raises :class:`ProfileError` when it cannot be read or parsed."""
    from sncc.cache import cached, key_of

    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
        return cached("toml-profile", key_of(os.path.abspath(path), text), lambda: _toml().loads(text))
    except FileNotFoundError:
        if path != pid:     # an id, not a path: say which ids exist
            raise ProfileError(f"unknown profile `{pid}`; available: {', '.join(available_profiles())} "
                               "(or a .toml file from `sncc calibrate`)") from None
        raise ProfileError(f"cannot read profile {path}: no such file") from None
    except OSError as e:
        raise ProfileError(f"cannot read profile {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ProfileError(f"profile {path} is not valid TOML: {e}") from None
    except Exception as e:
        if isinstance(e, _toml().TOMLDecodeError):
            raise ProfileError(f"profile {path} is not valid TOML: {e}") from None
        raise


def _toml():
    """The TOML parser module, imported on first use (a warm cache never needs it)."""
    if sys.version_info >= (3, 11):
        import tomllib
        return tomllib
    import tomli  # pragma: no cover - Python 3.10
    return tomli  # pragma: no cover


def load_profile(pid: str) -> Profile:
    """Load profile ``pid`` (an id or a ``.toml`` path; cached parse, fresh usage tracker).

    Raises :class:`ProfileError` when the file cannot be read or parsed, or when a constant
    the simulator reads is missing or out of range (:func:`validate`, :data:`CONSTANTS`)."""
    raw = _load_raw(pid)
    return Profile(str(raw.get("id", pid)) if profile_path(pid) == pid else pid, raw)




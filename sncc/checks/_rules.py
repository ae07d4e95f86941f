"""Shared helpers of the rule-kind checks: the ``engine_rules.toml`` tables and the versions a
row is compared with.

``engine_rules.toml`` (``sncc/catalog/data``) holds the engine facts of issue 10's rule kinds, one
table per kind, each row with its source; :func:`rows` reads one table.  A row's versions are
compared against :func:`plan_versions`: the engine's own release (``"engine"``) and the vLLM
version it runs (``"vllm"``: the plan's version for engine ``vllm``, the vLLM a vllm-ascend
release row pins, an Omni-Infer revision's vLLM base).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping, Optional

from sncc import catalog
from sncc.cache import package_toml


@lru_cache(maxsize=1)
def _tables() -> Mapping[str, Any]:
    return package_toml("sncc.catalog", "data/engine_rules.toml")


def rows(table: str) -> list[Mapping[str, Any]]:
    """The rows of ``[[table]]`` in engine_rules.toml (a single ``[table]`` comes back as one row;
    an absent table as none)."""
    t = _tables().get(table, [])
    return [t] if isinstance(t, dict) else list(t)


def table(name: str) -> Mapping[str, Any]:
    """The single ``[name]`` table of engine_rules.toml (empty when absent)."""
    t = _tables().get(name, {})
    return t if isinstance(t, dict) else {}


def engine_release(plan, r=None) -> str | None:
    """The engine release the checks judge: :attr:`sncc.facts.Facts.engine_version` (the release the
    plan names, else the default pin the build uses); ``plan.engine.version`` without facts."""
    v = getattr(r, "engine_version", None) if r is not None else None
    return v or plan.engine.version


def release_label(plan, r=None) -> str | None:
    """``"<kind> <release>"`` of the release the checks judge (:func:`engine_release`), with
    ``" (sncc's default pin)"`` when the plan names none (:meth:`sncc.facts.Facts.engine_release_label`);
    None when there is no release."""
    version = engine_release(plan, r)
    if not version:
        return None
    if getattr(r, "engine_version", None):
        return r.engine_release_label(plan.engine.kind)
    return f"{plan.engine.kind} {version}"


def vllm_label(plan, r, vllm: str) -> str:
    """``"vLLM <vllm>"`` for a message about the vLLM the judged release runs; when that release is
    sncc's default pin it says so: ``"vLLM 0.23.0 (sncc's default pin)"`` when the release is that vLLM
    itself, ``"vLLM 0.11.0 (of vllm-ascend v0.11.0, sncc's default pin)"`` when it runs it."""
    shown = f"vLLM {vllm}"
    if r is None or not getattr(r, "engine_version_default", False):
        return shown
    if r.engine_version == vllm:
        return shown + " (sncc's default pin)"
    return shown + f" (of {plan.engine.kind} {r.engine_version}, sncc's default pin)"


def release_related(plan, r=None) -> list:
    """The judged release as a related location (``[]`` without a release or a span): at the
    ``version`` value, else at the ``engine "<kind>"`` label (:attr:`sncc.facts.Facts.engine_version_span`)."""
    from sncc.diagnostics.model import Related

    label = release_label(plan, r)
    span = getattr(r, "engine_version_span", None) or plan.engine.span_of("version")
    return [Related(span, label)] if label and span is not None else []


def default_pin_help(plan, r, what: str) -> str | None:
    """``"write `version = ...` to choose a release that supports <what>"`` when the release judged is
    sncc's default pin (the plan names none), else None."""
    if r is None or not getattr(r, "engine_version_default", False):
        return None
    return f"write `version = \"...\"` in `engine \"{plan.engine.kind}\"` to choose a release that supports {what}"


def _release_row(plan, r=None):
    """(basis, row) of the plan's engine release per ``[release_basis]``: ``("self", None)`` for a
    vLLM version, ``("vllm_ascend", EngineRelease)``, ``("omni_infer", OmniInferRevision)``, or
    (basis, None) when the release is not catalogued."""
    eng = plan.engine
    version = engine_release(plan, r)
    basis = table("release_basis").get(eng.kind)
    if basis == "vllm_ascend":
        try:
            return basis, catalog.vllm_ascend_release(version)
        except (KeyError, ValueError):
            return basis, None
    if basis == "omni_infer":
        return basis, catalog.omni_infer_revision(version)
    return basis, None


def plan_versions(plan, r=None) -> dict[str, str]:
    """``{"engine": release, "vllm": vLLM version}`` of the plan's engine release (:func:`engine_release`:
    the default pin when the plan names none), each only when known (an engine without adapter or an
    unknown release gives neither); ``[release_basis]`` says where an engine's vLLM version is found."""
    out: dict[str, str] = {}
    version = engine_release(plan, r)
    if not version:
        return out
    out["engine"] = version
    basis, row = _release_row(plan, r)
    if basis == "self":
        out["vllm"] = version
    elif row is not None:
        out["vllm"] = getattr(row, "vllm", None) or getattr(row, "vllm_base")
    return out


def release_cann(plan, r=None) -> str | None:
    """The CANN release the plan's engine release (:func:`engine_release`) is built for (None for an
    engine without one or an uncatalogued release)."""
    if not engine_release(plan, r):
        return None
    _, row = _release_row(plan, r)
    return getattr(row, "cann", None) if row is not None else None


def cmp_version(a: str, b: str) -> Optional[int]:
    """-1, 0 or 1 as release ``a`` sorts before, equal to or after ``b`` (``v`` prefixes ignored);
    None when either does not parse."""
    try:
        ka, kb = catalog.parse_version(a.lstrip("vV")), catalog.parse_version(b.lstrip("vV"))
    except ValueError:
        return None
    return (ka > kb) - (ka < kb)


def in_range(version: str, lo: Optional[str], hi: Optional[str]) -> bool:
    """True when ``lo <= version <= hi`` (either bound may be None; unparsable versions are out)."""
    if lo is not None:
        c = cmp_version(version, lo)
        if c is None or c < 0:
            return False
    if hi is not None:
        c = cmp_version(version, hi)
        if c is None or c > 0:
            return False
    return True


def sources(row: Mapping[str, Any]) -> str:
    """A row's sources joined for a diagnostic note."""
    return "; ".join(row.get("source", ()))

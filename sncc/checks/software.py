"""Software-version checks (SN4005–SN4007): the CANN release supports the chip
and is the one paired with the engine release; the engine release supports
the chip.  Hints never contradict each other: when no CANN satisfies both chip and
engine, they name the engine releases that work with the chip (:func:`working_releases`).
Facts: ``sncc/catalog/data/software.toml`` (domain-facts §2)."""

from __future__ import annotations

from sncc import catalog
from sncc.diagnostics import codes
from sncc.diagnostics.model import Edit, Fix, Related, diag
from sncc.source import Span


def _chip_span(plan):
    hw = plan.hardware
    return hw.span_of("chip") if hw.chip else hw.span_of("system")


#: engine releases named in a hint (newest first)
_HINT_RELEASES = 3


def _cann_status(chip, cann: str) -> str | None:
    """:func:`sncc.catalog.support_status` of CANN ``cann`` for ``chip``, or None without data."""
    try:
        return catalog.support_status("cann", chip.device_type, cann, product=chip.id)
    except (KeyError, ValueError):
        return None


def working_releases(chip) -> list:
    """vllm-ascend releases (newest first) that support ``chip`` and are built for a CANN
    release that supports it too: the pairs a plan on this chip can use."""
    out = []
    for row in catalog.vllm_ascend_releases():
        try:
            engine_ok = catalog.support_status("vllm-ascend", chip.device_type, row.version) == "supported"
        except KeyError:
            return []
        if engine_ok and _cann_status(chip, row.cann) == "supported":
            out.append(row)
    return out


def _releases_hint(chip) -> str:
    """'use vllm-ascend X with CANN Y (or ...)': the releases that work with ``chip``."""
    rows = working_releases(chip)
    if not rows:
        return f"no vllm-ascend release in sncc's catalog works with {chip.name}"
    pairs = ", ".join(f"vllm-ascend {x.version} with CANN {x.cann}" for x in rows[:_HINT_RELEASES])
    return f"releases that work with {chip.name}: {pairs}" + (" (newest first)" if len(rows) > 1 else "")


def _vllm_ascend_version(plan, r=None) -> str | None:
    """The vllm-ascend release the plan is checked for (:func:`sncc.checks._rules.engine_release`:
    written, else sncc's default pin), or None (an engine whose adapter has no release matrix)."""
    from sncc.checks._rules import engine_release
    from sncc.engines.registry import plan_adapter

    adapter = plan_adapter(plan)
    if adapter is None or not adapter.data.get("release_matrix"):
        return None
    return engine_release(plan, r)


def release_unknown(plan, r=None) -> bool:
    """True when the engine has a release matrix (vllm-ascend) and the release judged is not in it:
    :func:`check_engine_release` reports it (SN2008 "unknown vllm-ascend release")."""
    version = _vllm_ascend_version(plan, r)
    if version is None:
        return False
    try:
        catalog.vllm_ascend_release(version)
    except KeyError:
        return True
    return False


def _engine_row(plan, r=None):
    """The vllm-ascend release row the plan is checked for, or None (other engines, unknown release)."""
    version = _vllm_ascend_version(plan, r)
    try:
        return catalog.vllm_ascend_release(version) if version is not None else None
    except KeyError:
        return None


def check_cann_supports_chip(plan, r):
    """The CANN release lists the chip (SN4005); ``cann`` on a chip that runs no CANN (SN4015).

    The hint is the CANN the engine release is built for when that one supports the chip;
    when none does (no CANN satisfies both chip and engine) it names the engine releases that
    work with the chip, so that following it never leads to SN4006 and back.  A release before
    the first one a source lists for the chip (``unknown_before``) is a warning: sncc does not
    know it fails."""
    hw = plan.hardware
    if hw.cann is None or r.chip is None:
        return
    if r.chip.vendor != "huawei":
        yield _cann_not_applied(plan, r.chip)
        return
    known = catalog.known_cann_releases()
    if _engine_row(plan, r) is None and not any(catalog.parse_version(k) == catalog.parse_version(hw.cann)
                                                for k in known):
        # no engine pairing judges it (SN4006 does on vllm-ascend): say sncc cannot check it
        yield diag(codes.UNKNOWN_CATALOG_ENTRY,
                   f"CANN {hw.cann} is not a release any source sncc holds names, so sncc cannot check it "
                   f"against {r.chip.name} or {plan.engine.kind}",
                   hw.span_of("cann"), severity="warning",
                   help="known CANN releases: " + ", ".join(f"`{k}`" for k in known[:6]),
                   path=("hardware", "cann"))
        return
    status = _cann_status(r.chip, hw.cann)
    if status in (None, "supported", "warn"):
        return
    first = catalog.first_supported_release("cann", r.chip.device_type, product=r.chip.id)
    related = [Related(_chip_span(plan), "chip chosen here")]
    row = _engine_row(plan, r)
    if status == "unknown":
        yield diag(codes.CANN_UNSUPPORTED_CHIP,
                   f"no source sncc has lists {r.chip.name} (`{r.chip.id}`) in CANN {hw.cann}; "
                   f"the first release that does is CANN {first}",
                   hw.span_of("cann"), related=related, severity="warning",
                   help=f"use CANN {row.cann}, the release vllm-ascend {row.version} is built for" if row is not None
                   and _cann_status(r.chip, row.cann) == "supported" else f"use CANN {first} or later if the chip fails to start",
                   path=("hardware", "cann"))
        return
    msg = f"CANN {hw.cann} does not support {r.chip.name} (`{r.chip.id}`)"
    if row is not None and _cann_status(r.chip, row.cann) == "supported":
        help_ = f"use CANN {row.cann}, the release vllm-ascend {row.version} is built for"
    elif row is not None:
        if catalog.parse_version(row.cann) == catalog.parse_version(hw.cann):
            msg = f"CANN {hw.cann}, which vllm-ascend {row.version} is built for, does not support {r.chip.name} (`{r.chip.id}`)"
        else:
            msg += f", nor does CANN {row.cann}, which vllm-ascend {row.version} is built for"
        help_ = _releases_hint(r.chip)
    else:
        help_ = f"use CANN {first} or later" if first else "no CANN release supports this chip"
    yield diag(codes.CANN_UNSUPPORTED_CHIP, msg, hw.span_of("cann"), related=related, help=help_,
               path=("hardware", "cann"))


def _cann_not_applied(plan, chip):
    """SN4015 for ``cann`` on a chip of another vendor (CANN is Huawei Ascend's software stack)."""
    hw = plan.hardware
    value, key = hw.span_of("cann"), hw.key_span("cann")
    fixes = []
    if key is not None and value is not None and key.file == value.file:
        whole = Span(value.file, key.start, value.end)
        fixes = [Fix("remove `cann`", (Edit(whole, ""),), "safe")]
    return diag(codes.OPTION_NOT_APPLIED,
                f"`cann` applies to Huawei Ascend chips; {chip.name} (`{chip.id}`) is {chip.vendor.upper() if chip.vendor == 'nvidia' else chip.vendor}",
                value, related=[Related(_chip_span(plan), "chip chosen here")],
                help="remove `cann`: CANN is the Ascend software stack, this chip does not run it",
                fixes=fixes, path=("hardware", "cann"))


def check_engine_vendor(plan, r):
    """The engine runs on the chip's vendor (SN4007): vllm-ascend and Omni-Infer are Ascend-only,
    upstream vLLM runs Ascend only through the vllm-ascend plugin (engine ``vllm-ascend``).

    Facts: ``engines.toml [engine_hardware.<engine>]`` (``vendors``, with sources)."""
    from sncc.catalog.engine_defaults import engine_defaults

    eng = plan.engine
    row = engine_defaults().get("engine_hardware", {}).get(eng.kind)
    if row is None or r.chip is None or r.chip.vendor in row["vendors"]:
        return
    vendors = ", ".join(row["vendors"])
    fits = [k for k, x in engine_defaults().get("engine_hardware", {}).items() if r.chip.vendor in x.get("vendors", ())]
    yield diag(codes.ENGINE_UNSUPPORTED_CHIP,
               f"engine `{eng.kind}` does not run on {r.chip.name} (`{r.chip.id}`, vendor {r.chip.vendor}); "
               f"it supports {vendors} chips only",
               eng.span_of("kind"), related=[Related(_chip_span(plan), "chip chosen here")],
               help=(f"use engine {' or '.join(f'`{k}`' for k in fits)} on this chip, or hardware of a supported vendor"
                     if fits else "use hardware of a supported vendor"),
               notes=[f"source: {', '.join(row['source'])}"], path=("engine", "kind"))


def check_engine_release(plan, r):
    """vllm-ascend: the release is known, supports the chip, and pairs with the CANN given (SN4006, SN4007).

    The release is :attr:`sncc.facts.Facts.engine_version`: an unversioned engine is judged as its
    default pin, the release the build writes files for, and the diagnostic says so."""
    from sncc.checks._rules import default_pin_help

    eng, hw = plan.engine, plan.hardware
    version = _vllm_ascend_version(plan, r)
    if version is None:
        return
    vspan = getattr(r, "engine_version_span", None) or eng.span_of("version")
    try:
        row = catalog.vllm_ascend_release(version)
    except KeyError:
        known = [x.version for x in catalog.vllm_ascend_releases()[:6]]
        yield diag(codes.UNKNOWN_CATALOG_ENTRY, f"unknown vllm-ascend release `{version}`", vspan,
                   help="known releases include " + ", ".join(f"`{k}`" for k in known))
        return
    label = r.engine_release_label("vllm-ascend") if getattr(r, "engine_version", None) else f"vllm-ascend {row.version}"
    is_default = bool(getattr(r, "engine_version_default", False))
    if r.chip is not None and r.chip.vendor == "huawei":
        try:
            status = catalog.support_status("vllm-ascend", r.chip.device_type, row.version)
            first = catalog.first_supported_release("vllm-ascend", r.chip.device_type)
        except KeyError:
            status, first = "supported", None
        if status != "supported":
            pin_help = default_pin_help(plan, r, r.chip.name)
            hint = _releases_hint(r.chip) if first else "no vllm-ascend release supports this chip"
            yield diag(codes.ENGINE_UNSUPPORTED_CHIP,
                       f"{label} does not support {r.chip.name}" + (" (accepted with caveats)" if status == "warn" else ""),
                       vspan, related=[Related(_chip_span(plan), "chip chosen here")],
                       help=f"{pin_help}; {hint}" if pin_help and first else hint,
                       severity="warning" if status == "warn" else None, path=("engine", "version"))
    if hw.cann is None or catalog.parse_version(hw.cann) == catalog.parse_version(row.cann):
        return
    ascend = r.chip is not None and r.chip.vendor == "huawei"
    if ascend and _cann_status(r.chip, hw.cann) == "unsupported":
        return  # SN4005 on the same value already says which CANN (or release) to use
    if ascend and _cann_status(r.chip, row.cann) == "unsupported":
        pin_help = default_pin_help(plan, r, f"{r.chip.name} with CANN {hw.cann}")
        yield diag(codes.CANN_ENGINE_MISMATCH,
                   f"{label} is built for CANN {row.cann}, which does not support {r.chip.name}",
                   vspan, related=[Related(hw.span_of("cann"), f"CANN {hw.cann} given here"),
                                   Related(_chip_span(plan), "chip chosen here")],
                   help=f"{pin_help}; {_releases_hint(r.chip)}" if pin_help else _releases_hint(r.chip), path=("engine", "version"))
        return
    pin_help = default_pin_help(plan, r, f"CANN {hw.cann}")
    yield diag(codes.CANN_ENGINE_MISMATCH,
               f"{label} is built for CANN {row.cann}, not {hw.cann}",
               hw.span_of("cann"), related=[Related(vspan, "sncc's default pin: no `version` written" if is_default
                                                    else "engine release chosen here")],
               help=f"use CANN {row.cann} (with torch {row.torch}, torch_npu {row.torch_npu}, vLLM {row.vllm})"
               + (f", or {pin_help}" if pin_help else ""),
               fixes=[Fix(f"use CANN {row.cann}", (Edit(hw.span_of("cann"), f'"{row.cann}"'),), "unsafe")],
               path=("hardware", "cann"))

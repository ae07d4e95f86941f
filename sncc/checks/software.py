"""Software-version checks (SN4005–SN4007): the CANN release supports the chip
and is the one paired with the engine release; the engine release supports
the chip.  Facts: ``sncc/catalog/data/software.toml`` (domain-facts §2)."""

from __future__ import annotations

from sncc import catalog
from sncc.diagnostics import codes
from sncc.diagnostics.model import Edit, Fix, Related, diag


def _chip_span(plan):
    hw = plan.hardware
    return hw.span_of("chip") if hw.chip else hw.span_of("system")


def check_cann_supports_chip(plan, r):
    """The CANN release lists the chip (SN4005)."""
    hw = plan.hardware
    if hw.cann is None or r.chip is None or r.chip.vendor != "huawei":
        return
    try:
        status = catalog.support_status("cann", r.chip.device_type, hw.cann, product=r.chip.id)
        first = catalog.first_supported_release("cann", r.chip.device_type, product=r.chip.id)
    except KeyError:
        return
    if status == "unsupported":
        yield diag(codes.CANN_UNSUPPORTED_CHIP,
                   f"CANN {hw.cann} does not support {r.chip.name} (`{r.chip.id}`)",
                   hw.span_of("cann"), related=[Related(_chip_span(plan), "chip chosen here")],
                   help=f"use CANN {first} or later" if first else "no CANN release supports this chip",
                   path=("hardware", "cann"))


def check_engine_vendor(plan, r):
    """The engine runs on the chip's vendor (SN4007): vllm-ascend and Omni-Infer are Ascend-only.

    Facts: ``engines.toml [engine_hardware.<engine>]`` (``vendors``, with sources)."""
    from sncc.catalog.engine_defaults import engine_defaults

    eng = plan.engine
    row = engine_defaults().get("engine_hardware", {}).get(eng.kind)
    if row is None or r.chip is None or r.chip.vendor in row["vendors"]:
        return
    vendors = ", ".join(row["vendors"])
    yield diag(codes.ENGINE_UNSUPPORTED_CHIP,
               f"engine `{eng.kind}` does not run on {r.chip.name} (`{r.chip.id}`, vendor {r.chip.vendor}); "
               f"it supports {vendors} chips only",
               eng.span_of("kind"), related=[Related(_chip_span(plan), "chip chosen here")],
               help=("use engine `vllm` on this chip, or hardware of a supported vendor"
                     if r.chip.vendor == "nvidia" else "use hardware of a supported vendor"),
               notes=[f"source: {', '.join(row['source'])}"], path=("engine", "kind"))


def check_engine_release(plan, r):
    """vllm-ascend: the release is known, supports the chip, and pairs with the CANN given (SN4006, SN4007)."""
    from sncc.engines.registry import plan_adapter

    eng, hw = plan.engine, plan.hardware
    adapter = plan_adapter(plan)
    if adapter is None or not adapter.data.get("release_matrix") or eng.version is None:
        return
    try:
        row = catalog.vllm_ascend_release(eng.version)
    except KeyError:
        known = [x.version for x in catalog.vllm_ascend_releases()[:6]]
        yield diag(codes.UNKNOWN_CATALOG_ENTRY, f"unknown vllm-ascend release `{eng.version}`", eng.span_of("version"),
                   help="known releases include " + ", ".join(f"`{k}`" for k in known))
        return
    if r.chip is not None and r.chip.vendor == "huawei":
        try:
            status = catalog.support_status("vllm-ascend", r.chip.device_type, row.version)
            first = catalog.first_supported_release("vllm-ascend", r.chip.device_type)
        except KeyError:
            status, first = "supported", None
        if status != "supported":
            yield diag(codes.ENGINE_UNSUPPORTED_CHIP,
                       f"vllm-ascend {row.version} does not support {r.chip.name}" + (" (accepted with caveats)" if status == "warn" else ""),
                       eng.span_of("version"), related=[Related(_chip_span(plan), "chip chosen here")],
                       help=f"use vllm-ascend {first} or later" if first else "no vllm-ascend release supports this chip",
                       severity="warning" if status == "warn" else None, path=("engine", "version"))
    if hw.cann is not None and catalog.parse_version(hw.cann) != catalog.parse_version(row.cann):
        yield diag(codes.CANN_ENGINE_MISMATCH,
                   f"vllm-ascend {row.version} is built for CANN {row.cann}, not {hw.cann}",
                   hw.span_of("cann"), related=[Related(eng.span_of("version"), "engine release chosen here")],
                   help=f"use CANN {row.cann} (with torch {row.torch}, torch_npu {row.torch_npu}, vLLM {row.vllm})",
                   fixes=[Fix(f"use CANN {row.cann}", (Edit(hw.span_of("cann"), f'"{row.cann}"'),), "unsafe")],
                   path=("hardware", "cann"))

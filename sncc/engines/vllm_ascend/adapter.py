"""vllm-ascend (``engine "vllm-ascend"``): pins and launch facts in ``data/pins.toml``, the
release-specific spelling of plan options in ``data/options.toml`` (:mod:`.options`)."""

from __future__ import annotations

from sncc.engines.base import EngineAdapter


class VllmAscendAdapter(EngineAdapter):
    """vllm-ascend on Ascend NPUs: internal data parallelism for aggregated serving, vllm-ascend's
    external DP pattern (one server per rank) for disaggregated prefill/decode, Mooncake for P/D."""

    kind = "vllm-ascend"
    label = "vllm-ascend"
    package = "sncc.engines.vllm_ascend"
    launch_disaggregated = "external"
    launch_aggregated = "internal"

    def release_options(self, plan, resolved) -> tuple:
        """:func:`sncc.engines.vllm_ascend.options.plan_options`: how the plan's ``scheduler``,
        ``superkernel_layers`` and ``micro_batch`` are spelled in its release (or why not)."""
        from sncc.engines.vllm_ascend.options import plan_options

        return plan_options(plan, resolved)

    def torchair_mode(self, plan) -> bool:
        """:func:`sncc.engines.vllm_ascend.options.torchair_mode`."""
        from sncc.engines.vllm_ascend.options import torchair_mode

        return torchair_mode(plan)

    def release_before(self, plan, version: str) -> bool:
        """True when the plan's release is older than ``version`` (:func:`.options.release_before`)."""
        from sncc.engines.vllm_ascend.options import release_before

        return release_before(plan, version)

    def catalog_releases(self) -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
        """The catalog's vllm-ascend release matrix (software.toml ``[[vllm_ascend]]``), newest first."""
        from sncc import catalog

        rows = sorted(catalog.vllm_ascend_releases(), key=lambda r: r.key, reverse=True)
        return tuple((r.version, f"vLLM {r.vllm}, CANN {r.cann}, torch_npu {r.torch_npu}", r.status, tuple(r.source))
                     for r in rows)

    def _unpinned_vllm(self, version: str) -> str | None:
        """The vLLM of an unpinned release from the release matrix (software.toml [[vllm_ascend]])."""
        row = self.paired_software(version)
        return row[1].lstrip("v") if row and row[1] else None

    def paired_software(self, version):
        """(label, vLLM, torch, torch_npu) of the catalog's release row for ``version``, or None."""
        from sncc import catalog

        if not version:
            return None
        try:
            row = catalog.vllm_ascend_release(version)
        except (KeyError, ValueError):
            return None
        return f"vllm-ascend {row.version}", row.vllm, row.torch, row.torch_npu

    # ------------------------------------------------------------------ lowering hooks (:mod:`.lower`)
    def role_extra_args(self, ctx, rs) -> list:
        """``additional-config`` of the role (:func:`sncc.engines.vllm_ascend.lower.additional_config`)."""
        from sncc.engines.vllm_ascend.lower import additional_config
        from sncc.lowering.deployment import Arg

        ac, notes = additional_config(ctx, rs)
        return [Arg("additional-config", ac, "; ".join(notes))] if ac else []

    def runtime_env(self, ctx) -> list:
        """:func:`sncc.engines.vllm_ascend.lower.runtime_env`."""
        from sncc.engines.vllm_ascend.lower import runtime_env

        return runtime_env(ctx)

    def role_env(self, ctx, rs, instance: int) -> list:
        """:func:`sncc.engines.vllm_ascend.lower.role_env`."""
        from sncc.engines.vllm_ascend.lower import role_env

        return role_env(ctx, rs)

    def kv_connector_extra(self, ctx, conn, rs) -> dict:
        """:func:`sncc.engines.vllm_ascend.lower.kv_connector_extra`."""
        from sncc.engines.vllm_ascend.lower import kv_connector_extra

        return kv_connector_extra(ctx, conn, rs)

    #: modules with ``emit(dep) -> {name: text}`` for this engine's own files
    emitters = ("sncc.engines.vllm_ascend.emit_toml",)

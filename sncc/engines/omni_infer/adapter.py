"""Omni-Infer (``engine "omni-infer"``), pinned to one revision: facts in ``data/pins.toml``."""

from __future__ import annotations

from functools import cached_property

from sncc.engines.base import EngineAdapter


class OmniInferAdapter(EngineAdapter):
    """Omni-Infer on Ascend NPUs: one ``vllm serve`` per DP rank (its ``start_api_servers.py``),
    the model extra config per role, OmniPlacement, the nginx global proxy, LLMDataDist for P/D."""

    kind = "omni-infer"
    label = "Omni-Infer"
    package = "sncc.engines.omni_infer"
    launch_disaggregated = "per-rank-env"
    launch_aggregated = "per-rank-env"

    @cached_property
    def knobs(self) -> dict[str, dict]:
        """Plan option → its spelling at the pinned revision (``[[knobs]]`` rows, keyed by ``option``)."""
        return {d["option"]: dict(d) for d in self.data.get("knobs", ())}

    def paired_software(self, version):
        """(label, vLLM base, None, None) of the catalog's revision row for ``version``, or None."""
        from sncc import catalog

        if not version:
            return None
        row = catalog.omni_infer_revision(version)
        return (f"Omni-Infer {row.revision}", row.vllm_base, None, None) if row is not None else None

    def catalog_releases(self) -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
        """The catalog's Omni-Infer revisions (software.toml), in catalog order."""
        from sncc import catalog

        return tuple((r.revision, f"vLLM base {r.vllm_base}, CANN {r.cann}", r.status, tuple(r.source))
                     for r in catalog.omni_infer_revisions())

    # ------------------------------------------------------------------ lowering hooks (:mod:`.lower`)
    def role_extra_args(self, ctx, rs) -> list:
        from sncc.engines.omni_infer.lower import extra_args

        return extra_args(ctx, rs)

    def role_files(self, ctx, rs) -> dict:
        from sncc.engines.omni_infer.lower import role_files

        return role_files(ctx, rs)

    def runtime_env(self, ctx) -> list:
        from sncc.engines.omni_infer.lower import runtime_env

        return runtime_env(ctx)

    def role_env(self, ctx, rs, instance: int) -> list:
        from sncc.engines.omni_infer.lower import role_env

        return role_env(ctx, rs, instance)

    def rank_env(self, ctx, rs, dp_rank: int, master, rpc: int) -> list:
        from sncc.engines.omni_infer.lower import rank_env

        return rank_env(ctx, rs, dp_rank, master, rpc)

    def required_vars(self, ctx, rs) -> list:
        from sncc.engines.omni_infer.lower import required

        return required(ctx)

    def extra_files(self, ctx, dep) -> dict:
        from sncc.engines.omni_infer.lower import inventory

        return {"inventory.yml": inventory(ctx, dep)}

    def proxy_policy(self, plan) -> tuple[str, str]:
        from sncc.engines.omni_infer.lower import proxy_policy

        return proxy_policy(plan)

    #: modules with ``emit(dep) -> {name: text}`` for this engine's own files
    emitters = ("sncc.engines.omni_infer.emit_files",)

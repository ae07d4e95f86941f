"""vLLM on NVIDIA GPUs (``engine "vllm"``): pins and launch facts in ``data/pins.toml``."""

from __future__ import annotations

from sncc.engines.base import EngineAdapter


class VllmAdapter(EngineAdapter):
    """Upstream vLLM: internal data parallelism for every role (one server process per node of
    an instance, ``--headless`` on the followers), NIXL for P/D KV transfer."""

    kind = "vllm"
    label = "vLLM"
    package = "sncc.engines.vllm"
    launch_disaggregated = "internal"
    launch_aggregated = "internal"

    def _unpinned_vllm(self, version: str) -> str | None:
        """An unpinned vLLM release runs itself."""
        from sncc import catalog

        try:
            catalog.parse_version(version)
        except ValueError:
            return None
        return version.lstrip("v")

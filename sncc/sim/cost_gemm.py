"""Weight GEMM costs: dense projections/FFN and MoE routed experts, per device.

Weights are read once per step (simulator-modelling.md §3.3); routed-expert
bytes use the balls-into-bins expectation of distinct experts touched,
``E_local * (1 - (1 - k/E)**T)`` (§3.3, "MoE weights read").
"""
from __future__ import annotations


def experts_touched_fraction(tokens_total: float, n_experts: int, top_k: int) -> float:
    """Expected fraction of experts hit by ``tokens_total`` tokens routed top-k of E."""
    if n_experts <= 0 or tokens_total <= 0:
        return 0.0
    return 1.0 - (1.0 - top_k / n_experts) ** tokens_total


def local_experts(n_experts: int, moe_ep: int, redundant_per_device: int) -> float:
    """Routed experts resident per device (E/EP plus redundant replicas)."""
    return n_experts / moe_ep + redundant_per_device

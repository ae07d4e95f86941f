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


def local_experts(n_experts: int, moe_ep: int, redundant: int) -> float:
    """Routed-expert slots resident per device: ``(E + R) / EP`` for ``R`` redundant slots of the
    instance (:attr:`sncc.facts.model.RoleFacts.redundant_experts`)."""
    return (n_experts + redundant) / moe_ep


def imbalance_with_redundancy(base: float, redundant: int, moe_ep: int, n_experts: int,
                              exponent: float) -> float:
    """Max/mean routed-token load over the EP ranks with redundant expert replicas.

    ``I(R) = 1 + (I0 - 1) * (1 - rho)**exponent`` with ``rho = min(1, R / E)`` the fraction of
    logical experts that get a replica (``R`` redundant slots of the instance, ``E`` routed
    experts; ``moe_ep`` is kept for the callers' symmetry).  Anchors: ``rho = 0`` gives the measured default
    imbalance ``I0`` (profile ``moe.imbalance``: on Ascend A3 derived from CloudMatrix-Infer's
    6,688/5,655 perfect-EPLB step ratio, :func:`sncc.sim.calibration.scenarios.routed_imbalance`);
    ``rho = 1`` (every expert replicable, EPLB free to balance) gives 1, CloudMatrix-Infer's
    "perfect EPLB" projection.  Between them replicas go to the hottest experts first, so the
    first replicas remove most of the excess: the profile's ``moe.redundancy_exponent`` (2,
    assumed) sets how fast.  Seed 000 (2 per die, EP64, 256 experts): rho 0.5, I = 1 + (I0 - 1) / 4.
    """
    if n_experts <= 0 or redundant <= 0:
        return base
    rho = min(1.0, redundant / n_experts)
    return 1.0 + (base - 1.0) * (1.0 - rho) ** exponent

"""Communication-buffer sizes the engines need, derived once (read by check SN4010, by the
simulator's what-ifs and by lowering when it writes ``HCCL_BUFFSIZE``).

Fused MoE dispatch/combine window of one rank (vllm-ascend#5287; misconfig BR-09)::

    MB = 2 × (maxBs × dispatch_bytes × ep_world × local_experts + maxBs × combine_bytes × (top_k + shared)) / 2^20

with ``maxBs`` the decode tokens of one DP rank per step (``max_num_seqs × (1 + draft tokens)``),
``ep_world`` the EP group, ``local_experts = ceil(routed slots / ep_world)`` and the per-hidden
byte counts from ``engines.toml`` (``moe_dispatch_bytes_per_hidden``, ``moe_dispatch_extra_bytes``,
``moe_combine_bytes_per_hidden``, with their sources).
"""

from __future__ import annotations

import math

from sncc.catalog.engine_defaults import engine_defaults


def dispatch_buffer_mb(arch, ep_world: int, routed_slots: int, max_bs: int) -> float | None:
    """MB of HCCL buffer the fused MoE dispatch/combine of one rank needs (formula above).

    ``ep_world`` is the EP group size [devices], ``routed_slots`` routed + redundant experts of
    one instance, ``max_bs`` tokens per rank per step.  None for a dense model or an EP group of
    one device (no dispatch).
    """
    if arch is None or not getattr(arch, "is_moe", False) or ep_world <= 1:
        return None
    d = engine_defaults()
    hidden = arch.hidden_size
    disp = d["moe_dispatch_bytes_per_hidden"] * hidden + d["moe_dispatch_extra_bytes"]
    comb = d["moe_combine_bytes_per_hidden"] * hidden
    local = math.ceil(routed_slots / ep_world)
    k = arch.num_experts_per_tok + (arch.n_shared_experts or 0)
    return 2 * (max_bs * disp * ep_world * local + max_bs * comb * k) / 2**20


def role_dispatch_buffer_mb(arch, role_facts) -> float | None:
    """:func:`dispatch_buffer_mb` for one :class:`~sncc.facts.model.RoleFacts` (None without an
    EP dispatch, e.g. a TP-only MoE role).

    The tokens one rank dispatches are its TP slice of the DP rank's step: vllm-ascend's MC2 and
    all-to-all ``prepare`` pads the step's tokens to a multiple of TP and keeps
    ``tensor_split(hidden_states, tp)[tp_rank]`` (vllm_ascend/ops/fused_moe/prepare_finalize.py,
    ``PrepareAndFinalizeWithMC2.prepare``), so ``maxBs = ceil(dispatch_tokens_per_rank / tp)``.
    The v0.23.0 nightly Qwen3.5-397B config (TP 8, 128 × (1 + 3) tokens, 512 experts) runs with
    HCCL_BUFFSIZE 1024: without the TP split the formula would ask for 4,440 MB."""
    if not role_facts.expert_parallel:
        return None
    per_rank = -(-role_facts.dispatch_tokens_per_rank // max(1, role_facts.tp))
    return dispatch_buffer_mb(arch, role_facts.ep_size, role_facts.routed_slots, per_rank)

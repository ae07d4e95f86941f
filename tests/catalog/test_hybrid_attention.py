"""Hybrid linear-attention models (Qwen3-Next, Qwen3.5): KV only on the full-attention layers,
Gated DeltaNet weights and state (sncc/catalog/arch.py)."""

from __future__ import annotations


def test_kv_counted_on_full_attention_layers_only():
    """Qwen3.5-397B: 15 of 60 layers hold KV, 2 KV heads × 256 × 2 (K, V) × 2 B = 2,048 B each
    (LMCache#3080: counting every layer is a ~4× overestimate)."""
    from sncc import catalog
    from sncc.catalog.arch import kv_bytes_per_token

    a = catalog.model("qwen3.5-397b")
    assert a.kv_layers == 15
    assert kv_bytes_per_token(a, "bf16") == 15 * 2 * 2 * 256 * 2


def test_qwen3_next_parameters_match_the_published_count():
    """The qwen3_next shape (Qwen3-Coder-Next config) gives its published 79,674,391,296 parameters
    within the norms sncc ignores (< 1e-5), gated attention and Gated DeltaNet layers included."""
    from sncc import catalog
    from sncc.catalog.arch import param_breakdown

    total = param_breakdown(catalog.model("qwen3-next"))["total"]
    assert abs(total / 79_674_391_296 - 1) < 1e-5


def test_linear_state_is_per_sequence_and_only_for_hybrids():
    from sncc import catalog
    from sncc.catalog.arch import linear_state_bytes_per_seq

    a = catalog.model("qwen3.5-397b")
    per_layer = 64 * 128 * 128 + (2 * 16 * 128 + 64 * 128) * 3
    assert linear_state_bytes_per_seq(a) == per_layer * 45 * 2
    assert linear_state_bytes_per_seq(catalog.model("qwen3-32b")) == 0

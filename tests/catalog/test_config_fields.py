"""config.json readers (sncc/catalog/hf_config.py) read every field name of the architecture
families in docs/research/config-fields.yaml (transformers 5.24.0 classes, their aliases, the
published config copies), at the top level and under text_config."""

from __future__ import annotations

import pytest

from expect import ROOT

RESEARCH = ROOT / "docs" / "research" / "config-fields.yaml"

#: quantity of config-fields.yaml → quantity of sncc/catalog/data/config_fields.toml
_QUANTITY = {
    "layers": "num_hidden_layers", "attention_heads": "num_attention_heads", "kv_heads": "num_key_value_heads",
    "hidden_size": "hidden_size", "vocab_size": "vocab_size", "routed_experts": "n_routed_experts",
    "experts_per_token": "num_experts_per_tok", "moe_intermediate_size": "moe_intermediate_size",
    "dense_intermediate_size": "intermediate_size",
}


def _families():
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load(RESEARCH.read_text(encoding="utf-8"))["families"]


def test_field_table_holds_every_family_key():
    """Each key a family's transformers class declares or aliases for a quantity sncc reads is in the table."""
    from sncc.catalog.hf_config import field_keys

    missing = []
    for fam, d in _families().items():
        for q, keys in d["fields"].items():
            ours = _QUANTITY.get(q)
            if ours is None:
                continue
            for k in keys:
                if k not in field_keys(ours):
                    missing.append((fam, q, k))
        for q in ("mtp",):
            for k in d["fields"].get(q, {}):
                if k in ("mtp_use_dedicated_embeddings", "use_mtp", "num_mtp_modules", "mtp_transformer_layers"):
                    continue   # flags, or MiniMax modules vLLM 0.23.0 has no MTP method for (config_fields.toml)
                if k not in field_keys("num_nextn_predict_layers"):
                    missing.append((fam, q, k))
    assert not missing, missing


@pytest.mark.parametrize("key", ["num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts"])
def test_routed_experts_under_any_alias(key):
    from sncc.catalog.hf_config import arch_from_config

    cfg = {"model_type": "x", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 128,
           key: 16, "num_experts_per_tok": 2, "moe_intermediate_size": 32}
    assert arch_from_config(cfg, "c.json").n_routed_experts == 16


def test_transformers5_qwen3_moe_keeps_its_experts():
    """transformers 5.24 writes Qwen3-MoE's expert count as num_local_experts (attribute_map)."""
    from sncc.catalog.hf_config import arch_from_config

    cfg = {"model_type": "qwen3_moe", "num_hidden_layers": 48, "hidden_size": 2048, "num_attention_heads": 32,
           "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936, "num_local_experts": 128,
           "num_experts_per_tok": 8, "moe_intermediate_size": 768, "decoder_sparse_step": 1, "mlp_only_layers": []}
    a = arch_from_config(cfg, "c.json")
    assert a.is_moe and a.n_routed_experts == 128 and a.n_moe_layers == 48


def test_mixtral_expert_width_is_intermediate_size():
    from sncc.catalog.hf_config import arch_from_config

    cfg = {"model_type": "mixtral", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
           "num_key_value_heads": 8, "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2,
           "intermediate_size": 14336}
    a = arch_from_config(cfg, "c.json")
    assert (a.n_routed_experts, a.moe_intermediate_size, a.n_dense_layers) == (8, 14336, 0)


def test_qwen35_text_config_mtp_and_hybrid_layers():
    """Qwen3.5 wraps the text model in text_config, names its MTP layer mtp_num_hidden_layers and
    its full-attention layers by layer_types / full_attention_interval."""
    from sncc.catalog.hf_config import read_weights_dir

    info = read_weights_dir(ROOT / "tests" / "cases" / "weights" / "qwen3.5-27b-mtp")
    a = info.arch
    assert (a.num_hidden_layers, a.num_nextn_predict_layers, a.n_full_attention_layers, a.kv_layers) == (64, 1, 16, 16)
    no = read_weights_dir(ROOT / "tests" / "cases" / "weights" / "qwen3.5-27b-no-mtp").arch
    assert no.num_nextn_predict_layers == 0


def test_hybrid_pattern_from_interval_when_no_list():
    from sncc.catalog.hf_config import arch_from_config

    base = {"model_type": "qwen3_next", "num_hidden_layers": 48, "hidden_size": 2048, "num_attention_heads": 16,
            "num_key_value_heads": 2, "head_dim": 256, "vocab_size": 151936}
    assert arch_from_config(base, "c.json").n_full_attention_layers == 12   # transformers default interval 4
    assert arch_from_config({**base, "full_attention_interval": 2}, "c.json").n_full_attention_layers == 24
    dense = {**base, "model_type": "qwen3"}
    assert arch_from_config(dense, "c.json").n_full_attention_layers is None

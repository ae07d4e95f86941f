"""DeepSeek-V4 parameter breakdown: CSA/HCA compressor and indexer weights, grouped output.

The expected counts below are enumerated tensor by tensor from the module definitions of HF
transformers ``models/deepseek_v4/modeling_deepseek_v4.py`` (DeepseekV4CSACompressor,
DeepseekV4HCACompressor, DeepseekV4Indexer, DeepseekV4IndexerScorer, DeepseekV4GroupedLinear),
independently of :mod:`sncc.catalog.arch`.  Sourced totals: models.toml ``total_params``
(V4-Flash 284B, diagram 284.44B; V4-Pro 1.6T stated to two significant figures).
"""
from __future__ import annotations

import math

import pytest

import sncc.catalog as cat
from sncc.catalog.arch import (
    active_params_per_token,
    attention_params_per_layer,
    dsv4_compressor_indexer_params,
    param_breakdown,
)


def _numel(*shapes) -> int:
    return sum(math.prod(s) for s in shapes)


def _csa_layer(h, d, ratio, q_lora, Hi, di) -> int:
    """Tensors of one CSA layer's compressor + indexer (HF module shapes)."""
    compressor = _numel((2 * d, h), (2 * d, h), (ratio, 2 * d), (d,))        # kv_proj, gate_proj, position_bias, kv_norm
    indexer = _numel((2 * di, h), (2 * di, h), (ratio, 2 * di), (di,),       # its own compressor
                     (Hi * di, q_lora), (Hi, h))                             # q_b_proj, weights_proj
    return compressor + indexer


def _hca_layer(h, d, ratio) -> int:
    return _numel((d, h), (d, h), (ratio, d), (d,))


@pytest.mark.parametrize("mid,csa,hca", [("deepseek-v4-flash", 21, 20), ("deepseek-v4-pro", 30, 31)])
def test_compressor_indexer_term_matches_the_module_shapes(mid, csa, hca):
    m = cat.model(mid)
    h, d = m.hidden_size, m.head_dim
    ci = dsv4_compressor_indexer_params(m)
    assert ci["csa_layer"] == _csa_layer(h, d, 4, m.q_lora_rank, m.index_n_heads, m.index_head_dim)
    assert ci["hca_layer"] == _hca_layer(h, d, 128)
    assert ci["total"] == csa * ci["csa_layer"] + hca * ci["hca_layer"] > 0
    b = param_breakdown(m)
    assert b["compressor_indexer"] == ci["total"]
    # the term is part of `attention` (weights per device and the TPOT floor read `attention`)
    assert b["attention"] == pytest.approx(m.num_hidden_layers * attention_params_per_layer(m) + ci["total"])


def test_flash_per_layer_figures():
    m = cat.model("deepseek-v4-flash")
    ci = dsv4_compressor_indexer_params(m)
    assert ci["csa_layer"] == 19_142_272 and ci["hca_layer"] == 4_260_352
    # per-layer shared part: wq_a 4096x1024, wq_b 1024x(64*512), wkv 4096x512,
    # wo_a 8 groups x (4096 in x 1024 out), wo_b 8192x4096
    assert attention_params_per_layer(m) == _numel((1024, 4096), (64 * 512, 1024), (512, 4096),
                                                   (8 * 1024, 64 * 512 // 8), (4096, 8 * 1024))


def test_other_families_have_no_compressor_term():
    for mid in ("deepseek-v3", "deepseek-v3.2", "qwen3-32b"):
        m = cat.model(mid)
        assert dsv4_compressor_indexer_params(m)["total"] == 0.0
        assert param_breakdown(m)["compressor_indexer"] == 0.0


# Stated tolerances: V4-Flash within 0.5 % of 284B (and of the 284.44B diagram); V4-Pro within
# 3.2 % of 1.6T (two significant figures: 1.55-1.65T).  Before the compressor/indexer and
# grouped-output terms sncc gave 282.55B (-0.5 %) and 1.568T (-2.0 %).
@pytest.mark.parametrize("mid,rel", [("deepseek-v4-flash", 0.005), ("deepseek-v4-pro", 0.032)])
def test_v4_totals_near_the_sourced_totals(mid, rel):
    m = cat.model(mid)
    b = param_breakdown(m)
    assert b["total"] == pytest.approx(m.total_params, rel=rel)


def test_flash_total_close_to_the_diagram_breakdown():
    # diagram arch.json: 284,438,447,058 main model; it counts the indexer's compressor at
    # head_dim 512 (+6.3M per CSA layer) and hyper-connection/norm weights sncc ignores
    b = param_breakdown(cat.model("deepseek-v4-flash"))
    assert b["total"] == pytest.approx(284_438_447_058, rel=0.001)
    assert abs(b["total"] - 284e9) < abs(282.55e9 - 284e9)


def test_v4_active_params_near_stated():
    assert active_params_per_token(cat.model("deepseek-v4-flash")) == pytest.approx(13.9e9, rel=0.02)
    assert active_params_per_token(cat.model("deepseek-v4-pro")) == pytest.approx(49e9, rel=0.03)


@pytest.mark.parametrize("mid", ["deepseek-v4-flash", "deepseek-v3.2", "deepseek-r1", "qwen3-32b"])
def test_simulator_counts_the_same_attention_weights_as_the_catalog(mid):
    """The simulator's per-layer attention weights are the catalog breakdown's (V4
    compressor/indexer, V3.2 indexer included), not a plain MLA/GQA formula."""
    from sncc.cost.model_shape import model_shape
    m = cat.model(mid)
    s = model_shape(m)
    assert s.attn_params * s.n_layers == pytest.approx(param_breakdown(m)["attention"], rel=1e-9)

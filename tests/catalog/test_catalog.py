"""Tests of the sncc fact catalog (sncc.catalog, .arch, .hf_config).

Reference values: ../shared/reference/domain-facts.md §2 (versions), §5.1 (shapes), §5.2 (KV bytes).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sncc.catalog as cat
from sncc.catalog import CatalogError, STATUS_TAGS
from sncc.catalog.arch import (
    active_params_per_token,
    kv_bytes_per_token,
    kv_bytes_per_token_per_device,
    param_breakdown,
)
from sncc.catalog.hf_config import read_weights_dir

FIXTURES = Path(__file__).parent.parent / "fixtures" / "weights"


# --------------------------------------------------------------------------- provenance


def _all_entries():
    for c in cat.chips().values():
        yield f"chip {c.id}", c
        if c.projected is not None:
            yield f"chip {c.id}.projected", c.projected
    for s in cat.systems().values():
        yield f"system {s.id}", s
        for ln in s.links:
            yield f"system {s.id} link {ln.level}", ln
    for m in cat.models().values():
        yield f"model {m.id}", m
    for q in cat.quant_formats().values():
        yield f"quant {q.id}", q
    for r in cat.vllm_ascend_releases():
        yield f"vllm-ascend {r.version}", r
    for r in cat.cann_torch_npu():
        yield f"cann {r.cann}", r
    for r in cat.chip_support():
        yield f"support {r.engine} {r.device_type}", r
    for r in cat.omni_infer_revisions():
        yield f"omni {r.revision}", r
    for f in cat.features().values():
        yield f"feature {f.id}", f


def test_every_entry_has_source_and_status():
    n = 0
    for what, e in _all_entries():
        n += 1
        assert e.source and all(isinstance(s, str) and s.strip() for s in e.source), what
        assert e.status in STATUS_TAGS, what
    assert n > 100


def test_raw_tables_all_carry_source_and_status():
    """Check the TOML files themselves, so a loader default can never hide a missing field."""
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover
        import tomli as tomllib
    from importlib.resources import files

    data = files("sncc.catalog") / "data"
    for name, key in [("chips.toml", "chips"), ("systems.toml", "systems"), ("models.toml", "models"), ("quant.toml", "quant")]:
        doc = tomllib.loads((data / name).read_text(encoding="utf-8"))
        for eid, t in doc[key].items():
            assert t.get("source") and t.get("status") in STATUS_TAGS, f"{name} {eid}"
    doc = tomllib.loads((data / "software.toml").read_text(encoding="utf-8"))
    for key in ("vllm_ascend", "cann_torch_npu", "chip_support", "omni_infer", "features"):
        for i, row in enumerate(doc[key]):
            assert row.get("source") and row.get("status") in STATUS_TAGS, f"software.toml {key} #{i}"


def test_files_read_once():
    cat.chips()
    before = cat._load.cache_info().misses
    cat.chips(), cat.systems(), cat.models(), cat.quant_formats()
    cat.chip("ascend-910c"), cat.model("deepseek-r1"), cat.kv_dtype_bytes("bf16")
    cat.vllm_ascend_releases(), cat.features()
    assert cat._load.cache_info().misses <= max(before, 5)
    assert cat.chips() is cat.chips()


# --------------------------------------------------------------------------- chips & systems

EXPECTED_CHIPS = {
    "ascend-910a", "ascend-910b2", "ascend-910b3", "ascend-910b4", "ascend-910c",
    "ascend-950pr", "ascend-950dt", "nvidia-h100", "nvidia-h200", "nvidia-b200",
}


def test_chip_ids_and_vocabulary():
    assert set(cat.chips()) == EXPECTED_CHIPS
    qids = set(cat.quant_formats())
    for c in cat.chips().values():
        assert set(c.weight_formats) <= qids, c.id
        assert set(c.kv_dtypes) <= {"bf16", "fp16", "int8", "fp8"}, c.id
        assert set(c.peak_flops) <= {"bf16", "fp16", "int8", "fp8", "mxfp8", "mxfp4", "fp4"}, c.id
        assert c.vendor in ("huawei", "nvidia")
        if c.hbm_bytes is not None:
            assert isinstance(c.hbm_bytes, int)


def test_a3_device_is_one_die():
    c = cat.chip("ascend-910c")
    assert c.hbm_bytes == 64 * 2**30
    assert c.flops("fp16") == pytest.approx(376e12)
    assert c.flops("bf16") == pytest.approx(353.9e12)
    assert c.flops("int8") == pytest.approx(752e12)
    assert c.hbm_bandwidth == pytest.approx(1.6e12)
    assert c.devices_per_node == 16 and c.device_type == "A3"


def test_quant_rules_by_generation():
    for cid in ("ascend-910b2", "ascend-910b3", "ascend-910b4", "ascend-910c"):
        c = cat.chip(cid)
        assert not {"fp8", "mxfp8", "mxfp4"} & set(c.weight_formats), cid
        assert "w8a8" in c.weight_formats and "w4a8" in c.weight_formats
        assert "fp8" not in c.kv_dtypes
    for cid in ("ascend-950pr", "ascend-950dt"):
        assert {"fp8", "mxfp8", "mxfp4", "w8a8"} <= set(cat.chip(cid).weight_formats)
    a = cat.chip("ascend-910a")
    assert "bf16" not in a.weight_formats and a.flops("bf16") is None
    for cid in ("nvidia-h100", "nvidia-h200"):
        c = cat.chip(cid)
        assert "fp8" in c.weight_formats and not {"fp4", "mxfp8", "mxfp4"} & set(c.weight_formats)
    assert "fp4" in cat.chip("nvidia-b200").weight_formats


def test_950dt_defaults_to_shipped_figures():
    c = cat.chip("ascend-950dt")
    assert c.hbm_bytes == 96 * 2**30
    assert c.projected is not None and c.projected.status == "A"
    assert c.projected.hbm_bytes == 144_000_000_000


def test_unknown_chip_raises_keyerror():
    with pytest.raises(KeyError):
        cat.chip("ascend-920")


def test_systems():
    assert set(cat.systems()) == {
        "atlas-800-a2", "atlas-800i-a3", "atlas-900-a3-superpod", "cloudmatrix384",
        "atlas-950-superpod", "hgx-h100", "hgx-h200", "hgx-b200",
    }
    for s in cat.systems().values():
        assert s.chip in cat.chips(), s.id
        assert s.devices_per_node == s.chip_spec().devices_per_node, s.id
    pod = cat.system("atlas-900-a3-superpod")
    assert pod.max_devices == 768 and pod.scale_up_domain_devices == 768
    assert pod.link("die-pair").bandwidth == 224e9 and pod.link("die-pair").latency == pytest.approx(0.2e-6)
    assert pod.link("supernode").bandwidth == 196e9 and pod.link("supernode").latency == pytest.approx(0.5e-6)
    assert pod.link("scale-out").bandwidth == 25e9
    assert cat.system("cloudmatrix384").alias_of == "atlas-900-a3-superpod"
    assert cat.system("hgx-h100").link("node").bandwidth == 450e9
    assert cat.system("hgx-b200").link("node").bandwidth == 900e9
    assert cat.system("atlas-800-a2").link("node").status == "I"
    assert cat.system("hgx-h100").max_nodes is None


# --------------------------------------------------------------------------- models


def test_model_lookup():
    assert cat.model("deepseek-r1").id == "deepseek-r1"
    assert cat.model("DeepSeek-R1").max_output_tokens == 32768
    assert cat.model("deepseek-ai/DeepSeek-V3").id == "deepseek-v3"
    assert cat.model("DEEPSEEK-V3.2").architecture == "mla-dsa"
    assert cat.model("glm-4.5").is_moe and not cat.model("glm-4.5").is_mla
    assert cat.model("kimi-k2").is_mla and cat.model("kimi-k2").num_nextn_predict_layers == 0
    assert not cat.model("llama-3.1-70b").is_moe
    with pytest.raises(KeyError):
        cat.model("gpt-5")
    assert len(cat.models()) == 29
    # GLM-4.6/4.7 raised GLM-4.5's 128K window to 200K; Kimi-K2-Thinking is INT4 on its experts
    # (vllm-ascend v0.23.0 serves GLM-4.7 at --max-model-len 133000 and Kimi-K2-Thinking without --quantization)
    assert cat.model("zai-org/GLM-4.7").id == "glm-4.7" and cat.model("glm-4.7").max_position_embeddings == 202752
    assert cat.model("glm-4.5").max_position_embeddings == 131072
    assert cat.model("moonshotai/Kimi-K2-Thinking").id == "kimi-k2-thinking"
    assert cat.model("kimi-k2-thinking").checkpoint_dtype == "int4-moe" and cat.model("kimi-k2").checkpoint_dtype == "fp8"


def test_dsv4_compress_counts():
    f = cat.model("deepseek-v4-flash")
    assert (f.n_swa_only_layers, f.n_csa_layers, f.n_hca_layers) == (2, 21, 20)
    p = cat.model("deepseek-v4-pro")
    assert (p.n_swa_only_layers, p.n_csa_layers, p.n_hca_layers) == (0, 30, 31)
    for m in (f, p):
        assert m.n_swa_only_layers + m.n_csa_layers + m.n_hca_layers == m.num_hidden_layers


def test_deepseek_v3_param_counts():
    m = cat.model("deepseek-v3")
    b = param_breakdown(m)
    assert b["total"] == pytest.approx(671e9, rel=0.02)
    assert active_params_per_token(m) == pytest.approx(37e9, rel=0.03)
    assert b["moe_layers"] == 58 and b["dense_layers"] == 3
    assert b["routed_expert_one"] == 3 * 7168 * 2048
    assert b["mtp"] == pytest.approx(11.5e9, rel=0.05)


@pytest.mark.parametrize("mid", ["qwen3-235b-a22b", "qwen3-30b-a3b", "qwen3-32b", "glm-4.5", "llama-3.1-70b", "llama-3.1-405b", "deepseek-v4-flash"])
def test_other_param_totals_near_stated(mid):
    m = cat.model(mid)
    assert param_breakdown(m)["total"] == pytest.approx(m.total_params, rel=0.04)


# --------------------------------------------------------------------------- KV cache (§5.2)

KV_TABLE = [
    ("deepseek-v3", "bf16", {}, 70_272),
    ("deepseek-r1", "int8", {}, 39_040),
    ("deepseek-r1", "int8", {"layout": "latent-only-8bit"}, 39_040),
    ("deepseek-r1", "fp8", {"layout": "packed"}, 35_136),
    ("deepseek-r1", "fp8", {"layout": "fp8_ds_mla"}, 40_016),
    ("deepseek-v3.2", "bf16", {}, 78_324),
    ("deepseek-v3.2", "fp8", {"layout": "fp8_ds_mla"}, 48_068),
    ("kimi-k2", "bf16", {}, 70_272),
    ("qwen3-235b-a22b", "bf16", {}, 192_512),
    ("qwen3-30b-a3b", "bf16", {}, 98_304),
    ("qwen3-32b", "bf16", {}, 262_144),
    ("glm-4.5", "bf16", {}, 376_832),
    ("llama-3.1-70b", "bf16", {}, 327_680),
    ("llama-3.1-405b", "bf16", {}, 516_096),
]


@pytest.mark.parametrize("mid,dtype,kw,expected", KV_TABLE)
def test_kv_bytes_per_token(mid, dtype, kw, expected):
    assert kv_bytes_per_token(cat.model(mid), dtype, **kw) == expected


def test_kv_mtp_layer_and_dsv4_approximation():
    m = cat.model("deepseek-r1")
    assert kv_bytes_per_token(m, "bf16", include_mtp=True) == 1152 * 62
    f = cat.model("deepseek-v4-flash")
    # 21 CSA layers × (584 + 132) / 4 + 20 HCA layers × 584 / 128
    assert kv_bytes_per_token(f, "fp8") == pytest.approx(21 * (584 + 132) / 4 + 20 * 584 / 128)
    assert kv_bytes_per_token(f, "fp8") < 0.1 * kv_bytes_per_token(cat.model("deepseek-v3.2"), "bf16")


def test_kv_per_device():
    q = cat.model("qwen3-235b-a22b")  # 4 KV heads
    full = kv_bytes_per_token(q, "bf16")
    assert kv_bytes_per_token_per_device(q, "bf16", 1) == full
    assert kv_bytes_per_token_per_device(q, "bf16", 2) == full / 2
    assert kv_bytes_per_token_per_device(q, "bf16", 4) == full / 4
    assert kv_bytes_per_token_per_device(q, "bf16", 8) == full / 4  # replicated beyond n_kv
    with pytest.raises(ValueError):
        kv_bytes_per_token_per_device(q, "bf16", 3)
    d = cat.model("deepseek-v3")
    assert kv_bytes_per_token_per_device(d, "bf16", 16) == 70_272


def test_kv_dtype_bytes():
    assert cat.kv_dtype_bytes("bf16") == 2 and cat.kv_dtype_bytes("fp16") == 2
    assert cat.kv_dtype_bytes("int8") == 1 and cat.kv_dtype_bytes("fp8") == 1
    assert cat.kv_dtype_bytes("bfloat16") == 2 and cat.kv_dtype_bytes("fp8_e4m3") == 1
    with pytest.raises(KeyError):
        cat.kv_dtype_bytes("auto")


# --------------------------------------------------------------------------- quant


def test_quant_formats():
    assert set(cat.quant_formats()) == {
        "bf16", "fp16", "w8a8", "w8a16", "w4a8", "w4a16", "w4a4", "fp8", "mxfp8", "mxfp4", "fp4", "int4-moe",
    }
    keys = {"bf16", "fp16", "int8", "fp8", "mxfp8", "mxfp4", "fp4"}
    for q in cat.quant_formats().values():
        assert q.compute_dtype in keys, q.id
        assert q.weight_bytes == pytest.approx(q.weight_bits / 8), q.id
    assert cat.quant("w8a8").vllm_quantization == "ascend"
    assert cat.quant("bf16").vllm_quantization is None
    assert cat.quant("fp8").hf_quant_methods == ("fp8",)
    assert "W8A8_MXFP8" in cat.quant("mxfp8").modelslim_names
    assert cat.quant("w4a8").compute_dtype == "int8"


# --------------------------------------------------------------------------- versions & software


def test_parse_version_ordering():
    pv = cat.parse_version
    assert pv("v0.11.0rc3") < pv("v0.11.0")
    assert pv("0.9.1") == pv("v0.9.1")
    assert pv("v0.11.0rc0") < pv("v0.11.0rc1") < pv("v0.11.0rc2")
    assert pv("v0.7.3") < pv("v0.7.3.post1") < pv("v0.8.4rc2")
    assert pv("v0.10.1rc1") < pv("v0.10.2rc1") < pv("v0.11.0rc0")
    cann = ["8.0.RC1", "8.0.RC2", "8.0.RC3", "8.0.0", "8.1.RC1", "8.2.RC1", "8.3.RC1", "8.3.RC2", "8.5.0", "8.5.1", "9.0.0", "9.0.1", "9.1.0"]
    assert sorted(reversed(cann), key=pv) == cann
    assert pv("2.7.1.dev20250724") < pv("2.7.1") < pv("2.7.1.post1")
    assert pv("2.5.1.post1.dev20250528") < pv("2.5.1.post1")
    assert pv("2.5.1") < pv("2.5.1.post1.dev20250528")
    assert pv("2.9.0.post1+git4c901a4") == pv("2.9.0.post1")
    with pytest.raises(ValueError):
        pv("latest")


def test_vllm_ascend_matrix():
    rows = cat.vllm_ascend_releases()
    assert rows[0].version == "v0.25.1rc1"
    keys = [r.key for r in rows]
    assert keys == sorted(keys, reverse=True)
    assert len(set(keys)) == len(keys)
    r = cat.vllm_ascend_release("0.11.0")
    assert (r.cann, r.torch, r.torch_npu) == ("8.3.RC2", "2.7.1", "2.7.1.post1")
    assert cat.vllm_ascend_release("v0.17.0rc1").cann == "8.5.1"
    assert cat.vllm_ascend_release("v0.9.1rc2").cann == "8.2.RC1"
    with pytest.raises(KeyError):
        cat.vllm_ascend_release("v0.1.0")
    for r in rows:
        cat.parse_version(r.cann), cat.parse_version(r.torch_npu), cat.parse_version(r.vllm.split("/")[0])
    assert cat.cann_torch_npu()[0].cann == "9.0.0"


def test_chip_support():
    assert cat.first_supported_release("vllm-ascend", "A3") == "v0.10.0rc1"
    assert cat.first_supported_release("vllm-ascend", "A5") == "v0.17.0rc1"
    assert cat.first_supported_release("vllm-ascend", "910A") is None
    assert cat.first_supported_release("cann", "A3") == "8.1.RC1"
    assert cat.first_supported_release("cann", "A5") == "9.0.0"
    assert cat.first_supported_release("cann", "A5", product="ascend-950dt") == "9.1.0"
    assert cat.support_status("vllm-ascend", "A3", "v0.9.1") == "warn"
    assert cat.support_status("vllm-ascend", "A3", "v0.9.2rc1") == "unsupported"
    assert cat.support_status("vllm-ascend", "A5", "v0.14.0rc1") == "unsupported"
    assert cat.support_status("vllm-ascend", "A2", "v0.8.4rc2") == "supported"
    assert cat.support_status("vllm-ascend", "910A", "v0.23.0") == "unsupported"
    with pytest.raises(KeyError):
        cat.first_supported_release("vllm-ascend", "sm90")


def test_features():
    t = cat.feature("torchair_graph")
    assert t.available("v0.11.0") and t.available("v0.9.1")
    assert not t.available("v0.12.0rc1")
    assert not cat.feature("ascend_scheduler").available("v0.13.0")
    q = cat.feature("quantization_ascend_flag_required")
    assert q.available("v0.16.0rc1") and not q.available("v0.17.0rc1")
    assert cat.feature("quant_mxfp8").available("v0.23.0", "A5")
    assert not cat.feature("quant_mxfp8").available("v0.23.0", "A3")
    assert not cat.feature("quant_fp8").available("v0.23.0", "A2")
    assert cat.feature("quant_w8a8_w4a8_on_a5").min_version == "v0.22.1rc1"
    assert {o.vllm_base for o in cat.omni_infer_revisions()} == {"0.9.0"}


# --------------------------------------------------------------------------- hf_config


def test_read_deepseek_r1_w8a8():
    info = read_weights_dir(FIXTURES / "deepseek-r1-w8a8")
    assert info is not None
    assert info.quant == "w8a8"
    assert info.quant_source_file.endswith("quant_model_description.json")
    a = info.arch
    assert a.id == "deepseek-r1" and a.is_mla and a.is_moe
    assert a.n_moe_layers == 58
    assert kv_bytes_per_token(a, "bf16") == 70_272
    assert info.raw["model_type"] == "deepseek_v3"


def test_read_qwen3_32b_bf16():
    info = read_weights_dir(FIXTURES / "qwen3-32b-bf16")
    assert info.quant == "bf16" and info.quant_source_file.endswith("config.json")
    assert info.arch.id == "qwen3-32b" and not info.arch.is_moe
    assert kv_bytes_per_token(info.arch, "bf16") == 262_144


def test_read_deepseek_v4_flash_fp8():
    info = read_weights_dir(FIXTURES / "deepseek-v4-flash-fp8")
    assert info.quant == "fp8"
    a = info.arch
    assert a.architecture == "dsv4" and a.id == "deepseek-v4-flash"
    assert (a.n_swa_only_layers, a.n_csa_layers, a.n_hca_layers) == (2, 21, 20)
    assert (a.csa_compress_ratio, a.hca_compress_ratio) == (4, 128)
    assert a.expert_dtype == "fp4" and a.checkpoint_dtype == "fp8"


def test_read_qwen3_moe_w4a8_and_glm():
    info = read_weights_dir(FIXTURES / "qwen3-235b-a22b-w4a8")
    assert info.quant == "w4a8" and info.arch.id == "qwen3-235b-a22b"
    assert info.arch.n_routed_experts == 128 and info.arch.n_moe_layers == 94
    glm = read_weights_dir(FIXTURES / "glm-4.5-bf16")
    assert glm.arch.id == "glm-4.5" and glm.quant == "bf16"
    assert kv_bytes_per_token(glm.arch, "bf16") == 376_832


def test_read_kimi_int4_moe():
    info = read_weights_dir(FIXTURES / "kimi-k2-thinking-int4")
    assert info.quant == "int4-moe"
    assert info.arch.id == "kimi-k2"


def test_missing_dir_returns_none(tmp_path):
    assert read_weights_dir(tmp_path / "nope") is None
    assert read_weights_dir(tmp_path) is None


def test_malformed_config_raises_catalog_error():
    with pytest.raises(CatalogError) as ei:
        read_weights_dir(FIXTURES / "broken-json")
    msg = str(ei.value)
    assert "config.json" in msg and "\n" not in msg


def test_missing_field_raises_catalog_error():
    with pytest.raises(CatalogError, match="num_hidden_layers"):
        read_weights_dir(FIXTURES / "missing-field")


def test_unknown_modelslim_type_raises(tmp_path):
    d = tmp_path / "w"
    d.mkdir()
    (d / "config.json").write_text((FIXTURES / "qwen3-32b-bf16" / "config.json").read_text())
    (d / "quant_model_description.json").write_text(json.dumps({"model_quant_type": "W3A5_WEIRD"}))
    with pytest.raises(CatalogError, match="model_quant_type"):
        read_weights_dir(d)


def test_hf_fp8_method(tmp_path):
    d = tmp_path / "q"
    d.mkdir()
    cfg = json.loads((FIXTURES / "qwen3-32b-bf16" / "config.json").read_text())
    cfg["quantization_config"] = {"quant_method": "fp8", "weight_block_size": [128, 128]}
    (d / "config.json").write_text(json.dumps(cfg))
    assert read_weights_dir(d).quant == "fp8"
    cfg["quantization_config"] = {"quant_method": "gguf-nonsense"}
    (d / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CatalogError, match="quant_method"):
        read_weights_dir(d)


def test_tied_word_embeddings_count_once(tmp_path):
    """Qwen3-4B ties its LM head to the embedding: 4.02B parameters, not 4.4B (user test finding)."""
    import json

    from sncc.catalog.arch import param_breakdown
    from sncc.catalog.hf_config import read_weights_dir

    cfg = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 2560, "intermediate_size": 9728,
           "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
           "vocab_size": 151936, "max_position_embeddings": 40960, "tie_word_embeddings": True, "torch_dtype": "bfloat16"}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    tied = param_breakdown(read_weights_dir(str(tmp_path)).arch)
    assert tied["lm_head"] == 0 and abs(tied["total"] / 4.022e9 - 1) < 0.01
    cfg["tie_word_embeddings"] = False
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    untied = param_breakdown(read_weights_dir(str(tmp_path)).arch)
    assert untied["total"] - tied["total"] == untied["embedding"]

"""The engine's default max_model_len (`max_model_len = auto`, sncc/facts/lengths.py): config.json
positions × rope factor as vLLM derives them (vllm/config/model.py@0.23.0 L2112-2218)."""

from __future__ import annotations

from expect import compile_text


def _facts(model: str):
    return compile_text(f'''plan "p" {{
  model {model}
  hardware {{ system = "hgx-h200"  devices = 8 }}
  engine "vllm" {{ version = "0.23.0" }}
  serve {{ devices = 8  tp = 8  chunked_prefill = 8k }}
  workload {{ requests = 10  input {{ mean = 1k  max = 2k }}  output {{ mean = 100  max = 200 }} }}
}}''', name="tests/cases/p.sn").facts


def test_auto_takes_the_catalog_positions():
    f = _facts('"deepseek-r1" { max_model_len = auto }')
    assert (f.max_model_len, f.max_model_len_origin) == (163840, "engine-default")


def test_auto_with_a_rope_override_scales_the_native_window():
    f = _facts('"qwen3-235b-a22b" { max_model_len = auto  rope_scaling = 4 }')
    assert f.max_model_len == 32768 * 4


def test_llama3_rope_is_not_multiplied():
    from sncc.catalog.hf_config import read_weights_dir
    from sncc.facts.lengths import engine_default_max_model_len
    from expect import ROOT

    info = read_weights_dir(ROOT / "tests" / "cases" / "weights" / "llama-3.1-8b")
    assert engine_default_max_model_len(info.arch, info.raw, None)[0] == 131072


def test_yarn_in_config_is_original_times_factor():
    from sncc import catalog
    from sncc.facts.lengths import engine_default_max_model_len

    raw = {"max_position_embeddings": 40960, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
    assert engine_default_max_model_len(catalog.model("qwen3-32b"), raw, None)[0] == 131072


def test_written_and_workload_origins():
    assert _facts('"qwen3-32b" { max_model_len = 8k }').max_model_len_origin == "plan"
    f = _facts('"qwen3-32b" {}')
    assert (f.max_model_len, f.max_model_len_origin) == (2048 + 200, "workload")   # 2k input + 200 output

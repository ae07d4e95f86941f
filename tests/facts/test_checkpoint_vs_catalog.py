"""The weights a plan points at are the model it names (SN2017), and a weights folder without
config.json is said, not silently replaced by the catalog (SN2018). Found by a fresh-user test: a
Llama-3.1-70B config.json under `model "qwen3-32b"` sized memory from Llama with no word."""
from __future__ import annotations

import json

from expect import compile_text

PLAN = '''plan "x" {
  model "qwen3-32b" { weights = "WEIGHTS" }
  hardware { system = "hgx-h200"  nodes = 1 }
  engine "vllm" { version = "0.11.0" }
  serve { devices = 8  tp = 8  max_num_seqs = 16  chunked_prefill = 8k }
  workload { requests = 10  concurrency = 4  input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''

LLAMA = {"model_type": "llama", "num_hidden_layers": 80, "hidden_size": 8192, "num_attention_heads": 64,
         "num_key_value_heads": 8, "intermediate_size": 28672, "vocab_size": 128256, "max_position_embeddings": 131072,
         "torch_dtype": "bfloat16"}
QWEN = {"model_type": "qwen3", "num_hidden_layers": 64, "hidden_size": 5120, "num_attention_heads": 64,
        "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 25600, "vocab_size": 151936,
        "max_position_embeddings": 40960, "torch_dtype": "bfloat16"}


def _codes(tmp_path, config: dict | None):
    d = tmp_path / "w"
    d.mkdir()
    if config is not None:
        (d / "config.json").write_text(json.dumps(config))
    comp = compile_text(PLAN.replace("WEIGHTS", str(d)))
    return {x.code.code: x for x in comp.diagnostics}


def test_weights_of_another_model_warn(tmp_path):
    d = _codes(tmp_path, LLAMA)["SN2017"]
    assert d.severity == "warning" and "`llama`" in d.message and "`qwen3`" in d.message


def test_weights_of_the_named_model_pass(tmp_path):
    got = _codes(tmp_path, QWEN)
    assert "SN2017" not in got and "SN2018" not in got


def test_a_weights_folder_without_config_json_is_said(tmp_path):
    assert _codes(tmp_path, None)["SN2018"].severity == "info"

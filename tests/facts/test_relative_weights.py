"""A relative `weights` path that sncc reads from the plan's folder is not the path the servers
load (SN2019).  Fresh-user report (break3): `weights = "models/Qwen3-8B"` beside the plan checked
and built clean, sncc sized the model from models/Qwen3-8B/config.json, but every launch script
runs `cd "$SNCC_OUT"` and then `vllm serve models/Qwen3-8B`, which names nothing there (vLLM then
asks the Hugging Face Hub for a repository `models/Qwen3-8B`)."""
from __future__ import annotations

import json

from expect import compile_text

PLAN = '''plan "x" {
  model "qwen3-32b" { weights = "WEIGHTS" }
  hardware { system = "hgx-h200"  nodes = 1 }
  engine "vllm" { version = "0.11.0" }
  serve { devices = 8  tp = 8  max_num_seqs = 16  chunked_prefill = 8k }
  workload {
    requests = 10
    concurrency = 4
    input { mean = 1k  max = 2k }
    output { mean = 100  max = 200 }
  }
}
'''

QWEN = {"model_type": "qwen3", "num_hidden_layers": 64, "hidden_size": 5120, "num_attention_heads": 64,
        "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 25600, "vocab_size": 151936,
        "max_position_embeddings": 40960, "torch_dtype": "bfloat16"}


def _compile(tmp_path, weights: str):
    d = tmp_path / "models" / "Qwen3-32B"
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps(QWEN))
    text = PLAN.replace("WEIGHTS", weights)
    return compile_text(text, str(tmp_path / "plan.sn")), text


def test_a_relative_weights_folder_sncc_read_warns_at_the_path(tmp_path):
    comp, text = _compile(tmp_path, "models/Qwen3-32B")
    got = [d for d in comp.diagnostics if d.code.code == "SN2019"]
    assert len(got) == 1, [(d.code.code, d.message) for d in comp.diagnostics]
    d = got[0]
    assert d.severity == "warning"
    assert text[d.span.start:d.span.end] == '"models/Qwen3-32B"'
    assert str(tmp_path / "models" / "Qwen3-32B") in d.message and "SNCC_OUT" in d.message
    assert "absolute" in d.help and d.path == ("model", "weights")
    assert comp.facts.checkpoint is not None          # sncc still read the folder


def test_an_absolute_path_or_a_hub_id_does_not_warn(tmp_path):
    comp, _ = _compile(tmp_path, str(tmp_path / "models" / "Qwen3-32B"))
    assert not [d for d in comp.diagnostics if d.code.code == "SN2019"]
    (tmp_path / "b").mkdir()
    comp, _ = _compile(tmp_path / "b", "Qwen/Qwen3-32B")      # no such folder beside the plan: a Hub id
    assert not [d for d in comp.diagnostics if d.code.code == "SN2019"]

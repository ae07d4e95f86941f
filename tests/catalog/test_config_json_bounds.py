"""Values read from a checkpoint's config.json are validated and bounded: `num_hidden_layers =
10^12` with experts once hung `check` in a `range(layers)` loop, and `Infinity`,
`"mlp_only_layers": 5` or `"partial_rotary_factor": "abc"` ended in OverflowError, TypeError
or ValueError. Each is now SN2010 naming the file and the field."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from tests_helpers import compile_plan

QWEN_MOE = "tests/fixtures/weights/qwen3-235b-a22b-w4a8"

PLAN = '''plan "m" {
  model "qwen3-235b-a22b" { weights = "WEIGHTS"  quant = w4a8 }
  hardware { system = "atlas-800-a2"  nodes = 1 }
  engine "vllm-ascend" {}
  serve { devices = 8  tp = 4  ep = 2 }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''


def _weights(tmp_path, root, edit=None, text=None):
    d = tmp_path / "w"
    shutil.copytree(root / QWEN_MOE, d)
    cfg = json.loads((d / "config.json").read_text())
    if edit:
        cfg.update(edit)
    (d / "config.json").write_text(text if text is not None else json.dumps(cfg))
    return d


def test_fixture_is_clean(tmp_path, root):
    d = _weights(tmp_path, root)
    diags = compile_plan(PLAN.replace("WEIGHTS", str(d))).diagnostics
    assert not [x for x in diags if x.code.code in ("SN2010", "SN9001")], [(x.code.code, x.message) for x in diags]


@pytest.mark.parametrize("edit,field", [
    ({"num_hidden_layers": 10**12}, "num_hidden_layers"),
    ({"num_hidden_layers": 10**12, "mlp_only_layers": [1, 2]}, "num_hidden_layers"),
    ({"num_experts": 10**15}, "num_experts"),
    ({"vocab_size": -5}, "vocab_size"),
    ({"mlp_only_layers": 5}, "mlp_only_layers"),
    ({"mlp_only_layers": ["a"]}, "mlp_only_layers"),
    ({"partial_rotary_factor": "abc"}, "partial_rotary_factor"),
    ({"partial_rotary_factor": 7}, "partial_rotary_factor"),
    ({"decoder_sparse_step": 0}, "decoder_sparse_step"),
    ({"rope_scaling": {"factor": 1e308, "rope_type": "yarn"}}, "rope_scaling"),
    ({"max_position_embeddings": 2**40}, "max_position_embeddings"),
    ({"head_dim": 1.5}, "head_dim"),
])
def test_bad_values_are_located_diagnostics(tmp_path, root, edit, field):
    d = _weights(tmp_path, root, edit)
    t0 = time.process_time()
    diags = compile_plan(PLAN.replace("WEIGHTS", str(d))).diagnostics
    assert time.process_time() - t0 < 5  # CPU seconds: a range(10**12) loop never ends
    codes = [x.code.code for x in diags]
    assert "SN9001" not in codes
    hit = [x for x in diags if x.code.code == "SN2010"]
    assert len(hit) == 1, [(x.code.code, x.message) for x in diags]
    assert "config.json" in hit[0].message and field in hit[0].message


@pytest.mark.parametrize("text", [
    '{"num_hidden_layers": Infinity, "hidden_size": 4096, "num_attention_heads": 64, "vocab_size": 151936}',
    '{"num_hidden_layers": 94, "hidden_size": 4096, "num_attention_heads": 64, "vocab_size": 151936, "partial_rotary_factor": NaN}',
    '{"num_hidden_layers": 1e400, "hidden_size": 4096, "num_attention_heads": 64, "vocab_size": 151936}',
    '[1, 2]',
    '{"num_hidden_layers": 94, "hidden_size": 4096, "num_attention_heads": 64, "vocab_size": 151936, "quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"g": [1]}}}',
    '{"num_hidden_layers": 94, "hidden_size": 4096, "num_attention_heads": 64, "vocab_size": 151936, "text_config": 5, "compress_ratios": [0, "x"]}',
])
def test_non_standard_json_and_wrong_shapes(tmp_path, root, text):
    d = _weights(tmp_path, root, text=text)
    (d / "quant_model_description.json").unlink()
    diags = compile_plan(PLAN.replace("WEIGHTS", str(d))).diagnostics
    codes = [x.code.code for x in diags]
    assert "SN9001" not in codes
    assert "SN2010" in codes, [(x.code.code, x.message) for x in diags]

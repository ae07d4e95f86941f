"""Counts in messages agree with their noun (`1 device`, `2 devices`): sncc.units.format_count."""

from __future__ import annotations

from expect import compile_text

from sncc.units import format_count

PLAN = '''plan "p" {
  model "qwen3-32b" { quant = fp8 }
  hardware { system = "hgx-h200"  devices = DEVICES }
  engine "vllm" {}
  serve { devices = ROLE  tp = TP  max_num_seqs = 16 }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''


def _messages(devices, role, tp):
    text = PLAN.replace("DEVICES", str(devices)).replace("ROLE", str(role)).replace("TP", str(tp))
    return [d.message for d in compile_text(text).diagnostics]


def test_format_count():
    assert [format_count(n, "device") for n in (0, 1, 2)] == ["0 devices", "1 device", "2 devices"]
    assert format_count(1, "entry", "entries") == "1 entry" and format_count(3, "entry", "entries") == "3 entries"


def test_one_device_is_singular():
    msgs = _messages(2, 1, 2)
    assert any("but each instance has 1 device" in m and "1 devices" not in m for m in msgs), msgs
    msgs = _messages(1, 2, 2)
    assert any("the roles need 2 devices" in m for m in msgs), msgs
    assert not any(" 1 devices" in m for m in _messages(3, 2, 2) + _messages(1, 2, 2) + _messages(2, 1, 1))
    assert any("1 of 3 devices is not used" in m for m in _messages(3, 2, 2)), _messages(3, 2, 2)


A2 = '''plan "p" {
  model "qwen3-32b" { quant = w8a8 }
  hardware { system = "atlas-800-a2"  nodes = 1  cann = "8.3.RC2" }
  engine "vllm-ascend" { version = "v0.11.0" }
  serve { devices = 1  tp = 1  max_num_seqs = 4  max_num_batched_tokens = 32k  chunked_prefill = 8k  memory_utilization = 0.75 }
  workload { requests = 10  concurrency = 4  input { mean = 1k  max = 31k }  output { mean = 100  max = 1k } }
}
'''


def test_kv_overcommit_counts_one_sequence_in_the_singular():
    """SN4008 where one full-context sequence fits: `1 sequence fits`, not `1 sequences fit`."""
    d, = [d for d in compile_text(A2).diagnostics if d.code.code == "SN4008"]
    assert d.message.startswith("`serve`: 4 sequences at 32k tokens"), d.message
    assert d.help.startswith("at full context 1 sequence fits per attention group (max_num_seqs ≤ 1)"), d.help
    assert "with 4 sequences" in d.help and "1 sequences" not in d.help


ONE = '''plan "p" {
  model "qwen3-32b" { quant = fp8 }
  hardware { system = "hgx-h200"  devices = 1 }
  engine "vllm" {}
  serve { devices = 1  tp = 1  max_num_seqs = 1 }
  workload { requests = 1  concurrency = 1  input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''


def test_a_one_request_simulation_and_a_one_device_build_say_so_in_the_singular(tmp_path):
    """`simulate` text report (`1 request in`, `1 sequence per DP rank`) and the build's argument
    comments (`= 1 device`, `× 1 instance = 1 sequence`)."""
    from click.testing import CliRunner

    from expect import outputs_of
    from sncc.cli import main

    plan = tmp_path / "one.sn"
    plan.write_text(ONE, encoding="utf-8")
    res = CliRunner().invoke(main, ["simulate", str(plan)])
    assert res.exit_code == 0, res.output
    assert "plan `p`: 1 request in " in res.output and "decode step (1 sequence per DP rank)" in res.output, res.output
    assert "1 requests" not in res.output and "1 sequences" not in res.output
    yaml = outputs_of(ONE)["serve.yaml"]
    assert "tp × dp × pp = 1 × 1 × 1 = 1 device\n" in yaml and "× 1 × 1 instance = 1 sequence\n" in yaml, yaml

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

"""A rejected `quant` does not cascade: after `quant = w8a9` (SN2004) the model's native dtype
stands in for it, and no check judges that stand-in (bt28 #10: SN4002 "`ascend-910c` cannot run
`fp8` weights (the model's native dtype)", and a memory verdict sized with fp8 weights)."""

from __future__ import annotations

from expect import compile_text

PLAN = '''plan "q" {
  model "deepseek-r1" { weights = "/data/models/DeepSeek-R1-W8A8"  quant = QUANT }
  hardware { system = "atlas-900-a3-superpod"  nodes = 1 }
  engine "vllm-ascend" { version = "v0.11.0" }
  serve { devices = 16  tp = 1  ep = 16  max_num_seqs = 16 }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''


def _codes(quant: str) -> list[str]:
    return [d.code.code for d in compile_text(PLAN.replace("QUANT", quant)).diagnostics if d.is_error]


def test_rejected_quant_is_the_only_error():
    assert _codes("w8a9") == ["SN2004"]


def test_valid_quant_is_still_judged():
    # the same plan with a real format: the checks run (memory is judged on w8a8 weights)
    assert "SN4004" in _codes("w8a8")


def test_unwritten_quant_takes_the_native_dtype_and_is_judged():
    text = PLAN.replace("  quant = QUANT", "")
    codes = [d.code.code for d in compile_text(text).diagnostics if d.is_error]
    assert "SN4002" in codes

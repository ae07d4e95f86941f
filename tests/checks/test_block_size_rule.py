"""SN4045 for --block-size: vLLM 0.11.0's parser lists choices (its manifest); 0.23.0's takes any
int, and on CUDA its attention backends need a multiple of 16 (the vLLM adapter's
[[value_rules]], read in the 0.23.0 wheel)."""

from __future__ import annotations

import pytest

from expect import ROOT, compile_text

FIXED = (ROOT / "tests" / "cases" / "fixed" / "block-size-not-multiple-of-16.sn").read_text()


@pytest.mark.parametrize("version, size, message", [
    ("0.23.0", 7, "multiple of 16"), ("0.23.0", 100, "multiple of 16"), ("0.23.0", 48, None),
    ("0.23.0", 256, None), ("0.11.0", 48, "only as one of 1, 8, 16, 32, 64, 128"), ("0.11.0", 8, None),
])
def test_block_size_by_release(version, size, message):
    text = FIXED.replace('version = "0.23.0"', f'version = "{version}"').replace("block_size = 16", f"block_size = {size}")
    got = [d for d in compile_text(text).diagnostics if d.code.code == "SN4045"]
    if message is None:
        assert got == []
    else:
        assert len(got) == 1 and message in got[0].message, [d.message for d in got]


def test_help_suggests_the_nearest_multiples():
    text = FIXED.replace("block_size = 16", "block_size = 100")
    (d,) = [d for d in compile_text(text).diagnostics if d.code.code == "SN4045"]
    assert d.help == "use 96 or 112"


def test_a_rule_applies_only_to_its_vendor():
    from sncc.checks.engine_options import _value_rules
    from sncc.engines.registry import adapter_for

    vllm = adapter_for("vllm")
    assert [r["arg"] for r in _value_rules(vllm, "0.23.0", "nvidia")] == ["block-size"]
    assert _value_rules(vllm, "0.23.0", "ascend") == []
    assert _value_rules(vllm, "0.11.0", "nvidia") == []        # before the release the rule is read from

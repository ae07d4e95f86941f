"""A rejected `hardware { memory_utilization }` (SN2003 `64GB`, SN2009 `0%`) leaves the default
0.9 in the facts: a later memory diagnostic that prints the utilization says it assumes the
default because the written value is invalid (it read "budget 57.60 GiB (64.00 GiB x 0.9)" with a
label "memory utilization 0.9" at the hardware block, as if 0.9 had been written)."""
from __future__ import annotations

import pytest

from expect import compile_text
from tests_helpers import QWEN3_32B_A2

PLAN = QWEN3_32B_A2.replace("nodes = 1 }", "nodes = 1  memory_utilization = UTIL }")


def _sn4008(util: str):
    comp = compile_text(PLAN.replace("UTIL", util), "mem.sn")
    errors = sorted(d.code.code for d in comp.diagnostics if d.is_error)
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN4008"]
    return errors, d


@pytest.mark.parametrize("util,code", [("64GB", "SN2003"), ("0%", "SN2009")])
def test_a_rejected_utilization_is_named_as_the_assumed_default(util, code):
    errors, d = _sn4008(util)
    assert errors == [code]
    (label,) = [r.message for r in d.related if "memory utilization" in r.message]
    assert "0.9 assumed" in label and "invalid" in label, label
    assert "× 0.9; 0.9 is sncc's default, assumed because the memory_utilization written is invalid)" in d.notes[0]


def test_a_written_utilization_is_named_as_written():
    errors, d = _sn4008("90%")
    assert errors == []
    assert [r.message for r in d.related if "memory utilization" in r.message] == ["memory utilization 90%"]
    assert "assumed" not in d.notes[0] and "(64.00 GiB × 90%)" in d.notes[0]   # as written

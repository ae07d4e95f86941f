"""A value of a union-typed key (``max_model_len``: a token count or ``auto``) fails every branch
of the type; only the branch the value was written for says what is wrong.  ``max_model_len = 0``
was SN2004 "Input should be 'auto'" beside SN2009, and again on every revalidation when another
value of the plan was rejected too (reported by a break test of definitions files)."""

from __future__ import annotations

from expect import compile_text
from sncc.fmt import format_source
from sncc.source import SourceFile

PLAN = '''plan "union" {
  model "qwen3-32b" { max_model_len = LEN }
  hardware { system = "atlas-800-a2"  nodes = 1 }
  engine "vllm-ascend" { version = "v0.11.0" }
  serve { devices = 4  tp = TP }
  workload {
    concurrency = 8
    input { mean = 1k  max = 4k }
    output { mean = 1k  max = 4k }
  }
}
'''


def _codes(length: str, tp: str = "4"):
    text = PLAN.replace("LEN", length).replace("TP", tp)
    assert format_source(SourceFile("plan.sn", text)) == text   # `sncc fmt --check` clean
    diags = compile_text(text).diagnostics
    return [(d.code.code, d.message) for d in diags if str(d.severity).lower().endswith("error")]


def test_an_out_of_range_token_count_is_one_range_error():
    errs = _codes("0")
    assert [c for c, _ in errs] == ["SN2009"], errs
    assert "must be at least 1, found `0`" in errs[0][1]


def test_it_stays_one_error_beside_another_rejected_value():
    errs = _codes("0", tp="0")
    assert sorted(c for c, _ in errs) == ["SN2009", "SN2009"], errs
    assert not any("Input should be" in msg for _, msg in errs)


def test_a_word_other_than_auto_is_still_named():
    errs = _codes("big")
    assert len(errs) == 1 and errs[0][0] in ("SN2004", "SN2003"), errs

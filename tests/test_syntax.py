"""Parser, units and positions."""

from __future__ import annotations


import pytest

from sncc.source import SourceFile
from sncc.units import UnitError, parse_quantity
from expect import compile_text


@pytest.mark.parametrize("text,kind,value", [
    ("16k", "tokens", 16384), ("3.5k", "tokens", 3584), ("1M", "tokens", 1048576),
    ("2s", "duration", 2), ("50ms", "duration", 0.05), ("30min", "duration", 1800), ("2h", "duration", 7200),
    ("64GiB", "bytes", 64 * 2**30), ("64GB", "bytes", 64 * 10**9), ("1.6TB/s", "bandwidth", 1.6e12),
    ("90%", "ratio", 0.9),
])
def test_quantities(text, kind, value):
    q = parse_quantity(text)
    assert q.kind == kind and q.canonical() == pytest.approx(value)


def test_unknown_unit_suggests():
    with pytest.raises(UnitError) as e:
        parse_quantity("30sec")
    assert e.value.suggestion == "s"


def test_positions_tab_emoji_crlf():
    text = 'a\r\n\tb😀c\nd'
    src = SourceFile("x", text)
    assert src.line_col(0) == (1, 1)
    off_b = text.index("b")
    assert src.line_col(off_b) == (2, 2)          # a tab counts as one column
    off_c = text.index("c")
    assert src.line_col(off_c) == (2, 4)          # the emoji is one code point
    assert src.lsp_position(off_c) == (1, 4)      # … and two UTF-16 units
    assert src.line_col(text.index("d")) == (3, 1)
    assert src.offset_of_lsp(1, 4) == off_c


def test_wrong_kind_of_quantity():
    comp = compile_text('plan "p" { slo { ttft < 2GiB } }')
    codes = {d.code.code for d in comp.diagnostics}
    assert "SN2003" in codes


def test_syntax_error_reports_first_only_with_expected_tokens():
    comp = compile_text('plan "p" { a = = 1 b = = 2 }')
    assert [d.code.code for d in comp.diagnostics] == ["SN1001"]
    assert "found `=`" in comp.diagnostics[0].message


def test_deep_nesting_is_a_diagnostic_not_a_crash():
    text = 'plan "p" { ' + "a { " * 200 + "}" * 200 + " }"
    comp = compile_text(text)
    assert comp.diagnostics and comp.diagnostics[0].code.code == "SN1001"


def test_values_keep_spans_and_default_origin():
    comp = compile_text((__import__("expect").ROOT / "examples" / "deepseek-r1-a3-7p1d.sn").read_text())
    plan = comp.plan
    sp = plan.prefill.span_of("tp")
    assert comp.source.text[sp.start:sp.end] == "8"
    assert plan.prefill.origin("tp") == "file" and plan.prefill.origin("pp") == "default"
    assert plan.workload.input.mean == 3584 and plan.workload.output.mean == 1229
    assert plan.gateway.api_key.name == "GATEWAY_API_KEY"
    assert plan.slo[0].metric == "engine_ttft" and plan.slo[0].target == 2.0


@pytest.mark.parametrize("text", [
    'plan "p" { ; tp = 2 }',                 # a separator right after `{`
    'plan "p" { tp = 2;; dp = 1 }',          # two in a row
    'plan "p" { serve { ; tp = 2; }; }',     # in a nested block, and after it
])
def test_separators_anywhere_between_items(text):
    comp = compile_text(text)
    assert not any(d.code.code.startswith("SN1") for d in comp.diagnostics), comp.diagnostics


def test_separator_is_not_a_value():
    comp = compile_text('plan "p" { tp = ; }')
    assert [d.code.code for d in comp.diagnostics] == ["SN1001"]


@pytest.mark.parametrize("n,text", [
    (12.34 * 2**30, "12.34 GiB"), (1023.99 * 2**30, "1023.99 GiB"), (1023.999 * 2**30, "1.00 TiB"),
    (31_250_000 * 2**30, "29.80 PiB"), (float("nan"), "n/a"), (float("inf"), "n/a"),
])
def test_byte_counts_in_messages_stay_readable(n, text):
    from sncc.units import format_bytes_gib
    assert format_bytes_gib(n) == text

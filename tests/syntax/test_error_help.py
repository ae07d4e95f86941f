"""Syntax errors that a common slip explains get that explanation, at the slip (fresh-user test:
`16 k` was reported on the next line, `tp: 4` and `rate = 4/s` had no help, a YAML file checked as a
plan did not point at `sncc import`)."""
from __future__ import annotations

import pytest

from expect import compile_text

HEAD = 'plan "x" {\n  model "qwen3-32b" {}\n  hardware { system = "hgx-h200"  nodes = 1 }\n  engine "vllm" {}\n'


def _error(body: str, head: str = HEAD):
    comp = compile_text(head + body)
    (d,) = [d for d in comp.diagnostics if d.is_error]
    return d, comp.source.line_col(d.span.start), comp.source.text[d.span.start:d.span.end]


def test_a_space_inside_a_quantity_is_reported_at_the_quantity():
    d, (line, _), text = _error("  serve { devices = 8  tp = 8\n    max_num_batched_tokens = 16 k\n    chunked_prefill = 8k }\n}\n")
    assert line == 6 and text == "16 k" and "`16k`" in d.help


@pytest.mark.parametrize("body,needle", [
    ("  serve { devices = 8  tp: 8 }\n}\n", "`key = value`"),
    ("  serve { devices = 8  tp = 8 }\n  workload { rate = 4/s }\n}\n", "`rate = 4`"),
    ("  serve { devices = 8  tp = 8 }\n  slo { ttft p90 < 2s }\n}\n", "`ttft.p90 < …`"),
])
def test_common_slips_get_their_help(body, needle):
    d, _, _ = _error(body)
    assert d.help and needle in d.help


def test_a_yaml_file_points_at_import():
    d, _, _ = _error('model: "deepseek-v3"\ntensor-parallel-size: 8\n', head="")
    assert "sncc import" in d.help


def test_a_colon_inside_a_plan_does_not_suggest_import():
    d, _, _ = _error("  serve { devices = 8  tp: 8 }\n}\n")
    assert "import" not in d.help


@pytest.mark.parametrize("written,shown", [("1e3", "`1000`"), ("2.5E+2", "`250`"), ("1e-3", "`0.001`")])
def test_exponent_notation_says_it_is_unsupported(written, shown):
    """`requests = 1e3` gave "expected `}` ... found `3`"."""
    d, _, text = _error(f"  serve {{ devices = 8  tp = 8 }}\n  workload {{ requests = {written} }}\n}}\n")
    assert text == written and "exponent notation" in d.message
    assert shown in d.help and "`1k`" in d.help


@pytest.mark.parametrize("body,needle", [
    # typographic quotes pasted from a word processor or a chat client
    ('  serve { devices = 8  tp = 8 }\n  gateway { model = \u201cqwen3-32b\u201d }\n}\n', "use straight quotes"),
    ("  serve { devices = 8  tp = 8 }\n  gateway { model = \u2018qwen3-32b\u2019 }\n}\n", "use straight quotes"),
    # a rate SLO is per its own unit already: the help is about the SLO, not about `rate`
    ("  serve { devices = 8  tp = 8 }\n  slo { ttft < 2s  qpm >= 10/min }\n}\n", "QPM is per minute already: write `qpm >= 10`"),
    ("  serve { devices = 8  tp = 8 }\n  slo { output_tokens_per_s >= 5000/s }\n}\n",
     "`output_tokens_per_s` is per second already: write `output_tokens_per_s >= 5000`"),
])
def test_quotes_and_slo_slashes_get_their_help(body, needle):
    d, _, text = _error(body)
    assert d.code.code == "SN1002" and d.help and needle in d.help, d.help
    assert "rate" not in d.help


def test_curly_quoted_model_name_points_at_the_quote():
    d, (line, col), text = _error('  serve { devices = 8  tp = 8 }\n}\n', head='plan "x" {\n  model \u201cqwen3-32b\u201d {}\n')
    assert (line, col, text) == (2, 9, "\u201c") and "use straight quotes" in d.help

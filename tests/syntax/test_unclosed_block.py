"""A missing `}` is reported where the block that is not closed starts, with the end of the file
(rustc's "unclosed delimiter": the opener, the `}` whose indentation gives the slip away, the end).

Before: the `serve` block below missing its `}` was reported at the `plan` block's `{`."""
from __future__ import annotations

from expect import compile_text

MISSING_SERVE_CLOSE = '''plan "x" {
  model "qwen3-32b" { weights = "/data/models/Qwen3-32B" }
  hardware { system = "atlas-800-a2"  nodes = 1 }
  serve {
    devices = 8
    tp = 8
  workload {
    requests = 10
  }
}
'''


def _error(text):
    (d,) = [d for d in compile_text(text).diagnostics if d.is_error]
    return d


def test_the_block_missing_its_brace_is_the_primary_span():
    d = _error(MISSING_SERVE_CLOSE)
    assert d.code.code == "SN1003" and "unclosed delimiter" in d.message and "`serve`" in d.message
    assert MISSING_SERVE_CLOSE[d.span.start - 6:d.span.start + 1] == "serve {"
    labels = {r.message: r.span.start for r in d.related}
    assert labels["the file ends here"] == len(MISSING_SERVE_CLOSE.rstrip())
    assert MISSING_SERVE_CLOSE[labels["so this `{` is left open at the end of the file"] - 1:][:2] == " {"
    assert "line 10" in d.help


def test_a_file_that_just_stops_names_the_innermost_open_block_and_the_end():
    text = 'plan "x" {\n  model "qwen3-32b" { quant = bf16 }\n  serve { devices = 8\n'
    d = _error(text)
    assert text[d.span.start - 6:d.span.start + 1] == "serve {"
    assert [r.message for r in d.related] == ["the file ends here"]


def test_braces_inside_strings_and_comments_do_not_count():
    text = 'plan "x" {  # a { here\n  model "q{" { quant = bf16 }\n'
    d = _error(text)
    assert d.span.start == text.index("{")

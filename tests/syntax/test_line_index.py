"""`SourceFile`'s line index: linear in the file (1 MiB of newlines once took 10 s), and
every line break it counts (`\\n`, `\\r\\n`, a lone `\\r`) also ends a comment, so a file with
classic-Mac `\\r` endings and a leading comment still holds its plan."""

from __future__ import annotations

from expect import assert_linear
from sncc.compiler import Compilation
from sncc.source import SourceFile

PLAN = [
    "# Qwen3-32B on one H100 node",
    'plan "m" {  # the plan',
    '  model "qwen3-32b" {}',
    '  hardware { system = "hgx-h100"  nodes = 1 }  # one node',
    '  engine "vllm" {}',
    "  serve { devices = 8  tp = 8 }",
    "  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }",
    "}",
]


def test_mixed_line_breaks():
    src = SourceFile("x", "a\nb\r\nc\rd")
    assert src.line_count == 4
    assert [src.line_text(i) for i in (1, 2, 3, 4)] == ["a", "b", "c", "d"]
    assert src.line_col(src.text.index("d")) == (4, 1)
    assert src.line_col(src.text.index("c")) == (3, 1)


def test_index_is_linear():
    """2 MiB of newlines (39 s before the fix, quadratic) costs a linear multiple of 1/8 of it
    in CPU time (a ratio within one run, so load on the machine does not fail it)."""
    assert_linear(lambda n: SourceFile("x", "\n" * n), 2**18, 2**21, "2 MiB of \\n")
    assert_linear(lambda n: SourceFile("x", "\r" * n + "x"), 2**17, 2**20, "1 MiB of \\r")
    src = SourceFile("x", "\n" * (2 * 2**20))
    assert src.line_count == 2 * 2**20 + 1
    src = SourceFile("x", "\r" * 2**20 + "x")
    assert src.line_col(2**20) == (2**20 + 1, 1)


def test_cr_only_file_with_comments_holds_its_plan():
    for eol in ("\r", "\r\n", "\n"):
        text = eol.join(PLAN) + eol
        comp = Compilation(SourceFile("p.sn", text))
        errors = [(d.code.code, d.message) for d in comp.diagnostics if d.is_error]
        assert comp.plan is not None, (repr(eol), errors)
        assert not errors, (repr(eol), errors)
        assert comp.plan.hardware.system == "hgx-h100"


def test_cr_only_string_does_not_swallow_the_next_line():
    text = 'plan "m" {\r  model "qwen3-32b\r  engine "vllm" {}\r}\r'
    diags = Compilation(SourceFile("p.sn", text)).diagnostics
    src = SourceFile("p.sn", text)
    assert diags and src.line_col(diags[0].span.start)[0] == 2, [(d.code.code, src.line_col(d.span.start)) for d in diags]

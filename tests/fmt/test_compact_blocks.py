"""`sncc fmt` keeps short blocks on one line (issue 14 item 13), as rustfmt and black keep
short calls: a block written without a line break after its `{` stays on one line when it
has no comment inside and fits :data:`sncc.fmt.WIDTH` columns; a block its writer broke
after the `{` stays expanded (Prettier's rule for objects).  Every example and test plan is
in this canonical layout (`sncc fmt --check` passes on all of them)."""

from __future__ import annotations

from click.testing import CliRunner

from expect import ROOT
from sncc.cli import main
from sncc.fmt import WIDTH, format_source
from sncc.source import SourceFile


def fmt(text: str) -> str:
    return format_source(SourceFile("x.sn", text))


def test_short_blocks_stay_on_one_line():
    text = ('plan "p" {\n'
            '  kv_cache { dtype = int8  block_size = 128 }\n'
            '  decode  {instances = 1;devices = 64}\n'
            '  workload { requests = 300\n'
            '             input { mean = 3.5k  max = 16k }  output { mean = 1.2k  max = 32k } }\n'
            '}\n')
    assert fmt(text) == ('plan "p" {\n'
                         '  kv_cache { dtype = int8  block_size = 128 }\n'
                         '  decode { instances = 1  devices = 64 }\n'
                         '  workload { requests = 300  input { mean = 3.5k  max = 16k }  output { mean = 1.2k  max = 32k } }\n'
                         '}\n')


def test_a_block_too_wide_expands_and_its_short_children_stay_compact():
    inner = "  ".join(f"k{i} = {i}" for i in range(12))
    text = f'plan "p" {{\n  workload {{ {inner}  input {{ mean = 1k  max = 2k }} }}\n}}\n'
    assert len(text.splitlines()[1]) > WIDTH
    out = fmt(text)
    assert out.splitlines()[1] == "  workload {"
    assert "    input { mean = 1k  max = 2k }" in out.splitlines()
    assert max(map(len, out.splitlines())) <= WIDTH
    assert fmt(out) == out


def test_a_block_broken_after_its_brace_stays_expanded():
    text = 'plan "p" {\n  hardware {\n    system = "hgx-h100"\n    nodes = 1\n  }\n}\n'
    assert fmt(text) == text


def test_a_comment_inside_a_block_expands_it():
    out = fmt('plan "p" {\n  env { A = 1  # why\n  B = 2 }\n}\n')
    assert out == 'plan "p" {\n  env {\n    A = 1  # why\n    B = 2\n  }\n}\n'


#: a renderer fixture that must keep a tab before its diagnostic's column (fmt would drop it)
UNFORMATTED = {"tests/golden/formats/plans/unicode-tab.sn"}


def test_every_example_and_test_plan_is_formatted():
    plans = sorted({str(p) for pattern in ("examples/**/*.sn", "tests/**/*.sn") for p in ROOT.glob(pattern)
                    if str(p.relative_to(ROOT)) not in UNFORMATTED})
    from sncc.syntax.parser import parse

    parsing = [p for p in plans if parse(SourceFile(p, open(p, encoding="utf-8").read()))[0] is not None]
    assert len(parsing) >= 60
    res = CliRunner().invoke(main, ["fmt", "--check", *parsing])
    assert res.exit_code == 0, res.output[-3000:]

"""`sncc fmt`: canonical layout, idempotence, comments kept, same typed plan, CLI."""

from __future__ import annotations

import os
import stat

import pytest
from click.testing import CliRunner

from expect import ROOT
from sncc.cli import main
from sncc.compiler import compile_file
from sncc.diagnostics.filters import apply_suppressions, scan_comments
from sncc.fmt import FormatRefused, format_source
from sncc.source import SourceFile

PLANS = sorted(
    p for pattern in ("examples/*.sn", "examples/shared/*.sn", "examples/broken/*.sn", "tests/cases/fixed/**/*.sn",
                      "tests/golden/formats/plans/*.sn")
    for p in ROOT.glob(pattern)
)


def _parses(path) -> bool:
    from sncc.syntax.parser import parse

    return parse(SourceFile(str(path), path.read_text(encoding="utf-8")))[0] is not None


FORMATTABLE = [p for p in PLANS if _parses(p)]


def _strip_spans(x):
    if isinstance(x, dict):
        return {k: _strip_spans(v) for k, v in x.items() if k != "span" and not k.endswith("_span")}
    if isinstance(x, list):
        return [_strip_spans(v) for v in x]
    return x


def _codes(comp) -> list[tuple[str, str]]:
    diags = apply_suppressions(comp.diagnostics, comp.sources, report_unused=comp.plan is not None)
    return sorted((d.code.code, d.severity) for d in diags)


def test_the_corpus_is_large():
    # unclosed-block does not parse; syntax-error.sn parses (`tp == 8` is a comparison; the plan
    # builder reports SN1001) and is formatted as written
    assert len(FORMATTABLE) >= 50 and len(PLANS) - len(FORMATTABLE) >= 1


@pytest.mark.parametrize("path", FORMATTABLE, ids=lambda p: str(p.relative_to(ROOT)))
def test_idempotent_keeps_comments_and_meaning(path):
    name = str(path)
    text = path.read_text(encoding="utf-8")
    once = format_source(SourceFile(name, text))
    twice = format_source(SourceFile(name, once))
    assert once == twice
    # every comment kept, in order, text unchanged but for trailing blanks
    assert [c.text.rstrip() for c in scan_comments(once)] == [c.text.rstrip() for c in scan_comments(text)]
    # same typed plan, same diagnostics (after inline suppressions)
    before, after = compile_file(SourceFile(name, text)), compile_file(SourceFile(name, once))
    if before.plan is not None:
        assert _strip_spans(after.plan.model_dump()) == _strip_spans(before.plan.model_dump())
    else:
        assert after.plan is None
    assert _codes(after) == _codes(before)


def test_canonical_layout():
    text = (
        "# header\n\n"
        'import "shared.sn";\n'
        'plan "p" { model "m" { quant = w8a8;weights="a\\tb\\"c" }   # after model\n'
        "  hardware {nodes=2\n\n\n  cann = \"8.2.RC1\"  # cann\n  }\n"
        "  engine \"vllm\" { }\n"
        "  slo { ttft<2s; tpot < 50ms }\n"
        "  prefill { tp = # inside\n 8 ep = 2  # two\n # dangling\n}\n"
        "  env { X = [1,2 , 3]  Y = env( \"K\" ) }\n"
        "}\n# end\n"
    )
    expected = (
        "# header\n\n"
        'import "shared.sn"\n\n'
        'plan "p" {\n'
        '  model "m" { quant = w8a8  weights = "a\\tb\\"c" }  # after model\n'
        "  hardware {\n"
        "    nodes = 2\n\n"
        '    cann = "8.2.RC1"  # cann\n'
        "  }\n"
        '  engine "vllm" {}\n'
        "  slo { ttft < 2s  tpot < 50ms }\n"
        "  prefill {\n"
        "    # inside\n"
        "    tp = 8\n"
        "    ep = 2  # two\n"
        "    # dangling\n"
        "  }\n"
        '  env { X = [1, 2, 3]  Y = env("K") }\n'
        "}\n"
        "# end\n"
    )
    assert format_source(SourceFile("x.sn", text)) == expected
    assert format_source(SourceFile("x.sn", expected)) == expected


def test_crlf_and_bom_are_kept():
    text = '\ufeffplan "p" {\r\n  env {A=1}  # c\r\n  serve {\r\n tp = 1 }\r\n}\r\n'
    out = format_source(SourceFile("x.sn", text))
    assert out == '\ufeffplan "p" {\r\n  env { A = 1 }  # c\r\n  serve {\r\n    tp = 1\r\n  }\r\n}\r\n'


def test_refuses_files_that_do_not_parse():
    text = (ROOT / "examples" / "broken" / "unclosed-block.sn").read_text(encoding="utf-8")
    with pytest.raises(FormatRefused) as e:
        format_source(SourceFile("s.sn", text))
    assert e.value.diagnostics[0].code.code == "SN1003"
    with pytest.raises(FormatRefused) as e:
        format_source(SourceFile("s.sn", 'plan "p" { serve { tp = = 8 } }'))
    assert e.value.diagnostics[0].code.code == "SN1001"


# --- CLI -----------------------------------------------------------------------------------


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


def test_fmt_check_diff_write(tmp_path):
    p = tmp_path / "plan.sn"
    original = (ROOT / "examples" / "deepseek-r1-a3-7p1d.sn").read_text(encoding="utf-8").replace("    nodes = 11", "    nodes  = 11")
    p.write_text(original, encoding="utf-8")
    os.chmod(p, 0o640)
    r = run("fmt", "--check", str(p))
    assert r.exit_code == 1 and "would reformat" in r.output
    r = run("fmt", "--diff", str(p))
    assert r.exit_code == 0 and "+++ " in r.output and "-    nodes  = 11" in r.output
    assert p.read_text(encoding="utf-8") == original  # --check and --diff write nothing
    r = run("fmt", str(p))
    assert r.exit_code == 0 and "reformatted" in r.output
    assert p.read_text(encoding="utf-8") == format_source(SourceFile(str(p), original))
    assert stat.S_IMODE(p.stat().st_mode) == 0o640
    assert [q.name for q in tmp_path.iterdir()] == ["plan.sn"]  # no temporary file left
    assert run("fmt", "--check", str(p)).exit_code == 0


def test_fmt_refuses_syntax_errors_and_leaves_the_file(tmp_path):
    p = tmp_path / "bad.sn"
    text = 'plan "p" {\n  serve { tp = = 8 }\n}\n'
    p.write_text(text, encoding="utf-8")
    r = run("fmt", str(p))
    assert r.exit_code == 1 and "error[SN1001]" in r.output and "not formatting" in r.output
    assert p.read_text(encoding="utf-8") == text
    assert run("fmt", str(tmp_path / "missing.sn")).exit_code == 2


def test_fmt_stdin_to_stdout():
    r = run("fmt", "-", input='plan "p" { env { A = 1 } }\n')
    assert r.exit_code == 0
    assert r.output.startswith('plan "p" {\n  env { A = 1 }\n}\n')


def test_fmt_stdin_prints_no_file_count():
    """`fmt -` formats stdin to stdout: no "0 files reformatted, 0 left unchanged" line, even on empty input."""
    for text in ("", 'plan "p" {}\n'):
        r = run("fmt", "-", input=text)
        assert r.exit_code == 0 and "files reformatted" not in r.output and "left unchanged" not in r.output


def _summary(output: str) -> str:
    (line,) = [ln for ln in output.splitlines() if "left unchanged" in ln]
    return line


@pytest.mark.parametrize("flags, verb", [(("--check",), "would be reformatted"), ((), "reformatted")])
def test_fmt_summary_counts_the_file_that_does_not_parse(tmp_path, flags, verb):
    """Several files, one unparseable: the summary counts it (it said "1 file would be reformatted,
    0 left unchanged", as if every file given had been formatted)."""
    bad, ugly = tmp_path / "bad.sn", tmp_path / "ugly.sn"
    bad.write_text('plan "p" {\n  serve { tp = = 8 }\n}\n', encoding="utf-8")
    ugly.write_text('plan "p" {   env { A = 1 } }\n', encoding="utf-8")
    r = run("fmt", *flags, str(bad), str(ugly))
    assert r.exit_code == 1
    assert _summary(r.output) == f"1 file {verb}, 0 left unchanged, 1 file could not be parsed"


def test_fmt_summary_counts_an_unreadable_file(tmp_path):
    ok = tmp_path / "ok.sn"
    ok.write_text('plan "p" {\n  env { A = 1 }\n}\n', encoding="utf-8")
    r = run("fmt", "--check", str(ok), str(tmp_path / "a.sn"), str(tmp_path / "b.sn"))
    assert r.exit_code == 2
    assert _summary(r.output) == "0 files would be reformatted, 1 left unchanged, 2 files could not be read"


def test_fmt_summary_of_clean_files_names_no_failure(tmp_path):
    ok = tmp_path / "ok.sn"
    ok.write_text('plan "p" {\n  env { A = 1 }\n}\n', encoding="utf-8")
    assert _summary(run("fmt", "--check", str(ok)).output) == "0 files would be reformatted, 1 left unchanged"

"""HCCL_BUFFSIZE below CANN's minimum (1 MB) is a range error, not a buffer too small for the dispatch."""
from __future__ import annotations

from expect import ROOT, compile_text
from tests_helpers import QWEN3_32B_A2

SEED = (ROOT / "examples" / "deepseek-r1-a3-7p1d.sn").read_text(encoding="utf-8")


def _codes(value: str):
    comp = compile_text(SEED.replace("HCCL_BUFFSIZE = 1000", f"HCCL_BUFFSIZE = {value}"), "seed.sn")
    return comp, [d for d in comp.diagnostics if d.code.code in ("SN2009", "SN4010")]


def test_a_negative_buffer_size_is_out_of_range():
    """`HCCL_BUFFSIZE = -5` said "-5 MB is below the 534 MB the MoE dispatch/combine needs"."""
    comp, (d,) = _codes("-5")
    assert d.code.code == "SN2009" and "at least 1" in d.message, d.message
    assert comp.source.text[d.span.start:d.span.end] == "-5"
    _, (d,) = _codes("0")
    assert d.code.code == "SN2009"


def test_a_positive_size_below_the_dispatch_is_still_sn4010():
    _, (d,) = _codes("100")
    assert d.code.code == "SN4010"


def test_a_size_that_is_not_a_whole_number_is_out_of_range():
    """Review item 4: `HCCL_BUFFSIZE = "1.5"` drew nothing, though CANN takes a whole number of MB."""
    for value in ('"1.5"', '"1GB"', '"2048.0"'):
        comp, (d,) = _codes(value)
        assert d.code.code == "SN2009" and "not a whole number" in d.message, (value, d.message)
        assert d.path == ("env", "HCCL_BUFFSIZE")
    assert _codes('"1.5"')[1][0].help.endswith('(`HCCL_BUFFSIZE = "1"`)')


def test_a_role_level_size_has_the_roles_path():
    """Review item 4: a role's `env { HCCL_BUFFSIZE }` said path ['env', 'HCCL_BUFFSIZE']."""
    text = SEED.replace("HCCL_BUFFSIZE = 1000", "HCCL_BUFFSIZE = 2048")
    text = text.replace("decode {", 'decode {\n    env { HCCL_BUFFSIZE = "0.5" }', 1)
    assert text.count("0.5") == 1
    comp = compile_text(text, "seed.sn")
    (d,) = [d for d in comp.diagnostics if d.code.code in ("SN2009", "SN4010")]
    assert d.code.code == "SN2009" and d.path == ("decode", "env", "HCCL_BUFFSIZE")


def _built_buffsize(tmp_path, text: str) -> str:
    """The HCCL_BUFFSIZE `sncc build` writes for plan ``text`` (env/common.sh)."""
    from click.testing import CliRunner

    from sncc.cli import main

    plan = tmp_path / "plan.sn"
    plan.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(main, ["build", str(plan), "-o", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    common = (tmp_path / "out" / "env" / "common.sh").read_text(encoding="utf-8")
    (line,) = [ln for ln in common.splitlines() if ln.startswith("export HCCL_BUFFSIZE=")]
    return line.split("=", 1)[1].split()[0]


def test_the_help_names_the_default_removing_the_value_gives_and_the_bare_mb(tmp_path):
    """User report: SN2009's help for `HCCL_BUFFSIZE = 2GB` said "remove it for CANN's default
    (200 MB)", but removing it made `sncc build` write sncc's MoE default (1024 MB)."""
    _, (d,) = _codes("2GB")
    assert d.code.code == "SN2009" and "has a unit" in d.message and "bare whole number of MB" in d.message
    assert "CANN's default (200 MB)" not in d.help and "1024 MB" in d.help, d.help
    assert '`HCCL_BUFFSIZE = "2048"` for 2GB' in d.help
    removed = SEED.replace("  env { HCCL_BUFFSIZE = 1000 }", "  # no HCCL_BUFFSIZE")
    assert removed != SEED and _built_buffsize(tmp_path, removed) == "1024"
    _, (d,) = _codes('"512 MiB"')
    assert '`HCCL_BUFFSIZE = "512"` for 512 MiB' in d.help


DENSE = QWEN3_32B_A2


def test_a_dense_plans_help_names_canns_default(tmp_path):
    text = DENSE.replace("  slo {", "  env { HCCL_BUFFSIZE = 2GB }\n  slo {")
    (d,) = [d for d in compile_text(text, "a2.sn").diagnostics if d.code.code == "SN2009"]
    assert "CANN's default (200 MB)" in d.help and '"2048"' in d.help, d.help
    assert _built_buffsize(tmp_path, DENSE) == "200"

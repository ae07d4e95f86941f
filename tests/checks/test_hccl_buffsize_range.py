"""HCCL_BUFFSIZE below CANN's minimum (1 MB) is a range error, not a buffer too small for the dispatch."""
from __future__ import annotations

from expect import ROOT, compile_text

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

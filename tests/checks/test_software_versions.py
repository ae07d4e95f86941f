"""CANN and engine-release hints (SN4005–SN4007) that do not go round in a circle, and CANN
where it means nothing (issue 14 items 8 and 9).

On `atlas-950-superpod` (950DT, which CANN lists from 9.1.0) with vllm-ascend v0.25.1rc1
(built for CANN 9.0.1) no CANN release satisfies both: 9.0.1 drew "use 9.1.0 or later"
and 9.1.0 then "use 9.0.1".  The diagnostic must name the engine releases that work with
the chip, and stop there.  A `cann` on NVIDIA hardware passed without a word.
"""

from __future__ import annotations

import pytest

from tests_helpers import compile_plan

ASCEND = '''plan "p" {
  model "qwen3-32b" {}
  hardware { system = "SYSTEM"  nodes = 1  cann = "CANN" }
  engine "vllm-ascend" { version = "VERSION" }
  serve { devices = 8  tp = 8 }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''
SOFTWARE = {"SN4005", "SN4006", "SN4007"}


def _software(system: str, cann: str, version: str):
    text = ASCEND.replace("SYSTEM", system).replace("CANN", cann).replace("VERSION", version)
    return [d for d in compile_plan(text).diagnostics if d.code.code in SOFTWARE]


@pytest.mark.parametrize("cann", ["9.0.1", "9.1.0"])
def test_no_cann_fits_chip_and_engine_names_the_releases_that_do(cann):
    diags = _software("atlas-950-superpod", cann, "v0.25.1rc1")
    assert len(diags) == 1, [(d.code.code, d.message, d.help) for d in diags]
    (d,) = diags
    text = d.message + " " + (d.help or "")
    assert "v0.23.0" in text and "9.1.0" in text, text  # v0.23.0 is built for CANN 9.1.0
    assert "use CANN 9.0.1" not in text and "9.1.0 or later" not in text, text
    assert not d.fixes, "no single edit fixes it"


def test_working_pair_is_clean():
    assert _software("atlas-950-superpod", "9.1.0", "v0.23.0") == []


def test_cann_the_engine_needs_is_suggested_when_it_supports_the_chip():
    """A3 with vllm-ascend v0.11.0 (CANN 8.3.RC2) and CANN 8.0.0 (before A3): the hint is the
    engine's CANN, not 'the first CANN for A3 or later', so the next run is clean."""
    (d,) = [d for d in _software("atlas-900-a3-superpod", "8.0.0", "v0.11.0") if d.code.code == "SN4005"]
    assert "8.3.RC2" in d.help
    assert _software("atlas-900-a3-superpod", "8.3.RC2", "v0.11.0") == []


NVIDIA = '''plan "p" {
  model "qwen3-32b" {}
  hardware { system = "hgx-h200"  nodes = 1  CANN}
  engine "vllm" {}
  serve { devices = 8  tp = 8 }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''


def test_cann_on_nvidia_is_reported_with_a_fix():
    text = NVIDIA.replace("CANN", 'cann = "8.3.RC2"  ')
    (d,) = [d for d in compile_plan(text).diagnostics if "cann" in d.message.lower()]
    assert d.code.code == "SN4015" and d.severity == "warning"
    assert "NVIDIA" in d.message
    assert d.span.start == text.index('"8.3.RC2"')
    (fix,) = d.fixes
    fixed = text[: fix.edits[0].span.start] + fix.edits[0].new_text + text[fix.edits[0].span.end:]
    assert "cann" not in fixed
    assert not [d for d in compile_plan(NVIDIA.replace("CANN", "")).diagnostics if "cann" in d.message.lower()]


def test_cann_before_the_first_sourced_release_is_a_warning_not_an_error():
    """The catalog's first source listing Atlas A2 is CANN 8.0.0; nothing sourced says 7.0.0
    does NOT support 910B2 (the torch_npu tables pair it with CANN 7.0.0), so sncc must not
    claim it as an error."""
    (d,) = [d for d in _software("atlas-800-a2", "7.0.0", "v0.7.3") if d.code.code == "SN4005"] or [None]
    assert d is not None and d.severity == "warning", d
    assert "8.0.0" in d.message + (d.help or "")
    assert "does not support" not in d.message


def test_a_cann_release_no_source_names_is_a_warning_where_no_engine_pairing_judges_it():
    """Omni-Infer has no CANN pairing table, so an unknown `cann` (a user's break test wrote
    "8.2.RC9" into seed 000's plan, whose own "8.2.RC1" is a known release) passed silently and
    was written into manifest.json; on vllm-ascend SN4006 already names the paired release."""
    from pathlib import Path

    seed = (Path(__file__).resolve().parents[2] / "examples" / "deepseek-r1-a3-7p1d.sn").read_text(encoding="utf-8")
    assert 'cann = "8.2.RC1"' in seed
    bad = compile_plan(seed.replace('cann = "8.2.RC1"', 'cann = "8.2.RC9"'))
    (d,) = [d for d in bad.diagnostics if d.code.code == "SN2008"]
    assert d.severity == "warning" and "CANN 8.2.RC9" in d.message and "`8.3.RC2`" in d.help
    assert bad.source.line_col(d.span.start)[0] == seed[:seed.index("8.2.RC1")].count("\n") + 1
    assert not [d for d in compile_plan(seed).diagnostics if d.code.code == "SN2008"]
    va = _software("atlas-800i-a3", "8.2.RC9", "v0.11.0")
    assert [d.code.code for d in va] == ["SN4006"]

"""Every example passes; every broken example reports exactly the errors it declares inline
(``# E: CODE[:COL]``, code and line, as tests/cases does) and the warnings it declares
(``# W: CODE``); every corrected twin (tests/cases/fixed/) passes."""

from __future__ import annotations

import pathlib

import pytest

from expect import ROOT, expectations, expectations_with_severity

EXAMPLES = sorted((ROOT / "examples").glob("*.sn"))
BROKEN = sorted((ROOT / "examples" / "broken").glob("*.sn"))
TWINS = ROOT / "tests" / "cases" / "fixed"


def _compile(path: pathlib.Path):
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    return compile_file(SourceFile(str(path), path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_has_no_errors(path):
    comp = _compile(path)
    errors = [d for d in comp.diagnostics if d.is_error]
    assert comp.plan is not None
    assert not errors, [(d.code.code, d.message) for d in errors]


def test_every_check_has_a_broken_example():
    """Each error code a check can raise has a broken plan that shows it."""
    from sncc.diagnostics.codes import REGISTRY

    shown = {code for p in BROKEN for code, _, _ in expectations(p)}
    # SN80xx are `sncc import`'s, located in launch scripts: tests/import/ shows each;
    # SN81xx are `sncc search`'s, located in the search block: tests/search/ shows each;
    # SN4080 / SN5080 / SN5083 are raised by `sncc simulate`, not by a check (tests/sim/test_every_chip_and_example.py,
    # tests/test_build.py); SN1080 and SN2080–SN2085 by `sncc calibrate`, located in its measurements
    # file (tests/sim/test_calibrate_diagnostics.py shows each)
    calibrate = {"SN1080", *(f"SN20{n}" for n in range(80, 86))}
    wanted = {c for c, ec in REGISTRY.items() if ec.severity == "error"
              and c not in ("SN9001", "SN1002", "SN1004", "SN1060", "SN2005", "SN2006", "SN2010", "SN4080", "SN5080", "SN5083")
              and c not in calibrate and not c.startswith(("SN80", "SN81"))}
    assert wanted <= shown, sorted(wanted - shown)


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.name)
def test_broken_example_reports_exactly_what_it_declares(path):
    expected = expectations_with_severity(path)
    assert expected, f"{path.name} has no `# E:` expectation"
    comp = _compile(path)
    got = {(d.code.code, comp.source.line_col(d.span.start)[0]) for d in comp.diagnostics if d.is_error and d.span}
    want = {(c, line) for sev, c, line, _ in expected if sev == "error"}
    assert got == want, (f"{path.name}: errors differ", sorted(got), sorted(want),
                         [(d.code.code, d.message) for d in comp.diagnostics if d.is_error])
    warned = {(d.code.code, comp.source.line_col(d.span.start)[0]) for d in comp.diagnostics
              if d.severity == "warning" and d.span}
    assert {(c, line) for sev, c, line, _ in expected if sev == "warning"} <= warned, sorted(warned)
    for sev, code, line, col in expected:
        if col is not None:
            cols = {comp.source.line_col(d.span.start)[1] for d in comp.diagnostics if d.span
                    and d.code.code == code and comp.source.line_col(d.span.start)[0] == line}
            assert col in cols, (path.name, code, line, col, cols)


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.name)
def test_corrected_twin_passes(path):
    twin = TWINS / path.name
    if path.name == "seed-001-as-written.sn":
        twin = ROOT / "examples" / "deepseek-v4-flash-a3-64.sn"
    assert twin.exists(), f"no corrected twin for {path.name}"
    comp = _compile(twin)
    errors = [(d.code.code, d.message) for d in comp.diagnostics if d.is_error]
    assert not errors, errors

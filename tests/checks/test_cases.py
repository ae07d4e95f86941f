"""Misconfiguration cases as plans: the BR cases of ../shared/reference/misconfig-cases.md
(``tests/cases/br-XX-<slug>.sn``) and the rule kinds of issue 10 (``tests/cases/<kind>-<report>.sn``,
listed in ``sncc/checks/rule_kinds.toml``).

Each case states its rule kind and report URL in its header and marks its expected diagnostics
inline, mypy style: ``# E: SNxxxx`` (error) or ``# W: SNxxxx`` (warning), optionally ``:COL``.
The errors a case reports must be exactly the expected ones (code and line); expected warnings
must be present.  Its twin ``<name>.fixed.sn`` must have no error and no warning of the case's
codes (but the errors it declares itself, ``# E: CODE reason``, that no correction of the report
can remove) — except where the rule kind ``awaits`` another module (then strictly expected to fail).
"""

from __future__ import annotations

import pathlib
import re

import pytest

from expect import ROOT, expectations_with_severity

CASES_DIR = ROOT / "tests" / "cases"
CASES = sorted(p for p in CASES_DIR.glob("*.sn") if not p.name.endswith(".fixed.sn"))
BR_CASES = [p for p in CASES if p.name.startswith("br-")]
REFERENCE = ROOT.parent / "shared" / "reference" / "misconfig-cases.md"
BR_IDS_FALLBACK = (
    "01 03 04 06 07 09 10 11 12 14 15 16 18 20 21 23 24 25 27 28 29 31 32 33 35 36".split()
)


def _awaiting() -> dict[str, str]:
    """``{case stem: what it awaits}`` for the rule kinds of rule_kinds.toml that name one."""
    from sncc.checks.rule_kinds import kinds

    return {rep["case"]: k["awaits"] for k in kinds() if k.get("awaits") for rep in (k["build"], k["test"])}


def _compile(path: pathlib.Path):
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    return compile_file(SourceFile(str(path), path.read_text(encoding="utf-8")))


def _got(comp, severity: str) -> set[tuple[str, int]]:
    return {(d.code.code, comp.source.line_col(d.span.start)[0]) for d in comp.diagnostics
            if d.severity == severity and d.span is not None}


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_case_header_states_rule_and_url(path):
    head = path.read_text(encoding="utf-8").splitlines()[:3]
    m = re.match(r"br-(\d+)-", path.name)
    if m:
        assert head[0].startswith(f"# BR-{m.group(1)} — rule kind: "), head[0]
        assert re.match(r"# https?://", head[1]), head[1]
    else:
        assert re.match(r"# [KF]\d+ — rule kind: ", head[0]), head[0]
        assert re.match(r"# source: https?://", head[1]), head[1]


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_case_reports_expected_diagnostics(path):
    expected = expectations_with_severity(path)
    assert expected, f"{path.name} has no `# E:` / `# W:` expectation"
    comp = _compile(path)
    assert comp.plan is not None
    want_err = {(c, line) for sev, c, line, _ in expected if sev == "error"}
    want_warn = {(c, line) for sev, c, line, _ in expected if sev == "warning"}
    got_err = _got(comp, "error")
    assert got_err == want_err, [(d.code.code, comp.source.line_col(d.span.start), d.message) for d in comp.diagnostics]
    assert want_warn <= _got(comp, "warning"), [(d.code.code, d.severity, d.message) for d in comp.diagnostics]
    for sev, code, line, col in expected:
        if col is not None:
            cols = {comp.source.line_col(d.span.start)[1] for d in comp.diagnostics
                    if d.code.code == code and d.severity == sev and comp.source.line_col(d.span.start)[0] == line}
            assert col in cols, (code, line, col, cols)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_corrected_twin_is_clean(path, request):
    awaits = _awaiting().get(path.stem)
    if awaits:
        request.applymarker(pytest.mark.xfail(reason=f"awaits: {awaits}", strict=True))
    twin = path.with_name(path.stem + ".fixed.sn")
    assert twin.exists(), f"no corrected twin for {path.name}"
    codes = {c for _, c, _, _ in expectations_with_severity(path)}
    # an error the correction cannot remove (a fact of the report's hardware) is declared in the twin
    # too, `# E: CODE reason`, and must be reported exactly there
    kept = {(c, line) for sev, c, line, _ in expectations_with_severity(twin) if sev == "error"}
    comp = _compile(twin)
    assert comp.plan is not None
    bad = [(d.code.code, d.severity, d.message) for d in comp.diagnostics
           if (d.is_error and (d.code.code, comp.source.line_col(d.span.start)[0] if d.span else 0) not in kept)
           or (d.severity == "warning" and d.code.code in codes)]
    assert not bad, bad
    assert kept <= _got(comp, "error"), (kept, _got(comp, "error"))
    # a declared, kept error never stands for the correction itself: the twin still clears one
    # of the case's own findings
    assert not codes or codes - {c for c, _ in kept}, f"{twin.name} keeps every finding of {path.name}"


def _br_ids() -> list[str]:
    if REFERENCE.exists():
        return re.findall(r"^### BR-(\d+)", REFERENCE.read_text(encoding="utf-8"), flags=re.M)
    return list(BR_IDS_FALLBACK)


def test_every_br_case_has_a_plan():
    """Each ``### BR-xx`` heading of misconfig-cases.md has at least one case file."""
    ids = _br_ids()
    assert len(ids) >= 26
    have = {re.match(r"br-(\d+)-", p.name).group(1) for p in BR_CASES}
    assert set(ids) <= have, sorted(set(ids) - have)


def test_fixture_expectations_parse_both_severities(tmp_path):
    p = tmp_path / "x.sn"
    p.write_text("a  # E: SN3004:5\n# E: SN1111\nb  # W: SN5006  # E: SN3005\n", encoding="utf-8")
    assert expectations_with_severity(p) == [("error", "SN3004", 1, 5), ("warning", "SN5006", 3, None), ("error", "SN3005", 3, None)]

"""The rule-kind registry (sncc/checks/rule_kinds.toml): how many rule kinds there are, which
public reports each came from, and that every kind has a failing plan and its corrected twin for
both of its reports, each failing with one of the kind's codes."""

from __future__ import annotations

import re

import pytest

from expect import ROOT, expectations_with_severity

CASES = ROOT / "tests" / "cases"


def _kinds():
    from sncc.checks.rule_kinds import kinds

    return kinds()


def test_print_rule_kinds_and_their_reports(capsys):
    """Prints the table the issue asks for: the number of rule kinds and the reports of each."""
    from sncc.checks.rule_kinds import open_kinds

    ks = _kinds()
    lines = [f"{len(ks)} rule kinds with checks ({len(open_kinds())} open):"]
    for k in ks:
        lines.append(f"  {k['id']:4} {', '.join(k['codes']):14} {k['name']}")
        lines.append(f"       build: {k['build']['report']}  ({k['build']['case']})")
        lines.append(f"       test:  {k['test']['report']}  ({k['test']['case']})")
        if k.get("awaits"):
            lines.append(f"       awaits: {k['awaits']}")
    for k in open_kinds():
        lines.append(f"  {k['id']:4} open: {k['name']} — {k['why']}")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert len(ks) >= 15
    assert len({k["id"] for k in ks}) == len(ks)


@pytest.mark.parametrize("kind", _kinds(), ids=lambda k: k["id"])
def test_kind_has_broken_and_fixed_plans_for_both_reports(kind):
    from sncc.diagnostics.codes import REGISTRY

    assert kind["codes"] and all(c in REGISTRY for c in kind["codes"]), kind["codes"]
    assert kind["build"]["report"] != kind["test"]["report"]
    for role in ("build", "test"):
        rep = kind[role]
        broken, fixed = CASES / f"{rep['case']}.sn", CASES / f"{rep['case']}.fixed.sn"
        assert broken.exists() and fixed.exists(), (kind["id"], role, rep["case"])
        head = broken.read_text(encoding="utf-8").splitlines()[:2]
        assert head[0].startswith(f"# {kind['id']} — rule kind: "), head[0]
        assert head[1] == f"# source: {rep['report']}", (head[1], rep["report"])
        expected = {c for _, c, _, _ in expectations_with_severity(broken)}
        assert expected & set(kind["codes"]), (rep["case"], expected, kind["codes"])


def test_every_rule_kind_case_is_registered():
    """A case file outside the BR set belongs to a registered kind."""
    cased = {rep["case"] for k in _kinds() for rep in (k["build"], k["test"])}
    files = {p.stem for p in CASES.glob("*.sn") if not p.name.endswith(".fixed.sn") and not re.match(r"br-\d+-", p.name)}
    assert files == cased, (sorted(files - cased), sorted(cased - files))

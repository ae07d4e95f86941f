"""The README's text-diagnostic excerpt is the real output of `sncc check` on the broken example."""

from __future__ import annotations

import os
import re

from click.testing import CliRunner

from sncc.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _excerpt() -> tuple[str, list[str]]:
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    m = re.search(r"the first diagnostic of `sncc check (\S+)`.*?\n```\n(.*?)```\n", text, re.S)
    assert m, "README: the rustc-style excerpt and the plan it comes from"
    return m.group(1), [ln for ln in m.group(2).splitlines() if ln.strip() != "..."]


def test_readme_diagnostic_excerpt_matches_the_output(monkeypatch):
    plan, lines = _excerpt()
    monkeypatch.chdir(ROOT)
    res = CliRunner().invoke(main, ["check", "--no-color", plan])
    assert res.exit_code == 1, res.output
    out = res.output.splitlines()
    pos = 0
    for ln in lines:                 # every excerpt line, in order, in the real output
        assert ln in out[pos:], f"README line not in `sncc check {plan}` output (in order): {ln!r}"
        pos = out.index(ln, pos) + 1

"""`sncc check` on a plan it cannot read (missing file, directory, FIFO): in every format the
file is a located error (SN1060) — JSON `valid: false`, a GitHub `::error file=…`, a SARIF
result — and the exit code is 2; `build`, `simulate` and `search` report it alike."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from sncc.cli import main


def _run(*args):
    return CliRunner().invoke(main, ["check", *map(str, args)])


@pytest.fixture(params=["missing", "directory", "fifo"])
def unreadable(request, tmp_path):
    if request.param == "missing":
        return tmp_path / "nope.sn"
    if request.param == "directory":
        d = tmp_path / "plans.sn"
        d.mkdir()
        return d
    p = tmp_path / "pipe.sn"
    os.mkfifo(p)
    return p


def test_json(unreadable):
    r = _run("--format", "json", unreadable)
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert doc["summary"]["valid"] is False and doc["summary"]["errors"] == 1
    (d,) = doc["diagnostics"]
    assert d["code"] == "SN1060" and d["file"] == str(unreadable)
    assert str(unreadable) in d["message"] or "cannot read" in d["message"]


def test_github(unreadable):
    r = _run("--format", "github", unreadable)
    assert r.exit_code == 2
    assert f"::error file={unreadable}" in r.stdout
    assert "no problems" not in r.stdout and "1 error in 1 file" in r.stdout


def test_sarif(unreadable):
    r = _run("--format", "sarif", unreadable)
    assert r.exit_code == 2
    results = json.loads(r.stdout)["runs"][0]["results"]
    assert [x["ruleId"] for x in results] == ["SN1060"]
    assert results[0]["level"] == "error"
    # a file-level result still has a region: GitHub code scanning refuses one without startLine (GH1003)
    (loc,) = results[0]["locations"]
    assert loc["physicalLocation"]["region"] == {"startLine": 1, "startColumn": 1}


@pytest.mark.parametrize("fmt", ["text", "concise"])
def test_text_and_concise(unreadable, fmt):
    r = _run("--format", fmt, unreadable)
    assert r.exit_code == 2
    assert "SN1060" in r.stdout and str(unreadable) in r.stdout


def test_one_unreadable_among_readable(tmp_path, root):
    good = root / "examples" / "deepseek-r1-a3-7p1d.sn"
    r = _run("--format", "json", good, tmp_path / "nope.sn")
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert doc["summary"]["files"] == 2 and doc["summary"]["valid"] is False
    assert [d["code"] for d in doc["diagnostics"] if d["severity"] == "error"] == ["SN1060"]


@pytest.mark.parametrize("command", [["simulate"], ["search"], ["build", "-o", "{out}"]])
def test_the_other_commands_report_the_same_located_error(unreadable, command, tmp_path):
    """simulate, search and build printed a bare `sncc: error: ... is a directory`: now the same
    SN1060 as check (simulate's JSON is the diagnostics document, `valid: false`), exit 2."""
    args = [a.replace("{out}", str(tmp_path / "out")) for a in command]
    r = CliRunner().invoke(main, [*args, str(unreadable)])
    assert r.exit_code == 2, r.output
    assert "error[SN1060]" in r.output and "Traceback" not in r.output
    # every command's JSON document holds the SN1060 in diagnostics[] (build's as well, not on stderr)
    r = CliRunner().invoke(main, [*args[:1], "--format", "json", *args[1:], str(unreadable)])
    assert r.exit_code == 2, r.output
    doc = json.loads(r.stdout)
    assert doc["summary"]["valid"] is False and [d["code"] for d in doc["diagnostics"]] == ["SN1060"]


def test_build_check_of_a_folder_given_as_the_plan(tmp_path):
    """`build --check DIR` (no -o) said "nothing to compare" and exited 0: a plan that is no file is SN1060."""
    d = tmp_path / "plans"
    d.mkdir()
    r = CliRunner().invoke(main, ["build", "--check", str(d)])
    assert r.exit_code == 2 and "error[SN1060]" in r.output and "nothing to compare" not in r.output

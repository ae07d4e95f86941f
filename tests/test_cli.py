"""The CLI through click's runner, and once as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
from click.testing import CliRunner

from expect import ROOT
from sncc.cli import main
from sncc.resources import schema

SEED = str(ROOT / "examples" / "deepseek-r1-a3-7p1d.sn")
BROKEN = str(ROOT / "examples" / "broken" / "tp-ep-mismatch.sn")


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


def test_check_clean_plan_exits_0():
    r = run("check", SEED)
    assert r.exit_code == 0, r.output
    assert "in 1 file" in r.output


def test_check_broken_plan_text_is_rustc_style():
    r = run("check", "--no-color", BROKEN)
    assert r.exit_code == 1
    assert "error[SN3001]:" in r.output
    assert "tp-ep-mismatch.sn:19:" in r.output
    assert "^^" in r.output and "= help:" in r.output
    assert r.output.rstrip().endswith("in 1 file")


def test_check_json_validates_against_schema():
    r = run("check", "--format", "json", SEED, BROKEN)
    assert r.exit_code == 1
    doc = json.loads(r.output)
    jsonschema.validate(doc, schema("diagnostics"))
    assert doc["summary"]["files"] == 2 and doc["summary"]["errors"] >= 1
    d = next(d for d in doc["diagnostics"] if d["code"] == "SN3001")
    assert d["name"] == "parallel-size-mismatch" and d["range"]["start"]["line"] == 19
    assert d["related"] and d["help"]


def test_check_stdin_with_filename():
    text = (ROOT / "examples" / "broken" / "wrong-unit.sn").read_text()
    r = run("check", "--format", "json", "--stdin-filename", "mine.sn", "-", input=text)
    assert r.exit_code == 1
    assert json.loads(r.output)["diagnostics"][0]["file"] == "mine.sn"


def test_unreadable_file_exits_2(tmp_path):
    r = run("check", str(tmp_path / "missing.sn"))
    assert r.exit_code == 2
    r = run("check", str(tmp_path))
    assert r.exit_code == 2


def test_invalid_utf8_is_a_diagnostic(tmp_path):
    p = tmp_path / "bad.sn"
    p.write_bytes(b'plan "x" { model "\xff" {} }')
    r = run("check", "--format", "json", str(p))
    assert r.exit_code == 1
    d = json.loads(r.output)["diagnostics"][0]
    assert d["code"] == "SN1004" and d["range"]["start"]["column"] == 19


def test_explain_known_and_unknown():
    r = run("explain", "SN3001")
    assert r.exit_code == 0 and "parallel-size-mismatch" in r.output and "Fixed:" in r.output
    assert run("explain", "parallel-size-mismatch").exit_code == 0
    assert run("explain", "SN0000").exit_code == 2


def test_usage_error_exits_2():
    assert run("check").exit_code == 2
    assert run("frobnicate").exit_code == 2


def test_subprocess_check_and_explain():
    """The installed entry point, as a real process (python -m sncc.cli)."""
    p = subprocess.run([sys.executable, "-m", "sncc.cli", "check", "--format", "json", BROKEN],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1, p.stderr
    assert json.loads(p.stdout)["summary"]["errors"] >= 1
    p = subprocess.run([sys.executable, "-m", "sncc.cli", "check", SEED], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr


def test_catalog_lists_ids_a_plan_can_name():
    r = run("catalog", "systems")
    assert r.exit_code == 0 and "atlas-900-a3-superpod" in r.output and "hgx-h100" in r.output
    r = run("catalog", "models")
    assert "deepseek-r1" in r.output and "config.json" in r.output
    assert "v0.11.0" in run("catalog", "releases").output
    assert run("catalog", "nonsense").exit_code == 2

"""The CLI through click's runner, and once as a real subprocess."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import jsonschema
import pytest
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


def _broken_line() -> int:
    """The line of the SN3001 the broken example marks with `# E:`."""
    from expect import expectations

    return next(line for code, line, _ in expectations(pathlib.Path(BROKEN)) if code == "SN3001")


def test_check_broken_plan_text_is_rustc_style():
    r = run("check", "--no-color", BROKEN)
    assert r.exit_code == 1
    assert "error[SN3001]:" in r.output
    assert f"tp-ep-mismatch.sn:{_broken_line()}:" in r.output
    assert "^^" in r.output and "= help:" in r.output
    assert r.output.rstrip().endswith("in 1 file")


def test_check_json_validates_against_schema():
    r = run("check", "--format", "json", SEED, BROKEN)
    assert r.exit_code == 1
    doc = json.loads(r.output)
    jsonschema.validate(doc, schema("diagnostics"))
    assert doc["summary"]["files"] == 2 and doc["summary"]["errors"] >= 1
    d = next(d for d in doc["diagnostics"] if d["code"] == "SN3001")
    assert d["name"] == "parallel-size-mismatch" and d["range"]["start"]["line"] == _broken_line()
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


def test_explain_without_a_code_lists_every_code():
    """SN1005's help says "codes are listed by `sncc explain`": without CODE it lists them
    (code, name, severity, summary), as `sncc schema` lists the schemas (was a usage error, exit 2)."""
    from sncc.diagnostics.codes import REGISTRY

    r = run("explain")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    for code, ec in REGISTRY.items():
        assert any(ln.startswith(code) and ec.name in ln and ec.severity in ln for ln in lines), code
    unknown = run("explain", "SN0000")
    assert "`sncc explain` lists them" in unknown.output


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


USAGE_ERRORS = [
    ("check", SEED, "--format", "json", "--select", ""),
    ("check", SEED, "--format=json", "--strict", "--exit-zero"),
    ("check", "--format", "json"),
    ("build", SEED, "--format", "json", "-o", str(ROOT / "README.md")),
    ("simulate", SEED, "--format", "json", "--seed", "x"),
]


@pytest.mark.parametrize("args", USAGE_ERRORS, ids=lambda a: " ".join(a[:1] + a[2:]))
def test_usage_error_under_json_prints_the_error_document(args):
    """README: a usage error under --format json is a document with no diagnostics and an `error`
    field (exit 2, click's message still on stderr); `valid` is false whenever `error` is there."""
    r = run(*args)
    assert r.exit_code == 2, r.output
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, schema("diagnostics"))
    assert doc["diagnostics"] == [] and doc["error"] and doc["summary"]["valid"] is False
    assert "Error: " in r.stderr and doc["error"] in r.stderr


def test_usage_error_under_sarif_is_a_failed_invocation():
    r = run("check", SEED, "--format", "sarif", "--select", "")
    assert r.exit_code == 2
    inv = json.loads(r.stdout)["runs"][0]["invocations"]
    assert inv[0]["executionSuccessful"] is False and "--select" in inv[0]["toolExecutionNotifications"][0]["message"]["text"]


def test_usage_error_in_text_prints_nothing_on_stdout():
    r = run("check", SEED, "--select", "")
    assert r.exit_code == 2 and r.stdout == ""


def test_simulate_json_with_an_unknown_profile_is_not_valid():
    r = run("simulate", SEED, "--format", "json", "--profile", "nope")
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert "unknown profile" in doc["error"] and doc["summary"]["valid"] is False


@pytest.mark.parametrize("command", ["check", "build", "simulate", "fmt"])
def test_ctrl_c_exits_130_not_the_errors_found_code(command, tmp_path, monkeypatch):
    """break4 report: `kill -INT` during `sncc build` printed click's "Aborted!" and exited 1, the
    code of "errors found", so a CI job read an interrupted build as a plan with errors; every
    command now exits 130 on Ctrl-C (as `sncc search` does), saying so on stderr."""
    import sncc.cli as cli

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_compile", interrupted)
    monkeypatch.setattr("sncc.fmt.format_source", interrupted)
    args = {"check": ["check", SEED], "build": ["build", SEED, "-o", str(tmp_path / "out")],
            "simulate": ["simulate", SEED], "fmt": ["fmt", "--check", SEED]}[command]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 130, r.output
    assert "interrupted (Ctrl-C)" in r.output and "Aborted!" not in r.output
    assert not (tmp_path / "out").exists()

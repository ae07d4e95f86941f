"""Fresh-user findings (third round), through the CLI: `fmt` keeps suppressions,
`--select`/`--ignore` never hide syntax errors, `--format json` is one JSON document
on every path of `build` and `simulate`, a file named twice is checked once."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter

import jsonschema
import pytest
from click.testing import CliRunner

from expect import ROOT
from sncc.cli import main
from sncc.resources import schema

UNCLOSED = str(ROOT / "examples" / "broken" / "unclosed-block.sn")
BROKEN = str(ROOT / "examples" / "broken" / "tp-ep-mismatch.sn")
SEED = str(ROOT / "examples" / "deepseek-r1-a3-7p1d.sn")


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def _json(text: str) -> dict:
    doc = json.loads(text)
    jsonschema.validate(doc, schema("diagnostics"))
    return doc


# --- 1. fmt never changes which diagnostics are suppressed ------------------------------

#: /tmp/usertest2/c/fmt/sup4.sn as the tester wrote it: two gateway entries on one line,
#: the suppression of SN6002 (reported at `timeout`) after the second one
SUP4 = '''plan "s" {
  model "qwen3-32b" { quant = bf16 }
  hardware { system = "hgx-h200"  nodes = 1 }
  engine "vllm" { version = "0.23.0" }
  serve { instances = 4  devices = 2  tp = 2  max_num_seqs = 64
          max_num_batched_tokens = 8k  chunked_prefill = 8k }
  workload {
    requests = 100
    concurrency = 8
    input { mean = 1k  max = 2k }
    output { mean = 100  max = 200 }
  }
  slo {
    ttft < 2s
    tpot < 50ms
  }
  gateway {
    timeout = 5s  model_id = "qwen3-32b"  # sncc: ignore[SN6002] client retries on its own
  }
}
'''


def _codes(path, *flags):
    r = run("check", "--format", "json", *flags, path)
    return r.exit_code, Counter(d["code"] for d in json.loads(r.output)["diagnostics"])


@pytest.mark.parametrize("variant", ["trailing", "standalone"])
def test_fmt_keeps_a_suppression_covering_several_items_on_one_line(tmp_path, variant):
    text = SUP4
    if variant == "standalone":
        text = text.replace('    timeout = 5s  model_id = "qwen3-32b"  # sncc: ignore[SN6002] client retries on its own',
                            '    # sncc: ignore[SN6002] client retries on its own\n    timeout = 5s  model_id = "qwen3-32b"')
    p = tmp_path / "sup4.sn"
    p.write_text(text)
    before = _codes(p)
    assert before == (0, Counter()), before
    r = run("fmt", p)
    assert r.exit_code == 0, r.output
    assert _codes(p) == before, p.read_text()
    assert 'timeout = 5s  model_id = "qwen3-32b"' in p.read_text()
    assert run("fmt", "--check", p).exit_code == 0          # formatting again changes nothing


def test_fmt_keeps_items_and_one_line_blocks_of_a_covered_line_together(tmp_path):
    text = ('plan "p" {\n  serve {\n    # sncc: ignore[SN4008] short prompts\n'
            '    max_num_seqs = 256  decode { a = 1  b { c = 2 } }  z {\n      q = 1\n    }\n'
            '    k = 1; j = 2  # sncc: ignore[SN4008] r\n    m = 1  n = 2\n  }\n}\n')
    p = tmp_path / "p.sn"
    p.write_text(text)
    assert run("fmt", p).exit_code == 0
    out = p.read_text()
    assert "    max_num_seqs = 256  decode { a = 1  b { c = 2 } }  z {\n      q = 1\n    }\n" in out
    assert "    k = 1  j = 2  # sncc: ignore[SN4008] r\n" in out
    assert "    m = 1\n    n = 2\n" in out                    # no suppression: one entry per line


def _corpus(tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copytree(ROOT / "tests" / "cases", tmp_path / "cases")
    return sorted(p for pat in ("examples/*.sn", "examples/**/*.sn", "cases/**/*.sn") for p in tmp_path.glob(pat))


def test_fmt_keeps_the_diagnostics_of_every_example_and_case(tmp_path):
    files = sorted(set(_corpus(tmp_path)))
    assert len(files) > 100
    before = {p: [_codes(p), _codes(p, "--strict")[0]] for p in files}
    r = run("fmt", *files)
    assert r.exit_code in (0, 1), r.output                  # 1: files that do not parse are left alone
    changed = [p for p in files if before[p] != [_codes(p), _codes(p, "--strict")[0]]]
    assert not changed, {str(p): (before[p], _codes(p)) for p in changed}


# --- 2. --select / --ignore never hide a file that does not parse ---------------------------

@pytest.mark.parametrize("flags", [["--select", "SN3"], ["--ignore", "SN1003"], ["--ignore", "SN1"],
                                   ["--select", "SN4008", "--ignore", "unexpected-end-of-file"]])
def test_selectors_never_filter_syntax_errors(flags):
    r = run("check", "--no-color", *flags, UNCLOSED)
    assert r.exit_code == 1, r.output
    assert "SN1003" in r.output and "no problems" not in r.output


def test_selectors_still_filter_other_codes():
    assert run("check", "--select", "SN4008", BROKEN).exit_code == 0
    assert run("check", "--ignore", "SN3001", BROKEN).exit_code == 0


@pytest.mark.parametrize("flags", [["--select", ""], ["--ignore", ""], ["--select", " , "]])
def test_an_empty_selector_is_a_usage_error(flags):
    r = run("check", *flags, BROKEN)
    assert r.exit_code == 2, r.output
    assert "names no code" in r.output


# --- 3. --format json: one JSON document on stdout --------------------------------------

def test_build_json_success_is_one_document_with_warnings_and_files(tmp_path):
    out = tmp_path / "out"
    r = run("build", SEED, "-o", out, "--format", "json")
    assert r.exit_code == 0, r.output
    doc = _json(r.stdout)
    assert "wrote " not in r.stdout and "wrote " in r.stderr
    (b,) = doc["build"]
    assert b["status"] == "written" and b["output"] == str(out)
    assert b["written"] and all(os.path.exists(p) for p in b["written"])
    assert doc["summary"]["warnings"] == sum(d["severity"] == "warning" for d in doc["diagnostics"])
    r = run("build", SEED, "-o", out, "--check", "--format", "json")
    assert r.exit_code == 0 and _json(r.stdout)["build"][0]["status"] == "up-to-date"
    r = run("build", BROKEN, "-o", tmp_path / "b", "--format", "json")
    assert r.exit_code == 1
    doc = _json(r.stdout)
    assert doc["build"][0]["status"] == "errors" and any(d["code"] == "SN3001" for d in doc["diagnostics"])


def test_simulate_json_plan_errors_are_the_diagnostics_document():
    r = run("simulate", BROKEN, "--format", "json")
    assert r.exit_code == 1
    doc = _json(r.stdout)
    assert any(d["code"] == "SN3001" for d in doc["diagnostics"])


def test_simulate_json_unreadable_plan_is_a_document_with_error(tmp_path):
    r = run("simulate", tmp_path / "missing.sn", "--format", "json")
    assert r.exit_code == 2
    assert "missing.sn" in _json(r.stdout)["error"]


def test_simulate_json_unadmittable_is_an_sn4004_diagnostic(tmp_path):
    """A pool that holds no full-context request: one memory model, so `simulate` refuses it with
    the check's located SN4004 in its JSON document (it used to surface only at run time)."""
    from sim.test_admission_and_arrivals import R1_A2_TIGHT

    p = tmp_path / "r1-a2.sn"
    p.write_text(R1_A2_TIGHT)
    r = run("simulate", "--format", "json", p)
    assert r.exit_code == 1, r.output
    doc = _json(r.stdout)
    d = next(d for d in doc["diagnostics"] if d["code"] == "SN4004")
    assert d["file"] == str(p) and d["range"]["start"]["line"] >= 1
    assert "full-context sequence" in d["message"]


# --- 4. the same file twice is checked once ---------------------------------------------

def test_check_dedupes_the_file_list():
    once = run("check", "--no-color", BROKEN)
    twice = run("check", "--no-color", BROKEN, BROKEN, str(ROOT / "examples" / "broken" / "." / "tp-ep-mismatch.sn"))
    assert twice.exit_code == once.exit_code == 1
    assert twice.output == once.output
    doc = json.loads(run("check", "--format", "json", BROKEN, BROKEN).output)
    assert doc["summary"]["files"] == 1 and [d["code"] for d in doc["diagnostics"]].count("SN3001") == 1

"""`sncc search` on a plan whose own layout has errors: the errors of the roles the search replaces
(parallelism, batch, instances) do not stop it (that layout is reported as failing with them),
any other error does; and SN8101 names the rule that refused each tp × dp × pp listed."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from click.testing import CliRunner

from expect import ROOT, compile_text
from sncc.cli import main
from sncc.search.candidate import layout_errors

SMALL = (Path(__file__).parent / "small_space.sn").read_text()
SCHEMA = json.loads((ROOT / "schemas" / "search.schema.json").read_text())
FAST = ["--mode", "aggregated", "--tp", "2,4", "--dp", "1,2", "--max-num-seqs", "32,64", "--top", "2"]
OWN = "instances = 2\n    devices = 4\n    tp = 4"
#: the plan's own serve role at tp = 3: 64 attention heads are not divisible by 3 (SN3004, at `tp`)
TP3 = SMALL.replace(OWN, "instances = 2\n    devices = 3\n    tp = 3")
#: tp = 1 under a 5 ms TPOT: below the 6.8 ms one decode step needs to read the weights (SN7001,
#: located at the SLO, pointing at `tp = 1`)
TPOT = SMALL.replace(OWN, "instances = 2\n    devices = 1\n    tp = 1").replace("tpot < 50ms", "tpot < 5ms")
#: a setting every candidate keeps (memory_utilization): no search fixes it (SN2009)
KEPT = SMALL.replace("max_num_seqs = 64\n", "max_num_seqs = 64\n    memory_utilization = 1.5\n", 1)


def _write(tmp_path: Path, text: str, name: str = "plan.sn") -> Path:
    p = tmp_path / name
    p.write_text(text)
    fmt = CliRunner().invoke(main, ["fmt", "--check", str(p)])
    assert fmt.exit_code == 0, fmt.output
    return p


def test_an_error_of_the_own_layout_does_not_stop_the_search(tmp_path):
    p = _write(tmp_path, TP3)
    check = CliRunner().invoke(main, ["check", str(p)])
    assert check.exit_code == 1 and "error[SN3004]" in check.output
    r = CliRunner().invoke(main, ["search", str(p), *FAST])
    assert r.exit_code == 0, r.output                 # a tp2 / tp4 candidate meets the SLOs
    text = " ".join(r.output.split())                 # the report's lines wrap at the console width
    assert "price role layouts" in text and "best 2 (ranked by" in text
    assert "the plan's own layout (2×tp3 dp1 b64) fails the checks" in text
    assert "not ranked or written; the search replaced its roles" in text
    assert "SN3004: `serve`: 64 attention heads are not divisible by tp = 3" in text
    assert "error[SN3004]" in r.output and "plan.sn:16:10" in r.output     # located, after the report
    j = CliRunner().invoke(main, ["search", str(p), "--format", "json", *FAST])
    assert j.exit_code == 0
    doc = json.loads(j.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["ranked"] and doc["base"]["rank"] is None
    assert [x["code"] for x in doc["base"]["refused"]] == ["SN3004"]
    assert "SN3004" in [d["code"] for d in doc["diagnostics"]]


def test_a_tpot_floor_at_the_own_tp_does_not_stop_the_search(tmp_path):
    p = _write(tmp_path, TPOT)
    r = CliRunner().invoke(main, ["search", str(p), *FAST, "--max-simulated", "2"])
    text = " ".join(r.output.split())
    assert "price role layouts" in text, r.output
    assert "the plan's own layout (2×tp1 dp1 b64) fails the checks" in text
    assert "SN7001: TPOT target 5 ms is below" in text
    assert "error[SN7001]" in r.output


def test_an_error_no_candidate_can_fix_still_stops_the_search(tmp_path):
    p = _write(tmp_path, KEPT)
    r = CliRunner().invoke(main, ["search", str(p), *FAST])
    assert r.exit_code == 1
    assert "error[SN2009]" in r.output and "price role layouts" not in r.output


def test_layout_errors_are_those_at_the_replaced_role_fields():
    for text, code, own in ((TP3, "SN3004", True), (TPOT, "SN7001", True), (KEPT, "SN2009", False)):
        comp = compile_text(text)
        errors = [d for d in comp.diagnostics if d.is_error]
        assert [d.code.code for d in errors] == [code]
        assert bool(layout_errors(comp.plan, errors)) is own, code


def test_an_empty_space_names_the_rule_of_each_layout():
    """DeepSeek-V3 FP8 on one H200: tp = 1 is within the budget, but its weights do not fit."""
    plan = ROOT / "examples" / "search" / "deepseek-v3-h200-64.sn"
    r = CliRunner().invoke(main, ["search", str(plan), "--devices", "1"])
    assert r.exit_code == 1
    line = next(ln for ln in r.output.splitlines() if ln.startswith("error[SN8101]"))
    assert "tp = 1: the weights at fp8, " in line and "per device, exceed one device's HBM budget" in line
    assert "tp = 2, 4, 8: more than the budget of 1 device" in line
    assert line.index("tp = 1:") < line.index("tp = 2, 4, 8:")

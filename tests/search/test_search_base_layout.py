"""The plan's own layout in `sncc search`: ranked beside the candidates only when it lies inside the
requested space; outside the budget, mode or listed values it is an unranked reference row, never
ranked or written, and a search with nothing valid left exits 1 ("nothing met")."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from click.testing import CliRunner

from expect import ROOT
from sncc.cli import main

SMALL = Path(__file__).parent / "small_space.sn"
SCHEMA = json.loads((ROOT / "schemas" / "search.schema.json").read_text())

#: Qwen3-32B in bf16 on one HGX H100 node: a token budget of 100 is refused by every check (SN5002)
H100 = """plan "q32-h100" {
  model "qwen3-32b" {}
  hardware {
    system = "hgx-h100"
    nodes = 1
  }
  engine "vllm" {}
  serve {
    instances = 1
    devices = 8
    tp = 8
    max_num_seqs = 64
  }
  workload {
    requests = 300
    concurrency = 64
    input { mean = 2k  max = 4k }
    output { mean = 256  max = 1k }
  }
  slo { ttft < 2s  tpot < 40ms }
  search { top = 5 }
}
"""


def test_base_layout_outside_the_budget_and_mode_is_a_reference_never_ranked_or_written(tmp_path):
    out = tmp_path / "best"
    r = CliRunner().invoke(main, ["search", str(SMALL), "--mode", "disaggregated", "--devices", "4", "--fixed",
                                  "--tp", "1,2", "--dp", "1", "--max-num-seqs", "16", "--top", "2",
                                  "--format", "json", "--write", str(out)])
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    base = doc["base"]
    assert base["layout"] == "2×tp4 dp1 b64" and base["rank"] is None
    assert "aggregated, but the search is disaggregated only" in base["outside"]
    assert "8 devices, but the budget is exactly 4" in base["outside"]
    assert base["reference"]["layout"] == base["layout"] and "rank" not in base["reference"]
    assert doc["ranked"] and all(row["mode"] == "disaggregated" and row["devices"] == 4 for row in doc["ranked"])
    for f in doc["written"]:
        assert "serve {" not in Path(f).read_text()
    # the exit code follows the ranked candidates alone, not the plan's own (met) layout
    met = any(row["status"] == "met" for row in doc["ranked"])
    assert r.exit_code == (0 if met else 1)


def test_base_layout_outside_the_listed_values_is_named_in_the_text_report():
    r = CliRunner().invoke(main, ["search", str(SMALL), "--mode", "aggregated", "--tp", "2", "--dp", "1",
                                  "--max-num-seqs", "64", "--top", "1"])
    assert "the plan's own layout (2×tp4 dp1 b64) is outside the searched space" in r.output
    assert "serve `tp = 4`, not among the values searched" in r.output
    assert "not ranked or written; for reference:" in r.output
    assert "ranks 1 of" not in r.output


def test_nothing_valid_left_says_so_and_exits_nothing_met(tmp_path):
    plan = tmp_path / "q32.sn"
    plan.write_text(H100)
    out = tmp_path / "best"
    args = ["search", str(plan), "--mode", "aggregated", "--tp", "8", "--dp", "1", "--max-num-seqs", "64",
            "--max-num-batched-tokens", "100", "--write", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1, r.output
    assert "nothing is ranked or written" in r.output and "ranks 1 of 1" not in r.output
    assert not out.exists() and "nothing to write" in r.stderr
    r = CliRunner().invoke(main, args + ["--format", "json"])
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["ranked"] == [] and doc["written"] == [] and doc["base"]["rank"] is None
    assert "max_num_batched_tokens = 8192" in doc["base"]["outside"]

"""Stage 4 goes on past the top k while no simulated candidate meets the SLOs, and one-host P/D
candidates on Ascend carry the environment their connector needs.

1. The screen is optimistic: when every simulated top-k candidate missed its SLOs, the
   screen-only ones were never simulated, so the search said "no plan meets the SLOs" (SN8105,
   exit 1) with a lower-screened candidate that meets them.  Now the next ones in screen order are
   simulated, k at a time, until one meets them or `--max-simulated` candidates are spent.
2. Prefill and decode on one Ascend host with Mooncake need `HCCL_INTRA_ROCE_ENABLE=1` (SN4009,
   vllm-ascend#4866): the search refused every such candidate, printing the check's help, "add
   `HCCL_INTRA_ROCE_ENABLE = 1` to `env`".  Now it sets it in the candidate (and in the plan it
   writes, merged into the base plan's `env`), so they are evaluated."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from click.testing import CliRunner

from expect import ROOT, compile_text
from tests_helpers import QWEN3_32B_A2
from sncc.cli import main

SMALL = Path(__file__).parent / "small_space.sn"
SCHEMA = json.loads((ROOT / "schemas" / "search.schema.json").read_text())
#: SLOs none of the small space's first round meets (its best is `uncertain`), a later one does
TIGHT = SMALL.read_text().replace("slo { ttft < 2s  tpot < 50ms }", "slo { ttft < 0.5s  tpot < 28ms }")

#: the user report's Qwen3-32B plan (tests_helpers.QWEN3_32B_A2) on one Atlas 800I A3 host
A3_ONE_HOST = (QWEN3_32B_A2.replace('plan "qwen3-32b-a2"', 'plan "qwen3-32b-a3"')
               .replace('system = "atlas-800-a2"', 'system = "atlas-800i-a3"')
               .replace("requests = 2000\n    concurrency = 128", "requests = 300\n    concurrency = 16")
               .replace("tpot < 40ms }\n}", "tpot < 40ms }\n  env { HCCL_BUFFSIZE = 512 }\n}"))
PD_ONE_HOST = ["--mode", "disaggregated", "--tp", "2", "--dp", "1", "--max-num-seqs", "16,32",
               "--prefill-instances", "1,2", "--decode-instances", "1", "--top", "1"]


def _search(tmp_path, text: str, *args: str):
    p = tmp_path / "plan.sn"
    p.write_text(text)
    r = CliRunner().invoke(main, ["search", str(p), "--format", "json", *args])
    doc = json.loads(r.output)
    jsonschema.validate(doc, SCHEMA)
    return r, doc


def test_search_simulates_past_the_top_k_until_a_candidate_meets_the_slos(tmp_path):
    r, doc = _search(tmp_path, TIGHT)
    assert r.exit_code == 0, r.output                   # exit 1 and SN8105 before
    best = doc["ranked"][0]
    assert (best["status"], best["source"]) == ("met", "simulate")
    sim = doc["simulation"]
    k = doc["space"]["top"]
    assert sim["more"] > 0 and sim["more_rounds"] >= 1 and not sim["budget_reached"]
    assert sim["simulated"] == sim["first_round"] + sim["more"] <= sim["max_simulated"] == max(5 * k, 50)
    assert sim["simulated"] == doc["stages"][-1]["candidates"]
    assert sim["more"] <= sim["more_rounds"] * k       # in batches of k
    # simulated rows rank before the screen-only ones, met first
    sources = [row["source"] for row in doc["ranked"]]
    assert sources == sorted(sources, key=lambda s: s != "simulate")
    assert sum(s == "screen" for s in sources) == sim["screen_only"]
    assert not any(d["code"] == "SN8105" for d in doc["diagnostics"])


def test_the_text_report_says_how_many_were_simulated(tmp_path):
    p = tmp_path / "plan.sn"
    p.write_text(TIGHT)
    out = " ".join(CliRunner().invoke(main, ["search", str(p)]).output.split())
    assert "event-simulated " in out and "of at most 50 (--max-simulated)" in out
    assert "met the SLOs, so " in out and "more in screen order, 4 at a time, until one met them" in out


def test_max_simulated_bounds_the_simulations_and_the_report_says_the_budget_ran_out(tmp_path):
    r, doc = _search(tmp_path, TIGHT, "--max-simulated", "9")
    sim = doc["simulation"]
    assert r.exit_code == 1 and sim["budget_reached"] and sim["max_simulated"] == 9
    assert sim["first_round"] <= 9 and sim["simulated"] == max(9, sim["first_round"])
    assert sim["screen_only"] > 0
    assert any(d["code"] == "SN8105" for d in doc["diagnostics"])
    p = tmp_path / "plan.sn"
    out = " ".join(CliRunner().invoke(main, ["search", str(p), "--max-simulated", "9"]).output.split())
    assert "the budget is spent with none met" in out and "raise --max-simulated" in out


def test_max_simulated_is_in_the_help():
    out = " ".join(CliRunner().invoke(main, ["search", "--help"]).output.split())
    assert "--max-simulated N" in out and "default 5 × --top, at least 50" in out


def test_one_host_pd_candidates_on_ascend_are_evaluated_and_written_with_the_env_they_need(tmp_path):
    """Every P/D candidate on one A3 host was refused by SN4009 (`HCCL_INTRA_ROCE_ENABLE=1`)."""
    out = tmp_path / "best"
    r, doc = _search(tmp_path, A3_ONE_HOST, *PD_ONE_HOST, "--write", str(out))
    assert r.exit_code == 0, r.output
    assert not doc["rejected"], doc["rejected"]
    assert doc["ranked"] and all(row["mode"] == "disaggregated" for row in doc["ranked"])
    assert doc["ranked"][0]["status"] == "met" and doc["ranked"][0]["source"] == "simulate"
    (path,) = doc["written"]
    text = Path(path).read_text()
    # merged into the base plan's env block, its keys kept
    assert "  env { HCCL_BUFFSIZE = 512  HCCL_INTRA_ROCE_ENABLE = 1 }\n" in text and text.count("env {") == 1
    chk = CliRunner().invoke(main, ["check", path])
    assert chk.exit_code == 0, chk.output
    assert CliRunner().invoke(main, ["fmt", "--check", path]).exit_code == 0
    assert compile_text(text, path).plan.env == {"HCCL_BUFFSIZE": "512", "HCCL_INTRA_ROCE_ENABLE": "1"}


def test_a_plan_without_env_gets_an_env_block_in_the_written_pd_plan(tmp_path):
    out = tmp_path / "best"
    text = (QWEN3_32B_A2.replace("concurrency = 128", "concurrency = 16").replace("requests = 2000", "requests = 300")
            .replace("tpot < 40ms", "tpot < 60ms"))
    assert "env" not in text
    r, doc = _search(tmp_path, text, *PD_ONE_HOST, "--write", str(out))
    assert r.exit_code == 0, r.output
    assert not doc["rejected"], doc["rejected"]
    (path,) = doc["written"]
    written = Path(path).read_text()
    assert "  env { HCCL_INTRA_ROCE_ENABLE = 1 }\n" in written and written.count("env {") == 1
    assert CliRunner().invoke(main, ["check", path]).exit_code == 0


def test_the_added_env_goes_before_the_closing_brace_of_a_multi_line_env_block(tmp_path):
    env = '  env {\n    HCCL_BUFFSIZE = 512  # the buffer\n    HCCL_OP_EXPANSION_MODE = "AIV"\n  }\n'
    text = A3_ONE_HOST.replace("  env { HCCL_BUFFSIZE = 512 }\n", env)
    r, doc = _search(tmp_path, text, *PD_ONE_HOST, "--write", str(tmp_path / "best"))
    assert r.exit_code == 0, r.output
    (path,) = doc["written"]
    assert env.replace("  }", "    HCCL_INTRA_ROCE_ENABLE = 1\n  }") in Path(path).read_text()
    assert CliRunner().invoke(main, ["check", path]).exit_code == 0


def test_an_aggregated_candidate_gets_no_env_added(tmp_path):
    r, doc = _search(tmp_path, A3_ONE_HOST, "--mode", "aggregated", "--tp", "2", "--dp", "1",
                     "--max-num-seqs", "16", "--top", "1", "--write", str(tmp_path / "agg"))
    assert r.exit_code == 0, r.output
    (path,) = doc["written"]
    assert "HCCL_INTRA_ROCE_ENABLE" not in Path(path).read_text()


def test_the_candidate_plan_carries_the_env_and_keeps_the_base_value():
    from sncc.search.candidate import Candidate, RoleChoice, candidate_plan
    from sncc.search.space import Layout

    cand = Candidate("disaggregated", (RoleChoice(Layout("prefill", 2, 1, 1, False, 16384, 8192, False), 1),
                                       RoleChoice(Layout("decode", 2, 1, 1, False, 16384, None, False), 1, 16)))
    comp = compile_text(A3_ONE_HOST)
    p = candidate_plan(comp.plan, cand, moe=False, facts=comp.facts)
    assert p.env == {"HCCL_BUFFSIZE": "512", "HCCL_INTRA_ROCE_ENABLE": "1"} and comp.plan.env == {"HCCL_BUFFSIZE": "512"}
    # a value the plan sets itself is kept (SN4009 then says what is wrong with it)
    zero = compile_text(A3_ONE_HOST.replace("HCCL_BUFFSIZE = 512", "HCCL_INTRA_ROCE_ENABLE = 0"))
    assert candidate_plan(zero.plan, cand, moe=False, facts=zero.facts).env == {"HCCL_INTRA_ROCE_ENABLE": "0"}
    # 2 nodes of A3 hold the 4 devices on one host too; 9 prefill instances do not fit on one
    big = Candidate("disaggregated", (RoleChoice(cand.roles[0].layout, 9), cand.roles[1]))
    two = compile_text(A3_ONE_HOST.replace("nodes = 1", "nodes = 2"))
    assert "HCCL_INTRA_ROCE_ENABLE" not in candidate_plan(two.plan, big, moe=False, facts=two.facts).env


def test_the_help_states_the_budget_the_search_uses():
    """`--max-simulated`'s help writes the default out (the CLI does not import the search's run
    module at start-up); it must say what :func:`default_max_simulated` computes."""
    from click.testing import CliRunner

    from sncc.cli import main
    from sncc.search.run import SIM_BUDGET_MIN, SIM_BUDGET_TOPS

    text = " ".join(CliRunner().invoke(main, ["search", "--help"]).output.split())
    assert f"default {SIM_BUDGET_TOPS} × --top, at least {SIM_BUDGET_MIN}" in text, text

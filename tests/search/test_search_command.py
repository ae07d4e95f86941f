"""`sncc search` through click's CliRunner (and once as a real subprocess): the ranked table, the
JSON document against schemas/search.schema.json, --write (each plan passes check and build)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from expect import ROOT
from tests_helpers import QWEN3_32B_A2
from sncc.cli import main
from sncc.sim.report.units import fmt

SMALL = Path(__file__).parent / "small_space.sn"
FAST = ["--mode", "aggregated", "--tp", "2,4", "--dp", "1,2", "--max-num-seqs", "32,64", "--top", "2"]


@pytest.fixture(scope="module")
def json_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("best")
    r = CliRunner().invoke(main, ["search", str(SMALL), "--format", "json", "--write", str(out / "best"),
                                  "--plot", str(out / "frontier.png"), *FAST])
    return r, out / "best"


def test_json_document_follows_its_schema(json_run):
    r, _ = json_run
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    schema = json.loads((ROOT / "schemas" / "search.schema.json").read_text())
    jsonschema.validate(doc, schema)
    names = [s["name"] for s in doc["stages"]]
    assert names == ["price role layouts", "combine whole plans", "checks + screen", "event simulation"]
    ranked = doc["ranked"]
    assert ranked[0]["status"] == "met" and ranked[0]["source"] == "simulate"
    assert all(r["mode"] == "aggregated" and r["devices"] <= 8 for r in ranked)
    per_dev = [r["tokens_per_s_per_device"] for r in ranked if r["status"] == "met"]
    assert per_dev == sorted(per_dev, reverse=True)
    assert {"p50", "p90", "p99", "p99_low", "p99_high"} <= set(ranked[0]["ttft_s"])
    assert doc["base"]["layout"] == "2×tp4 dp1 b64" and doc["base"]["rank"] >= 1


def test_plot_writes_the_frontier_png(json_run):
    r, best = json_run
    png = best.parent / "frontier.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_written_plans_pass_check_and_build(json_run, tmp_path):
    r, best = json_run
    files = sorted(best.glob("*.sn"))
    assert [f.name for f in files] == ["01-qwen3-32b-h200-8-01.sn", "02-qwen3-32b-h200-8-02.sn"]
    doc = json.loads(r.output)
    assert doc["written"] == [str(f) for f in files]
    runner = CliRunner()
    for f in files:
        text = f.read_text()
        assert "search {" not in text and text.startswith("# written by `sncc search")
        fmt = runner.invoke(main, ["fmt", "--check", str(f)])
        assert fmt.exit_code == 0, fmt.output            # canonical `sncc fmt` form
        chk = runner.invoke(main, ["check", str(f)])
        assert chk.exit_code == 0, chk.output
        b = runner.invoke(main, ["build", str(f), "-o", str(tmp_path / f.stem)])
        assert b.exit_code == 0, b.output
        assert (tmp_path / f.stem / "manifest.json").exists()


def test_text_report_has_the_ranked_and_frontier_tables():
    r = CliRunner().invoke(main, ["search", str(SMALL), *FAST])
    assert r.exit_code == 0, r.output
    for text in ("price role layouts", "best 2 (ranked by output tokens/s per device", "Pareto frontier",
                 "TTFT s", "tok/s/dev", "the plan's own layout (2×tp4 dp1 b64) ranks"):
        assert text in r.output, text


def test_an_empty_space_is_an_error_located_in_the_search_block(tmp_path):
    p = tmp_path / "bad.sn"
    p.write_text(SMALL.read_text().replace("tp = [1, 2, 3, 4, 8]", "tp = [3]"))
    r = CliRunner().invoke(main, ["search", str(p)])
    assert r.exit_code == 1
    assert "SN8101" in r.output and "bad.sn:" in r.output


def test_ray_backend_without_ray_is_a_clear_error_or_runs(tmp_path):
    r = CliRunner().invoke(main, ["search", str(SMALL), "--backend", "ray", "--format", "json", *FAST])
    if r.exit_code == 2:
        assert "ray" in (r.stderr if hasattr(r, "stderr") else r.output).lower()
    else:
        assert r.exit_code == 0


def test_search_as_a_real_subprocess(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "sncc.cli", "search", str(SMALL), "--format", "json", *FAST],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["ranked"][0]["status"] == "met"


SHARED_H200 = 'hardware {\n  system = "hgx-h200"\n  devices = 8\n}\n\nengine "vllm" {}\n'
IMPORTING = """import "shared/h200.sn"

plan "pd" {
  model "qwen3-32b" {
    weights = "/models/Qwen3-32B"
    quant = fp8
  }
  serve {
    instances = 2
    devices = 4
    tp = 4
    max_num_seqs = 64
  }
  workload {
    requests = 200
    concurrency = 64
    input { mean = 2k  max = 4k }
    output { mean = 256  max = 512 }
  }
  slo { ttft < 2s  tpot < 50ms }
}
"""


def test_written_plans_rebase_their_imports_to_the_output_folder(tmp_path):
    (tmp_path / "plans" / "shared").mkdir(parents=True)
    (tmp_path / "plans" / "shared" / "h200.sn").write_text(SHARED_H200)
    plan = tmp_path / "plans" / "pd.sn"
    plan.write_text(IMPORTING)
    out = tmp_path / "out" / "best"
    runner = CliRunner()
    r = runner.invoke(main, ["search", str(plan), "--mode", "aggregated", "--tp", "2,4", "--dp", "1",
                             "--max-num-seqs", "64", "--top", "1", "--write", str(out)])
    assert r.exit_code == 0, r.output
    files = sorted(out.glob("*.sn"))
    assert files
    for f in files:
        assert 'import "../../plans/shared/h200.sn"' in f.read_text()
        assert runner.invoke(main, ["fmt", "--check", str(f)]).exit_code == 0
        chk = runner.invoke(main, ["check", str(f)])
        assert chk.exit_code == 0, chk.output
        b = runner.invoke(main, ["build", str(f), "-o", str(tmp_path / f.stem)])
        assert b.exit_code == 0, b.output


@pytest.mark.parametrize("weights, moved", [("ckpt/Qwen3-32B", True), ("Qwen/Qwen3-32B", False)],
                         ids=["local-folder", "repository-id"])
def test_written_plans_rebase_their_plan_relative_paths(tmp_path, weights, moved):
    """A trace (relative to the plan file) and a weights folder next to the plan name the same
    files from the output folder; a repository id is not a path and stays as written."""
    (tmp_path / "plans" / "shared").mkdir(parents=True)
    (tmp_path / "plans" / "shared" / "h200.sn").write_text(SHARED_H200)
    (tmp_path / "plans" / "trace.csv").write_text("".join("2048,256\n" for _ in range(200)))
    if moved:
        (tmp_path / "plans" / weights).mkdir(parents=True)
    plan = tmp_path / "plans" / "pd.sn"
    plan.write_text(IMPORTING.replace('"/models/Qwen3-32B"', f'"{weights}"')
                    .replace("requests = 200", 'requests = 200\n    trace = "trace.csv"'))
    out = tmp_path / "out" / "best"
    runner = CliRunner()
    r = runner.invoke(main, ["search", str(plan), "--mode", "aggregated", "--tp", "2,4", "--dp", "1",
                             "--max-num-seqs", "64", "--top", "1", "--write", str(out)])
    assert r.exit_code == 0, r.output
    (f,) = sorted(out.glob("*.sn"))
    text = f.read_text()
    assert 'trace = "../../plans/trace.csv"' in text
    assert (f'weights = "../../plans/{weights}"' if moved else f'weights = "{weights}"') in text
    chk = runner.invoke(main, ["check", str(f)])
    assert chk.exit_code == 0, chk.output


def _unused_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_ray_address_is_refused_at_once():
    import time

    from sncc.search.backend import _host_port, check_reachable

    assert _host_port("auto") is None and _host_port("ray://head:10001") == ("head", 10001)
    assert _host_port("[::1]:6379") == ("::1", 6379) and _host_port("10.0.0.1:6379") == ("10.0.0.1", 6379)
    address = f"127.0.0.1:{_unused_port()}"
    t0 = time.monotonic()
    with pytest.raises(ConnectionError, match=f"cannot reach the Ray cluster at {address}"):
        check_reachable(address, timeout=2.0)
    assert time.monotonic() - t0 < 5


def test_search_with_an_unreachable_ray_address_exits_2_fast(tmp_path):
    # a real process with a timeout: ray.init alone retried such an address for minutes
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "sncc.cli", "search", str(SMALL), "--format", "json", *FAST,
                        "--backend", "ray", "--address", f"127.0.0.1:{_unused_port()}"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=90)
    assert p.returncode == 2, p.stderr
    assert ("cannot reach the Ray cluster" in p.stderr) or ("not installed" in p.stderr)
    assert "Traceback" not in p.stderr
    assert json.loads(p.stdout)["error"]


def test_ctrl_c_prints_the_partial_document_and_exits_130(monkeypatch):
    from sncc.search import _serial

    class Interrupting(_serial.SerialBackend):
        """The heavy stage yields one result, then a Ctrl-C."""

        def imap(self, fn, items, **kw):
            for i, r in enumerate(super().imap(fn, items, **kw)):
                if i == 1:
                    raise KeyboardInterrupt
                yield r

    monkeypatch.setattr(_serial, "backend", lambda *a, **kw: Interrupting())
    r = CliRunner().invoke(main, ["search", str(SMALL), "--format", "json", *FAST])
    assert r.exit_code == 130, r.output
    doc = json.loads(r.stdout)
    assert doc["interrupted"] is True and doc["ranked"]
    assert "interrupted" in r.stderr


@pytest.mark.parametrize("flag", ["--tp", "--dp", "--max-num-seqs", "--decode-instances"])
@pytest.mark.parametrize("value", ["1,,2", "1,2,", ",1", "", " "])
def test_an_empty_item_of_a_list_flag_is_a_usage_error(flag, value):
    r = CliRunner().invoke(main, ["search", str(SMALL), flag, value])
    assert r.exit_code == 2, r.output
    assert "empty" in r.output and "Traceback" not in r.output


def test_ttft_shown_is_the_client_ttft_a_ttft_slo_is_judged_on(tmp_path):
    # one tp8 instance of 16 sequences for 128 clients: the engine's TTFT is short, the queue in
    # front of it is long, and the `ttft < 2s` SLO (client TTFT) is missed
    args = ["search", str(SMALL), "--mode", "aggregated", "--tp", "8", "--dp", "1", "--max-num-seqs", "16",
            "--serve-instances", "1", "--top", "1"]
    r = CliRunner().invoke(main, args + ["--format", "json"])
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, json.loads((ROOT / "schemas" / "search.schema.json").read_text()))
    assert doc["ttft_judged_on"] == "client"
    row = doc["ranked"][0]
    assert row["source"] == "simulate" and dict((s["name"], s["verdict"]) for s in row["slo"])["ttft.mean < 2 s"] == "missed"
    assert row["ttft_s"]["mean"] < 2 < row["client_ttft_s"]["mean"]          # engine TTFT kept, client added
    assert {"p50", "p99", "mean_low", "mean_high"} <= set(row["client_ttft_s"])
    text = CliRunner().invoke(main, args).output
    assert "client TTFT s" in text and "what the `ttft` SLO is judged on" in text
    p99 = f"{row['client_ttft_s']['p99']:.2f}"
    assert p99 in text


def test_an_engine_ttft_slo_shows_the_engine_ttft(tmp_path):
    p = tmp_path / "engine.sn"
    p.write_text(SMALL.read_text().replace("slo { ttft < 2s", "slo { engine_ttft < 2s"))
    r = CliRunner().invoke(main, ["search", str(p), *FAST, "--format", "json"])
    assert json.loads(r.stdout)["ttft_judged_on"] == "engine"
    text = CliRunner().invoke(main, ["search", str(p), *FAST]).output
    assert "engine TTFT s" in text and "client TTFT s" not in text


def test_a_value_from_a_flag_is_reported_as_from_the_flag_at_the_search_block():
    # the block lists tp = [1, 2, 3, 4, 8] on line 30; `--tp 3,4` overrides it: SN8102 names the
    # flag and sits at the `search` block (line 28), not under the list the flag replaced
    r = CliRunner().invoke(main, ["search", str(SMALL), "--tp", "3,4", "--dp", "1", "--mode", "aggregated",
                                  "--max-num-seqs", "64", "--top", "1"])
    assert "warning[SN8102]: `tp = 3` (from --tp) is skipped: it does not divide the 64 attention heads" in r.output
    assert "small_space.sn:28:3" in r.output and "small_space.sn:30" not in r.output
    r = CliRunner().invoke(main, ["search", str(SMALL), "--tp", "3"])
    assert r.exit_code == 1
    assert "error[SN8101]" in r.output and "(tp from --tp)" in r.output and "small_space.sn:28:3" in r.output


def test_a_dropped_role_default_is_located_at_the_role_value():
    r = CliRunner().invoke(main, ["search", str(SMALL), "--max-num-batched-tokens", "100", "--mode", "aggregated"])
    assert r.exit_code == 1
    assert "`chunked_prefill = 8192` (the plan's `serve` value) is skipped" in r.output
    assert "error[SN8101]: no `serve` candidate is left: every `chunked_prefill` searched (8192" in r.output
    assert "(100, from --max-num-batched-tokens)" in r.output and "layout fits" not in r.output
    assert "small_space.sn:19:23" in r.output                    # `chunked_prefill = 8k` in `serve { }`


def test_no_candidate_meeting_the_slos_is_a_located_sn8105():
    r = CliRunner().invoke(main, ["search", str(SMALL), "--mode", "aggregated", "--tp", "8", "--dp", "1",
                                  "--max-num-seqs", "16", "--serve-instances", "1", "--top", "1"])
    assert r.exit_code == 1
    head, _, tail = r.output.partition("warning[SN8105]")
    assert tail and tail.splitlines()[1].strip().endswith("small_space.sn:28:3")


def test_sn8105_names_each_slo_none_met_and_its_closest_prediction():
    """A user whose SLO no candidate meets learns which SLO and how far the best one is, not only
    that nothing met (break test: an unmeetable TPOT gave a bare "no candidate ... meets")."""
    r = CliRunner().invoke(main, ["search", str(SMALL), "--format", "json", "--mode", "aggregated", "--tp", "8",
                                  "--dp", "1", "--max-num-seqs", "16", "--serve-instances", "1", "--top", "1"])
    doc = json.loads(r.output)
    msg = next(d["message"] for d in doc["diagnostics"] if d["code"] == "SN8105")
    missed = {n for row in doc["ranked"] if row["source"] == "simulate"
              for n, v in ((s["name"], s["verdict"]) for s in row["slo"]) if v == "missed"}
    assert missed and "met by none: " in msg
    for name in missed:
        assert f"{name}: best predicted " in msg
    # this space's one layout misses `ttft.mean < 2 s`, judged on client TTFT (the queue included)
    assert missed == {"ttft.mean < 2 s"}
    client = min(row["client_ttft_s"]["mean"] for row in doc["ranked"] if row["source"] == "simulate")
    assert f"ttft.mean < 2 s: best predicted {fmt(client, 's')} (1×tp8 dp1 b16)" in msg


def test_sn8105_points_at_each_slo_none_met_and_has_the_search_path(tmp_path):
    """break4 report: SN8105 named the SLOs nobody met only in its message: no related location at
    the `slo` comparison, JSON `path` [] at the `search` block (the README's contract: [] only
    outside every block), and without a `search { }` block it sat at the plan's name.  Each SLO
    none met is now a related location at its comparison; the path is `["search"]`, and a plan
    without the block gets the warning at the first such SLO (`["slo", "<metric>"]`)."""
    args = ["--format", "json", "--mode", "aggregated", "--tp", "8", "--dp", "1", "--max-num-seqs", "16",
            "--serve-instances", "1", "--top", "1"]
    doc = json.loads(CliRunner().invoke(main, ["search", str(SMALL), *args]).output)
    d = next(d for d in doc["diagnostics"] if d["code"] == "SN8105")
    assert d["range"]["start"]["line"] == 28 and d["path"] == ["search"]
    assert [(r["range"]["start"]["line"], r["range"]["start"]["column"]) for r in d["related"]] == [(27, 9)]
    assert d["related"][0]["message"].startswith("met by no candidate; best predicted ")
    text = SMALL.read_text(encoding="utf-8")
    start = text.index("  search {")
    plain = tmp_path / "no_search_block.sn"
    plain.write_text(text[:start] + text[text.index("\n  }\n", start) + 5:], encoding="utf-8")
    doc = json.loads(CliRunner().invoke(main, ["search", str(plain), "--devices", "8", *args]).output)
    d = next(d for d in doc["diagnostics"] if d["code"] == "SN8105")
    assert (d["range"]["start"]["line"], d["range"]["start"]["column"]) == (27, 9) and d["path"] == ["slo", "ttft"]


def test_the_json_document_carries_the_located_warnings():
    """SN8102 (a flag value dropped) and SN8105 (nothing met) are in the JSON document too, with
    the location the text output prints."""
    r = CliRunner().invoke(main, ["search", str(SMALL), "--format", "json", "--mode", "aggregated", "--tp", "3,8",
                                  "--dp", "1", "--max-num-seqs", "16", "--serve-instances", "1", "--top", "1"])
    assert r.exit_code == 1
    doc = json.loads(r.output)
    jsonschema.validate(doc, json.loads((ROOT / "schemas" / "search.schema.json").read_text()))
    by = {d["code"]: d for d in doc["diagnostics"]}
    assert set(by) == {"SN8102", "SN8105"}, by.keys()
    for d in by.values():
        assert d["file"] == str(SMALL) and d["range"]["start"]["line"] == 28 and d["severity"] == "warning"


def test_a_rate_slo_a_tiny_run_cannot_judge_is_uncertain_not_met(tmp_path):
    """Five requests cannot show a QPM (simulate: n/a, `too few requests`): the search ranks such a
    candidate uncertain, so nothing is 'met' and the exit code is 1."""
    plan = tmp_path / "tiny.sn"
    plan.write_text(SMALL.read_text().replace("requests = 400", "requests = 5")
                    .replace("slo { ttft < 2s  tpot < 50ms }", "slo { qpm >= 100000 }"), encoding="utf-8")
    r = CliRunner().invoke(main, ["search", str(plan), "--format", "json", *FAST])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    sim = [row for row in doc["ranked"] if row["source"] == "simulate"]
    assert sim and all(row["status"] == "uncertain" for row in sim), [row["status"] for row in sim]


def test_the_refused_candidates_line_says_how_many_it_leaves_out():
    """Fresh-user report: "17 candidates refused by the checks" listed 5 and said nothing of the other 12."""
    from types import SimpleNamespace

    from sncc.search.report import REFUSED_SHOWN, render_text
    from sncc.search.run import SearchResult

    space = SimpleNamespace(modes=("aggregated",), fixed=False, budget=8, size=3, top=10)
    rejected = {f"serve tp{k}": ["SN3004"] for k in range(17)}
    text = render_text(SearchResult(space=space, stages=[], ranked=[], frontier=[], rejected=rejected), "p")
    line = " ".join(text[text.index("17 candidates refused"):].split())      # the line, unwrapped
    assert line.startswith("17 candidates refused") and line.count("SN3004") == REFUSED_SHOWN
    assert f"and {17 - REFUSED_SHOWN} more" in line
    few = render_text(SearchResult(space=space, stages=[], ranked=[], frontier=[],
                                   rejected=dict(list(rejected.items())[:2])), "p")
    assert "more" not in next(ln for ln in few.splitlines() if "refused by the checks" in ln)


def test_the_plan_name_is_one_safe_file_name_component():
    from sncc.atomic_file import file_name_component

    assert file_name_component("../../escape") == "escape"
    assert file_name_component("team/qwen3") == "team-qwen3"
    assert file_name_component("x/../../outside") == "x-..-..-outside"
    assert file_name_component("..") == "plan" and file_name_component("") == "plan"
    assert file_name_component("a b\\c\u00e9") == "a-b-c" and len(file_name_component("x" * 5000)) == 200


@pytest.mark.parametrize("name", ["../../escape", "x/../../outside"], ids=["parent", "through-a-folder"])
def test_written_plans_stay_in_the_write_folder_whatever_the_plan_name(tmp_path, name):
    """Review item 5: plan "../../escape" failed with a raw errno, and "x/../../outside" with a
    `01-x` folder present wrote outside the --write folder."""
    plan = tmp_path / "p.sn"
    plan.write_text(SMALL.read_text().replace('plan "qwen3-32b-h200-8"', f'plan "{name}"', 1))
    out = tmp_path / "deep" / "wesc"
    (out / "01-x").mkdir(parents=True)
    r = CliRunner().invoke(main, ["search", str(plan), "--mode", "aggregated", "--tp", "2,4", "--dp", "1",
                                  "--max-num-seqs", "64", "--top", "1", "--write", str(out)])
    assert r.exit_code == 0, r.output
    written = sorted(p for p in tmp_path.rglob("*.sn") if p != plan)
    assert written and all(p.parent == out for p in written), written
    assert f'plan "{name}-01"' in written[0].read_text()


#: the user report's A2 plan, its `env` setting what one-host P/D with Mooncake must not have
#: (the search keeps the plan's own value: SN4009 refuses every disaggregated candidate)
A2_ONE_NODE = QWEN3_32B_A2.replace("  slo {", "  env { HCCL_INTRA_ROCE_ENABLE = 0 }\n  slo {")


def test_each_distinct_refusal_is_printed_once_with_its_message_and_help(tmp_path):
    """User report: on one A2 node every disaggregated candidate was refused, shown only as `SN4009`;
    the report now says once what the check says (mooncake on one host needs HCCL_INTRA_ROCE_ENABLE=1;
    the search sets it in a candidate itself unless the plan sets it, as here, to something else)."""
    p = tmp_path / "a2.sn"
    p.write_text(A2_ONE_NODE)
    args = ["search", str(p), "--mode", "disaggregated", "--tp", "2", "--dp", "1", "--max-num-seqs", "32,64",
            "--prefill-instances", "1,2", "--decode-instances", "1,2", "--top", "1"]
    text = " ".join(CliRunner().invoke(main, args).output.split())
    assert "refused by the checks" in text
    msg = ("SN4009 (8 candidates): prefill and decode share one host: the `mooncake` connector needs "
           "`HCCL_INTRA_ROCE_ENABLE=1`, not `0`; help: set `HCCL_INTRA_ROCE_ENABLE = 1` in `env`")
    assert text.count(msg) == 1, text
    doc = json.loads(CliRunner().invoke(main, args + ["--format", "json"]).output)
    jsonschema.validate(doc, json.loads((ROOT / "schemas" / "search.schema.json").read_text()))
    assert doc["rejected"] and all(r["reasons"][0]["code"] == "SN4009" and "HCCL_INTRA_ROCE_ENABLE" in r["reasons"][0]["help"]
                                   for r in doc["rejected"])

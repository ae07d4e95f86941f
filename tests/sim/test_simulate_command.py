"""Fixes from a fresh-user test of `sncc simulate`: the command layer, goodput, what-ifs,
rendering and plotting.  Each test failed before its fix."""
from __future__ import annotations

import json
import math
import re
from dataclasses import replace

import pytest
from click.testing import CliRunner
from expect import ROOT

from sncc.cli import main

FIXTURES = ROOT / "tests" / "fixtures" / "plans"
EXAMPLES = ROOT / "examples"
MULTI_TURN = FIXTURES / "multi-turn-h200.sn"
SIX_P = EXAMPLES / "deepseek-r1-a3-6p1d.sn"


def one_p(tmp_path):
    """The 6P1D example with one prefill instance and 12k-token prompts (at CloudMatrix-Infer's
    prefill rate one instance keeps up with the seed's 3.5k): TTFT far over its 2 s SLO (what-ifs
    run)."""
    p = tmp_path / "deepseek-r1-a3-1p1d.sn"
    six = SIX_P.read_text()
    text = re.sub(r"(prefill \{\s*instances = )6\b", r"\g<1>1", six, count=1)
    assert text != six, "the 6P1D example's prefill instances were not found"
    longer = text.replace("input { mean = 3.5k  max = 16k }", "input { mean = 12k  max = 16k }")
    assert longer != text, "the 6P1D example's input lengths were not found"
    text = longer
    p.write_text(text.replace('plan "deepseek-r1-a3-6p1d"', 'plan "deepseek-r1-a3-1p1d"'))
    return p

#: Qwen3-32B on 2 x H200 (as tests/fixtures/plans/qwen3-32b-h200.sn), a run of about 0.3 s
SMALL = '''plan "small" {{
  model "qwen3-32b" {{ weights = "/data/qwen3-32b"  max_model_len = 16k }}
  hardware {{ system = "hgx-h200"  devices = 2 }}
  engine "vllm" {{}}
  serve {{ devices = 2  tp = 2  max_num_seqs = 32  max_num_batched_tokens = 8k  chunked_prefill = 2k }}
  workload {{ requests = 160  concurrency = 16
             input {{ mean = 2k  max = 4k }}  output {{ mean = {out}  max = {out_max} }} }}
  slo {{ {slo} }}
}}
'''


def small(tmp_path, slo="ttft < 2s  tpot < 50ms  e2e.p90 < 60s  tokens_per_s_per_user >= 10", out="128",
          out_max="512", name="small.sn"):
    p = tmp_path / name
    p.write_text(SMALL.format(slo=slo, out=out, out_max=out_max))
    return p


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def compile_text(path, text=None):
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    return compile_file(SourceFile(str(path), text if text is not None else open(path).read()))


def spec_of(path, text=None):
    from sncc.sim.from_plan import spec_from_plan

    comp = compile_text(path, text)
    assert comp.plan is not None and not [d for d in comp.diagnostics if d.is_error]
    return spec_from_plan(comp.plan, comp.resolved)


@pytest.fixture
def nominal_only(monkeypatch):
    """Goodput runs only its nominal search: with no calibration residuals the two interval
    searches are skipped (they triple the runs and are tested in test_sim_goodput_interval.py)."""
    from sncc.sim.engine import run as runner

    monkeypatch.setattr(runner, "plan_residuals", lambda spec, prof: ({}, None))
    monkeypatch.setattr(runner, "widen_residuals", lambda rsd, m: {})


# ------------------------------------------------------------------ 1. goodput: trace arrivals, multi-turn
def test_goodput_refuses_a_trace_whose_rows_carry_arrival_times(tmp_path):
    rows = "\n".join(f"{1024 + 37 * i},{128 + 5 * i},{0.2 * i:.1f}" for i in range(40))
    (tmp_path / "trace.csv").write_text("input_len,output_len,arrival_s\n" + rows + "\n")
    plan = small(tmp_path, slo="ttft < 2s  tpot < 50ms").read_text().replace(
        "requests = 160  concurrency = 16", 'requests = 40  trace = "trace.csv"')
    (tmp_path / "tr.sn").write_text(plan)
    r = run("simulate", "--goodput", tmp_path / "tr.sn")
    assert r.exit_code == 2, r.output
    assert "arrival_s" in r.stderr and "goodput:" not in r.stdout
    # lengths only: the trace keeps its lengths and the rate can be searched
    from sncc.sim.whatif import goodput_refusal

    (tmp_path / "trace.csv").write_text("input_len,output_len\n" + "\n".join(
        ",".join(line.split(",")[:2]) for line in rows.splitlines()) + "\n")
    assert goodput_refusal(spec_of(tmp_path / "tr.sn")) is None


def _plan_codes(path):
    """The codes of the plan's own diagnostics (`sncc check --format json`)."""
    doc = json.loads(run("check", "--format", "json", path).stdout)
    return sorted(d["code"] for d in doc["diagnostics"]), doc["summary"]


def test_a_refused_goodput_json_carries_the_plans_diagnostics(tmp_path):
    """Break test 27: `simulate --goodput --format json` on a trace with arrival times exited 2
    with `diagnostics: []` and `warnings: 0`, although stderr named the plan's SN4008 and SN4046."""
    rows = "\n".join(f"{1024 + 37 * i},{128 + 5 * i},{0.2 * i:.1f}" for i in range(40))
    (tmp_path / "trace.csv").write_text("input_len,output_len,arrival_s\n" + rows + "\n")
    plan = small(tmp_path, slo="ttft < 2s  tpot < 50ms").read_text().replace(
        "requests = 160  concurrency = 16", 'requests = 40  trace = "trace.csv"').replace(
        "max_num_seqs = 32", "max_num_seqs = 256")   # SN4008: 256 sequences at 16k overcommit the KV cache
    (tmp_path / "tr.sn").write_text(plan)
    codes, summary = _plan_codes(tmp_path / "tr.sn")
    assert "SN4008" in codes and "SN4046" in codes
    r = run("simulate", "--goodput", "--format", "json", tmp_path / "tr.sn")
    assert r.exit_code == 2, r.output
    doc = json.loads(r.stdout)
    assert "arrival_s" in doc["error"] and doc["summary"]["valid"] is False
    assert sorted(d["code"] for d in doc["diagnostics"]) == codes
    assert (doc["summary"]["warnings"], doc["summary"]["infos"]) == (summary["warnings"], summary["infos"])


def test_a_simulate_json_result_carries_the_plans_diagnostics(tmp_path):
    """A successful `simulate --format json` printed the plan's warnings on stderr only: an editor
    or CI reading stdout saw none.  The result now has `diagnostics` (the items of
    diagnostics.schema.json), the same codes `sncc check` gives, and still validates."""
    from sncc.emit.validate import validate_instance

    plan = small(tmp_path).read_text().replace("max_num_seqs = 32", "max_num_seqs = 256")   # SN4008
    (tmp_path / "w.sn").write_text(plan)
    codes, _ = _plan_codes(tmp_path / "w.sn")
    assert "SN4008" in codes
    r = run("simulate", "--no-what-if", "--format", "json", tmp_path / "w.sn")
    assert r.exit_code in (0, 1), r.output
    doc = json.loads(r.stdout)
    assert sorted(d["code"] for d in doc["diagnostics"]) == codes
    d = next(d for d in doc["diagnostics"] if d["code"] == "SN4008")
    assert d["severity"] == "warning" and d["range"]["start"]["line"] >= 1
    assert validate_instance("simulate.json", doc, "simulate") == []


def test_a_plan_problem_found_by_simulating_keeps_the_plans_diagnostics_in_json(tmp_path, monkeypatch):
    """The same for the diagnostics document of a problem the simulator finds (SN5083 here)."""
    from sncc.sim import from_plan

    def refuse(*a, **k):
        raise ValueError("no such combination")

    monkeypatch.setattr(from_plan, "spec_from_plan", refuse)
    path = small(tmp_path)
    codes, summary = _plan_codes(path)
    assert codes
    r = run("simulate", "--format", "json", path)
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert sorted(d["code"] for d in doc["diagnostics"]) == sorted(codes + ["SN5083"])
    assert doc["summary"]["errors"] == 1 and doc["summary"]["infos"] == summary["infos"]


def test_multi_turn_goodput_trials_reach_their_steady_state():
    """800 requests at 30 conversations/s: 200 conversations start within 7 s but each lives
    ~40 s, so that run never carries its offered load; it used to pass as "keeps up"."""
    from sncc.sim.whatif import _ok

    spec = spec_of(MULTI_TURN)
    ok, _, keeps = _ok(spec, 30.0, 800)
    assert not ok and not keeps
    from sncc.sim.whatif import MT_LIFETIMES, _trial, conversation_requests

    res, runs = _trial(spec, 3.0, 800)
    assert runs > 1 and res.requests_completed > 800
    # the run is long enough: conversations kept starting for MT_LIFETIMES lifetimes
    wl = spec.workload
    life = (wl.turns - 1) * wl.think_time + wl.turns * res.saturated["e2e_s"]
    assert res.requests_completed / wl.turns / 3.0 >= 0.8 * MT_LIFETIMES * life
    assert conversation_requests(wl, 3.0, res) <= res.requests_completed * 1.25
    # and at a rate it sustains, the completed turns match the offered ones
    assert res.saturated["qpm"] / 60.0 >= 0.9 * 3.0 * wl.turns


def test_multi_turn_goodput_is_a_sustainable_conversation_rate(nominal_only):
    from sncc.sim.whatif import _ok, goodput

    spec = spec_of(MULTI_TURN)
    g = goodput(spec, tol=0.1)
    # saturated, the deployment completes ~17 requests/s (4.4 conversations/s): the old
    # search answered 30 conversations/s
    assert 1.0 < g["rate"] < 4.4
    assert g["unit"] == "conversations/s" and g["turns"] == 4
    assert g["qpm"] == pytest.approx(g["rate"] * 4 * 60)
    assert _ok(spec, g["rate"], 800)[0]
    assert not _ok(spec, 1.3 * g["rate"], 800)[0]


# ------------------------------------------------------------------ 2. goodput judges tokens/s per user
def test_goodput_holds_the_tokens_per_user_slo(tmp_path, nominal_only):
    from sncc.sim.engine.metrics import evaluate_slo
    from sncc.sim.engine.run import simulate_spec as simulate
    from sncc.sim.spec import SloTarget
    from sncc.sim.whatif import _at_rate, goodput

    def _trial(sp, rate, n):          # a single-turn trial: one run at the rate
        return simulate(_at_rate(sp, rate, n), series=False), 1

    spec = spec_of(small(tmp_path))
    ttft_only = replace(spec, slos=(SloTarget("ttft", "mean", "<", 2.0),))
    per_user = SloTarget("tokens_per_s_per_user", "mean", ">=", 70.0)
    both = replace(spec, slos=(SloTarget("ttft", "mean", "<", 2.0), per_user))
    g0 = goodput(ttft_only, requests=400)
    g = goodput(both, requests=400)
    # at the TTFT-only goodput the per-user rate is below 70 tokens/s: it must bind
    res0, _ = _trial(ttft_only, g0["rate"], 400)
    assert not evaluate_slo(res0, per_user).met
    assert 0 < g["rate"] < g0["rate"]
    assert g["binding"] == ["tokens_per_s_per_user >= 70 tokens/s"]
    res, _ = _trial(both, g["rate"], 400)
    assert evaluate_slo(res, per_user).met
    # a per-user SLO alone is enough for --goodput
    from sncc.sim.whatif import goodput_refusal

    assert goodput_refusal(replace(spec, slos=(per_user,))) is None
    assert "tokens_per_s_per_user" in goodput_refusal(replace(spec, slos=(SloTarget("qpm", "mean", ">=", 1.0),)))


# ------------------------------------------------------------------ 3. what-ifs: checked plans, wording
def test_mtp_what_if_raises_hccl_buffsize_to_what_sn4010_requires():
    from sncc.facts.buffers import dispatch_buffer_mb
    from sncc.sim.whatif import _candidates

    spec = spec_of(SIX_P)
    dec = spec.role("decode")
    assert spec.hccl_buffsize_mb == dec.hccl_buffsize_mb == 1000
    cands = {label.split(" (")[0]: (label, sp) for label, _, _, sp in _candidates(spec)}
    label, mtp = cands["MTP on"]
    need = dispatch_buffer_mb(spec.model, dec.ep_size, 256 + dec.redundant_experts, dec.max_num_seqs * 2)
    assert 1000 < need and mtp.role("decode").hccl_buffsize_mb == math.ceil(need) == 1068
    assert "HCCL_BUFFSIZE 1000 -> 1068 MB" in label and "SN4010" in label
    # the larger buffer shrinks the decode pool: the what-if is re-sized by the memory model
    assert mtp.role("decode").memory is None and mtp.role("decode").kv_budget_bytes_per_device is None
    # changes that do not dispatch more tokens per rank keep the plan's buffer and pool
    assert all(sp.role("decode").hccl_buffsize_mb == 1000 for k, (_, sp) in cands.items() if k != "MTP on")
    # the plan the what-if stands for passes sncc check; one MB less fails SN4010
    base = SIX_P.read_text()
    for mb, fails in ((1068, False), (1067, True)):
        text = base.replace("env { HCCL_BUFFSIZE = 1000 }", f"env {{ HCCL_BUFFSIZE = {mb} }}\n"
                            "  speculative { method = mtp  draft_tokens = 1  acceptance = 0.7 }")
        codes = {d.code.code for d in compile_text(SIX_P, text).diagnostics if d.is_error}
        assert ("SN4010" in codes) == fails, (mb, codes)


def test_what_if_lines_use_the_verdict_model_and_warnings_go_to_stderr(tmp_path):
    plan = one_p(tmp_path)
    r = run("simulate", plan)
    assert r.exit_code in (0, 1), r.output
    out = r.stdout
    # the plan's warnings: one line on stderr pointing at `sncc check` (build && simulate shows
    # each diagnostic once), never in the report
    assert "SN4008" in r.stderr and "`sncc check" in r.stderr and "SN4008" not in out
    assert "cheapest changes for the SLOs predicted to miss" in out
    first = next(line for line in out.splitlines() if line.strip().startswith("one more prefill instance"))
    assert re.search(r"(engine_ttft|ttft\.mean) < 2 s: [\d.]+ -> [\d.]+ s", first) and "after it: " in first
    assert "still missed" not in out and "not missed" not in out


def test_what_if_json_carries_verdicts(tmp_path):
    r = run("simulate", "--format", "json", one_p(tmp_path))
    doc = json.loads(r.stdout)
    assert doc["changes"]
    for c in doc["changes"]:
        assert c["all_slos"] in ("met", "none predicted to miss", "some predicted to miss")
        assert set(c["verdicts"].values()) <= {"met", "missed", "uncertain", "n/a"}
        assert set(c["predicted_to_miss"]) <= set(c["verdicts"])
        for e in c["effects"]:          # in the SLO's unit
            assert e["unit"] in ("s", "ms", "req/min", "tokens/s")


# ------------------------------------------------------------------ 4. a definitions file
def test_simulate_a_definitions_file_is_a_diagnostic_not_a_crash():
    r = run("simulate", EXAMPLES / "shared" / "a3-superpod-11-nodes.sn")
    assert r.exit_code == 1, r.output
    assert "error[SN2005]" in r.stdout and "holds no plan" in r.stdout
    assert "internal error" not in r.output and "Traceback" not in r.output


# ------------------------------------------------------------------ 5. --plot paths
def test_plot_refuses_a_directory_and_writes_no_sibling(tmp_path):
    d = tmp_path / "plots"
    d.mkdir()
    plan = small(tmp_path)
    r = run("simulate", "--plot", d, plan)
    assert r.exit_code == 2 and "is a directory" in r.stderr
    assert not (tmp_path / "plots.png").exists() and not list(d.iterdir())
    r = run("simulate", "--plot", f"{tmp_path / 'nowhere'}/", plan)
    assert r.exit_code == 2 and "is a directory" in r.stderr


def test_plot_formats_follow_matplotlib(tmp_path):
    pytest.importorskip("matplotlib")
    plan = small(tmp_path)
    r = run("simulate", "--plot", tmp_path / "x.txt", plan)
    assert r.exit_code == 2, r.output
    assert "internal error" not in r.output
    assert all(f".{e}" in r.stderr for e in ("png", "svg", "pdf"))
    r = run("simulate", "--plot", tmp_path / "missing" / "x.png", plan)
    assert r.exit_code == 2 and "no directory" in r.stderr
    r = run("simulate", "--plot", tmp_path / "x.svg", plan)
    assert r.exit_code in (0, 1), r.output
    assert "<svg" in (tmp_path / "x.svg").read_text()
    r = run("simulate", "--plot", tmp_path / "fig", plan)
    assert r.exit_code in (0, 1), r.output
    assert (tmp_path / "fig.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {tmp_path / 'fig'}.png" in r.stderr and "fig.png" not in r.stdout


# ------------------------------------------------------------------ 6. SLO statistics of rates
RATES = '''plan "r" {{
  model "qwen3-32b" {{ weights = "/data/qwen3-32b"  max_model_len = 16k }}
  hardware {{ system = "hgx-h200"  devices = 2 }}
  engine "vllm" {{}}
  serve {{ devices = 2  tp = 2  max_num_seqs = 32  max_num_batched_tokens = 8k  chunked_prefill = 2k }}
  workload {{ requests = 100  concurrency = 8  input {{ mean = 2k  max = 4k }}  output {{ mean = 128  max = 512 }} }}
  slo {{ {slo} }}
}}
'''


def test_rate_slos_take_no_percentile(tmp_path):
    slo = "qpm.p99 >= 1  output_tokens_per_s.p50 >= 10  tokens_per_s_per_user.p90 >= 5  tokens_per_s_per_user.p10 >= 4"
    text = RATES.format(slo=slo)
    comp = compile_text(tmp_path / "r.sn", text)
    errs = [(d.code.code, comp.source.line_col(d.span.start), d) for d in comp.diagnostics if d.is_error]
    line = text.splitlines()[6]
    want = [line.index(k) + len(k.split(".")[0]) + 1 for k in
            ("qpm.p99", "output_tokens_per_s.p50", "tokens_per_s_per_user.p90", "tokens_per_s_per_user.p10")]
    assert [(c, lc) for c, lc, _ in errs] == [("SN2001", (7, col)) for col in want]
    p10 = errs[-1][2]
    assert "`tpot.p90 <= 1/X`" in p10.help and "mean" in p10.message
    assert errs[0][2].fixes and errs[0][2].fixes[0].edits[0].new_text == ""
    # what the simulator evaluates is accepted
    ok = RATES.format(slo="qpm >= 1  qpm.mean >= 1  output_tokens_per_s >= 10  tokens_per_s_per_user >= 5  "
                          "tpot.p90 < 50ms  e2e.p99 < 60s")
    assert not [d for d in compile_text(tmp_path / "ok.sn", ok).diagnostics if d.is_error]


# ------------------------------------------------------------------ 7. units in verdict lines
def test_verdict_lines_use_one_unit_per_metric(tmp_path):
    """Issue 14 item 5: one unit per metric, in the name and the value, in the text and the JSON."""
    import jsonschema

    from sncc.resources import schema

    plan = small(tmp_path)
    r = run("simulate", plan)
    rows = {ln.split()[1].split(".")[0]: ln for ln in r.stdout.splitlines()
            if ln.strip().startswith(("met", "MISSED", "UNCERTAIN"))}
    assert re.search(r"tpot\.mean < 50 ms +(steady|run) +[\d.]+ ms +[\d.]+ to [\d.]+ ms", rows["tpot"])
    # TTFT is judged on client TTFT (what bench.sh measures), the engine-side figure in the last column
    assert re.search(r"ttft\.mean < 2 s \(client\) +(steady|run) +[\d.]+ s +[\d.]+ to [\d.]+ s +[\d.]+ s", rows["ttft"])
    assert re.search(r"e2e\.p90 < 60 s +(steady|run) +[\d.]+ s", rows["e2e"])
    assert re.search(r"tokens_per_s_per_user >= 10 tokens/s +(steady|run) +[\d.]+ tokens/s",
                     rows["tokens_per_s_per_user"])
    assert "0.05" not in rows["tpot"]
    doc = json.loads(run("simulate", "--format", "json", plan).stdout)
    units = {e["name"].split(".")[0].split(" ")[0]: e["unit"] for e in doc["slo"]}
    assert units == {"ttft": "s", "tpot": "ms", "e2e": "s", "tokens_per_s_per_user": "tokens/s"}
    tpot = next(e for e in doc["slo"] if e["name"].startswith("tpot"))
    assert tpot["name"] == "tpot.mean < 50 ms" and tpot["target"] == pytest.approx(50.0)
    assert tpot["observed"] == pytest.approx(doc["latency"]["tpot_ms"]["mean"], rel=1e-9)   # ms, as named
    assert tpot["low"] <= tpot["observed"] <= tpot["high"]
    ttft = next(e for e in doc["slo"] if e["name"].startswith("ttft"))
    assert ttft["target"] == pytest.approx(2.0) and ttft["observed"] < 60
    assert ttft["basis"] == "client" and ttft["unit"] == "s"
    assert ttft["observed"] == pytest.approx(doc["latency"]["client_ttft_s"]["mean"], rel=1e-9)
    assert ttft["engine_observed"] == pytest.approx(doc["latency"]["ttft_s"]["mean"], rel=1e-9)
    assert "client TTFT" in r.stdout and "engine TTFT" in r.stdout
    jsonschema.validate(doc, schema("simulate"))
    slo_item = schema("simulate")["properties"]["slo"]["items"]["properties"]
    assert set(slo_item["unit"]["enum"]) == {"s", "ms", "req/min", "tokens/s"}


# ------------------------------------------------------------------ 9. README
def test_readme_does_not_present_kv_admission_as_a_plan_key():
    from sncc.plan import model

    readme = (ROOT / "README.md").read_text()
    assert "kv_admission =" not in readme
    assert "kv_admission" not in model.Plan.model_fields and "kv_admission" not in model.Workload.model_fields
    assert "[policy] kv_admission_omni_infer" in readme


# ------------------------------------------------------------------ 10. plots
@pytest.fixture
def captured(monkeypatch):
    """The figures write_plot saves (the file is still written)."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    figs = []
    real = Figure.savefig

    def save(self, *a, **k):
        figs.append(self)
        return real(self, *a, **k)

    monkeypatch.setattr(Figure, "savefig", save)
    return figs


def _plot(tmp_path, plan, captured):
    from sncc.sim.report.plot import write_plot
    from sncc.sim.engine.run import simulate_spec as simulate

    spec = spec_of(plan)
    res = simulate(spec)
    ttft, tpot = res._samples
    write_plot(res, str(tmp_path / "p.png"), "t", ttft, tpot, spec.slos)
    (a1, a2), (a3, a4) = captured[-1].axes[0:2], captured[-1].axes[2:4]
    return res, (a1, a2, a3, a4)


def test_plot_marks_the_observed_mean_and_the_per_user_rate(tmp_path, captured):
    res, (a1, a2, a3, a4) = _plot(tmp_path, small(tmp_path), captured)
    ttft_labels = [ln.get_label() for ln in a3.get_lines()]
    tpot_lines = {ln.get_label(): ln for ln in a4.get_lines()}
    assert any(lb.startswith("observed mean") for lb in ttft_labels)
    assert any(lb.startswith("observed mean") for lb in tpot_lines)
    per_user = next(ln for lb, ln in tpot_lines.items() if "tokens_per_s_per_user >= 10 tokens/s" in lb)
    assert per_user.get_xdata()[0] == pytest.approx(100.0)       # 1/10 tokens/s = 100 ms per token
    mean = next(ln for lb, ln in tpot_lines.items() if lb.startswith("observed mean"))
    steady = res.saturated["tpot_ms"] if res.saturated else res.tpot_ms["mean"]
    assert mean.get_xdata()[0] == pytest.approx(steady)
    for ax in (a1, a2, a3, a4):
        assert ax.get_legend()._loc == 0            # "best": placed away from the data
    # e2e has no panel: the figure says it is not plotted
    texts = " ".join(t.get_text() for t in captured[-1].texts)
    assert "not plotted" in texts and "e2e.p90 < 60 s" in texts


def test_plot_of_one_token_outputs_has_no_empty_negative_panels(tmp_path, captured):
    plan = small(tmp_path, slo="ttft < 1s  tpot < 10ms", out="1", out_max="1")
    _, (_, _, a3, a4) = _plot(tmp_path, plan, captured)
    assert a3.get_xlim()[0] >= 0
    assert "no TPOT samples" in " ".join(t.get_text() for t in a4.texts)
    assert not a4.get_lines() and not a4.patches
    texts = " ".join(t.get_text() for t in captured[-1].texts)
    assert "tpot < 10 ms" in texts


# ------------------------------------------------------------------ 6. one throughput for simulate and search
def test_steady_output_tokens_per_s_is_the_windows_qpm_times_its_mean_output(tmp_path):
    """The steady column of output tokens/s (and the search's ranking figure) is the window's
    completion rate times its requests' mean output; an output-tokens SLO is judged on it, as QPM."""
    from sncc.sim.engine.run import simulate_spec

    spec = spec_of(small(tmp_path, slo="output_tokens_per_s >= 1"))
    r = simulate_spec(spec, series=False)
    sat = r.saturated
    assert sat, "the closed loop of 160 requests at 16 has a steady window"
    assert sat["output_tokens_per_s"] > 0
    assert math.isclose(sat["output_tokens_per_s_per_device"], sat["output_tokens_per_s"] / 2)
    assert r.steady("output_tokens_per_s", "mean") == sat["output_tokens_per_s"]
    (v,) = r.slo
    assert v.window == "steady" and math.isclose(v.observed, sat["output_tokens_per_s"])
    out = run("simulate", small(tmp_path, slo="output_tokens_per_s >= 1", name="s2.sn")).output
    row = next(line for line in out.splitlines() if line.startswith("output tokens/s per device"))
    assert len(row.split()) == 6, row        # whole run and steady state


def test_slo_verdict_is_judged_on_the_point_estimate_first():
    """One rule for simulate and search (README *Search*): uncertain = the point estimate meets the
    SLO while the interval straddles it; a point estimate that misses is missed, the interval
    reaching the target or not."""
    from sncc.sim.engine.metrics import slo_verdict

    assert slo_verdict("<", 9.0, 5.0, 4.0, 8.0) == ("met", False)
    assert slo_verdict("<", 9.0, 8.0, 6.0, 12.0) == ("uncertain", False)
    assert slo_verdict("<", 9.0, 13.0, 7.8, 21.6) == ("missed", True)
    assert slo_verdict("<", 9.0, 13.0, 10.0, 21.6) == ("missed", False)
    assert slo_verdict(">=", 600, 580, 500, 700) == ("missed", True)
    assert slo_verdict(">=", 600, 620, 500, 700) == ("uncertain", False)


def test_a_predicted_tpot_miss_exits_1_even_when_its_interval_reaches_the_target(tmp_path):
    """Fresh-user report: TPOT predicted 13.0 ms against 9 ms, interval 7.79-21.6 ms, was
    UNCERTAIN and exited 0.  Now MISSED (interval reaches the target), exit 1; a target the
    point estimate meets with the interval straddling it stays UNCERTAIN, exit 0 (1 with --strict)."""
    r = run("simulate", "--format", "json", small(tmp_path, slo="tpot < 1s"))
    (s,) = json.loads(r.stdout)["slo"]
    obs, lo, hi = s["observed"], s["low"], s["high"]
    assert lo < obs < hi
    p = small(tmp_path, slo=f"tpot < {(lo + obs) / 2:.3f}ms", name="miss.sn")
    r = run("simulate", "--format", "json", p)
    (s,) = json.loads(r.stdout)["slo"]
    assert r.exit_code == 1 and s["verdict"] == "missed" and s["met"] is False and s["reaches_target"] is True
    text = run("simulate", p)
    assert text.exit_code == 1 and "MISSED" in text.output and "(reaches the target)" in text.output
    p = small(tmp_path, slo=f"tpot < {(obs + hi) / 2:.3f}ms", name="unsure.sn")
    r = run("simulate", "--format", "json", p)
    (s,) = json.loads(r.stdout)["slo"]
    assert r.exit_code == 0 and s["verdict"] == "uncertain" and s["reaches_target"] is False
    assert run("simulate", "--strict", p).exit_code == 1


def test_the_interval_heading_names_the_residuals_it_reads(tmp_path):
    """A profile with leave-one-out records (A3) heads its intervals so; the H200 kernel profile has
    none, and its heading says the intervals come from its in-sample residuals."""
    from click.testing import CliRunner

    from sncc.cli import main

    a3 = CliRunner().invoke(main, ["simulate", str(ROOT / "examples" / "deepseek-r1-a3-7p1d.sn")])
    assert "80 % calibration intervals (leave-one-out residuals)" in a3.output, a3.output
    plan = tmp_path / "h200.sn"
    plan.write_text('''plan "q32-h200" {
  model "qwen3-32b" {}
  hardware { system = "hgx-h200"  nodes = 1 }
  engine "vllm" { version = "0.23.0" }
  serve { instances = 2  devices = 4  tp = 4  max_num_seqs = 64  chunked_prefill = 8k }
  workload { requests = 100  concurrency = 16  input { mean = 1k  max = 2k }  output { mean = 200  max = 400 } }
}
''')
    h200 = CliRunner().invoke(main, ["simulate", str(plan)])
    assert "80 % calibration intervals (the profile's in-sample residuals: it has no leave-one-out records)" in h200.output, h200.output
def test_an_explicit_profile_of_another_chip_generation_is_refused():
    """Review item 7: `--profile ascend-a3` (or its file) on an H100 plan ran on the A3 constants
    with widened intervals; calibrate refuses such points, simulate now refuses the profile (exit 2).
    Left out, the plan's own generation's profile is used as before."""
    plan = str(MULTI_TURN)            # HGX H200: generation hopper
    a3 = ROOT / "sncc" / "catalog" / "data" / "profiles" / "ascend-a3.toml"
    for prof in ("ascend-a3", str(a3)):
        r = CliRunner().invoke(main, ["simulate", "--profile", prof, plan])
        assert r.exit_code == 2, r.output
        assert "generation hopper" in r.output and "generation atlas-a3" in r.output and "nvidia-h200" in r.output
        assert "Traceback" not in r.output
    from sncc.cost.profile import load_profile
    from sncc.sim.calibration.fit import other_generation

    class Chip:
        id, generation = "nvidia-h100", "hopper"

    assert other_generation(load_profile("nvidia-h200"), Chip) is None
    assert "ascend-a3" in other_generation(load_profile("ascend-a3"), Chip)

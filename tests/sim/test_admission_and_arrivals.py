"""Fixes from the second fresh-user test of ``sncc simulate``: requests that can never fit the
KV pool, burstiness with vLLM's semantics, open-loop steady-state QPM, n/a TPOT verdicts on
one-token outputs, multi-turn conversations past max_model_len, and rate + concurrency."""
from __future__ import annotations

import dataclasses as dc
import json
import math
import statistics
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from sncc.sim import simulate
from sncc.sim.engine.des import Simulation, Unadmittable
from sncc.sim.engine.run import prepare
from sncc.sim.calibration.scenarios import seed000_spec


def _compile(text: str, name: str = "/tmp/plan.sn"):
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    return compile_file(SourceFile(name, text))


def _spec(text: str, **workload):
    from sncc.sim.from_plan import spec_from_plan

    comp = _compile(text)
    assert not [d for d in comp.diagnostics if d.is_error], [d.message for d in comp.diagnostics]
    spec = spec_from_plan(comp.plan, comp.resolved)
    return dc.replace(spec, workload=dc.replace(spec.workload, **workload)) if workload else spec


def _write(tmp_path, text: str, name: str = "plan.sn") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


#: /tmp/usertest/plans/r1-a2.sn: DeepSeek-R1 W8A8 on Atlas 800 A2, 2 x 16 devices (passes `sncc check`)
R1_A2 = '''plan "r1-a2" {
  model "deepseek-r1" { quant = w8a8 }
  hardware { system = "atlas-800-a2"  nodes = 4  cann = "8.3.RC2" }
  engine "vllm-ascend" { version = "v0.11.0" }
  serve { instances = 2  devices = 16  tp = 4  ep = 4  max_num_seqs = 32
          max_num_batched_tokens = 8k  chunked_prefill = 4k }
  kv_cache { dtype = auto  block_size = 128 }
  workload { requests = 500  concurrency = 128
             input { mean = 2k  max = 8k }  output { mean = 1k  max = 4k } }
  slo { ttft < 3s  tpot < 80ms }
}
'''

#: /tmp/usertest/plans/r1-a3-16.sn: the same model on 16 A3 dies (its what-if used to crash)
R1_A3_16 = '''plan "r1-a3-16" {
  model "deepseek-r1" { quant = w8a8 }
  hardware { system = "atlas-900-a3-superpod"  nodes = 1  cann = "8.3.RC2" }
  engine "vllm-ascend" { version = "v0.11.0" }
  serve { devices = 16  tp = 4  ep = 4  max_num_seqs = 16
          max_num_batched_tokens = 16k  chunked_prefill = 8k }
  kv_cache { dtype = int8  block_size = 128 }
  workload { requests = 300  concurrency = 64
             input { mean = 2k  max = 8k }  output { mean = 1k  max = 4k } }
  slo { ttft < 3s  tpot < 80ms }
}
'''

#: Qwen3-32B on one H200 node, 4 x TP2 (the tester's base.sn); WORKLOAD and SLO filled in
QWEN_H200 = '''plan "edge" {{
  model "qwen3-32b" {{ quant = bf16 }}
  hardware {{ system = "hgx-h200"  nodes = 1 }}
  engine "vllm" {{}}
  serve {{ instances = 4  devices = 2  tp = 2  ep = 1  max_num_seqs = {seqs}
          max_num_batched_tokens = 8k  chunked_prefill = 8k }}
{optimize}
  workload {{ {workload} }}
  slo {{ {slo} }}
}}
'''


def _qwen(workload: str, slo: str = "ttft < 1s", seqs: int = 64, optimize: str = "") -> str:
    return QWEN_H200.format(workload=workload, slo=slo, seqs=seqs, optimize=optimize)


# ============================================================ 1. requests that can never fit
def test_requests_longer_than_the_pool_raise_unadmittable_with_the_pool_sizing():
    spec = _spec(R1_A2)
    # a hand-made pool (a goodput trial or a hand-built spec can outgrow the plan's): 15 blocks
    serve = dc.replace(spec.role("serve"), kv_budget_bytes_per_device=None, memory=None)
    c0 = prepare(dc.replace(spec, roles=(("serve", serve),)))
    mem = c0.pool_memory["serve"][0]
    budget = 15 * serve.block_size * mem.kv_per_token
    spec = dc.replace(spec, roles=(("serve", dc.replace(serve, kv_budget_bytes_per_device=budget)),))
    with pytest.raises(Unadmittable) as e:
        simulate(spec)
    err = e.value
    assert isinstance(err, ValueError)
    c = prepare(spec)
    pool = c.serve_blocks * c.block_size
    # the count is every request whose prompt + output outgrows one DP rank's pool (on-demand)
    want = sum(1 for p, o in zip(c.prompts, c.outputs) if -(-(p + o) // c.block_size) > c.serve_blocks)
    assert err.count == want > 0 and err.requests == 500 and err.pool_tokens == pool == 1920
    msg = str(err)
    assert f"{want} of 500 requests can never be served" in msg and f"{pool} tokens" in msg
    # how the pool was sized: sncc's one memory model, the budget `sncc check` uses too
    assert "sncc's one memory model" in msg and "memory utilization 0.9" in msg
    assert "runtime reserve 3.50 GiB" in msg and "HCCL buffers" in msg


def test_reserve_max_tokens_names_the_reservation():
    spec = seed000_spec(7, requests=200)
    spec = dc.replace(spec, workload=dc.replace(spec.workload, max_tokens=10_000_000))
    with pytest.raises(Unadmittable) as e:
        simulate(spec, series=False)
    assert e.value.count == 200 and e.value.role == "decode" and e.value.extra_tokens == 10_000_000
    assert "reserved output tokens (max_tokens; kv_admission reserve-max-tokens)" in str(e.value)


def test_unadmittable_crosses_a_process_pool():
    # the calibration fit computes its Jacobian in forked workers: an Unadmittable raised there
    # must unpickle in the parent (keyword-only arguments broke the pool's result thread)
    import pickle

    spec = seed000_spec(7, requests=20)
    spec = dc.replace(spec, workload=dc.replace(spec.workload, max_tokens=10_000_000))
    with pytest.raises(Unadmittable) as e:
        simulate(spec, series=False)
    back = pickle.loads(pickle.dumps(e.value))
    assert (back.count, back.role, back.extra_tokens, back.notes) == (20, "decode", 10_000_000, e.value.notes)
    assert str(back) == str(e.value)


#: R1 on 8 A2 devices at a 64k context: one sequence at full context does not fit (SN4004)
R1_A2_TIGHT = R1_A2.replace("nodes = 4", "nodes = 1").replace(
    "serve { instances = 2  devices = 16  tp = 4  ep = 4", "serve { instances = 1  devices = 8  tp = 1  ep = 8").replace(
    'model "deepseek-r1" { quant = w8a8 }', 'model "deepseek-r1" { quant = w8a8  max_model_len = 64k }')


def test_check_and_simulate_refuse_a_plan_whose_pool_holds_no_full_context_request(tmp_path):
    """One memory model: the pool that would make requests unservable in the simulator is the
    one `sncc check` sizes, so the plan is an SN4004 error there and `simulate` exits 1 on it."""
    from sncc.cli import main

    path = _write(tmp_path, R1_A2_TIGHT)
    check = CliRunner().invoke(main, ["check", path])
    assert check.exit_code == 1 and "SN4004" in check.output, check.output
    for fmt in ("text", "json"):
        res = CliRunner().invoke(main, ["simulate", "--format", fmt, path])
        assert res.exit_code == 1, res.output
        assert "Traceback" not in res.output and "internal error" not in res.output
        assert "SN4004" in (res.stdout if fmt == "json" else res.output)


def _empty_table(n: int = 4):
    z = [0.0] * n
    return SimpleNamespace(t_done=[-1.0] * n, t_first=list(z), t_disp=list(z), t_arr=list(z), out=[8] * n,
                           t_pdone=list(z), t_kv=list(z))


def test_a_result_without_completed_requests_does_not_crash():
    from sncc.sim.engine.metrics import build_result
    from sncc.sim.spec import SloTarget

    slos = [SloTarget("tpot", "mean", "<", 0.05), SloTarget("ttft", "p99", "<", 2.0)]
    # a closed loop whose admission blocked (t_first_block set) used to take max() of nothing
    res = build_result(_empty_table(), 8, slos, {}, {}, t_first_block=0.5, closed=True, disaggregated=False)
    assert res.requests_completed == 0 and res.saturated == {}
    assert [v.verdict for v in res.slo] == ["n/a", "n/a"] and all(v.met is None for v in res.slo)
    res = build_result(_empty_table(), 8, slos, {}, {}, closed=False, disaggregated=True)
    assert res.requests_completed == 0


def test_what_ifs_skip_a_candidate_that_cannot_run(monkeypatch):
    from sncc.sim import whatif
    from sncc.sim.engine.metrics import build_result

    spec = _spec(_qwen("requests = 200  concurrency = 32  input { mean = 1k  max = 2k }  "
                       "output { mean = 128  max = 256 }", slo="qpm >= 100000"))
    result = simulate(spec, series=False)
    assert [v.verdict for v in result.slo] == ["missed"]
    real = whatif.simulate
    seen = []

    def fake(sp, series=True, progress=None):
        seen.append(progress)
        if isinstance(progress, str) and progress.startswith("what-if: one more"):
            raise Unadmittable("1 of 200 requests can never be served", count=1, requests=200, first=0,
                               prompt_tokens=1, extra_tokens=1, pool_blocks=0, block_size=16, role="serve")
        if isinstance(progress, str) and progress.startswith("what-if: KV block"):
            return build_result(_empty_table(), 8, sp.slos, {}, {}, t_first_block=0.5, disaggregated=False)
        return real(sp, series=series)

    monkeypatch.setattr(whatif, "simulate", fake)
    changes = whatif.cheapest_changes(spec, result, progress=lambda label: label)
    assert any(str(p).startswith("what-if: one more") for p in seen)
    assert any(str(p).startswith("what-if: KV block") for p in seen)
    assert not [c for c in changes if c["change"].startswith(("one more", "KV block"))]
    notes = result.info["notes"]
    assert any(n.startswith("what-if `one more serve instance") and "can never be served" in n for n in notes)
    assert any(n.startswith("what-if `KV block size") and "no request completed" in n for n in notes)


def test_a_run_that_ends_with_requests_unserved_says_so(monkeypatch, tmp_path):
    """Guard for any other cause: completed < requests is a note, in info and in the text."""
    from sncc.sim.engine import run as runner
    from sncc.sim.report.text import render_text

    class Losing(Simulation):
        def run(self):
            raw = super().run()
            raw["reqs"].t_done[0] = -1.0           # as if request 0 never finished
            raw["completed"] -= 1
            return raw

    monkeypatch.setattr(runner, "Simulation", Losing)
    text = _qwen("requests = 50  concurrency = 8  input { mean = 1k  max = 2k }  output { mean = 64  max = 128 }")
    res = simulate(_spec(text), series=False)
    assert res.requests_completed == 49
    note = [n for n in res.info["notes"] if n.startswith("only 49 of 50 requests completed")]
    assert note and "covers the completed requests only" in note[0]
    assert f"note: {note[0]}" in render_text(res, _compile(text).plan)


# ============================================================ 2. burstiness (vLLM semantics)
def _gaps(spec):
    R = Simulation(spec, prepare(spec)).run()["reqs"]
    t = sorted(R.t_arr)
    return [b - a for a, b in zip(t, t[1:])]


@pytest.mark.parametrize("b", [0.25, 0.5, 1.0, 3.0, 10.0])
def test_burstiness_is_the_gamma_shape_cv_one_over_sqrt(b):
    base = seed000_spec(7, requests=4000)
    spec = dc.replace(base, workload=dc.replace(base.workload, concurrency=None, rate=8.0, burstiness=b))
    g = _gaps(spec)
    cv = statistics.pstdev(g) / statistics.mean(g)
    # sampling error of the CV of 4000 Gamma gaps: ~ CV sqrt((2 + 6/b) / (4n)), < 5 % for b >= 0.25
    assert cv == pytest.approx(1 / math.sqrt(b), rel=0.12)
    assert statistics.mean(g) == pytest.approx(1 / 8, rel=0.08)       # the rate is kept


def test_any_burstiness_runs_with_progress_reporting():
    """The old sampler's lambda read a loop counter reset to 0: ZeroDivisionError with progress on."""
    spec = _spec(_qwen("requests = 300  rate = 10  burstiness = 3  input { mean = 2k  max = 8k }  "
                       "output { mean = 512  max = 2k }"))
    calls = []
    r = simulate(spec, series=False, progress=lambda d, n: calls.append(d))
    assert r.requests_completed == 300


def test_burstier_arrivals_give_worse_p99_ttft_at_the_same_rate():
    text = _qwen("requests = 2000  rate = 10  input { mean = 2k  max = 8k }  output { mean = 512  max = 2k }",
                 seqs=128)
    spec = _spec(text)
    p99 = {}
    for b in (0.25, 1.0):
        r = simulate(dc.replace(spec, workload=dc.replace(spec.workload, burstiness=b)), series=False)
        p = r.saturated["percentiles"]
        p99[b] = (p["ttft_s"]["p99"], p["client_ttft_s"]["p99"])
    assert p99[0.25][0] > p99[1.0][0] and p99[0.25][1] > p99[1.0][1]


def test_plan_accepts_any_positive_burstiness():
    from sncc.plan.model import Workload

    for b in ("0.25", "1", "3"):
        comp = _compile(_qwen(f"requests = 40  rate = 2  burstiness = {b}  input {{ mean = 1k  max = 2k }}  "
                              "output { mean = 64  max = 128 }"))
        assert not [d for d in comp.diagnostics if d.is_error], b
        assert comp.plan.workload.burstiness == float(b)
    bad = _compile(_qwen("requests = 40  rate = 2  burstiness = 0  input { mean = 1k  max = 2k }  "
                         "output { mean = 64  max = 128 }"))
    assert [d.code.code for d in bad.diagnostics if d.is_error] == ["SN2009"]
    doc = Workload.model_fields["burstiness"].description
    assert "vLLM" in doc and "< 1 burstier" in doc and "1/sqrt(burstiness)" in doc


# ============================================================ 3. open-loop steady-state QPM
def _open(rate: float, requests: int = 3000):
    base = seed000_spec(7, requests=requests)
    return simulate(dc.replace(base, workload=dc.replace(base.workload, concurrency=None, rate=rate)),
                    series=False)


def test_open_loop_qpm_is_the_offered_rate_when_the_deployment_keeps_up():
    for rate in (2.0, 8.0):            # 8 req/s used to report 438.5 QPM for 480 offered
        r = _open(rate)
        sat = r.saturated
        assert sat["window"] == "arrivals-10-90" and sat["queue_growth"] < 0.01
        assert sat["qpm"] == pytest.approx(60 * rate, rel=0.03), (rate, sat["qpm"])
        # the window's requests over the window length (or over the span of their dispatches,
        # which a dispatch waiting for the next step boundary stretches by a fraction of a step)
        assert sat["qpm"] == pytest.approx(sat["requests"] / (sat["end_s"] - sat["start_s"]) * 60, rel=1e-3)


def test_open_loop_qpm_of_the_long_output_plan_is_not_lagged(tmp_path):
    """/tmp/usertest/plans/openq.sn: 2 req/s, 4k-token outputs, no queueing: 102.6 QPM before."""
    spec = _spec(_qwen("requests = 600  rate = 2 input { mean = 1k max = 2k } "
                       "output { mean = 4k max = 4k min = 4k }", slo="qpm >= 110"))
    r = simulate(spec, series=False)
    sat = r.saturated
    # the window's 480 Poisson arrivals themselves come at 115.6/min (sampling noise of the rate)
    assert sat["qpm"] == pytest.approx(sat["requests"] / (sat["end_s"] - sat["start_s"]) * 60, rel=1e-9)
    assert sat["qpm"] == pytest.approx(120, rel=0.05)
    assert r.slo[0].verdict != "missed"


def test_open_loop_qpm_is_non_decreasing_in_rate_and_flat_past_saturation():
    rates = (2, 4, 6, 8, 10, 11, 12, 14, 16, 20)
    res = [_open(r) for r in rates]
    q = [r.saturated["qpm"] for r in res]
    keeps = [r.saturated["queue_growth"] < 0.05 for r in res]
    assert keeps[0] and not keeps[-1]
    for i in range(len(q) - 1):
        if keeps[i + 1]:
            assert q[i + 1] >= q[i], (rates[i], q)
        else:   # saturated: the completion rate, flat up to the seed noise
            assert q[i + 1] >= 0.99 * q[i], (rates[i], q)
    assert max(q) <= 1.01 * q[-1]


# ============================================================ 4. one-token outputs
ONE_TOKEN = _qwen("requests = 10  concurrency = 4 input { mean = 1 max = 1 } output { mean = 1 max = 1 }",
                  slo="ttft < 1s tpot < 10ms")


def test_tpot_of_one_token_outputs_is_not_applicable(tmp_path):
    from sncc.cli import main
    from sncc.emit.validate import validate_instance

    r = simulate(_spec(ONE_TOKEN), series=False)
    v = {s.name.split(" ")[0]: s for s in r.slo}
    assert v["tpot.mean"].verdict == "n/a" and v["tpot.mean"].met is None
    assert v["ttft.mean"].verdict == "met"
    path = _write(tmp_path, ONE_TOKEN)
    res = CliRunner().invoke(main, ["simulate", path])
    assert res.exit_code == 0, res.output                   # n/a is not a miss
    line = next(ln for ln in res.stdout.splitlines() if "tpot.mean" in ln)
    assert line.lstrip().startswith("n/a") and "MISSED" not in line
    res = CliRunner().invoke(main, ["simulate", "--strict", "--format", "json", path])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    tp = next(s for s in doc["slo"] if s["name"].startswith("tpot"))
    assert tp["verdict"] == "n/a" and tp["met"] is None and tp["observed"] is None
    assert validate_instance("simulate.json", doc, "simulate") == []
    bad = dict(doc, slo=[dict(tp, verdict="maybe")])
    assert validate_instance("simulate.json", bad, "simulate")        # the schema lists the verdicts


# ============================================================ 5. multi-turn past max_model_len
MT30 = _qwen("requests = 800  concurrency = 64  turns = 30  think_time = 5s "
             "input { mean = 2k  max = 8k }  output { mean = 256  max = 1k }", slo="ttft < 1s  tpot < 40ms",
             optimize="  optimize { prefix_cache_hit = 0.9 }")


def test_check_warns_when_a_conversation_outgrows_max_model_len():
    comp = _compile(MT30)
    w = [d for d in comp.diagnostics if d.code.code == "SN5009"]
    assert len(w) == 1 and w[0].severity == "warning" and not [d for d in comp.diagnostics if d.is_error]
    assert "30 × (2k input + 256 output)" in w[0].message and "max_model_len 9k" in w[0].message
    assert comp.source.line_col(w[0].span.start)[0] == 8                 # the `turns` line
    ok = _compile(MT30.replace("turns = 30", "turns = 4"))                # 4 x 2304 = 9216 fits 9k
    assert not [d for d in ok.diagnostics if d.code.code == "SN5009"]
    single = _compile(MT30.replace("turns = 30", "turns = 1"))
    assert not [d for d in single.diagnostics if d.code.code == "SN5009"]


def test_simulate_says_how_many_follow_ups_were_capped():
    from sncc.sim.report.text import render_text

    spec = _spec(MT30)
    c = prepare(spec)
    at_cap = sum(1 for i, p in enumerate(c.prompts) if i % 30 and p == 8192)
    assert c.info["follow_ups"] == 800 - 27 and c.info["follow_ups_capped"] == at_cap > 0
    r = simulate(spec, series=False)
    note = f"{at_cap} of 773 follow-up prompts were capped at the workload's input max (8192 tokens)"
    assert any(n.startswith(note) for n in r.info["notes"])
    assert note in render_text(r, _compile(MT30).plan)
    roomy = MT30.replace("turns = 30", "turns = 2").replace("mean = 2k  max = 8k", "mean = 1k  max = 32k")
    short = simulate(_spec(roomy), series=False)
    assert short.info["follow_ups"] == 400 and short.info["follow_ups_capped"] == 0 and not short.info.get("notes")


# ============================================================ 6. rate and concurrency
def test_rate_under_a_concurrency_cap_is_checked_built_and_simulated_as_the_benchmark_runs():
    """``rate`` with ``concurrency`` is vllm bench serve's ``--request-rate`` under ``--max-concurrency``
    (vllm 0.11.0 wheel ``vllm/benchmarks/serve.py``: "While the --request-rate argument controls the rate
    at which requests are initiated, this argument will control how many are actually allowed to execute
    at a time"; the SGLang A3 best-practice rows of the calibration set ran that way): no SN2016, both
    flags in bench.sh, and the simulator starts requests at the rate into the free slots.  Its twin:
    ``burstiness`` without a rate is still SN2016."""
    from expect import outputs_of

    from sncc.plan.model import Workload
    from sncc.sim.engine.run import simulate_spec
    from sncc.sim.from_plan import spec_from_plan

    lens = "input { mean = 1k  max = 2k }  output { mean = 64  max = 128 }"
    text = _qwen(f"requests = 200  rate = 40  concurrency = 4  {lens}")
    both = _compile(text)
    assert not [d for d in both.diagnostics if d.is_error], [d.message for d in both.diagnostics]
    bench = outputs_of(text)["bench.sh"]
    # 4 API servers and no router: one client per server with its share (rates and caps add up)
    import re

    rates = [float(x) for x in re.findall(r"--request-rate ([\d.]+)", bench)]
    caps = [int(x) for x in re.findall(r"--max-concurrency (\d+)", bench)]
    assert sum(rates) == 40.0 and sum(caps) == 4 and len(rates) == len(caps) == 4
    spec = spec_from_plan(both.plan, both.resolved)
    assert (spec.workload.rate, spec.workload.concurrency) == (40, 4)
    capped = simulate_spec(spec, series=False)
    open_loop = simulate_spec(spec_from_plan(_compile(_qwen(f"requests = 200  rate = 40  {lens}")).plan,
                                             both.resolved), series=False)
    # 4 slots hold back a rate the 4 instances would otherwise serve: fewer requests per minute
    assert capped.qpm < 0.8 * open_loop.qpm
    twin = _compile(_qwen(f"requests = 200  burstiness = 0.5  concurrency = 4  {lens}"))
    assert [d.code.code for d in twin.diagnostics if d.is_error] == ["SN2016"]
    neither = _compile(_qwen(f"requests = 100  {lens}"))
    assert not [d for d in neither.diagnostics if d.is_error]
    wl = spec_from_plan(neither.plan, neither.resolved).workload
    assert wl.concurrency == min(100, 64) and wl.rate is None
    assert "min(requests, 64)" in Workload.model_fields["concurrency"].description


def test_goodput_is_not_zeroed_by_an_undefined_tpot():
    """One-token outputs: TPOT is n/a at every rate; the search is judged on TTFT alone."""
    import dataclasses as _dc

    from sncc.sim.calibration.scenarios import qwen3_32b_h200_spec
    from sncc.sim.spec import LengthDist, SloTarget
    from sncc.sim.whatif import goodput

    base = qwen3_32b_h200_spec(requests=200)
    wl = _dc.replace(base.workload, output=LengthDist("fixed", mean=1), max_tokens=1)
    spec = _dc.replace(base, workload=wl, slos=(SloTarget("ttft", "p90", "<=", 2.0),
                                                SloTarget("tpot", "mean", "<", 0.05)))
    g = goodput(spec, requests=200)
    assert g["rate"] > 0


def test_tokens_per_s_per_user_slo_is_judged_on_the_steady_window():
    """Like TTFT/TPOT, a per-user token-rate SLO is judged on the steady window when there is one."""
    from sncc.sim import simulate
    from sncc.sim.calibration.scenarios import seed000_spec
    from sncc.sim.spec import SloTarget
    import dataclasses as _dc

    spec = _dc.replace(seed000_spec(7, requests=1500), slos=(SloTarget("tokens_per_s_per_user", "mean", ">=", 10.0),))
    r = simulate(spec, series=False)
    v = r.slo[0]
    assert v.window == "steady"
    assert v.observed == r.saturated["tokens_per_s_per_user"]
    assert abs(v.observed - 1e3 / r.saturated["tpot_ms"]) / v.observed < 0.05


def test_a_rate_under_a_concurrency_cap_starts_requests_at_the_rate_and_never_exceeds_the_cap():
    """sglang bench_serving --request-rate R --max-concurrency C (calibration.toml client_rate): the
    client starts requests at R until C are in flight, then one per completion."""
    base = seed000_spec(7, requests=300)
    wl = dc.replace(base.workload, concurrency=40, rate=4.0)
    spec = dc.replace(base, workload=wl)
    c = prepare(spec)
    raw = Simulation(spec, c).run()
    R = raw["reqs"]
    assert raw["completed"] == 300
    arr = sorted(R.t_arr)
    # the first 40 start at the rate (~10 s), not all at t = 0 as a plain closed loop would
    assert 5.0 < arr[39] < 20.0
    events = sorted([(t, 1) for t in R.t_arr] + [(t, -1) for t in R.t_done])
    inflight = peak = 0
    for _, d in events:
        inflight += d
        peak = max(peak, inflight)
    assert peak <= 40
    closed = Simulation(dc.replace(base, workload=dc.replace(wl, rate=None)), prepare(base)).run()
    assert max(closed["reqs"].t_arr[:40]) == 0.0


# ============================================================ 4. where the engine TTFT starts
def test_disaggregated_engine_ttft_excludes_the_proxy_queue():
    """Disaggregated, the proxy holds the queue (seed 000 reads OmniProxy's server-side TTFT): the
    engine figure starts at dispatch to a prefill instance."""
    r = simulate(seed000_spec(7, requests=600), series=False)
    assert r.queue_s["mean"] > 0.0
    assert r.ttft_s["mean"] < r.client_ttft_s["mean"] - 0.5 * r.queue_s["mean"]


# ============================================================ 5. a rate over a handful of requests
def _few(n: int) -> str:
    return _qwen(f"requests = {n}  concurrency = 1 input {{ mean = 1k max = 1k }} output {{ mean = 1 max = 1 }}",
                 slo="qpm >= 10")


def test_a_throughput_slo_over_a_handful_of_requests_is_not_applicable(tmp_path):
    """One request of one token in ~0.02 s would be '3,000 QPM'; below MIN_RATE_REQUESTS
    completed requests (and no steady window) the rate SLO is n/a, from the minimum up it is judged."""
    from sncc.cli import main
    from sncc.sim.engine.metrics import MIN_RATE_REQUESTS

    r = simulate(_spec(_few(1)), series=False)
    (v,) = r.slo
    assert v.verdict == "n/a" and v.met is None and r.qpm > 10     # the raw figure would say met
    res = CliRunner().invoke(main, ["simulate", _write(tmp_path, _few(1))])
    assert res.exit_code == 0 and "too few requests (1)" in res.stdout, res.output
    r = simulate(_spec(_few(MIN_RATE_REQUESTS)), series=False)
    assert r.slo[0].verdict != "n/a"

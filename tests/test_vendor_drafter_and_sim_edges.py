"""Chips without simulator facts, engine/vendor support (from a fresh-user test), speculative decoding without a draft model, n/a verdict leftovers, --plot on
special files, the open-loop QPM interval, burstiness that would be ignored, and the
YaRN original context of Qwen3."""
from __future__ import annotations

import pytest
from click.testing import CliRunner


def _compile(text: str, name: str = "/tmp/plan.sn"):
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    return compile_file(SourceFile(name, text))


def _codes(text: str, severity: str | None = "error") -> list:
    comp = _compile(text)
    return [d.code.code for d in comp.diagnostics if severity is None or d.is_error]


def _write(tmp_path, text: str, name: str = "plan.sn") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _simulate(args):
    from sncc.cli import main
    return CliRunner().invoke(main, ["simulate", *args])


# --- 1. chips the catalog leaves without simulator facts ----------------------------------

#: /tmp/usertest2/br/br15-fix.sn: Ascend 950DT (no sourced hbm_bandwidth), passes `sncc check`
BR15 = '''plan "br15" {
  model "qwen3-30b-a3b" { quant = bf16 }
  hardware { system = "atlas-950-superpod"  nodes = 1  cann = "9.1.0" }
  engine "vllm-ascend" { version = "v0.23.0" }
  serve { devices = 8  tp = 2  ep = 4  max_num_batched_tokens = 8k  chunked_prefill = 8k  max_num_seqs = 64 }
  workload { requests = 100  concurrency = 16
             input { mean = 2k  max = 8k }  output { mean = 512  max = 2k } }
}
'''


def test_missing_chip_facts_names_the_absent_facts():
    from sncc import catalog
    from sncc.sim.from_plan import missing_chip_facts

    assert missing_chip_facts(catalog.chip("ascend-950dt"), "bf16") == ["hbm_bandwidth"]
    assert missing_chip_facts(catalog.chip("ascend-910b4"), "bf16") == ["hbm_bandwidth", "peak_flops.bf16"]
    assert "hbm_bytes" in missing_chip_facts(catalog.chip("ascend-910a"), "fp16")
    assert missing_chip_facts(catalog.chip("ascend-910c"), "int8") == []


def test_simulate_chip_without_bandwidth_is_a_clear_error(tmp_path):
    res = _simulate([_write(tmp_path, BR15)])
    # a located diagnostic (SN4080), exit 1 like any refused plan
    assert res.exit_code == 1, res.output
    assert "internal error" not in res.output and "Traceback" not in res.output
    assert "error[SN4080]" in res.output and "--> " in res.output
    assert "ascend-950dt" in res.output and "hbm_bandwidth" in res.output and "no sourced value" in res.output


# --- 2. the engine runs on the chip's vendor ------------------------------------------------

def _engine_plan(engine: str, system: str = "hgx-h100") -> str:
    return f'''plan "eng" {{
  model "qwen3-32b" {{ quant = bf16 }}
  hardware {{ system = "{system}"  nodes = 1 }}
  engine {engine}
  serve {{ instances = 2 devices = 4  tp = 4  max_num_batched_tokens = 8k  chunked_prefill = 8k  max_num_seqs = 64 }}
  workload {{ requests = 100  concurrency = 16
             input {{ mean = 2k  max = 8k }}  output {{ mean = 512  max = 2k }} }}
}}
'''


@pytest.mark.parametrize("engine", ['"vllm-ascend" { version = "v0.11.0" }', '"omni-infer" {}'])
def test_ascend_only_engine_on_nvidia_is_sn4007(engine):
    comp = _compile(_engine_plan(engine))
    hits = [d for d in comp.diagnostics if d.code.code == "SN4007"]
    assert hits and hits[0].is_error, [d.message for d in comp.diagnostics]
    assert "nvidia-h100" in hits[0].message
    line, col = comp.source.line_col(hits[0].span.start)
    assert (line, col) == (4, 10)             # the engine's name


def test_engine_vendor_facts_are_sourced_and_vllm_on_h100_passes():
    from sncc.catalog.engine_defaults import engine_defaults

    rows = engine_defaults()["engine_hardware"]
    assert set(rows) == {"vllm", "vllm-ascend", "omni-infer"}
    assert all(r["source"] for r in rows.values())
    assert rows["vllm"]["vendors"] == ["nvidia"]
    assert all(rows[k]["vendors"] == ["huawei"] for k in ("vllm-ascend", "omni-infer"))
    assert "SN4007" not in _codes(_engine_plan('"vllm" {}'))


def test_upstream_vllm_on_ascend_is_sn4007_naming_the_ascend_engines():
    """vllm-ascend#262: plain `vllm serve` on an NPU fails with "Failed to infer device type"."""
    comp = _compile(_engine_plan('"vllm" { version = "0.11.0" }', system="atlas-800-a2"))
    (hit,) = [d for d in comp.diagnostics if d.code.code == "SN4007"]
    assert hit.is_error and "`vllm-ascend`" in hit.help and "`omni-infer`" in hit.help


# --- 3. speculative decoding with a separate drafter names its checkpoint -------------------

def _spec_plan(speculative: str) -> str:
    return f'''plan "eg" {{
  model "qwen3-32b" {{ quant = bf16 }}
  hardware {{ system = "hgx-h200"  nodes = 1 }}
  engine "vllm" {{}}
  speculative {{ {speculative} }}
  serve {{ instances = 4  devices = 2  tp = 2  max_num_seqs = 64  max_num_batched_tokens = 8k  chunked_prefill = 8k }}
  workload {{ requests = 200  concurrency = 16  input {{ mean = 1k  max = 4k }}  output {{ mean = 200  max = 1k }} }}
}}
'''


@pytest.mark.parametrize("method", ["eagle", "eagle3", "draft_model"])
def test_drafter_method_without_model_is_sn4018_at_method(method):
    comp = _compile(_spec_plan(f"method = {method}  draft_tokens = 2  acceptance = 0.5"))
    hits = [d for d in comp.diagnostics if d.code.code == "SN4018"]
    assert hits and hits[0].is_error
    assert comp.source.line_col(hits[0].span.start) == (5, 26)
    ok = _spec_plan(f'method = {method}  model = "/data/draft"  draft_tokens = 2  acceptance = 0.5')
    assert "SN4018" not in _codes(ok)


@pytest.mark.parametrize("method", ["ngram", "mtp"])
def test_methods_without_a_checkpoint_are_not_sn4018(method):
    assert "SN4018" not in _codes(_spec_plan(f"method = {method}  draft_tokens = 1  acceptance = 0.5"), None)


def test_trillion_example_has_no_drafter_without_checkpoint():
    from expect import ROOT
    text = (ROOT / "examples" / "trillion-supernode-128.sn").read_text()
    assert "SN4018" not in _codes(text, None)


# --- 4. n/a verdicts leave no 0.0 and do not bind --------------------------------------------

#: /tmp/usertest2/p/edge1u.sn: one-token outputs, a tokens/s-per-user SLO that is n/a
EDGE1U = '''plan "edge" {
  model "qwen3-32b" { quant = bf16 }
  hardware { system = "hgx-h200"  nodes = 1 }
  engine "vllm" {}
  serve { instances = 4  devices = 2  tp = 2  ep = 1  max_num_seqs = 64
          max_num_batched_tokens = 8k  chunked_prefill = 8k }
  workload { requests = 10  concurrency = 4 input { mean = 1 max = 1 } output { mean = 1 max = 1 } }
  slo { ttft < 1s tokens_per_s_per_user >= 10 }
}
'''


def test_one_token_outputs_print_na_speed_and_na_slo_does_not_bind(tmp_path):
    res = _simulate([_write(tmp_path, EDGE1U), "--goodput"])
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if "tokens/s per user (mean)" in x)
    assert line.split()[-1] == "n/a"
    binding = next(x for x in res.output.splitlines() if "binding above it" in x)
    assert "tokens_per_s_per_user" not in binding.split("binding above it")[1]


# --- 5. --plot on something that is not a regular file ---------------------------------------

def test_plot_path_refuses_special_files(tmp_path):
    import os
    from sncc.sim.report.plot import PlotPathError, resolve_plot_path

    pytest.importorskip("matplotlib")
    with pytest.raises(PlotPathError, match="not a regular file"):
        resolve_plot_path(os.devnull)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(PlotPathError, match="not a regular file"):
        resolve_plot_path(str(fifo))
    existing = tmp_path / "old.png"
    existing.write_bytes(b"")
    assert resolve_plot_path(str(existing)) == (str(existing), "")


# --- 6. open-loop QPM interval capped at the offered rate -------------------------------------

MIXED = '''plan "edge" {
  model "qwen3-32b" { quant = bf16 }
  hardware { system = "hgx-h200"  nodes = 1 }
  engine "vllm" {}
  serve { instances = 4  devices = 2  tp = 2  ep = 1  max_num_seqs = 64
          max_num_batched_tokens = 8k  chunked_prefill = 8k }
  workload { requests = 200  rate = 2 input { mean = 1k max = 2k } output { mean = 512 max = 1k } }
  slo { qpm >= 110 }
}
'''


def test_open_loop_qpm_interval_does_not_exceed_offered_rate():
    from sncc.sim import simulate
    from sncc.sim.from_plan import spec_from_plan

    comp = _compile(MIXED)
    res = simulate(spec_from_plan(comp.plan, comp.resolved))
    iv = res.intervals["qpm"]
    cap = max(120.0, iv["value"])             # 60 x 2 req/s (never below the point estimate)
    assert iv["high"] <= cap + 1e-9 and iv["low"] <= iv["value"] <= iv["high"]
    v = res.slo[0]
    assert v.high is not None and v.high <= max(120.0, v.observed) + 1e-9


def test_open_loop_output_tokens_interval_does_not_exceed_offered_load():
    """The output tokens/s SLO's interval is capped as QPM's is: an open loop cannot complete more
    than the offered requests, so its tokens/s high end is the point estimate scaled by the QPM's
    headroom to the offered rate (was the residual's 1.7x, past the offered load)."""
    from sncc.sim import simulate
    from sncc.sim.from_plan import spec_from_plan

    comp = _compile(MIXED.replace("slo { qpm >= 110 }", "slo { output_tokens_per_s >= 900 }"))
    res = simulate(spec_from_plan(comp.plan, comp.resolved))
    v = res.slo[0]
    headroom = max(120.0, res.qpm) / res.qpm        # 60 x 2 req/s over the steady QPM
    assert v.high is not None and v.high <= v.observed * headroom + 1e-6, (v.observed, v.high, headroom)
    assert v.low <= v.observed <= v.high


def test_qpm_cap_leaves_closed_loop_alone():
    from types import SimpleNamespace
    from sncc.sim.engine.metrics import qpm_cap

    assert qpm_cap(SimpleNamespace(_qpm_cap=None), 100.0, 150.0) == 150.0
    assert qpm_cap(SimpleNamespace(_qpm_cap=120.0), 100.0, 150.0) == 120.0
    assert qpm_cap(SimpleNamespace(_qpm_cap=120.0), 125.0, 150.0) == 125.0


BR11 = '''plan "br11" {{
  model "qwen3-30b-a3b" {{ quant = bf16 }}
  hardware {{ system = "atlas-800-a2"  nodes = 1  cann = "9.1.0" }}
  engine "vllm-ascend" {{ version = "v0.23.0" }}
  graph {{ mode = aclgraph  cudagraph_mode = FULL_DECODE_ONLY{sizes} }}
  serve {{ instances = 2  devices = 4  tp = 4  ep = 1  max_num_seqs = 12  max_num_batched_tokens = 8k  chunked_prefill = 8k }}
  workload {{ requests = 100  concurrency = 24
             input {{ mean = 2k  max = 8k }}  output {{ mean = 512  max = 2k }} }}
}}
'''


def test_simulator_runs_batches_above_the_captured_sizes_eager():
    """SN5006 and the simulator agree (misconfig BR-11): max_num_seqs 12 is off vLLM's default
    capture grid, so decode steps of 9-12 sequences run eager and cost more per token than
    with 12 captured."""
    from expect import compile_text
    from sncc.sim import simulate
    from sncc.cost.from_facts import captured_sizes
    from sncc.sim.from_plan import spec_from_plan

    tpot = {}
    for key, sizes in (("default", ""), ("listed", "  capture_sizes = [1, 2, 4, 8, 12]")):
        comp = compile_text(BR11.format(sizes=sizes))
        assert ("SN5006" in [d.code.code for d in comp.diagnostics]) is (key == "default")
        spec = spec_from_plan(comp.plan, comp.resolved)
        gears = spec.role("serve").graph_gears
        assert max(gears) == (8 if key == "default" else 12)
        assert gears == captured_sizes(comp.plan, comp.facts.roles["serve"])
        tpot[key] = simulate(spec, series=False).tpot_ms["mean"]
    assert tpot["default"] > 1.3 * tpot["listed"], tpot


def test_search_refuses_the_same_chip_with_the_same_diagnostic(tmp_path):
    """`sncc search` printed a bare `sncc: error: cannot simulate chip ...` (exit 2): now the
    located SN4080 simulate prints, exit 1."""
    from click.testing import CliRunner

    from sncc.cli import main

    res = CliRunner().invoke(main, ["search", str(_write(tmp_path, BR15))])
    assert res.exit_code == 1, res.output
    assert "error[SN4080]" in res.output and "--> " in res.output and "Traceback" not in res.output

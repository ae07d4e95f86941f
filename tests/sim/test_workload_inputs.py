"""Workload inputs of a plan: `burstiness`/`turns` reach the simulation, and traces
(:mod:`sncc.workload.trace`): the reader's errors, the plan's `trace` key in
`sncc check` and `sncc simulate`, and the guards a trace path shares with imports (issue 14
items 17 and 29): regular files only, nothing under /proc, /sys or /dev, a size cap, cell text
in messages cut short."""
from __future__ import annotations

import os
import re
import time

import pytest
from click.testing import CliRunner

from expect import ROOT
from sncc.cli import main
from sncc.sim.engine.run import prepare
from sncc.sim.engine.run import simulate_spec as simulate

TRACES = ROOT / "tests" / "fixtures" / "traces"


def test_trace_reader_errors_carry_the_line(tmp_path):
    from sncc.workload.trace import TraceError, read_trace

    assert read_trace(str(TRACES / "small.csv")) == [(1024, 256, 0.0), (2048, 128, 0.5), (512, 64, 0.75)]
    with pytest.raises(TraceError) as e:
        read_trace(str(TRACES / "bad-cell.csv"))
    assert (e.value.line, e.value.col) == (3, 5) and "output_len" in str(e.value)
    cases = {"1,2\n3,4,5\n": (2, 1, "either every row"), "10,2,1\n3,4,0.5\n": (2, 5, "before the previous"),
             "10,0\n": (1, 4, "positive"), "10\n": (1, 1, "2 or 3 columns"), "20000,5\n": (1, 1, "exceeds")}
    for text, (line, col, words) in cases.items():
        f = tmp_path / "t.csv"
        f.write_text(text)
        with pytest.raises(TraceError) as e:
            read_trace(str(f), max_input=16384)
        assert (e.value.line, e.value.col) == (line, col) and words in e.value.message, (text, e.value)
    with pytest.raises(TraceError):
        read_trace(str(tmp_path / "missing.csv"))


def _plan(tmp_path, workload: str, optimize: str = ""):
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    text = f'''plan "t" {{
  hardware {{ system = "atlas-800-a2"  nodes = 1  cann = "8.3.RC2" }}
  engine "vllm-ascend" {{ version = "v0.11.0" }}
  model "qwen3-32b" {{ quant = bf16 }}
  serve {{ devices = 8  tp = 8  max_num_seqs = 64  max_num_batched_tokens = 8k  chunked_prefill = 8k }}
  {optimize}
  workload {{ {workload}
             input {{ mean = 2k  max = 16k }}  output {{ mean = 512  max = 4k }} }}
  slo {{ ttft < 2s }}
}}
'''
    p = tmp_path / "plan.sn"
    p.write_text(text)
    return compile_file(SourceFile(str(p), text))


def test_trace_plan_check_and_simulation(tmp_path):
    from sncc.sim.from_plan import spec_from_plan

    (tmp_path / "tr.csv").write_text("input_len,output_len\n100,10\n200,20\n")
    comp = _plan(tmp_path, 'requests = 4  concurrency = 2  trace = "tr.csv"')
    assert not [d for d in comp.diagnostics if d.is_error]
    spec = spec_from_plan(comp.plan, comp.resolved)
    c = prepare(spec)
    assert c.prompts == [100, 200, 100, 200] and c.outputs == [10, 20, 10, 20]
    (tmp_path / "bad.csv").write_text("100,10\n\n200,x\n")
    bad = _plan(tmp_path, 'requests = 4  concurrency = 2  trace = "bad.csv"')
    errs = [d for d in bad.diagnostics if d.is_error]
    assert [d.code.code for d in errs] == ["SN2015"] and "bad.csv:3:5" in errs[0].message
    assert bad.source.line_col(errs[0].span.start)[0] == 7
    # arrivals in the trace drive an open loop; requests default to the rows
    (tmp_path / "arr.csv").write_text("100,10,0\n200,20,2.5\n")
    spec = spec_from_plan(_plan(tmp_path, 'trace = "arr.csv"').plan, _plan(tmp_path, 'trace = "arr.csv"').resolved)
    r = simulate(spec, series=False)
    assert spec.workload.requests == 2 and r.requests_completed == 2
    # arrivals in the trace and a `rate` or `concurrency` too: one arrival mode (SN2016)
    for mode in ("rate = 4", "concurrency = 2"):
        both = _plan(tmp_path, f'{mode}  trace = "arr.csv"')
        errs = [d for d in both.diagnostics if d.is_error]
        assert [d.code.code for d in errs] == ["SN2016"] and "arrival" in errs[0].message
    lengths_only = _plan(tmp_path, 'rate = 4  trace = "tr.csv"')        # the corrected twin
    assert not [d for d in lengths_only.diagnostics if d.is_error]


def test_burstiness_and_turns_in_plans(tmp_path):
    from sncc.sim.from_plan import spec_from_plan

    comp = _plan(tmp_path, "requests = 40  rate = 2  burstiness = 3  turns = 4  think_time = 5s",
                 "optimize { prefix_cache_hit = 0.9 }")
    assert not [d for d in comp.diagnostics if d.is_error], comp.diagnostics
    wl = spec_from_plan(comp.plan, comp.resolved).workload
    assert (wl.burstiness, wl.turns, wl.think_time, wl.rate) == (3.0, 4, 5.0, 2.0)
    bad = _plan(tmp_path, "requests = 40  rate = 2  burstiness = 0")     # any burstiness > 0 is valid
    assert any(d.is_error for d in bad.diagnostics)


def _errors(comp):
    return [d for d in comp.diagnostics if d.is_error]


def test_a_fifo_trace_is_refused_at_once_by_check_and_simulate(tmp_path):
    fifo = tmp_path / "x.fifo"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    comp = _plan(tmp_path, 'requests = 4  concurrency = 2  trace = "x.fifo"')
    errs = _errors(comp)
    assert [d.code.code for d in errs] == ["SN2015"] and "FIFO" in errs[0].message
    r = CliRunner().invoke(main, ["simulate", str(tmp_path / "plan.sn")])
    assert r.exit_code == 1 and "SN2015" in r.output
    assert time.monotonic() - t0 < 10          # a blocking open would hang here forever


@pytest.mark.parametrize("path", ["/proc/self/environ", "/dev/stdin", "/dev/null"])
def test_pseudo_files_are_refused_and_never_quoted(tmp_path, monkeypatch, path):
    monkeypatch.setenv("SNCC_TEST_SECRET", "hunter2-trace-secret")
    comp = _plan(tmp_path, f'requests = 4  concurrency = 2  trace = "{path}"')
    errs = _errors(comp)
    assert [d.code.code for d in errs] == ["SN2015"], [d.message for d in comp.diagnostics]
    assert "pseudo-files" in errs[0].message
    text = " ".join([d.message for d in comp.diagnostics] + [n for d in comp.diagnostics for n in d.notes])
    assert "hunter2" not in text


def test_a_directory_and_an_oversized_trace_are_refused(tmp_path, monkeypatch):
    from sncc.workload import trace as T

    (tmp_path / "dir.csv").mkdir()
    assert "directory" in _errors(_plan(tmp_path, 'requests = 4  concurrency = 2  trace = "dir.csv"'))[0].message
    monkeypatch.setattr(T, "MAX_TRACE_BYTES", 64)
    (tmp_path / "big.csv").write_text("100,10\n" * 20)
    errs = _errors(_plan(tmp_path, 'requests = 4  concurrency = 2  trace = "big.csv"'))
    assert [d.code.code for d in errs] == ["SN2015"] and "larger than" in errs[0].message


def test_cell_text_in_a_message_is_cut_short(tmp_path):
    from sncc.workload.trace import MAX_CELL_CHARS, TraceError, read_trace

    secret = "sk-" + "x" * 200
    f = tmp_path / "t.csv"
    f.write_text(f"100,10\n{secret},5\n")
    with pytest.raises(TraceError) as e:
        read_trace(str(f))
    assert secret not in str(e.value) and "x" * (MAX_CELL_CHARS + 1) not in str(e.value)
    assert "203 characters" in str(e.value)


def _codes(comp, *codes):
    return [(d.code.code, d.severity, comp.source.line_col(d.span.start)) for d in comp.diagnostics
            if d.code.code in codes]


def test_a_trace_is_one_request_per_row(tmp_path):
    """Fresh-user report: `trace = "ok.csv"` (2 rows) ran 1000 requests, the rows cycled.  Now
    requests default to the row count (simulate and bench.sh alike); a written `requests` other
    than the row count is honoured with the located note SN5081."""
    from sncc.sim.from_plan import spec_from_plan

    (tmp_path / "ok.csv").write_text("100,50\n120,60\n")
    lengths = "input { mean = 110  max = 16k }  output { mean = 55  max = 4k }"
    text = f'''plan "t" {{
  hardware {{ system = "atlas-800-a2"  nodes = 1  cann = "8.3.RC2" }}
  engine "vllm-ascend" {{ version = "v0.11.0" }}
  model "qwen3-32b" {{ quant = bf16 }}
  serve {{ devices = 8  tp = 8  max_num_seqs = 64  max_num_batched_tokens = 8k  chunked_prefill = 8k }}
  workload {{ REQUESTS concurrency = 2  trace = "ok.csv"  {lengths} }}
  slo {{ ttft < 2s }}
}}
'''
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    def plan(requests: str):
        p = tmp_path / "plan.sn"
        p.write_text(text.replace("REQUESTS", requests))
        return compile_file(SourceFile(str(p), p.read_text()))

    clean = plan("")
    assert clean.resolved.requests == 2 and not [d for d in clean.diagnostics if d.severity != "info"]
    assert not _codes(clean, "SN5081", "SN5082")
    assert spec_from_plan(clean.plan, clean.resolved).workload.requests == 2
    assert clean.deployment is not None
    assert re.search(r"--num-prompts[ =]2\b", clean.outputs["bench.sh"]), clean.outputs["bench.sh"]
    for written, how in (("requests = 5 ", "cycled 2.5 times"), ("requests = 1 ", "the first 1 rows")):
        comp = plan(written)
        (d,) = [d for d in comp.diagnostics if d.code.code == "SN5081"]
        assert d.severity == "info" and how in d.message and comp.source.line_col(d.span.start) == (6, 25)
        assert spec_from_plan(comp.plan, comp.resolved).workload.requests == int(written.split()[2])


def test_trace_lengths_that_disagree_with_the_blocks_are_a_warning(tmp_path):
    """The input/output blocks are used with a trace (max bounds the rows and sets max_model_len; bench.sh
    sends their mean), so a mean far from the trace's gets SN5082 at that mean; the trace's own mean is clean."""
    (tmp_path / "ok.csv").write_text("100,50\n120,60\n")
    comp = _plan(tmp_path, 'concurrency = 2  trace = "ok.csv"')   # input mean 2k, output 512
    got = _codes(comp, "SN5082")
    assert [(c, s) for c, s, _ in got] == [("SN5082", "warning")] * 2               
    assert [pos[0] for _, _, pos in got] == [8, 8]          # the workload's input/output line
    d = next(d for d in comp.diagnostics if d.code.code == "SN5082")
    assert "110" in d.message and "mean = 110" in d.help


#: the user report's trace plan (/tmp/u-work/t/q-tr_inf.sn), `sncc fmt` clean
H200_TRACE_PLAN = '''plan "tr" {
  model "qwen3-32b" { quant = bf16 }
  hardware { system = "hgx-h200"  nodes = 1 }
  engine "vllm" { version = "0.23.0" }
  serve {
    instances = 4
    devices = 2
    tp = 2
    max_num_seqs = 64
    max_num_batched_tokens = 8k
    chunked_prefill = 8k
  }
  workload {
    trace = "tr.csv"
    input { mean = 2k  max = 4k }
    output { mean = 500  max = 1k }
  }
  slo { ttft.p90 < 2s  tpot < 30ms }
}
'''


def test_trace_values_get_the_bounds_of_a_plans_numbers(tmp_path):
    """An arrival of 1e308 s was accepted (simulate printed a 300-digit duration, QPM 0.000 and
    met SLOs): a time is bounded by 2^53 - 1 s and a length by 2^31 - 1 tokens, as a plan's own
    numbers are (SN2009), reported at the trace's row and column."""
    from sncc.workload.trace import TraceError, read_trace

    f = tmp_path / "t.csv"
    for text, (line, col, words) in {"100,10,0\n200,20,1e308\n": (2, 8, "2^53 - 1 s"),
                                     "100,10,0\n200,20,9007199254740992\n": (2, 8, "too large"),
                                     "3000000000,5\n": (1, 1, "2^31 - 1"),
                                     "5,1e300\n": (1, 3, "too large")}.items():
        f.write_text(text)
        with pytest.raises(TraceError) as e:
            read_trace(str(f))
        assert (e.value.line, e.value.col) == (line, col) and words in e.value.message, (text, e.value)
    f.write_text("100,10,0\n200,20,9007199254740991\n2147483647,5,9007199254740991\n")
    assert read_trace(str(f))[-1] == (2147483647, 5, 9007199254740991.0)
    plan = tmp_path / "plan.sn"
    plan.write_text(H200_TRACE_PLAN)
    (tmp_path / "tr.csv").write_text("100,10,0\n200,20,1e308\n")
    r = CliRunner().invoke(main, ["simulate", str(plan)])
    assert r.exit_code == 1 and "error[SN2015]" in r.output and "tr.csv:2:8: arrival_s '1e308' is too large" in r.output
    assert "000,000,000" not in r.output


def test_a_trace_with_another_separator_is_a_malformed_row_naming_it(tmp_path):
    """`100;10` was read as a header row, then "the trace has no request rows"."""
    from sncc.workload.trace import TraceError, read_trace

    f = tmp_path / "t.csv"
    for text, (line, words) in {"100;10\n": (1, "separated by `;`"), "100;10;0.5\n200;20;1\n": (1, "`;`"),
                                "input_len;output_len\n100;10\n": (2, "`;`"), "100\t10\n": (1, "a tab"),
                                "100,10\n200;20\n": (2, "`;`"), "10\n": (1, "2 or 3 columns")}.items():
        f.write_text(text)
        with pytest.raises(TraceError) as e:
            read_trace(str(f))
        assert (e.value.line, e.value.col) == (line, 1) and words in e.value.message, (text, e.value)
        if "2 or 3" not in words:
            assert "comma-separated" in e.value.message and "no request rows" not in e.value.message
    f.write_text("input_len;output_len\n")            # a header only: still no rows
    with pytest.raises(TraceError) as e:
        read_trace(str(f))
    assert "no request rows" in e.value.message

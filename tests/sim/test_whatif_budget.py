"""What-ifs of a huge plan cost a bounded share of its main run, and `--no-what-if` skips them.

Before: `requests = 1000000  concurrency = 100000` ran four what-if simulations of 300,000
requests each (3x the clients) after a 1M-request main run, with no way to skip them."""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from sncc.cli import main
from sncc.sim import whatif

SMALL = '''plan "small" {
  model "qwen3-32b" { weights = "/data/qwen3-32b"  max_model_len = 16k }
  hardware { system = "hgx-h200"  devices = 2 }
  engine "vllm" {}
  serve {
    devices = 2
    tp = 2
    max_num_seqs = 32
    max_num_batched_tokens = 8k
    chunked_prefill = 2k
  }
  workload {
    requests = 160
    concurrency = 16
    input { mean = 2k  max = 4k }
    output { mean = 128  max = 512 }
  }
  slo { ttft < 1ms }
}
'''


def _old_size(requests: int, concurrency) -> int:
    """The what-if size before the budget: the plan's, capped at 3000 or 3x the clients."""
    return min(requests, max(whatif.WHATIF_REQUESTS, 3 * (concurrency or 0)))


def test_a_huge_closed_loop_gets_a_bounded_what_if_size():
    wl = SimpleNamespace(requests=1_000_000, concurrency=100_000)
    for runs in (3, 4, 5, 6):
        n = whatif.whatif_requests(wl, runs)
        assert whatif.WHATIF_REQUESTS <= n < 300_000
        assert n * runs <= whatif.WHATIF_SHARE * wl.requests      # a quarter of the main run in all


@pytest.mark.parametrize("requests", [100, 2000, 3000, 4000, 10_000, 50_000, 100_000])
@pytest.mark.parametrize("concurrency", [None, 16, 64, 600, 3168])
def test_normal_sizes_keep_their_what_if_size(requests, concurrency):
    wl = SimpleNamespace(requests=requests, concurrency=concurrency)
    assert whatif.whatif_requests(wl, 5) == _old_size(requests, concurrency)


def _spec(tmp_path):
    from sncc.compiler import compile_file
    from sncc.sim.from_plan import spec_from_plan
    from sncc.source import SourceFile

    comp = compile_file(SourceFile(str(tmp_path / "small.sn"), SMALL))
    assert not [d for d in comp.diagnostics if d.is_error]
    return spec_from_plan(comp.plan, comp.resolved)


def test_cheapest_changes_runs_every_what_if_at_the_bounded_size(tmp_path, monkeypatch):
    """The baseline re-run, the seed-noise run and each candidate run at the bounded size, and a
    note says their steady state is approximate (fewer than 3x the clients)."""
    from sncc.sim.engine.run import simulate_spec

    spec = _spec(tmp_path)
    result = simulate_spec(spec, series=False)
    monkeypatch.setattr(whatif, "WHATIF_REQUESTS", 10)
    monkeypatch.setattr(whatif, "WHATIF_FREE", 0)
    sizes = []

    def recording(sp, series=True, progress=None):
        sizes.append(sp.workload.requests)
        return simulate_spec(sp, series=series)

    monkeypatch.setattr(whatif, "simulate", recording)
    runs = len(whatif._candidates(spec)) + 2
    n = whatif.whatif_requests(spec.workload, runs)
    assert n < 3 * 16 and n * runs <= 0.25 * 160
    whatif.cheapest_changes(spec, result)
    assert sizes and set(sizes) == {n}
    assert any(f"what-ifs ran {n} requests each" in note and "approximate" in note
               for note in result.info["notes"])


def test_no_what_if_skips_the_what_ifs(tmp_path, monkeypatch):
    plan = tmp_path / "small.sn"
    plan.write_text(SMALL)

    def boom(*a, **k):
        raise AssertionError("what-ifs ran")

    monkeypatch.setattr(whatif, "cheapest_changes", boom)
    r = CliRunner().invoke(main, ["simulate", "--no-what-if", str(plan)])
    assert r.exit_code == 1, r.output                 # the SLO is still missed
    assert "note: what-ifs not run (--no-what-if)" in r.stdout
    assert "cheapest changes" not in r.stdout and "no what-if" not in r.stdout
    assert "--no-what-if" in CliRunner().invoke(main, ["simulate", "--help"]).output


def test_no_what_if_is_in_the_readme():
    from expect import ROOT

    readme = (ROOT / "README.md").read_text()
    sim = readme[readme.index("## Simulator"):]
    assert "--no-what-if" in sim

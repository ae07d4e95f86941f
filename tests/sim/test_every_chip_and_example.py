"""Every chip the catalog lists simulates, or `sncc simulate` refuses it with a located diagnostic
(never exit 2 on a plan `sncc check` accepts); every example simulates (issue 11 item 5)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from expect import ROOT, compile_text
from sncc import catalog
from sncc.cli import main

PLAN = '''plan "p" {{
  model "qwen3-32b" {{ quant = bf16  max_model_len = 8k }}
  hardware {{ chip = "{chip}"  devices = 8 }}
  engine "{engine}" {{}}
  serve {{ devices = 8  tp = 8  max_num_seqs = 16  max_num_batched_tokens = 8k  chunked_prefill = 8k }}
  workload {{ requests = 60  concurrency = 8  input {{ mean = 1k  max = 4k }}  output {{ mean = 128  max = 512 }} }}
}}
'''


@pytest.mark.parametrize("chip", sorted(catalog.chips()))
def test_every_catalog_chip_simulates_or_is_refused_with_a_diagnostic(tmp_path, chip):
    vendor = catalog.chip(chip).vendor
    p = tmp_path / "p.sn"
    p.write_text(PLAN.format(chip=chip, engine="vllm" if vendor == "nvidia" else "vllm-ascend"))
    check = CliRunner().invoke(main, ["check", str(p)])
    r = CliRunner().invoke(main, ["simulate", str(p)])
    assert "Traceback" not in r.output and "internal error" not in r.output, r.output
    assert r.exit_code in (0, 1), r.output
    if r.exit_code == 0:
        assert r.stdout.startswith("plan `p`: 60 requests")
    elif check.exit_code == 0:
        # check accepts the plan: simulate's refusal is its own located diagnostic (SN4080)
        assert "error[SN4080]" in r.output and "--> " in r.output and chip in r.output
    else:
        assert "error[SN" in r.output          # the check's own error, e.g. a chip without BF16


def test_the_a2_and_950_chips_get_their_derived_profiles(tmp_path):
    from sncc.sim.from_plan import spec_from_plan

    for chip, prof in (("ascend-910b2", "ascend-a2"), ("ascend-950pr", "ascend-950"), ("ascend-910c", "ascend-a3")):
        comp = compile_text(PLAN.format(chip=chip, engine="vllm-ascend"))
        assert spec_from_plan(comp.plan, comp.facts).profile == prof


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.sn")), ids=lambda p: p.stem)
def test_every_example_simulates(path):
    from sncc.sim import api

    comp = compile_text(path.read_text(encoding="utf-8"), str(path))
    if comp.plan is None:
        pytest.skip("a definitions file")
    assert not [d for d in comp.diagnostics if d.is_error]
    r = api.simulate(comp.plan, comp.facts, requests=300)
    assert r.requests_completed == 300 and r.tpot_ms["mean"] > 0

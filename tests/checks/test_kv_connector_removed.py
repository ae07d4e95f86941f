"""A KV connector its engine release removed (SN3008, one message): the release judged is the one
the plan is built for (``Facts.engine_version``: written, else sncc's default pin), on P/D and
aggregated plans alike.  PyNccl, vLLM V0's connector, is registered up to vLLM 0.10.0 and gone
from 0.11.0 (``software.toml [[kv_connectors]] removed_in``; the vLLM 0.11.0 wheel's
``kv_connector/factory.py`` registers only V1 connectors)."""

from __future__ import annotations

import pytest

from expect import ROOT, compile_text

PD = (ROOT / "tests" / "cases" / "br-31-pd-tp-mismatch.fixed.sn").read_text().replace(
    "connector = nixl", "connector = pynccl")
SERVE = """plan "agg" {
  model "qwen3-32b" { quant = fp8  max_model_len = 10k }
  hardware { system = "hgx-h100"  devices = 2 }
  engine "vllm" {}
  serve { devices = 2  tp = 2  max_num_seqs = 16  max_num_batched_tokens = 10k }
  kv_transfer { connector = pynccl }
  workload {
    requests = 200
    concurrency = 16
    input { mean = 2k  max = 6k }
    output { mean = 512  max = 2k }
  }
}
"""


def _at_connector(comp):
    return [d for d in comp.diagnostics if d.span is not None and comp.source.text[d.span.start:d.span.end] == "pynccl"]


def test_an_unversioned_serve_plan_with_a_removed_connector_is_told_the_default_pin_lacks_it():
    comp = compile_text(SERVE)
    got = _at_connector(comp)
    assert [d.code.code for d in got] == ["SN3008"], [(d.code.code, d.message) for d in comp.diagnostics]
    assert "not in vllm 0.23.0 (sncc's default pin): it was removed in vllm 0.11.0" in got[0].message
    assert "remove the `kv_transfer` block" in got[0].help and 'version = "..."' in got[0].help


@pytest.mark.parametrize("version", ['engine "vllm" {}', 'engine "vllm" { version = "0.23.0" }'],
                         ids=["default-pin", "written"])
def test_a_pd_plan_with_a_removed_connector_gets_one_message(version):
    comp = compile_text(PD.replace('engine "vllm" { version = "0.9.0" }', version))
    got = _at_connector(comp)
    assert [d.code.code for d in got] == ["SN3008"], [(d.code.code, d.message) for d in got]
    assert "it was removed in vllm 0.11.0" in got[0].message and got[0].help.startswith("use `connector = nixl`")


def test_a_release_that_has_the_connector_draws_no_release_finding_at_it():
    comp = compile_text(PD)
    # only the build's SN4042: sncc has no launch facts for PyNccl (the launch files follow 0.11.0)
    assert [d.code.code for d in _at_connector(comp) if d.severity in ("error", "warning")] == ["SN4042"]
    assert "pynccl" in comp.facts.kv_connector_offer.built + comp.facts.kv_connector_offer.unbuilt


def test_the_offer_is_of_the_facts_release():
    comp = compile_text(SERVE.replace("connector = pynccl", "connector = lmcache"))
    assert comp.facts.engine_version == "0.23.0" and comp.facts.kv_connector_offer.release == "vllm 0.23.0"


def test_connector_removals_live_only_in_the_connector_table():
    from sncc.checks._rules import rows

    assert not [r for r in rows("release_support") if r["setting"] == "kv_transfer.connector" and "last" in r]

"""EP dispatch/combine when the EP group spans nodes (issue 11: "NVIDIA large-EP decode is
optimistic").

An HGX node's GPUs reach GPUs of other nodes over one 400 Gb/s InfiniBand NIC each (systems.toml
``scale-out`` link of hgx-h100/h200/b200: MLCommons system JSONs, aiconfigurator's
``inter_node_bw``), not over NVLink.  The nvidia-h200 profile reads DeepEP V1's internode tables
(deepseek-ai/DeepEP docs/legacy.md @0297fc8, H800 + CX7 400 Gb/s) for such groups only
(``spans_nodes = true``); a group inside one node keeps ``comm.ep_link_efficiency`` on NVLink.
"""
from __future__ import annotations

import math

import pytest

from sncc import catalog
from sncc.cost import comm as cc
from sncc.cost.profile import load_profile, profile_problems


@pytest.fixture(scope="module")
def h200():
    return load_profile("nvidia-h200")


def test_hgx_systems_have_a_scale_out_link_below_nvlink():
    for name in ("hgx-h100", "hgx-h200", "hgx-b200"):
        sysm = catalog.system(name)
        node = sysm.link("node")
        out = sysm.link("scale-out")
        assert out is not None and out.bandwidth == 50e9, name
        assert out.bandwidth < node.bandwidth / 8, name


def test_ep_group_over_nodes_takes_the_scale_out_link():
    links = catalog.system("hgx-h200").links
    assert cc.link_for_group(links, 8, 8).level == "node"
    assert cc.link_for_group(links, 16, 8).level == "scale-out"
    assert cc.link_for_group(links, 64, 8).level == "scale-out"


def test_low_latency_table_pins_the_measured_latency_across_nodes(h200):
    """At DeepEP's own point (128 tokens, 7168 hidden, top-8, FP8/BF16, EP32) the per-layer cost is
    the measured 155 + 273 us, whatever the fixed part alpha."""
    alpha = h200.get("comm.ep_alpha_low_latency_s")
    bd, bc = cc.ep_bandwidths(h200, "low_latency", 32, 50e9, alpha, spans_nodes=True)
    t = cc.ep_layer_time(128, 7168, 8, 32, 1.0, 2.0, bd, bc, alpha)
    assert t == pytest.approx((155 + 273) * 1e-6, rel=1e-6)


def test_inside_one_node_the_tables_are_not_read(h200):
    link = 450e9
    eff = h200.get("comm.ep_link_efficiency")
    for mode in ("normal", "low_latency"):
        assert cc.ep_bandwidths(h200, mode, 8, link, 0.0, spans_nodes=False) == (link * eff, link * eff)


def test_normal_table_read_as_measured_across_nodes(h200):
    d, c = cc.ep_bandwidths(h200, "normal", 32, 50e9, 0.0, spans_nodes=True)
    assert (d, c) == (58e9, 57e9)      # logical bandwidths above the 50 GB/s NIC, DeepEP's note
    d, c = cc.ep_bandwidths(h200, "normal", 128, 50e9, 0.0, spans_nodes=True)
    assert (d, c) == (51e9, 50e9)      # held at the last row (EP64) beyond the table


def test_a3_table_stays_capped_at_the_link():
    """The Ascend tables were measured on the SuperPoD's UB; over a slower link they are capped."""
    a3 = load_profile("ascend-a3")
    d, c = cc.ep_bandwidths(a3, "normal", 32, 25e9, 0.0, spans_nodes=True)
    assert d <= 25e9 and c <= 25e9


def test_profile_validation_needs_a_fallback_for_a_spans_nodes_table():
    import copy

    from sncc.cost.profile import profile_path

    try:
        import tomllib
    except ImportError:  # pragma: no cover
        import tomli as tomllib
    with open(profile_path("nvidia-h200"), "rb") as fh:
        raw = tomllib.load(fh)
    assert not profile_problems(raw)
    bad = copy.deepcopy(raw)
    del bad["comm"]["ep_link_efficiency"]
    problems = profile_problems(bad)
    assert any("spans_nodes" in p for p in problems), problems
    bad = copy.deepcopy(raw)
    bad["comm"]["ep_normal"]["value"]["spans_nodes"] = "yes"
    assert any("comm.ep_normal" in p for p in profile_problems(bad))


def test_multi_node_decode_pays_the_nic(tmp_path):
    """DeepSeek-R1 FP8, DP32 + EP over 4 HGX H200 nodes per role, DeepEP low-latency: the decode
    step's exposed EP time per MoE layer is at least the DeepEP latency floor (2 x alpha) plus
    the bytes over the measured bandwidths, far above NVLink pricing."""
    from sncc.compiler import compile_file
    from sncc.cost.step import StepModel
    from sncc.sim.from_plan import spec_from_plan
    from sncc.source import SourceFile

    text = """plan "r1-h200-dp32-ep" {
  model "deepseek-r1" { quant = fp8  max_model_len = 8k }
  hardware { system = "hgx-h200"  devices = 64 }
  engine "vllm" { version = "0.11.0" }
  decode { devices = 32  tp = 1  dp = 32  expert_parallel = true  max_num_seqs = 128 }
  prefill { devices = 32  tp = 1  dp = 32  expert_parallel = true  max_num_batched_tokens = 8k }
  kv_transfer { connector = nixl }
  env { VLLM_ALL2ALL_BACKEND = "deepep_low_latency" }
  workload {
    requests = 200
    concurrency = 512
    input { mean = 2k  max = 4k }
    output { mean = 1k  max = 2k }
  }
}
"""
    comp = compile_file(SourceFile(str(tmp_path / "p.sn"), text))
    assert comp is not None and not any(d.is_error for d in comp.diagnostics)
    spec = spec_from_plan(comp.plan, comp.resolved)
    m = StepModel(spec, "decode", spec.role("decode"), load_profile("nvidia-h200"))
    assert m.ep_size == 32 and m.ep_link_bw == 50e9
    bd, bc = m.ep_bw["low_latency"]
    assert bd < 100e9 and bc < 100e9      # NVLink x 0.35 would be 157.5 GB/s
    assert math.isfinite(bd) and math.isfinite(bc)

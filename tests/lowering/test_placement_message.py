"""SN4042 when the instances take more nodes than the plan has says why: an instance smaller than a
node stays inside one node, so instances whose size does not divide the node leave devices idle
(4 × 6 devices on nodes of 8 take 4 nodes, not 3), and the help names the two fixes."""

from __future__ import annotations

from expect import compile_text

PLAN = '''plan "q32" {
  model "qwen3-32b" {}
  hardware { system = "atlas-800-a2"  nodes = NODES }
  engine "vllm-ascend" { version = "v0.23.0" }
  serve { instances = 4  devices = DEVICES  tp = 2  dp = DP  max_num_seqs = 8  chunked_prefill = 8k }
  workload { requests = 100  concurrency = 16  input { mean = 1k  max = 4k }  output { mean = 1k  max = 4k } }
}
'''


def _plan(nodes, devices, dp):
    return PLAN.replace("NODES", str(nodes)).replace("DEVICES", str(devices)).replace("DP", str(dp))


def test_instances_that_do_not_pack_say_why_and_how_to_fix():
    comp = compile_text(_plan(3, 6, 3))
    (d,) = [d for d in comp.diagnostics if d.is_error]
    assert d.code.code == "SN4042" and d.path == ("hardware", "nodes")
    assert "4 nodes" in d.message and "has 3" in d.message
    assert "`serve`: 4 instances of 6 devices" in d.message, d.message
    assert "inside one node" in d.message and "1 per node of 8" in d.message and "2 devices idle" in d.message, d.message
    assert d.help == "set `nodes = 4`, or give each `serve` instance a device count that divides 8 (1, 2, 4 or 8)", d.help


def test_the_corrected_twins_lay_out():
    for nodes, devices, dp in ((4, 6, 3), (2, 4, 2)):
        comp = compile_text(_plan(nodes, devices, dp))
        assert not [d for d in comp.diagnostics if d.is_error], (nodes, [d.message for d in comp.diagnostics if d.is_error])


def test_device_count_help_names_the_nodes_the_layout_takes():
    """SN3002's "N nodes would fit" counts nodes as the placement does: 4 × 6 devices on nodes of 8
    take 4 nodes (said 3, which SN4042 then refused)."""
    comp = compile_text(_plan(2, 6, 3))
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN3002"]
    assert d.help.endswith("; 4 nodes of 8 devices would fit"), d.help
    comp = compile_text(_plan(1, 4, 2))
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN3002"]
    assert d.help.endswith("; 2 nodes of 8 devices would fit"), d.help

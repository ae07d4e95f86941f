"""The hardware block's devices and nodes must agree with the catalog's devices per node."""
from __future__ import annotations

from expect import compile_text

PLAN = ('plan "p" {{\n  model "qwen3-32b" {{}}\n  hardware {{ system = "hgx-h200"  {hw} }}\n  engine "vllm" {{}}\n'
        '  serve {{ devices = 2  tp = 2 }}\n'
        '  workload {{ requests = 10  concurrency = 2  input {{ mean = 1k  max = 2k }}  output {{ mean = 1k  max = 2k }} }}\n}}\n')


def _errors(hw: str):
    comp = compile_text(PLAN.format(hw=hw), "p.sn")
    return [d for d in comp.diagnostics if d.is_error]


def test_more_devices_than_the_nodes_hold_is_an_error():
    """One HGX H200 node has 8 GPUs: `nodes = 1  devices = 16` was accepted with an idle-devices warning."""
    (e,) = _errors("nodes = 1  devices = 16")
    assert e.code.code == "SN2004" and "1 x 8 devices per node = 8" in e.message
    assert "nodes = 2" in e.help and e.related


def test_devices_within_the_nodes_are_accepted():
    assert not _errors("nodes = 2  devices = 16")
    assert not _errors("nodes = 1  devices = 2")
    assert not _errors("devices = 2")


def test_idle_devices_of_a_plan_without_roles_say_so():
    """A plan with no role printed `8 of 8 devices are not used by any role ( = 0)`."""
    comp = compile_text(PLAN.format(hw="nodes = 1").replace("  serve { devices = 2  tp = 2 }\n", ""), "p.sn")
    (w,) = [d for d in comp.diagnostics if d.code.code == "SN3003"]
    assert w.message == "8 of 8 devices are not used by any role (the plan has no role)", w.message
    comp = compile_text(PLAN.format(hw="nodes = 1"), "p.sn")
    (w,) = [d for d in comp.diagnostics if d.code.code == "SN3003"]
    assert "(serve 1 × 2 = 2)" in w.message, w.message

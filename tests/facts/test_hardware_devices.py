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


def test_devices_in_error_draw_no_idle_devices_warning():
    """`nodes = 1  devices = 16` on an 8-GPU node gave SN2004 and then "8 of 16 devices are not
    used": no follow-on warning from a value already in error."""
    comp = compile_text(PLAN.format(hw="nodes = 1  devices = 16"), "p.sn")
    assert [d.code.code for d in comp.diagnostics if d.code.code.startswith("SN300")] == []


A3 = ('plan "p" {{\n  model "deepseek-r1" {{ quant = w8a8 }}\n  hardware {{ system = "atlas-900-a3-superpod"  {hw} }}\n'
      '  engine "omni-infer" {{}}\n  env {{ HCCL_BUFFSIZE = 2000 }}\n  prefill {{ instances = {p}  devices = 16  tp = 8  ep = 2 }}\n'
      '  decode {{ instances = {d}  devices = 64  tp = 1  ep = 64 }}\n'
      '  workload {{ requests = 10  concurrency = 2  input {{ mean = 1k  max = 2k }}  output {{ mean = 1k  max = 2k }} }}\n}}\n')


def test_more_nodes_than_the_system_has_is_an_error():
    """The seed with nodes = 60, 8P13D (960 dies) drew warnings only, and build wrote 1772 files;
    the Atlas 900 A3 SuperPoD has 48 nodes (systems.toml max_nodes)."""
    comp = compile_text(A3.format(hw="nodes = 60", p=8, d=13), "p.sn")
    errs = [d for d in comp.diagnostics if d.is_error]
    assert [d.code.code for d in errs] == ["SN2009"], [(d.code.code, d.message) for d in errs]
    assert "48 nodes" in errs[0].message and comp.source.text[errs[0].span.start:errs[0].span.end] == "60"
    assert comp.deployment is None or any(d.is_error for d in comp.diagnostics)
    comp = compile_text(A3.format(hw="devices = 960", p=8, d=13), "p.sn")
    (e,) = [d for d in comp.diagnostics if d.is_error]
    assert e.code.code == "SN2009" and "768 devices" in e.message
    assert not [d for d in compile_text(A3.format(hw="nodes = 48", p=8, d=10), "p.sn").diagnostics if d.is_error]


def test_roles_past_the_system_without_nodes_are_an_error():
    comp = compile_text(A3.format(hw="", p=8, d=13), "p.sn")
    (e,) = [d for d in comp.diagnostics if d.is_error]
    assert e.code.code == "SN3002" and "768" in e.message

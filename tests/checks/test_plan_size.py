"""One plan is at most limits.toml's devices and instances (SN3060), refused before lowering."""
from __future__ import annotations

import time

from expect import compile_text

PLAN = ('plan "p" {{\n  model "qwen3-32b" {{}}\n  hardware {{ system = "hgx-h100"  nodes = {nodes} }}\n  engine "vllm" {{}}\n'
        '  serve {{ instances = {inst}  devices = {dev}  tp = {dev} }}\n'
        '  workload {{ requests = 10  concurrency = 2  input {{ mean = 1k  max = 2k }}  output {{ mean = 256  max = 512 }} }}\n}}\n')


def _size_errors(**kw):
    comp = compile_text(PLAN.format(**kw), "p.sn")
    return comp, [d for d in comp.diagnostics if d.code.code == "SN3060"]


def test_a_hundred_thousand_nodes_are_refused_at_once():
    """check and simulate of nodes = 100000, instances = 100000 ran past 120 s with no output."""
    t = time.monotonic()
    comp, (e, roles) = _size_errors(nodes=100000, inst=100000, dev=8)
    assert time.monotonic() - t < 10
    assert comp.source.text[e.span.start:e.span.end] == "100000" and "32768" in e.message
    assert e.span.start == comp.source.text.index("100000")   # at nodes, the first cause
    assert "Atlas 960" in e.message and "limits.toml" in " ".join(e.notes)
    # then the roles, at `instances`, so a suppression there covers something (review item 2)
    assert roles.path == ("serve", "instances") and roles.span.start == comp.source.text.rindex("100000")


def _errors(text: str):
    comp = compile_text(text, "p.sn")
    return [d for d in comp.diagnostics if d.is_error]


A3 = ('plan "p" {{\n  model "qwen3-32b" {{}}\n  hardware {{ system = "atlas-900-a3-superpod"{nodes} }}\n'
      '  engine "vllm-ascend" {{ version = "v0.11.0" }}\n  serve {{ instances = {inst}  devices = 8  tp = 8 }}\n'
      '  workload {{ requests = 10  input {{ mean = 1k  max = 2k }}  output {{ mean = 256  max = 512 }} }}\n}}\n')


def test_nodes_past_the_system_are_said_once():
    """Review item 2: `nodes = 100000` on an A3 SuperPoD drew SN2009 and SN3060 at the same span."""
    (e,) = _errors(A3.format(nodes="  nodes = 100000", inst=1))
    assert e.code.code == "SN2009" and e.path == ("hardware", "nodes")


def test_roles_past_the_system_are_said_once_with_a_path():
    """No `nodes` and `instances = 100000`: SN3002 (past the system's 768 devices) alone, not SN3060 too."""
    (e,) = _errors(A3.format(nodes="", inst=100000))
    assert e.code.code == "SN3002" and e.path == ("hardware", "system") and "768" in e.message


def test_roles_past_the_limit_are_said_after_a_hardware_in_error():
    """The hardware's SN2009 does not hide the roles' own size (nothing else reports it)."""
    errs = _errors(A3.format(nodes="  nodes = 100000", inst=100000))
    assert [(d.code.code, d.path) for d in errs] == [("SN2009", ("hardware", "nodes")), ("SN3060", ("serve", "instances"))]


def test_the_reasons_printed_are_the_data_files():
    from sncc.catalog import plan_limits

    lim = plan_limits()
    (e,) = [d for d in _size_errors(nodes=3000, inst=20000, dev=1)[1]]
    assert lim["reason"]["max_instances"] in e.message
    comp, errs = _size_errors(nodes=100000, inst=1, dev=8)
    assert [d.path for d in errs] == [("hardware", "nodes")] and lim["reason"]["max_devices"] in errs[0].message
    assert plan_limits() is plan_limits()      # one loader, cached


def test_roles_past_the_limit_are_refused_at_instances():
    comp, (e,) = _size_errors(nodes=3000, inst=20000, dev=1)
    assert "20000 instances" in e.message and "16384" in e.message
    assert comp.source.text[e.span.start:e.span.end] == "20000"


def test_a_plan_within_the_limit_passes():
    comp, errs = _size_errors(nodes=100, inst=100, dev=8)
    assert not errs and not [d for d in comp.diagnostics if d.is_error]


def test_the_limit_is_data_with_a_source():
    from sncc.catalog import plan_limits

    lim = plan_limits()
    assert lim["max_devices"] >= 2 * 15488 and lim["max_instances"] >= 15488
    assert lim["source"] and lim["status"] and set(lim["reason"]) == {"max_devices", "max_instances"}


def test_lowering_is_linear_in_the_instances():
    """Every process scanned every rank for the node count: 5000 instances took 5 s."""
    from sncc.lowering import launch

    comp = compile_text(PLAN.format(nodes=2000, inst=2000, dev=8), "p.sn")
    calls = []
    real = launch._nodes

    def counting(ctx):
        calls.append(ctx.nodes_used is None)
        return real(ctx)

    launch._nodes = counting
    try:
        assert comp.deployment is not None
    finally:
        launch._nodes = real
    assert len(calls) == 2000 and sum(calls) == 1   # one scan, then the cached count

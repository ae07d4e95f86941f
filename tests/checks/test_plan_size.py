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
    comp, (e,) = _size_errors(nodes=100000, inst=100000, dev=8)
    assert time.monotonic() - t < 10
    assert comp.source.text[e.span.start:e.span.end] == "100000" and "32768" in e.message
    assert e.span.start == comp.source.text.index("100000")   # at nodes, the first cause
    assert "Atlas 960" in " ".join(e.notes)


def test_roles_past_the_limit_are_refused_at_instances():
    comp, (e,) = _size_errors(nodes=1000, inst=20000, dev=1)
    assert "20000 instances" in e.message and "16384" in e.message
    assert comp.source.text[e.span.start:e.span.end] == "20000"


def test_a_plan_within_the_limit_passes():
    comp, errs = _size_errors(nodes=100, inst=100, dev=8)
    assert not errs and not [d for d in comp.diagnostics if d.is_error]


def test_the_limit_is_data_with_a_source():
    from sncc.catalog import plan_limits

    lim = plan_limits()
    assert lim["max_devices"] >= 2 * 15488 and lim["max_instances"] >= 15488
    assert lim["source"] and lim["status"]


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

"""sncc's one memory model (:mod:`sncc.capacity`): `sncc check` and `sncc simulate` size the KV
pool alike for every example; weights come per weight group; memory outside the engine's budget
(SN4081, issue 10 rule kind K11) with its broken/fixed case pairs from public reports."""
from __future__ import annotations

import pathlib

import pytest

from expect import ROOT, compile_text, expectations_with_severity
from sncc import capacity, catalog
from sncc.catalog.arch import param_breakdown

EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.sn"))
K11 = sorted(p for p in (ROOT / "tests" / "cases").glob("k11-*.sn") if not p.name.endswith(".fixed.sn"))


def _compile(path: pathlib.Path):
    return compile_text(path.read_text(encoding="utf-8"), str(path))


# ------------------------------------------------------------------ one budget for check and simulate
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_check_and_simulate_give_the_same_kv_budget(path):
    """Issue 11 item 4: the pool the simulator runs is the one the check's SN4004/SN4008 judge."""
    from sncc.sim.engine.run import prepare
    from sncc.sim.from_plan import spec_from_plan

    comp = _compile(path)
    if comp.plan is None or any(d.is_error for d in comp.diagnostics):
        pytest.skip("not a plan")
    spec = spec_from_plan(comp.plan, comp.facts)
    c = prepare(spec)
    for name, role in comp.plan.roles():
        mem = capacity.role_memory(comp.plan, comp.facts, name, role)
        if name == "prefill" and spec.disaggregated:
            assert spec.role(name).kv_budget_bytes_per_device == mem.kv_budget
            continue
        sim_budget = c.info[f"{name}.kv_budget_bytes_per_device"]
        assert sim_budget == mem.kv_budget, (name, sim_budget, mem.kv_budget)


def test_nvidia_devices_hold_nccl_buffers_not_hccl():
    comp = _compile(ROOT / "tests" / "cases" / "k11-cuda-graph-outside-budget.fixed.sn")
    mem = capacity.role_memory(comp.plan, comp.facts, "serve", comp.plan.serve)
    assert mem.comm == "NCCL" and mem.hccl == capacity.memory_constants()["nccl"]["bytes"]
    warn = [d for d in comp.diagnostics if d.code.code == "SN4008"]
    assert all("HCCL" not in " ".join(d.notes) for d in warn)


# ------------------------------------------------------------------ weight bytes per group
def test_a_per_group_mapping_prices_each_group_at_its_own_bytes():
    arch = catalog.model("deepseek-r1")
    p = param_breakdown(arch)
    w8 = capacity.weights_per_device(arch, "w8a8", 1, 16, 1)
    # FP4 experts inside an FP8 checkpoint (the issue 10 report): only the routed experts shrink
    fp4 = capacity.weights_per_device(arch, "w8a8", 1, 16, 1, weight_bytes={"routed_experts": 0.5})
    assert w8 - fp4 == pytest.approx(p["routed_experts"] * 0.5 / 16, rel=1e-6)
    # the groups a mapping leaves out keep the quantization's bytes; BF16 embedding and head
    b = capacity.bytes_per_param("w8a8", True, {"routed_experts": 0.5})
    assert b["attention"] == b["dense_ffn"] == b["shared_experts"] == 1.0 and b["embedding"] == b["lm_head"] == 2.0
    # W4A8 (quant.toml): INT4 experts, W8A8 elsewhere, as the checkpoint's own mapping would say
    assert capacity.weights_per_device(arch, "w4a8", 1, 16, 1) == capacity.weights_per_device(
        arch, "bf16", 1, 16, 1, weight_bytes={"routed_experts": 0.5, "attention": 1.0, "dense_ffn": 1.0,
                                              "shared_experts": 1.0})


def test_redundant_experts_are_per_instance_over_the_expert_devices():
    arch = catalog.model("deepseek-r1")
    p = param_breakdown(arch)
    base = capacity.weights_per_device(arch, "w8a8", 1, 64, 1)
    extra = capacity.weights_per_device(arch, "w8a8", 1, 64, 1, redundant_experts=128)
    assert extra - base == pytest.approx(128 * p["moe_layers"] * p["routed_expert_one"] / 64, rel=1e-6)


def test_the_simulator_reads_the_checkpoints_per_group_bytes():
    from dataclasses import replace

    from sncc.sim.calibration.scenarios import seed000_spec
    from sncc.sim.engine.run import prepare

    base = seed000_spec(7, requests=10)
    fp4 = replace(base, weight_bytes_per_param={"routed_experts": 0.5})
    b, f = prepare(base).decode_model, prepare(fp4).decode_model
    assert f.wb_expert == 0.5 * b.wb_expert and f.wb_dense == b.wb_dense


# ------------------------------------------------------------------ outside the budget (SN4081)
def test_outside_budget_items_are_sourced_per_engine_and_vendor():
    a = capacity.outside_budget("vllm-ascend", "v0.23.0", "ascend", True)
    assert [i.name for i in a.items] == ["runtime context", "graph-capture pool"]
    assert all("vllm-ascend#10700" in i.source for i in a.items)
    assert not capacity.outside_budget("vllm-ascend", "v0.23.0", "ascend", False).items[1:]   # eager: no pool
    new = capacity.outside_budget("vllm", "0.23.0", "nvidia", True)
    assert not new.items and any("deducted" in n for n in new.notes)            # in the budget from 0.23.0
    old = capacity.outside_budget("vllm", "0.6.4", "nvidia", True)
    assert [i.name for i in old.items] == ["graph-capture pool"]


@pytest.mark.parametrize("path", K11, ids=lambda p: p.stem)
def test_k11_cases_warn_and_their_twins_do_not(path):
    head = path.read_text(encoding="utf-8").splitlines()[:2]
    assert head[0].startswith("# K11 — rule kind: ") and head[1].startswith("# source: https://github.com/")
    want = {(c, line) for sev, c, line, _ in expectations_with_severity(path) if sev == "warning"}
    comp = _compile(path)
    got = {(d.code.code, comp.source.line_col(d.span.start)[0]) for d in comp.diagnostics
           if d.severity == "warning"}
    assert want and want <= got, [(d.code.code, d.message) for d in comp.diagnostics]
    assert not [d for d in comp.diagnostics if d.is_error]
    twin = _compile(path.with_name(path.stem + ".fixed.sn"))
    assert not [d for d in twin.diagnostics if d.code.code == "SN4081" or d.is_error]


# ------------------------------------------------------------------ hybrid linear attention
def test_linear_attention_state_is_held_per_sequence_by_check_and_simulator():
    """Qwen3-Next's Gated DeltaNet layers keep one state per running sequence (not per token):
    the check counts it in each sequence's memory, the simulator's token pool leaves room for
    ``max_num_seqs`` of them."""
    from sncc.catalog.arch import linear_state_bytes_per_seq
    from sncc.sim.engine.run import prepare
    from sncc.sim.from_plan import spec_from_plan

    path = ROOT / "tests" / "known-good" / "recipe-qwen3-next-80b-bf16-h200-tp4.sn"
    comp = _compile(path)
    mem = capacity.role_memory(comp.plan, comp.facts, "serve")
    assert mem.state_per_seq == int(linear_state_bytes_per_seq(comp.facts.arch) / 4) > 0
    assert mem.kv_per_seq == int(mem.kv_per_token * mem.context) + mem.state_per_seq
    spec = spec_from_plan(comp.plan, comp.facts)
    c = prepare(spec)
    role = spec.role("serve")
    left = mem.kv_budget - mem.state_per_seq * role.max_num_seqs
    assert c.info["serve.kv_budget_bytes_per_device"] == mem.kv_budget
    assert left > 0 and c.info["serve.linear_state_bytes_per_device"] == mem.state_per_seq * role.max_num_seqs
    assert c.serve_blocks == int(left // (role.block_size * mem.kv_per_token))
    # a dense model holds no such state
    dense = _compile(ROOT / "tests" / "cases" / "k11-memory-outside-budget.fixed.sn")
    assert capacity.role_memory(dense.plan, dense.facts, "serve").state_per_seq == 0


def test_one_outside_item_is_not_summed_with_itself():
    """SN4081 said "runtime context 0.36 GiB = 0.36 GiB there" when the role captures no graphs."""
    path = ROOT / "tests" / "cases" / "k11-memory-outside-budget.sn"
    text = path.read_text(encoding="utf-8").replace("0.99 }", "0.999 }").replace(
        "chunked_prefill = 16k", "chunked_prefill = 16k\n    graph_mode = false")
    from expect import compile_text

    (m,) = [d.message for d in compile_text(text, "k11.sn").diagnostics if d.code.code == "SN4081"]
    assert m.endswith("needs runtime context 0.36 GiB there"), m
    (m,) = [d.message for d in _compile(path).diagnostics if d.code.code == "SN4081"]
    assert "+ graph-capture pool 0.44 GiB = 0.80 GiB there" in m, m

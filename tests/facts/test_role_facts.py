"""The facts layer's per-role derivations (docs/design.md §2–§3): the `dp` / `ep` /
`expert_parallel` forms, redundant experts through `eplb`, per-role speculative and env."""

from __future__ import annotations

from expect import compile_text


def _plan(role: str, extra: str = "", model: str = 'model "deepseek-r1" { quant = w8a8 }',
          system: str = 'system = "atlas-900-a3-superpod"  nodes = 4', engine: str = 'engine "vllm-ascend" { version = "v0.11.0" }') -> str:
    return f"""plan "p" {{
  {model}
  hardware {{ {system} }}
  {engine}
  {role}
  {extra}
  workload {{ requests = 100  concurrency = 16  input {{ mean = 1k  max = 2k }}  output {{ mean = 256  max = 1k }} }}
}}
"""


def _codes(comp):
    return sorted(d.code.code for d in comp.diagnostics if d.is_error)


def test_seed_form_ep_means_dp_with_expert_parallel():
    comp = compile_text(_plan("serve { instances = 1  devices = 64  tp = 1  ep = 64  max_num_seqs = 16 }"))
    rf = comp.facts.roles["serve"]
    assert (rf.tp, rf.dp, rf.devices, rf.expert_parallel, rf.ep_size) == (1, 64, 64, True, 64)


def test_dp_form_with_expert_parallel_off_is_tp_only_moe():
    # vLLM's default: --tensor-parallel-size 8 without --enable-expert-parallel
    comp = compile_text(_plan("serve { devices = 16  tp = 8  dp = 2  expert_parallel = false  max_num_seqs = 16 }"))
    rf = comp.facts.roles["serve"]
    assert (rf.dp, rf.expert_parallel, rf.ep_size) == (2, False, 1)
    codes = {d.code.code for d in comp.diagnostics}
    assert "SN3005" not in codes and "SN4010" not in codes


def test_ep_and_dp_together_conflict():
    comp = compile_text(_plan("serve { devices = 16  tp = 8  dp = 2  ep = 2 }"))
    assert "SN2016" in _codes(comp)


def test_ep_with_expert_parallel_false_conflicts():
    comp = compile_text(_plan("serve { devices = 16  tp = 8  ep = 2  expert_parallel = false }"))
    assert "SN2016" in _codes(comp)


def test_expert_parallel_on_dense_model():
    comp = compile_text(_plan("serve { devices = 8  tp = 8  expert_parallel = true }", model='model "qwen3-32b" {}'))
    assert "SN3006" in _codes(comp)


def test_mismatch_names_the_key_written():
    comp = compile_text(_plan("serve { devices = 16  tp = 8  dp = 4 }"))
    msg = next(d.message for d in comp.diagnostics if d.code.code == "SN3001")
    assert "tp × dp × pp = 8 × 4 × 1 = 32" in msg


def test_eplb_redundant_experts_make_the_split_even():
    # 256 routed experts do not split over 24 devices; + 8 redundant = 264 = 24 × 11 does
    bad = compile_text(_plan("decode { devices = 24  tp = 1  ep = 24  max_num_seqs = 8 }", extra="prefill { devices = 8 tp = 8 }",
                             system='system = "atlas-900-a3-superpod"  devices = 32'))
    assert "SN3005" in _codes(bad)
    good = compile_text(_plan("decode { devices = 24  tp = 1  ep = 24  max_num_seqs = 8  eplb { redundant_experts = 8 } }",
                              extra="prefill { devices = 8 tp = 8 }", system='system = "atlas-900-a3-superpod"  devices = 32'))
    assert "SN3005" not in _codes(good)
    rf = good.facts.roles["decode"]
    assert (rf.redundant_experts, rf.routed_slots) == (8, 264)
    assert good.facts.roles["prefill"].redundant_experts == 0


def test_omni_placement_per_device_converts_to_per_instance():
    comp = compile_text(_plan("decode { devices = 64  tp = 1  ep = 64  max_num_seqs = 8 }", extra="""prefill { devices = 16 tp = 8 ep = 2 }
  optimize { omni_placement { redundant_experts = 2 } }""", system='system = "atlas-900-a3-superpod"  devices = 80',
                              engine='engine "omni-infer" {}'))
    rf = comp.facts.roles["decode"]
    assert rf.redundant_experts == 128 and rf.eplb.per_device == 2
    assert comp.facts.roles["prefill"].redundant_experts == 32


def test_eplb_and_omni_placement_together_conflict():
    comp = compile_text(_plan("serve { devices = 16  tp = 8  ep = 2 }",
                              extra="eplb { redundant_experts = 16 }  optimize { omni_placement { redundant_experts = 1 } }"))
    assert "SN2016" in _codes(comp)


def test_role_speculative_overrides_plan_key_by_key():
    comp = compile_text(_plan("decode { devices = 16  tp = 8  ep = 2  speculative { draft_tokens = 3 } }",
                              extra="prefill { devices = 16 tp = 8 ep = 2  speculative { method = none } }\n  speculative { method = mtp  acceptance = 0.7 }"))
    assert "SN2005" not in _codes(comp)
    dec, pre = comp.facts.roles["decode"], comp.facts.roles["prefill"]
    assert (dec.speculative.method, dec.speculative.draft_tokens, dec.speculative.acceptance) == ("mtp", 3, 0.7)
    assert abs(dec.speculative.tokens_per_step - (1 + 0.7 + 0.49 + 0.343)) < 1e-9
    assert pre.speculative is None
    assert dec.dispatch_tokens_per_rank == 256 * 4


def test_role_speculative_without_any_acceptance_is_missing():
    comp = compile_text(_plan("serve { devices = 16  tp = 8  ep = 2  speculative { method = mtp } }"))
    d = [d for d in comp.diagnostics if d.code.code == "SN2005"]
    assert d and "serve.speculative" in d[0].message


def test_role_env_merges_over_plan_env():
    comp = compile_text(_plan("decode { devices = 16  tp = 8  ep = 2  env { HCCL_BUFFSIZE = 2048 } }",
                              extra='prefill { devices = 16 tp = 8 ep = 2 }\n  env { HCCL_BUFFSIZE = 512  HCCL_OP_EXPANSION_MODE = "AIV" }'))
    dec, pre = comp.facts.roles["decode"], comp.facts.roles["prefill"]
    assert dec.env_value("HCCL_BUFFSIZE") == "2048" and dec.env["HCCL_BUFFSIZE"].origin == "decode"
    assert pre.env_value("HCCL_BUFFSIZE") == "512"
    assert dec.env_value("HCCL_OP_EXPANSION_MODE") == "AIV"
    assert comp.plan.decode.env_span("HCCL_BUFFSIZE") is not None


def test_hccl_buffer_read_from_the_role_env():
    # 1000 MB at plan level is short for the 64-way decode; the decode's own env fixes it
    base = dict(extra="prefill { devices = 16 tp = 8 ep = 2 }\n  env { HCCL_BUFFSIZE = 200 }",
                system='system = "atlas-900-a3-superpod"  devices = 80')
    bad = compile_text(_plan("decode { devices = 64  tp = 1  ep = 64  max_num_seqs = 48 }", **base))
    assert "SN4010" in _codes(bad)
    good = compile_text(_plan("decode { devices = 64  tp = 1  ep = 64  max_num_seqs = 48  env { HCCL_BUFFSIZE = 4096 } }", **base))
    assert "SN4010" not in _codes(good)


def test_budgets_are_per_dp_rank():
    comp = compile_text(_plan("serve { devices = 16  tp = 4  dp = 4  max_num_batched_tokens = 4k  max_num_seqs = 32 }"))
    rf = comp.facts.roles["serve"]
    assert (rf.max_num_batched_tokens, rf.max_num_seqs) == (4096, 32)


def test_hosts_block_reads_addresses_and_env_refs():
    comp = compile_text(_plan("serve { devices = 16  tp = 8  ep = 2 }",
                              extra='hosts { addresses = ["10.0.0.1", env("NODE1_IP")]  nic = "enp189s0f0" }'))
    assert not [c for c in _codes(comp) if c.startswith("SN2")]
    h = comp.plan.hosts
    assert h.addresses[0] == "10.0.0.1" and h.addresses[1].name == "NODE1_IP" and h.nic == "enp189s0f0"
    bad = compile_text(_plan("serve { devices = 16  tp = 8  ep = 2 }", extra='hosts { addresses = ["10.0.0 .1"] }'))
    assert "SN2004" in _codes(bad)

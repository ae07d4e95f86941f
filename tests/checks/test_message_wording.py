"""Messages that name the real problem (fresh-user break test item 7): a TP group wider than a
node (SN4042), the prefill batch a prefill device is sized for (SN4004), a graph mode written as
`graph_mode` (SN2004), the eplb note's release range, and SN4080's note saying only what its
message and help do not."""

from __future__ import annotations

from expect import compile_text

PLAN = """plan "p" {
  model "qwen3-32b" { quant = bf16 }
  hardware { system = "hgx-h100"  nodes = 2 }
  engine "vllm" { version = "0.23.0" }
  serve { devices = 16  tp = 16  max_num_seqs = 16  chunked_prefill = 4k }
  workload {
    requests = 20
    concurrency = 4
    input { mean = 1k  max = 2k }
    output { mean = 100  max = 200 }
  }
}
"""


def test_a_tp_group_wider_than_a_node_is_said_to_span_nodes():
    comp = compile_text(PLAN)
    (d,) = {d.message: d for d in comp.diagnostics if d.code.code == "SN4042"}.values()
    assert "more than a node's 8: its TP group would span nodes" in d.message
    assert "do not hold evenly" not in d.message


def test_a_role_value_that_is_a_graph_mode_points_to_the_graph_block():
    comp = compile_text(PLAN.replace("chunked_prefill = 4k }", 'chunked_prefill = 4k  graph_mode = "torchair" }'))
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN2004"]
    assert "`graph { mode = torchair }`" in d.help
    other = compile_text(PLAN.replace("chunked_prefill = 4k }", 'chunked_prefill = 4k  graph_mode = "yes" }'))
    (d,) = [d for d in other.diagnostics if d.code.code == "SN2004"]
    assert d.help.startswith("write `true` or `false` here")


def test_missing_chip_fact_note_does_not_repeat_message_or_help():
    from sncc.cost.from_facts import MissingChipFact
    from sncc.sim.command import missing_chip_fact_diagnostic

    comp = compile_text(PLAN)
    d = missing_chip_fact_diagnostic(comp.plan, MissingChipFact("ascend-950dt", ["hbm_bandwidth"]))
    assert d.notes and all(n not in d.message and d.message not in n for n in d.notes)
    assert all(d.help not in n for n in d.notes)


def test_a_prefill_device_names_the_batch_it_is_sized_for():
    text = PLAN.replace('hardware { system = "hgx-h100"  nodes = 2 }', 'hardware { system = "hgx-h100"  devices = 3 }') \
        .replace('model "qwen3-32b" { quant = bf16 }', 'model "qwen3-235b-a22b" { quant = bf16  max_model_len = 12k }') \
        .replace("  serve { devices = 16  tp = 16  max_num_seqs = 16  chunked_prefill = 4k }\n",
                 "  prefill { devices = 1  tp = 1  max_num_batched_tokens = 16k }\n"
                 "  decode { devices = 2  tp = 2  max_num_seqs = 16 }\n")
    comp = compile_text(text)
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN4004" and d.path == ("prefill",)]
    assert "one prefill batch of 16k tokens (max_num_batched_tokens)" in d.message, d.message
    assert "full-context" not in d.message


def test_the_vocabulary_help_keeps_the_devices_not_the_refused_tp():
    """vllm#31474 (https://github.com/vllm-project/vllm/issues/31474): GLM-4.7 FP8 at tp = 6 fails in
    VocabParallelEmbedding.  Fresh-user report (break3): SN3021's help said "or keep tp and add
    pipeline stages", but pipeline stages leave each stage's vocabulary split over the same tp; what
    they keep is the device count, at a smaller tp."""
    from expect import ROOT

    comp = compile_text((ROOT / "tests" / "cases" / "vocab-tp-vllm31474.sn").read_text(), "vocab.sn")
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN3021"]
    assert "keep tp" not in d.help, d.help
    assert "or keep the 6 devices per rank as tp = 2 × pp = 3" in d.help, d.help


def test_a_missing_engine_is_suggested_for_the_plans_hardware():
    """A plan on NVIDIA hardware without an `engine` block was told to add `engine "vllm-ascend"`
    (break test 3: an H100 plan), an engine that SN4007 then refuses there; the help now names an
    engine that runs on the system's chip (engines.toml [engine_hardware]) at its default pin."""
    from sncc.engines.registry import adapter_for

    nvidia = PLAN.replace('  engine "vllm" { version = "0.23.0" }\n', "")
    (d,) = [d for d in compile_text(nvidia).diagnostics if d.code.code == "SN2005"]
    assert d.help == f'add `engine "vllm" {{ version = "{adapter_for("vllm").default_version}" }}`'
    ascend = nvidia.replace('system = "hgx-h100"', 'system = "atlas-800i-a3"')
    (d,) = [d for d in compile_text(ascend).diagnostics if d.code.code == "SN2005"]
    assert d.help.startswith('add `engine "vllm-ascend"')

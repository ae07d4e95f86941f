"""False errors a check of published vllm-ascend v0.23.0 tutorials found
(docs/source/tutorials at the v0.23.0 tag, each command below under its `source:`):

* the Mooncake PD tutorial's `run_dp_template.sh` takes its devices, port, DP size and rank, address
  and TP size as the script's arguments (`$1` … `$7`, passed by launch_online_dp.py): the shell
  reader read `$2` as the literal text "$2", so the import reported a type error (SN8009) on each,
  an `ASCEND_RT_VISIBLE_DEVICES` of `$1` (SN3020) and a memory error on the TP it could not know;
* the Suffix Decoding tutorial runs `"method": "suffix"`, which vllm-ascend v0.23.0 takes
  (vllm_ascend/spec_decode/__init__.py L39-40: AscendSuffixDecodingProposer): it was SN2004;
* the Ray tutorial (TP8 × PP2 over 2 nodes of 8) drew SN4042 saying its TP group would span
  nodes: TP 8 fits a node, it is the pipeline that spans two.
"""

from __future__ import annotations

from expect import compile_text
from sncc.importer import import_sources
from sncc.source import SourceFile

# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/features/pd_disaggregation_mooncake_multi_node.md#L283-L332
# hardware: Atlas 800T A3, one of the two prefill servers of the 2P1D example (run_dp_template.sh)
MOONCAKE_PREFILL = """nic_name="eth0"  # network card name
local_ip="192.0.0.1"
export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$nic_name
export TP_SOCKET_IFNAME=$nic_name
export HCCL_SOCKET_IFNAME=$nic_name
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_BUFFSIZE=256
export TASK_QUEUE_ENABLE=1
export HCCL_OP_EXPANSION_MODE="AIV"
export ASCEND_RT_VISIBLE_DEVICES=$1
vllm serve /path_to_weight/DeepSeek-r1_w8a8_mtp \\
  --host 0.0.0.0 \\
  --port $2 \\
  --data-parallel-size $3 \\
  --data-parallel-rank $4 \\
  --data-parallel-address $5 \\
  --data-parallel-rpc-port $6 \\
  --tensor-parallel-size $7 \\
  --enable-expert-parallel \\
  --seed 1024 \\
  --served-model-name ds_r1 \\
  --max-model-len 40000 \\
  --max-num-batched-tokens 16384 \\
  --max-num-seqs 8 \\
  --enforce-eager \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.9  \\
  --quantization ascend \\
  --no-enable-prefix-caching \\
  --speculative-config '{"num_speculative_tokens": 1, "method":"deepseek_mtp"}'
"""

# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/features/suffix_speculative_decoding.md#L81-L100
# hardware: one Atlas 800T A2 node, 4 cards
SUFFIX = """export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3
export TASK_QUEUE_ENABLE=1
export HCCL_OP_EXPANSION_MODE="AIV"
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1

vllm serve /data/Qwen3-32B \\
  --served-model-name qwen3 \\
  --trust-remote-code \\
  --distributed-executor-backend mp \\
  --tensor-parallel-size 4 \\
  --max-model-len 5500 \\
  --max-num-batched-tokens 40960 \\
  --speculative-config '{"method": "suffix", "num_speculative_tokens": 3}' \\
  --gpu-memory-utilization 0.9 \\
  --additional-config '{"pa_shape_list":[48,64,72,80], "weight_prefetch_config":{"enable":true}}' \\
  --port 8011
"""

# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/features/ray.md#L150-L160
# hardware: "16 NPUs across 2 nodes (8 NPUs per node)" (ray.md L147), a Ray cluster over both
RAY = """vllm serve Qwen/Qwen3-235B-A22B \\
  --distributed-executor-backend ray \\
  --pipeline-parallel-size 2 \\
  --tensor-parallel-size 8 \\
  --enable-expert-parallel \\
  --seed 1024 \\
  --max-model-len 8192  \\
  --max-num-seqs 25 \\
  --served-model-name qwen \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.9
"""


def _import(text: str, system: str, **kw):
    return import_sources([SourceFile("run.sh", text)], engine="vllm-ascend", engine_version="v0.23.0",
                          system=system, **kw)


def test_the_script_arguments_of_a_template_are_unresolved_not_type_errors():
    res = _import(MOONCAKE_PREFILL, "atlas-800i-a3", model="deepseek-r1")
    got = [(d.code.code, d.message) for d in res.diagnostics]
    assert not [m for c, m in got if c == "SN8009"], got
    unresolved = [m for c, m in got if c == "SN8005"]
    for n, opt in ((1, "ASCEND_RT_VISIBLE_DEVICES"), (2, "--port"), (3, "--data-parallel-size"),
                   (7, "--tensor-parallel-size")):
        assert any(m.startswith(f"`{opt}`") and f"`${n}` is argument {n} of the script" in m for m in unresolved), \
            (n, unresolved)
    codes = [d.code.code for d in compile_text(res.text).diagnostics if d.is_error]
    # the plan cannot know the TP the template is called with: it asks for it, and sizes nothing
    assert "SN3020" not in codes and "SN4004" not in codes, codes


def test_the_suffix_drafter_of_the_published_tutorial_is_a_method():
    res = _import(SUFFIX, "atlas-800-a2", model="qwen3-32b")
    comp = compile_text(res.text)
    assert comp.plan.serve.speculative.method == "suffix", res.text
    errors = [(d.code.code, d.message) for d in comp.diagnostics if d.is_error]
    # prompt/output lookup like n-gram: no sourced acceptance default, the plan asks for it (SN2005)
    assert [c for c, _ in errors] == ["SN2005"] and "acceptance" in errors[0][1], errors
    measured = compile_text(res.text.replace("# acceptance = ?", "acceptance = 0.27\n#"))
    assert not [d for d in measured.diagnostics if d.is_error], [d.message for d in measured.diagnostics if d.is_error]


def test_suffix_is_refused_on_a_release_without_it():
    """vLLM 0.11.0 has no `suffix` method (docs/research/release-support.yaml: first sampled 0.12.0)."""
    plan = f"""plan "p" {{
  model "qwen3-32b" {{ quant = bf16  max_model_len = 5500 }}
  hardware {{ system = "atlas-800-a2"  devices = 4 }}
  engine "vllm-ascend" {{ version = "v0.11.0" }}
  serve {{ devices = 4  tp = 4  max_num_seqs = 16  chunked_prefill = 4k }}
  speculative {{ method = suffix  draft_tokens = 3  acceptance = 0.27 }}
  workload {{
    requests = 20
    concurrency = 4
    input {{ mean = 1k  max = 2k }}
    output {{ mean = 100  max = 200 }}
  }}
}}
"""
    comp = compile_text(plan)
    assert "SN4020" in [d.code.code for d in comp.diagnostics if d.is_error], [d.message for d in comp.diagnostics]
    later = compile_text(plan.replace('"v0.11.0"', '"v0.23.0"'))
    assert not [d for d in later.diagnostics if d.is_error], [d.message for d in later.diagnostics if d.is_error]


def test_a_pipeline_across_nodes_is_not_said_to_split_its_tp_group():
    res = _import(RAY, "atlas-800-a2")
    (d,) = [d for d in compile_text(res.text).diagnostics if d.code.code == "SN4042"]
    assert "TP group" not in d.message, d.message
    assert "tp 8 fits a node of 8" in d.message and "pp = 2" in d.message, d.message


# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/models/Kimi-K2.5.md#L142-L181
# hardware: one Atlas 800 A3 (64G × 16); the jemalloc preload line, then the command (abridged)
JEMALLOC = """export LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libjemalloc.so.2:$LD_PRELOAD
export HCCL_OP_EXPANSION_MODE="AIV"
vllm serve Eco-Tech/Kimi-K2.5-w4a8 \\
  --quantization ascend \\
  --tensor-parallel-size 4 \\
  --data-parallel-size 4 \\
  --enable-expert-parallel \\
  --max-num-seqs 64 \\
  --max-model-len 32768 \\
  --max-num-batched-tokens 16384
"""


def test_a_variable_extending_its_inherited_value_is_not_said_to_be_unset():
    """`X=...:$X` appends to what the shell that runs the script holds: the script is not missing an
    assignment, the import just cannot know that value (SN8005 stays, with the reason)."""
    res = _import(JEMALLOC, "atlas-800i-a3")
    (d,) = [d for d in res.diagnostics if d.code.code == "SN8005"]
    assert "not set before this line" not in d.message, d.message
    assert "extends the value `LD_PRELOAD` inherits from the shell that runs the script" in d.message, d.message
    other = _import(JEMALLOC.replace(":$LD_PRELOAD", ":$JEMALLOC_DIR"), "atlas-800i-a3")
    (d,) = [d for d in other.diagnostics if d.code.code == "SN8005"]
    assert "`$JEMALLOC_DIR` is not set before this line" in d.message, d.message


# source: https://github.com/omni-ai-npu/omni-infer/blob/release_v0.3.0/omni/accelerators/placement/scripts/start_serving.sh#L16-L17
# hardware: 8 visible NPUs per node, TP16 (a Ray cluster of two nodes); the command only
SHORT_CONTEXT = """export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
python -m vllm.entrypoints.openai.api_server   --model /opt/models/models/dsv3/DeepSeek-V3-w8a8-0208-50/   --tensor-parallel-size 16  --gpu-memory-utilization 0.8   --dtype bfloat16    --block-size 128   --trust-remote-code  --served-model-name deepseek --distributed-executor-backend=ray --max-model-len=1024 --host="127.0.0.1" --port=8999
"""


def test_the_assumed_workload_fits_the_scripts_max_model_len():
    """A script gives no workload: the import assumes `vllm bench serve`'s random defaults (1024 in,
    128 out), which do not fit `--max-model-len=1024`; the assumption must not make the plan an
    error (SN5008) the deployment does not have."""
    res = _import(SHORT_CONTEXT, "atlas-800-a2")
    comp = compile_text(res.text)
    w = comp.plan.workload
    assert w.input.max + w.output.max <= 1024, res.text
    assert w.output.max == 128 and w.input.max == 896, res.text
    assert "shortened to 896 in to fit max_model_len 1024" in res.text, res.text
    assert "SN5008" not in [d.code.code for d in comp.diagnostics], [d.message for d in comp.diagnostics]

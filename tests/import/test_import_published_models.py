"""False errors a check of more published deployments found: vllm-ascend v0.23.0 tutorials
(docs/source/tutorials/models at the v0.23.0 tag) and nightly configs
(tests/e2e/nightly/single_node/models/configs at v0.23.0), and the vLLM recipes (vllm-project/recipes
at commit 8959cf64189c71d36e11c6a30335f923f261b1f7), each command below under its `source:`:

* the GLM-5 tutorial serves vllm-ascend's ModelSlim checkpoints `vllm-ascend/GLM5-w4a8` /
  `GLM5-w8a8` (no hyphen in `GLM5`): the import found no catalog model and the check said SN2008;
* the DeepSeek-V3.2 DCP nightly config exports `CPU_AFFINITY_CONF`, torch_npu's CPU binding switch:
  it was SN8002 "read by no engine or runtime library";
* models the tutorials and recipes serve that the catalog lacked (SN2008 on a deployment that
  runs): Qwen3.6-27B, Qwen3.6-35B-A3B (the Qwen3.5-35B-A3B shape), Qwen3-VL-235B-A22B,
  Qwen3-Coder-480B-A35B.
"""

from __future__ import annotations

from expect import compile_text
from sncc.importer import import_sources
from sncc.source import SourceFile


def _ascend(text: str, system: str = "atlas-800i-a3"):
    return import_sources([SourceFile("run.sh", text)], engine="vllm-ascend", engine_version="v0.23.0",
                          system=system)


def _vllm(text: str, system: str = "hgx-h200"):
    return import_sources([SourceFile("run.sh", text)], engine="vllm", system=system)


def _errors(text: str):
    return [(d.code.code, d.message) for d in compile_text(text).diagnostics if d.is_error]


# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/models/GLM5.md#L303-L335
# hardware: one Atlas 800 A3 (64GB × 16), "glm-5-w8a8 and glm-5.1-w8a8 can be deployed on 1 Atlas 800 A3"
GLM5_W8A8 = """export HCCL_OP_EXPANSION_MODE="AIV"
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export HCCL_BUFFSIZE=200
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export VLLM_ASCEND_BALANCE_SCHEDULING=1
export VLLM_ASCEND_ENABLE_MLAPO=1
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1

vllm serve /root/.cache/modelscope/hub/models/vllm-ascend/GLM5-w8a8 \\
--host 0.0.0.0 \\
--port 8077 \\
--data-parallel-size 1 \\
--tensor-parallel-size 16 \\
--enable-expert-parallel \\
--seed 1024 \\
--served-model-name glm-5 \\
--max-num-seqs 16 \\
--max-model-len 40960 \\
--max-num-batched-tokens 4096 \\
--trust-remote-code \\
--gpu-memory-utilization 0.95 \\
--quantization ascend \\
--enable-chunked-prefill \\
--enable-prefix-caching \\
--additional-config '{"multistream_overlap_shared_expert": true}' \\
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \\
--hf-overrides '{"use_index_cache": true, "index_topk_freq": 4}' \\
--speculative-config '{"num_speculative_tokens": 3, "method": "deepseek_mtp", "enforce_eager": true}'
"""


def test_the_modelslim_glm5_checkpoint_is_the_glm5_model():
    res = _ascend(GLM5_W8A8)
    assert not [d for d in res.diagnostics if "no model in sncc's catalog" in d.message], res.text
    comp = compile_text(res.text)
    assert comp.plan.model.id == "glm-5" and comp.plan.model.quant == "w8a8", res.text
    assert _errors(res.text) == []
    # the A2 twin (GLM5.md L346-L377): GLM5-w4a8 on one Atlas 800 A2, TP8
    a2 = GLM5_W8A8.replace("GLM5-w8a8", "GLM5-w4a8").replace("--tensor-parallel-size 16", "--tensor-parallel-size 8") \
        .replace("--max-num-seqs 16", "--max-num-seqs 8").replace("--max-model-len 40960", "--max-model-len 32768") \
        .replace("export VLLM_ASCEND_ENABLE_MLAPO=1\n", "")
    res = _ascend(a2, system="atlas-800-a2")
    assert compile_text(res.text).plan.model.quant == "w4a8", res.text
    assert _errors(res.text) == []


def test_a_name_that_only_starts_like_glm5_is_not_it():
    res = _ascend(GLM5_W8A8.replace("GLM5-w8a8", "GLM50-w8a8"))
    assert [d for d in res.diagnostics if "no model in sncc's catalog" in d.message], res.text


# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/single_node/models/configs/DeepSeek-V3.2-W8A8-DCP.yaml
# hardware: one Atlas 800 A3 (the nightly's A3 runner); the environment of the case, then a short command
CPU_AFFINITY = """export CPU_AFFINITY_CONF=2
vllm serve vllm-ascend/DeepSeek-V3.2-W8A8 --quantization ascend --tensor-parallel-size 16 \\
  --enable-expert-parallel --max-model-len 8192 --max-num-seqs 16
"""


def test_torch_npus_cpu_binding_switch_is_a_known_variable():
    res = _ascend(CPU_AFFINITY)
    assert not [d for d in res.diagnostics if d.code.code == "SN8002"], [d.message for d in res.diagnostics]
    assert 'CPU_AFFINITY_CONF = "2"' in res.text, res.text
    # a misspelling stays unknown
    typo = _ascend(CPU_AFFINITY.replace("CPU_AFFINITY_CONF", "CPU_AFFINTY_CONF"))
    assert [d for d in typo.diagnostics if d.code.code == "SN8002"], [d.message for d in typo.diagnostics]


# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/models/Qwen3.6-35B-A3B.md#L186-L222
# hardware: one Atlas 800 A3 (the tutorial's A3 tab); the sysctl / cpufreq lines left out
QWEN36_35B = """export VLLM_USE_MODELSCOPE=True
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_OP_EXPANSION_MODE="AIV"
export HCCL_BUFFSIZE=1024
export OMP_NUM_THREADS=1
export TASK_QUEUE_ENABLE=1

vllm serve Eco-Tech/Qwen3.6-35B-A3B-w8a8 \\
  --host 0.0.0.0 \\
  --port 8000 \\
  --data-parallel-size 1 \\
  --tensor-parallel-size 2 \\
  --enable-expert-parallel \\
  --seed 1024 \\
  --quantization ascend \\
  --served-model-name qwen3.6 \\
  --max-num-seqs 128 \\
  --max-model-len 262144 \\
  --max-num-batched-tokens 16384 \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.90 \\
  --enable-prefix-caching \\
  --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY"}' \\
  --additional-config '{"enable_cpu_binding":true, "enable_flashcomm1":true, "multistream_overlap_shared_expert": true}' \\
  --async-scheduling
"""

# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/Qwen/Qwen3.6-35B-A3B.yaml#L186-L191
# hardware: 2 x H200 ("BF16 on 2xH200 (TP2)", the MTP variant)
QWEN36_35B_RECIPE = """vllm serve Qwen/Qwen3.6-35B-A3B \\
    --tensor-parallel-size 2 \\
    --max-model-len 262144 \\
    --reasoning-parser qwen3 \\
    --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
"""

# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/models/Qwen3.5-27B-Qwen3.6-27B.md#L295-L321
# hardware: one Atlas 800 A3 (the tutorial's Qwen3.6-27B single-node example)
QWEN36_27B = """export VLLM_USE_MODELSCOPE=True
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_BUFFSIZE=512
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export TASK_QUEUE_ENABLE=1
vllm serve Eco-Tech/Qwen3.6-27B-w8a8 \\
    --host 0.0.0.0 \\
    --port 8000 \\
    --data-parallel-size 1 \\
    --tensor-parallel-size 2 \\
    --seed 1024 \\
    --quantization ascend \\
    --served-model-name qwen3.6 \\
    --max-num-seqs 32 \\
    --max-model-len 262144 \\
    --max-num-batched-tokens 16384 \\
    --trust-remote-code \\
    --gpu-memory-utilization 0.90 \\
    --no-enable-prefix-caching \\
    --speculative-config '{"method": "qwen3_5_mtp", "num_speculative_tokens": 3, "enforce_eager": true}' \\
    --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY"}' \\
    --additional-config '{"enable_cpu_binding":true}' \\
    --async-scheduling
"""

# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/models/Qwen3-VL-235B-A22B-Instruct.md#L256-L291
# hardware: one Atlas 800 A3 (64G x 16), DP4 x TP4 (the tutorial's A3 tab)
QWEN3_VL = """export VLLM_USE_MODELSCOPE=True
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_OP_EXPANSION_MODE="AIV"
export HCCL_BUFFSIZE=1536
export OMP_NUM_THREADS=1
export OMP_PROC_BIND=false
export TASK_QUEUE_ENABLE=1
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1
export VLLM_ASCEND_ENABLE_FUSED_MC2=1
export VLLM_ASCEND_BALANCE_SCHEDULING=1
vllm serve Eco-Tech/Qwen3-VL-235B-A22B-Instruct-w8a8-QuaRot \\
  --host 0.0.0.0 \\
  --port 8000 \\
  --served-model-name qwen3-vl-235b \\
  --quantization ascend \\
  --data-parallel-size 4 \\
  --tensor-parallel-size 4 \\
  --enable-expert-parallel \\
  --seed 1024 \\
  --max-num-seqs 32 \\
  --max-model-len 32768 \\
  --max-num-batched-tokens 16384 \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.92 \\
  --no-enable-prefix-caching \\
  --mm-processor-cache-gb 0 \\
  --limit-mm-per-prompt.image 1 \\
  --limit-mm-per-prompt.video 0 \\
  --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[1,2,4,8,16,24,32]}'
"""

# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/Qwen/Qwen3-Coder-480B-A35B-Instruct.yaml#L128-L136
# hardware: 8 x H200 ("8xH200 / 8xH20 FP8 (DP=8, recommended)")
QWEN3_CODER = """VLLM_USE_DEEP_GEMM=1 vllm serve Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8 \\
    --max-model-len 131072 \\
    --enable-expert-parallel \\
    --data-parallel-size 8 \\
    --enable-auto-tool-choice \\
    --tool-call-parser qwen3_coder
"""


def test_published_models_the_catalog_lacked_import_and_check():
    cases = [(_ascend(QWEN36_35B), "qwen3.5-35b-a3b", "w8a8"), (_vllm(QWEN36_35B_RECIPE), "qwen3.5-35b-a3b", None),
             (_ascend(QWEN36_27B), "qwen3.5-27b", "w8a8"), (_ascend(QWEN3_VL), "qwen3-vl-235b-a22b", "w8a8"),
             (_vllm(QWEN3_CODER), "qwen3-coder-480b-a35b", "fp8")]
    for res, mid, quant in cases:
        assert not [d for d in res.diagnostics if "no model in sncc's catalog" in d.message], res.text
        comp = compile_text(res.text)
        from sncc import catalog
        assert catalog.model(comp.plan.model.id).id == mid, res.text
        assert comp.plan.model.quant in ((quant,) if quant else (None, "bf16")), res.text
        assert _errors(res.text) == [], res.text


def test_the_hybrid_qwen36_sizes_kv_on_its_full_attention_layers_only():
    """Qwen3.6-35B-A3B: 10 of 40 layers keep a KV cache (2 KV heads × 256), the rest a fixed state."""
    from sncc import catalog
    m = catalog.model("Qwen/Qwen3.6-35B-A3B")
    assert m.n_full_attention_layers == 10 and m.num_hidden_layers == 40
    assert catalog.model("Qwen/Qwen3.6-27B").id == "qwen3.5-27b"


# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/openai/gpt-oss-120b.yaml#L173-L184
# hardware: 8 x MI355X (the recipe's AMD section); read here against vLLM 0.23.0 on 8 x H200
GPT_OSS_CC = """vllm serve openai/gpt-oss-120b \\
  --tensor-parallel-size 8 \\
  -cc.pass_config.fuse_rope_kvcache=True \\
  -cc.use_inductor_graph_partition=True \\
  --gpu-memory-utilization 0.95 \\
  --block-size 64
"""


def test_dotted_keys_of_a_short_alias_are_that_json_option():
    """`-cc` is vLLM's alias of `--compilation-config`; FlexibleArgumentParser gathers any `-...` word
    holding a dot into its option's JSON (vllm 0.23.0 wheel, vllm/utils/argparse_utils.py L389-L430:
    `arg.startswith("-") and "." in arg`). It was SN8001 "no `vllm serve` option" on each key."""
    res = _vllm(GPT_OSS_CC)
    assert not [d for d in res.diagnostics if d.code.code == "SN8001"], [d.message for d in res.diagnostics]
    kept = [d.message for d in res.diagnostics if d.code.code == "SN8004"]
    assert any("compilation-config" in m for m in kept), kept
    assert "-cc.pass_config.fuse_rope_kvcache=True -cc.use_inductor_graph_partition=True  # from run.sh:3" in res.text, res.text
    # a dotted key of an alias the release does not have stays unknown
    bad = _vllm(GPT_OSS_CC.replace("-cc.use_inductor", "-cx.use_inductor"))
    assert [d for d in bad.diagnostics if d.code.code == "SN8001" and "-cx" in d.message], [d.message for d in bad.diagnostics]


# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/Qwen/Qwen3-Next-80B-A3B-Instruct.yaml#L139-L142
# hardware: 4 x H200 (the recipe's MTP example; the page: h200 verified)
QWEN3_NEXT_NO_CHUNK = """vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct \\
  --tokenizer-mode auto --gpu-memory-utilization 0.8 \\
  --speculative-config '{"method": "qwen3_next_mtp", "num_speculative_tokens": 2}' \\
  --tensor-parallel-size 4 --no-enable-chunked-prefill
"""


def test_without_chunked_prefill_the_default_step_budget_is_the_derived_max_model_len():
    """vLLM with chunked prefill off and no --max-num-batched-tokens takes
    max(max_model_len, the usage default), capped at max_num_seqs × max_model_len
    (vllm/engine/arg_utils.py EngineArgs._set_default_max_num_seqs_and_batched_tokens_args): with
    max_model_len derived from config.json (262,144) the budget is 262,144, not 8,192 (it was SN5002)."""
    res = _vllm(QWEN3_NEXT_NO_CHUNK)
    comp = compile_text(res.text)
    assert comp.plan.serve.max_num_batched_tokens == 262144, res.text
    assert "SN5002" not in [c for c, _ in _errors(res.text)], _errors(res.text)
    # a short max_model_len keeps the larger usage default
    short = _vllm(QWEN3_NEXT_NO_CHUNK.replace("--no-enable-chunked-prefill", "--no-enable-chunked-prefill --max-model-len 4096"))
    assert compile_text(short.text).plan.serve.max_num_batched_tokens == 8192, short.text
    # a step budget the script writes below max_model_len is what vLLM refuses: the error stays
    given = _vllm(QWEN3_NEXT_NO_CHUNK.replace("--no-enable-chunked-prefill", "--no-enable-chunked-prefill --max-num-batched-tokens 8192"))
    assert "SN5002" in [c for c, _ in _errors(given.text)], given.text


# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/models/DeepSeek-V4-Pro.md#L764-L810
# hardware: Atlas 800 A3 nodes, the PD template launch_online_dp.py runs per DP rank (abridged: the
# exports, the Mooncake --kv-transfer-config left out)
DSV4_PRO_TEMPLATE = """export ASCEND_RT_VISIBLE_DEVICES=$1
vllm serve /root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V4-Pro-w4a8-mtp \\
    --host 0.0.0.0 \\
    --port $2 \\
    --data-parallel-size $3 \\
    --data-parallel-rank $4 \\
    --data-parallel-address $5 \\
    --data-parallel-rpc-port $6 \\
    --tensor-parallel-size $7 \\
    --enable-expert-parallel \\
    --seed 1024 \\
    --served-model-name auto \\
    --max-model-len 131072 \\
    --max-num-batched-tokens 4096 \\
    --max-num-seqs 16 \\
    --trust-remote-code \\
    --gpu-memory-utilization 0.92 \\
    --quantization ascend \\
    --block-size 128 \\
    --enforce-eager
"""


def test_a_served_name_spelled_auto_is_a_string():
    """`auto` is bare only for keys that take it (`max_model_len = auto`): a served model name `auto` is
    the name clients send, written `"auto"` (it was `served_name = auto`, SN2004 in the check)."""
    res = _ascend(DSV4_PRO_TEMPLATE)
    assert 'served_name = "auto"' in res.text, res.text
    assert "SN2004" not in [c for c, _ in _errors(res.text)], _errors(res.text)
    # the arguments the launcher passes stay for the user to write; with them the plan checks clean
    filled = res.text.replace("# dp = ?", "dp = 2  #").replace("# tp = ?", "tp = 8  #") \
        .replace("# devices = ?", "devices = 16  #")
    assert _errors(filled) == [], _errors(filled)
    assert compile_text(filled).plan.model.served_name == "auto"


# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/models/Qwen3.5-397B-A17B.md#L201-L239
# hardware: one Ascend 950DT (96GB x 8): "the quantized versions (...-w8a8-mxfp8 and ...-w4a4-mxfp4) can be
# deployed on a single Ascend 950DT node"; the command, its exports abridged
QWEN35_MXFP4 = """export HCCL_OP_EXPANSION_MODE="AIV"
export OMP_PROC_BIND=false
export TASK_QUEUE_ENABLE=1
vllm serve Eco-Tech/Qwen3.5-397B-A17B-w4a4-mxfp4 \\
  --host 0.0.0.0 \\
  --port 8000 \\
  --distributed-executor-backend mp \\
  --data-parallel-size 1 \\
  --tensor-parallel-size 8 \\
  --enable-expert-parallel \\
  --seed 1024 \\
  --quantization ascend \\
  --served-model-name qwen3.5 \\
  --max-num-seqs 128 \\
  --max-model-len 133000 \\
  --max-num-batched-tokens 8192 \\
  --trust-remote-code \\
  --enable-prefix-caching \\
  --gpu-memory-utilization 0.95 \\
  --async-scheduling \\
  --speculative-config '{"method": "qwen3_5_mtp", "num_speculative_tokens": 3}' \\
  --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY"}' \\
  --additional-config '{"enable_cpu_binding":true}'
"""


def test_a_modelslim_type_in_the_name_is_read_whole():
    """`w4a4-mxfp4` is ModelSlim's W4A4_MXFP4 type, an MXFP4 checkpoint (quant.toml mxfp4
    modelslim_names), not INT4 W4A4: on the Ascend 950DT the tutorial runs it, w4a4 was SN4002."""
    res = _ascend(QWEN35_MXFP4, system="atlas-950-superpod")
    assert compile_text(res.text).plan.model.quant == "mxfp4", res.text
    assert "SN4002" not in [c for c, _ in _errors(res.text)], _errors(res.text)
    # a plain ModelSlim W4A4 name stays w4a4
    plain = _ascend(QWEN35_MXFP4.replace("-w4a4-mxfp4", "-w4a4"), system="atlas-950-superpod")
    assert compile_text(plain.text).plan.model.quant == "w4a4", plain.text


# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/models/Qwen3-VL-30B-A3B-Instruct.md#L250-L282
# hardware: one Atlas 800 A3 (64G x 16), the tutorial's A3 tab
QWEN3_VL_30B = """export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_OP_EXPANSION_MODE="AIV"
export HCCL_BUFFSIZE=1024
export OMP_NUM_THREADS=1
export OMP_PROC_BIND=false
export TASK_QUEUE_ENABLE=1
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1
export VLLM_ASCEND_ENABLE_FUSED_MC2=1

vllm serve Qwen/Qwen3-VL-30B-A3B-Instruct \\
  --host 0.0.0.0 \\
  --port 8000 \\
  --served-model-name qwen3-vl-30b \\
  --data-parallel-size 1 \\
  --tensor-parallel-size 2 \\
  --enable-expert-parallel \\
  --seed 1024 \\
  --max-num-seqs 32 \\
  --max-model-len 32768 \\
  --max-num-batched-tokens 16384 \\
  --gpu-memory-utilization 0.9 \\
  --no-enable-prefix-caching \\
  --mm-processor-cache-gb 0 \\
  --limit-mm-per-prompt.image 1 \\
  --limit-mm-per-prompt.video 0 \\
  --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[1,2,4,8,16,24,32]}'
"""

# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/single_node/models/configs/Qwen3-VL-32B-Instruct-W8A8.yaml
# hardware: one Atlas 800 A3 (the nightly's A3 runner); envs and server_cmd of the case (port from the harness)
QWEN3_VL_32B = """export OMP_NUM_THREADS=1
export OMP_PROC_BIND=false
export TASK_QUEUE_ENABLE=1
export HCCL_OP_EXPANSION_MODE=AIV
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
vllm serve Eco-Tech/Qwen3-VL-32B-Instruct-w8a8-QuaRot \\
  --quantization ascend \\
  --no-enable-prefix-caching \\
  --mm-processor-cache-gb 0 \\
  --tensor-parallel-size 2 \\
  --port 8080 \\
  --max-model-len 20000 \\
  --max-num-batched-tokens 8192 \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.9 \\
  --compilation_config '{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [1,12,16,20,24,32,48,64,68,72,76,80,128]}'
"""


def test_the_qwen3_vl_text_models_are_catalogued():
    for text, mid, quant in ((QWEN3_VL_30B, "qwen3-vl-30b-a3b", None), (QWEN3_VL_32B, "qwen3-vl-32b", "w8a8")):
        res = _ascend(text)
        assert not [d for d in res.diagnostics if "no model in sncc's catalog" in d.message], res.text
        from sncc import catalog
        comp = compile_text(res.text)
        assert catalog.model(comp.plan.model.id).id == mid, res.text
        assert comp.plan.model.quant in ((quant,) if quant else (None, "bf16")), res.text
        assert _errors(res.text) == [], _errors(res.text)


# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/multi_node/internal_dp/config/GLM5_1-W8A8-A2-dual-nodes.yaml
# hardware: 2 nodes of 16 NPUs (npu_per_node 16), DP2 x TP8 with one DP rank per node; node 0 then node 1
# (--headless), the envs of env_common (port and addresses from the harness)
GLM51_ENV = """export HCCL_OP_EXPANSION_MODE="AIV"
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export HCCL_BUFFSIZE=200
export PYTORCH_NPU_ALLOC_CONF="expandable_segments:True"
export VLLM_ASCEND_BALANCE_SCHEDULING=0
export VLLM_ASCEND_ENABLE_MLAPO=1
LOCAL_IP=10.0.0.1
MASTER_IP=10.0.0.1
"""
GLM51_ARGS = """  --data-parallel-size 2 \\
  --tensor-parallel-size 8 \\
  --data-parallel-rpc-port 13389 \\
  --data-parallel-size-local 1 \\
  --enable-expert-parallel \\
  --seed 1024 \\
  --max-num-seqs 64 \\
  --max-model-len 38000 \\
  --max-num-batched-tokens 4096 \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.95 \\
  --quantization ascend \\
  --no-enable-prefix-caching \\
  --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY","cudagraph_capture_sizes": [1,4,8,12,16,20,24,28,32,36,48,60,72]}' \\
  --speculative-config '{"num_speculative_tokens": 3, "method": "deepseek_mtp"}'
"""
GLM51_NODE0 = GLM51_ENV + "vllm serve Eco-Tech/GLM-5.1-w8a8 --host 0.0.0.0 --port 8078 \\\n  --data-parallel-address $LOCAL_IP \\\n" + GLM51_ARGS
GLM51_NODE1 = GLM51_ENV + ("vllm serve Eco-Tech/GLM-5.1-w8a8 --host 0.0.0.0 --port 8078 --headless \\\n"
                           "  --data-parallel-start-rank 1 --data-parallel-address $MASTER_IP \\\n") + GLM51_ARGS


def _two_nodes(node0: str, node1: str):
    return import_sources([SourceFile("node0.sh", node0), SourceFile("node1.sh", node1)], engine="vllm-ascend",
                          engine_version="v0.23.0", system="atlas-800i-a3")


def test_the_mc2_window_is_the_captured_capacity_not_the_decode_batch():
    """vllm-ascend runs the fused MoE dispatch (MC2) only for steps within its token capacity, the largest
    captured graph size (72) rounded up to tp (set_mc2_tokens_capacity, vllm_ascend/ascend_forward_context.py
    @v0.23.0 L202-L217); a larger decode step (64 × (1 + 3) = 256 tokens) takes the all-to-all path
    (select_moe_comm_method). The MC2 window is 72 / 8 = 9 tokens per rank, 58 MB, within HCCL_BUFFSIZE 200:
    it was SN4010 "below the 207 MB" on the 256-token step."""
    res = _two_nodes(GLM51_NODE0, GLM51_NODE1)
    assert compile_text(res.text).plan.hardware.nodes == 2, res.text
    assert "SN4010" not in [c for c, _ in _errors(res.text)], _errors(res.text)
    # without a capture list the window is the decode step, and 200 MB is short of it
    default = _two_nodes(*(t.replace(',"cudagraph_capture_sizes": [1,4,8,12,16,20,24,28,32,36,48,60,72]', "")
                           for t in (GLM51_NODE0, GLM51_NODE1)))
    assert "SN4010" in [c for c, _ in _errors(default.text)], default.text


# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/multi_node/internal_dp/config/GLM5_2-W8A8-A3-dual-nodes.yaml
# hardware: 2 Atlas 800 A3 nodes (npu_per_node 16), DP2 x TP16, one DP rank per node (port, addresses from the harness)
GLM52_ENV = """export HCCL_OP_EXPANSION_MODE=AIV
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export HCCL_BUFFSIZE=200
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export VLLM_ASCEND_ENABLE_MLAPO=1
LOCAL_IP=10.0.0.1
MASTER_IP=10.0.0.1
"""
GLM52_ARGS = """  --data-parallel-size 2 --tensor-parallel-size 16 --data-parallel-size-local 1 \\
  --data-parallel-rpc-port 13389 --enable-expert-parallel --seed 1024 --max-num-seqs 16 \\
  --max-model-len 133120 --max-num-batched-tokens 4096 --trust-remote-code --gpu-memory-utilization 0.95 \\
  --quantization ascend --additional-config '{"multistream_overlap_shared_expert":true}' \\
  --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \\
  --speculative-config '{"num_speculative_tokens": 3, "method": "deepseek_mtp", "enforce_eager":true}'
"""


def test_glm52_is_catalogued_with_its_million_positions():
    node0 = GLM52_ENV + "vllm serve Eco-Tech/GLM-5.2-w8a8 --host 0.0.0.0 --port 8080 \\\n  --data-parallel-start-rank 0 --data-parallel-address $LOCAL_IP \\\n" + GLM52_ARGS
    node1 = GLM52_ENV + ("vllm serve Eco-Tech/GLM-5.2-w8a8 --host 0.0.0.0 --port 8080 --headless \\\n"
                         "  --data-parallel-start-rank 1 --data-parallel-address $MASTER_IP \\\n") + GLM52_ARGS
    res = _two_nodes(node0, node1)
    assert not [d for d in res.diagnostics if "no model in sncc's catalog" in d.message], res.text
    comp = compile_text(res.text)
    assert comp.plan.model.id == "glm-5.2" and comp.plan.hardware.nodes == 2, res.text
    assert _errors(res.text) == [], _errors(res.text)
    from sncc import catalog
    assert catalog.model("glm-5.2").max_position_embeddings == 1048576
    assert catalog.model("glm-5").max_position_embeddings == 202752


# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/moonshotai/Kimi-K2.5.yaml#L21-L33
# and L72-L75 (variant default: "Packed INT4 via compressed-tensors (~595 GB on disk); fits 8×H200"; h200 verified):
# the recipe's single_node_tp command, base_args plus TP8 (the page's builder composes it)
KIMI_K25_H200 = """vllm serve moonshotai/Kimi-K2.5 \\
  --trust-remote-code \\
  --tensor-parallel-size 8 \\
  --max-model-len 32768
"""


def test_the_published_kimi_k25_checkpoint_is_int4_experts():
    """moonshotai/Kimi-K2.5 ships INT4 routed experts (compressed-tensors, group 32), as Kimi-K2-Thinking:
    sized as BF16 (2 TB over 8 devices) the recipe's verified 8 x H200 layout was SN4004."""
    from sncc import catalog
    assert catalog.model("moonshotai/Kimi-K2.5").checkpoint_dtype == "int4-moe"
    res = _vllm(KIMI_K25_H200)
    assert _errors(res.text) == [], _errors(res.text)
    # on 2 x H200 the INT4 weights (~595 GB) do not fit: the memory error stays
    two = _vllm(KIMI_K25_H200.replace("--tensor-parallel-size 8", "--tensor-parallel-size 2"))
    assert "SN4004" in [c for c, _ in _errors(two.text)], two.text


# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/Qwen/Qwen3.5-397B-A17B.yaml#L209-L219
# hardware: "GB200 Deployment" (4 Blackwell GPUs of 180+ GB); read here on 4 of an HGX B200's 8
QWEN35_NVFP4 = """vllm serve nvidia/Qwen3.5-397B-A17B-NVFP4 \\
    -dp 4 \\
    --enable-expert-parallel \\
    --language-model-only \\
    --reasoning-parser qwen3 \\
    --enable-prefix-caching
"""


def test_an_nvfp4_repository_is_an_nvfp4_checkpoint():
    """`-NVFP4` names one format (NVIDIA ModelOpt FP4, quant `fp4`), unlike a bare `-FP4`: sized as the
    base model's BF16 the recipe's 4-GPU Blackwell layout was SN4004."""
    res = import_sources([SourceFile("run.sh", QWEN35_NVFP4)], engine="vllm", system="hgx-b200")
    assert compile_text(res.text).plan.model.quant == "fp4", res.text
    assert "SN4004" not in [c for c, _ in _errors(res.text)], _errors(res.text)
    # a bare FP4 word stays undecided (NVFP4 or MXFP4)
    bare = import_sources([SourceFile("run.sh", QWEN35_NVFP4.replace("-NVFP4", "-FP4"))], engine="vllm", system="hgx-b200")
    assert compile_text(bare.text).plan.model.quant in (None, "bf16"), bare.text


# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/Qwen/Qwen3.5-122B-A10B.yaml#L132-L135
# hardware: 2 x H200 (the recipe's FP8 TP2 example)
QWEN35_122B = """vllm serve Qwen/Qwen3.5-122B-A10B-FP8 \\
  --tensor-parallel-size 2 \\
  --max-model-len 262144 \\
  --reasoning-parser qwen3
"""

# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/MiniMaxAI/MiniMax-M2.1.yaml#L126-L131
# hardware: 4 x H200 (the recipe: 230B total / 10B active, native FP8, 196,608 context)
MINIMAX_M21 = """vllm serve MiniMaxAI/MiniMax-M2.1 \\
  --tensor-parallel-size 4 \\
  --tool-call-parser minimax_m2 \\
  --reasoning-parser minimax_m2 \\
  --enable-auto-tool-choice \\
  --trust-remote-code
"""


def test_qwen35_122b_and_minimax_m21_are_catalogued():
    from sncc import catalog
    for text, mid, quant in ((QWEN35_122B, "qwen3.5-122b-a10b", "fp8"), (MINIMAX_M21, "minimax-m2", None)):
        res = _vllm(text)
        assert not [d for d in res.diagnostics if "no model in sncc's catalog" in d.message], res.text
        comp = compile_text(res.text)
        assert catalog.model(comp.plan.model.id).id == mid, res.text
        if quant:
            assert comp.plan.model.quant == quant, res.text
        assert _errors(res.text) == [], _errors(res.text)
    m = catalog.model("qwen3.5-122b-a10b")
    assert m.kv_layers == 12 and m.num_hidden_layers == 48


# source: https://github.com/vllm-project/vllm-ascend/blob/v0.25.1rc1/docs/source/tutorials/models/GLM4.x.md#L127-L150
# hardware: one Atlas 800 A3 (64G x 16), DP2 x TP8; imported for the release the tutorial is written for
GLM47_V025 = """export HCCL_BUFFSIZE=512
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_OP_EXPANSION_MODE=AIV
export VLLM_ASCEND_BALANCE_SCHEDULING=1
export VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE=1

vllm serve Eco-Tech/GLM-4.7-W8A8-floatmtp \\
  --data-parallel-size 2 \\
  --tensor-parallel-size 8 \\
  --enable-expert-parallel \\
  --seed 1024 \\
  --served-model-name glm \\
  --max-model-len 133000 \\
  --max-num-batched-tokens 8192 \\
  --max-num-seqs 16 \\
  --quantization ascend \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.9 \\
  --speculative-config '{"num_speculative_tokens": 3, "method":"mtp", "enforce_eager":true}' \\
  --compilation-config '{"cudagraph_capture_sizes": [1,2,4,8,16,32,64,128,256,512], "cudagraph_mode": "FULL_DECODE_ONLY"}' \\
  --additional-config '{"enable_shared_expert_dp": true, "ascend_fusion_config": {"fusion_ops_gmmswigluquant": false}}'
"""


def test_an_unpinned_release_given_on_the_command_line_is_the_plans_release():
    """`sncc import --engine-version v0.25.1rc1` (not pinned): the arguments are read against the pin running
    the nearest vLLM (v0.23.0), and the plan names v0.25.1rc1, the release the script runs. It wrote
    `version = "v0.11.0"` (sncc's default pin) and the check said SN4020 "mtp is not in vllm-ascend v0.11.0"."""
    res = import_sources([SourceFile("run.sh", GLM47_V025)], engine="vllm-ascend", engine_version="v0.25.1rc1",
                         system="atlas-800i-a3")
    comp = compile_text(res.text)
    assert comp.plan.engine.version == "v0.25.1rc1", res.text
    assert "vLLM 0.23.0" in res.text and "v0.11.0" not in res.text, res.text
    assert _errors(res.text) == [], _errors(res.text)
    said = [d.message for d in res.diagnostics if d.code.code == "SN8008" and "not pinned" in d.message]
    assert said and "v0.23.0" in said[0], [d.message for d in res.diagnostics]


# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/models/GLM4.x.md#L403-L437
# hardware: Atlas 800 A3 nodes, the prefill run_dp_template.sh of the PD example (abridged: the exports, and
# the Mooncake --kv-transfer-config JSON shortened); the command ends in `2>&1`
GLM47_PD_TEMPLATE = """export ASCEND_RT_VISIBLE_DEVICES=$1
vllm serve Eco-Tech/GLM-4.7-W8A8-floatmtp \\
    --host 0.0.0.0 \\
    --port $2 \\
    --data-parallel-size $3 \\
    --data-parallel-rank $4 \\
    --data-parallel-address $5 \\
    --data-parallel-rpc-port $6 \\
    --tensor-parallel-size $7 \\
    --enable-expert-parallel \\
    --seed 1024 \\
    --served-model-name glm \\
    --max-model-len 133000 \\
    --max-num-batched-tokens 8192 \\
    --trust-remote-code \\
    --max-num-seqs 64 \\
    --gpu-memory-utilization 0.9 \\
    --quantization ascend \\
    --enforce-eager \\
    --kv-transfer-config \\
    '{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer", "kv_port": "30000"}' 2>&1
"""


def test_a_redirection_after_the_command_is_no_argument():
    res = _ascend(GLM47_PD_TEMPLATE)
    assert not [d for d in res.diagnostics if d.code.code in ("SN8001", "SN8010")], \
        [(d.code.code, d.message) for d in res.diagnostics]

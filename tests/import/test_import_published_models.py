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

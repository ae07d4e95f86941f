"""False errors a check of published multi-node and NVIDIA deployments found: the vllm-ascend v0.23.0
multi-node nightly configs (tests/e2e/nightly/multi_node at the v0.23.0 tag, run by the project's
nightly, .github/workflows/configs/nightly_config.yaml) and the vLLM recipes (vllm-project/recipes at
commit 8959cf64189c71d36e11c6a30335f923f261b1f7), each command below under its `source:`:

* GLM-4.7 / GLM-5.1 recipes pass `--speculative-config.method mtp`: vLLM's FlexibleArgumentParser
  gathers the dotted keys of a JSON option into one object (vllm 0.23.0 wheel,
  vllm/utils/argparse_utils.py L389-L430); it was SN8001 on each key;
* `zai-org/GLM-4.7-FP8` was sized as the BF16 checkpoint of glm-4.7 (SN4004) and
  `unsloth/DeepSeek-V3.1-BF16` as DeepSeek's FP8 (SN4002 on Atlas A3): the name's dtype word is the
  checkpoint's;
* Kimi-K2-Thinking (native INT4 experts) on 8 x H200, which the recipe verifies, was SN4002: vLLM runs
  INT4 W4A16 experts through Marlin (compute capability 7.5+);
* one external-DP server (`--data-parallel-rank 0`, its 8 devices of a TP8 × DP2 instance) drew SN3007
  "16 devices per node but the mask shows 8": vLLM runs one DP rank in that process;
* `export SERVER_PORT=8080` read back by `--port $SERVER_PORT`, and PYTHONHASHSEED, drew SN8002.
"""

from __future__ import annotations

from expect import compile_text
from sncc.importer import import_sources
from sncc.source import SourceFile

# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/zai-org/GLM-4.7.yaml#L135-L142
# hardware: 4 x H200 ("Tensor Parallel + MTP (FP8 on 4xH200)"; the page: h200 verified)
GLM47_FP8 = """vllm serve zai-org/GLM-4.7-FP8 \\
    --tensor-parallel-size 4 \\
    --speculative-config.method mtp \\
    --speculative-config.num_speculative_tokens 1 \\
    --tool-call-parser glm47 \\
    --reasoning-parser glm45 \\
    --enable-auto-tool-choice
"""

# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/moonshotai/Kimi-K2-Thinking.yaml#L125-L131
# hardware: 8 x H200 ("Low-Latency Scenarios (TP8)"; the page: h200 verified)
KIMI_K2_THINKING = """vllm serve moonshotai/Kimi-K2-Thinking \\
  --tensor-parallel-size 8 \\
  --enable-auto-tool-choice \\
  --tool-call-parser kimi_k2 \\
  --reasoning-parser kimi_k2 \\
  --trust-remote-code
"""

# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/multi_node/internal_dp/config/DeepSeek-V3.1-BF16.yaml#L21-L41
# hardware: 2 x Atlas A3 (npu_per_node 16); deployment[0], the API node of DP4 × TP8 (environment abridged)
DSV31_BF16 = """export HCCL_BUFFSIZE=2048
export SERVER_PORT=8080
export LOCAL_IP=192.0.0.1
vllm serve unsloth/DeepSeek-V3.1-BF16 \\
  --host 0.0.0.0 \\
  --port $SERVER_PORT \\
  --data-parallel-size 4 \\
  --tensor-parallel-size 8 \\
  --data-parallel-size-local 2 \\
  --data-parallel-address $LOCAL_IP \\
  --data-parallel-rpc-port 13399 \\
  --no-enable-prefix-caching \\
  --max-num-seqs 16 \\
  --max-model-len 8192 \\
  --max-num-batched-tokens 4096 \\
  --enable-expert-parallel \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.95 \\
  --speculative-config '{"num_speculative_tokens": 1, "method":"mtp"}'
"""

# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/multi_node/external_dp/config/Minimax_m2.7_in128k_1k_prefix90_tpot50.yaml#L13-L105
# hardware: 2 x Atlas A3; node 0 (prefill), local DP rank 0 of TP8 × DP2 as external_dp/scripts/runtime.py
# renders it (VISIBLE_DEVICES = the rank's tp devices, external_dp_config.py L420-L428); the
# max-model-len of the page (199608, above MiniMax-M2.7's 196,608 positions) is shortened here
MINIMAX_PREFILL_RANK = """export SERVER_PORT=7100
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export HCCL_OP_EXPANSION_MODE=AIV
export PYTHONHASHSEED=0
export HCCL_BUFFSIZE=1024
vllm serve vllm-ascend/MiniMax-M2.7-w8a8-QuaRot \\
  --host 0.0.0.0 \\
  --port $SERVER_PORT \\
  --data-parallel-size 2 \\
  --data-parallel-rank 0 \\
  --data-parallel-address 192.0.0.1 \\
  --data-parallel-rpc-port 12321 \\
  --tensor-parallel-size 8 \\
  --enable-expert-parallel \\
  --max-model-len 65536 \\
  --max-num-batched-tokens 16384 \\
  --max-num-seqs 24 \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.8 \\
  --quantization ascend \\
  --enforce-eager
"""


def _cuda(text: str, system: str = "hgx-h200"):
    return import_sources([SourceFile("run.sh", text)], engine="vllm", system=system)


def _ascend(text: str):
    return import_sources([SourceFile("run.sh", text)], engine="vllm-ascend", engine_version="v0.23.0",
                          system="atlas-800i-a3")


def _errors(text: str) -> list[tuple[str, str]]:
    return [(d.code.code, d.message) for d in compile_text(text).diagnostics if d.is_error]


def test_dotted_keys_of_a_json_option_are_that_option():
    res = _cuda(GLM47_FP8)
    assert not [d.message for d in res.diagnostics if d.code.code == "SN8001"], res.text
    spec = compile_text(res.text).plan.serve.speculative
    assert (spec.method, spec.draft_tokens) == ("mtp", 1), res.text


def test_dotted_keys_merge_and_type_their_values():
    cmd = ("vllm serve Qwen/Qwen3-32B --compilation-config.cudagraph_mode FULL_DECODE_ONLY "
           "--compilation-config.cudagraph_capture_sizes '[1, 8, 16]' --max-model-len 8192\n")
    res = _cuda(cmd)
    graph = compile_text(res.text).plan.graph
    assert graph.capture_sizes == [1, 8, 16] and graph.cudagraph_mode == "full_decode_only", res.text
    bad = _cuda("vllm serve Qwen/Qwen3-32B --max-model-len.x 1\n")   # no JSON option: still unknown
    assert "SN8001" in [d.code.code for d in bad.diagnostics]


def test_a_dtype_word_in_the_repository_name_is_the_checkpoints_dtype():
    res = _cuda(GLM47_FP8)
    assert compile_text(res.text).plan.model.quant == "fp8", res.text
    assert "`FP8` by its name" in res.text
    assert not _errors(res.text), _errors(res.text)
    bf16 = _ascend(DSV31_BF16)
    assert compile_text(bf16.text).plan.model.quant == "bf16", bf16.text
    assert "SN4002" not in [c for c, _ in _errors(bf16.text)], _errors(bf16.text)
    # the word the catalog model's own checkpoint already is changes nothing; a flag still decides
    plain = _cuda(GLM47_FP8.replace("GLM-4.7-FP8", "GLM-4.7"))
    assert compile_text(plain.text).plan.model.quant in (None, "bf16"), plain.text


def test_native_int4_experts_run_on_hopper():
    res = _cuda(KIMI_K2_THINKING)
    assert "SN4002" not in [c for c, _ in _errors(res.text)], _errors(res.text)


def test_the_mask_of_one_external_dp_server_is_its_ranks_slice():
    res = _ascend(MINIMAX_PREFILL_RANK)
    got = [(d.code.code, d.message) for d in res.diagnostics]
    assert any(c == "SN8008" and "device slice of this one server" in m for c, m in got), got
    assert "ASCEND_RT_VISIBLE_DEVICES" not in res.text.split("env {", 1)[-1], res.text
    assert "SN3007" not in [c for c, _ in _errors(res.text)], _errors(res.text)
    # a mask smaller than the rank's tp × pp is no slice of it: kept, and SN3007 still says so
    short = _ascend(MINIMAX_PREFILL_RANK.replace("=0,1,2,3,4,5,6,7", "=0,1,2,3"))
    assert "SN3007" in [c for c, _ in _errors(short.text)], short.text


def test_the_scripts_own_variables_and_pythonhashseed_are_not_unread():
    res = _ascend(MINIMAX_PREFILL_RANK)
    unread = [d.message for d in res.diagnostics if d.code.code == "SN8002"]
    assert not unread, unread
    typo = _ascend(MINIMAX_PREFILL_RANK.replace("export HCCL_BUFFSIZE=1024", "export HCCL_BUFSIZE=1024"))
    assert any("`HCCL_BUFSIZE`" in d.message for d in typo.diagnostics if d.code.code == "SN8002")

# Qwen3-30B-A3B W4A8 (llm-compressor / compressed-tensors), TP2, NO expert parallelism
# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/single_node/models/configs/Qwen3-30B-A3B-W4A8-llm-compressor.yaml#L6-L42
# transcribed in docs/research/known-good/va-nightly-qwen3-30b-a3b-w4a8-tp2-no-ep.yaml
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export HCCL_BUFFSIZE=1024
export HCCL_OP_EXPANSION_MODE=AIV
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
# SERVER_PORT is set by the vllm-ascend nightly harness (DEFAULT_PORT)
vllm serve vllm-ascend/Qwen3-30B-A3B-Instruct-2507-quantized.w4a8 \
--no-enable-prefix-caching \
--tensor-parallel-size 2 \
--port "$SERVER_PORT" \
--max-model-len 40960 \
--max-num-batched-tokens 16384 \
--max-num-seqs 128 \
--trust-remote-code \
--gpu-memory-utilization 0.8 \
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'

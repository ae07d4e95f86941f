# Qwen3.5-397B-A17B W4A8 + MTP3 on one Atlas 800 A2 (TP8, EP), hybrid linear attention
# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/single_node/models/configs/Qwen3.5-397B-A17B-w4a8-mtp-A2.yaml#L6-L75
# transcribed in docs/research/known-good/va-nightly-qwen3.5-397b-w4a8-mtp-a2.yaml
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_OP_EXPANSION_MODE=AIV
export HCCL_BUFFSIZE=1024
export OMP_NUM_THREADS=1
export TASK_QUEUE_ENABLE=1
# SERVER_PORT is set by the vllm-ascend nightly harness (DEFAULT_PORT)
vllm serve Eco-Tech/Qwen3.5-397B-A17B-w4a8-mtp \
--tensor-parallel-size 8 \
--data-parallel-size 1 \
--enable-expert-parallel \
--port "$SERVER_PORT" \
--max-num-seqs 128 \
--quantization ascend \
--max-model-len 133120 \
--max-num-batched-tokens 16384 \
--trust-remote-code \
--gpu-memory-utilization 0.9 \
--no-enable-prefix-caching \
--additional-config '{"enable_cpu_binding": true, "multistream_overlap_shared_expert": true}' \
--speculative_config '{"method": "qwen3_5_mtp", "num_speculative_tokens": 3, "enforce_eager": true}' \
--compilation-config '{"cudagraph_capture_sizes": [1, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68, 72, 76, 80, 84, 88, 92, 96, 100, 108, 112, 128, 160, 172, 196, 200, 212, 232, 256, 260, 288, 320, 360, 400], "cudagraph_mode": "FULL_DECODE_ONLY"}' \
--allowed-local-media-path / \
--mm-processor-cache-gb 0

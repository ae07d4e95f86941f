# Qwen3-32B W8A8 dense, TP4 on A2, ACL graph
# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/single_node/models/configs/Qwen3-32B-Int8-A2.yaml#L60-L71
# transcribed in docs/research/known-good/va-nightly-qwen3-32b-w8a8-a2.yaml
export TASK_QUEUE_ENABLE=1
export HCCL_OP_EXPANSION_MODE=AIV
export VLLM_ASCEND_ENABLE_FLASHCOMM=1
# SERVER_PORT is set by the vllm-ascend nightly harness (DEFAULT_PORT)
vllm serve vllm-ascend/Qwen3-32B-W8A8 \
--quantization ascend \
--no-enable-prefix-caching \
--tensor-parallel-size 4 \
--port "$SERVER_PORT" \
--max-model-len 40960 \
--max-num-batched-tokens 40960 \
--block-size 128 \
--trust-remote-code \
--reasoning-parser qwen3 \
--gpu-memory-utilization 0.9 \
--additional-config '{"weight_prefetch_config": {"enabled": true}}' \
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [1, 12, 16, 20, 24, 32, 48, 60, 64, 68, 72, 76, 80]}'

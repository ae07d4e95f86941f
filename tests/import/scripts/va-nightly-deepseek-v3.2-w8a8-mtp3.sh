# DeepSeek-V3.2 W8A8 + deepseek_mtp 3, TP8 DP2 EP on one A3 node, 67,000-token context
# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/single_node/models/configs/DeepSeek-V3.2-W8A8.yaml#L6-L80
# transcribed in docs/research/known-good/va-nightly-deepseek-v3.2-w8a8-mtp3.yaml
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export HCCL_OP_EXPANSION_MODE=AIV
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export VLLM_USE_V1=1
export HCCL_BUFFSIZE=256
export ASCEND_AGGREGATE_ENABLE=1
export ASCEND_TRANSPORT_PRINT=1
export ACL_OP_INIT_MODE=1
export ASCEND_A3_ENABLE=1
export VLLM_NIXL_ABORT_REQUEST_TIMEOUT=300000
export TASK_QUEUE_ENABLE=1
export VLLM_ASCEND_ENABLE_MLAPO=1
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1
# SERVER_PORT is set by the vllm-ascend nightly harness (DEFAULT_PORT)
export VLLM_ENGINE_READY_TIMEOUT_S=3000
vllm serve vllm-ascend/DeepSeek-V3.2-W8A8 \
--tensor-parallel-size 8 \
--data-parallel-size 2 \
--port "$SERVER_PORT" \
--seed 1024 \
--max-model-len 67000 \
--max-num-batched-tokens 4096 \
--max-num-seqs 8 \
--trust-remote-code \
--quantization ascend \
--async-scheduling \
--no-enable-prefix-caching \
--enable-expert-parallel \
--gpu-memory-utilization 0.95 \
--compilation-config '{"cudagraph_capture_sizes": [1, 2, 4, 8, 16, 24, 32, 40, 48], "cudagraph_mode": "FULL_DECODE_ONLY"}' \
--speculative-config '{"num_speculative_tokens": 3, "method": "deepseek_mtp"}' \
--reasoning-parser deepseek_v3 \
--tokenizer_mode deepseek_v32

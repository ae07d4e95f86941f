# MiniMax-M2.7 W8A8 (QuaRot) + Eagle3 draft, TP8 DP2 EP on one A3 node
# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/single_node/models/configs/Minimax_m2.7_w8a8_A3.yaml#L73-L86
# transcribed in docs/research/known-good/va-nightly-minimax-m2.7-w8a8-eagle3.yaml
# SERVER_PORT is set by the vllm-ascend nightly harness (DEFAULT_PORT)
export HCCL_OP_EXPANSION_MODE=AIV
export HCCL_BUFFSIZE=1200
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export OMP_NUM_THREADS=1
export LD_PRELOAD="/usr/lib/aarch64-linux-gnu/libjemalloc.so.2:$LD_PRELOAD"
export TASK_QUEUE_ENABLE=1
vllm serve vllm-ascend/MiniMax-M2.7-w8a8-QuaRot \
--port "$SERVER_PORT" \
--host 0.0.0.0 \
--tensor-parallel-size 8 \
--data-parallel-size 2 \
--enable-expert-parallel \
--async-scheduling \
--max-num-seqs 128 \
--safetensors-load-strategy prefetch \
--max-num-batched-tokens 16384 \
--trust-remote-code \
--quantization ascend \
--enable-auto-tool-choice \
--tool-call-parser minimax_m2 \
--speculative-config '{"method": "eagle3", "model": "Eco-Tech/MiniMax-M2.7-eagle-model-short", "num_speculative_tokens": 3}' \
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \
--additional-config '{"enable_cpu_binding": true, "enable_npugraph_ex": true, "enable_static_kernel": true, "enable_fused_mc2": true, "weight_nz_mode": true, "enable_flashcomm1": true}' \
--max-model-len 70000 \
--gpu-memory-utilization 0.8 \
--no-enable-prefix-caching

# Kimi-K2-Thinking (native INT4 experts in a BF16 checkpoint), TP16 EP on one A3 node
# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/single_node/models/configs/Kimi-K2-Thinking.yaml#L6-L53
# transcribed in docs/research/known-good/va-nightly-kimi-k2-thinking-tp16.yaml
export HCCL_BUFFSIZE=1024
export TASK_QUEUE_ENABLE=1
export OMP_PROC_BIND=false
export HCCL_OP_EXPANSION_MODE=AIV
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
# SERVER_PORT is set by the vllm-ascend nightly harness (DEFAULT_PORT)
vllm serve moonshotai/Kimi-K2-Thinking \
--tensor-parallel-size 16 \
--port "$SERVER_PORT" \
--max-model-len 8192 \
--max-num-batched-tokens 8192 \
--max-num-seqs 12 \
--gpu-memory-utilization 0.9 \
--trust-remote-code \
--enable-expert-parallel \
--no-enable-prefix-caching

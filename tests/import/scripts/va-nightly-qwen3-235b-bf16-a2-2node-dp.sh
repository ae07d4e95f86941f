# Qwen3-235B-A22B BF16 over 2 Atlas 800 A2 nodes, TP8 DP2 EP (internal DP, headless second node)
# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/multi_node/internal_dp/config/Qwen3-235B-A22B-A2.yaml
# transcribed in docs/research/known-good/va-nightly-qwen3-235b-bf16-a2-2node-dp.yaml
export VLLM_USE_MODELSCOPE=true
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export HCCL_BUFFSIZE=1024
export SERVER_PORT=8080
export NUMEXPR_MAX_THREADS=128
export TASK_QUEUE_ENABLE=1
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
vllm serve Qwen/Qwen3-235B-A22B \
--host 0.0.0.0 \
--port "$SERVER_PORT" \
--data-parallel-size 2 \
--data-parallel-size-local 1 \
--data-parallel-address "$LOCAL_IP" \
--data-parallel-rpc-port 13389 \
--tensor-parallel-size 8 \
--seed 1024 \
--enable-expert-parallel \
--max-num-seqs 128 \
--max-model-len 40960 \
--max-num-batched-tokens 2048 \
--trust-remote-code \
--gpu-memory-utilization 0.9

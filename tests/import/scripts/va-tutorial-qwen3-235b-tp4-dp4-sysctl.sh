# vllm-ascend tutorial: Qwen3-235B-A22B TP4 DP4 on one A3 node; non-engine lines (echo | tee, sysctl) and LD_PRELOAD=...:$LD_PRELOAD among the exports
# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/models/Qwen3-235B-A22B.md#L763-L800
# transcribed in docs/research/import-sources/va-tutorial-qwen3-235b-tp4-dp4-sysctl.yaml
export HCCL_IF_IP='<node_ip>'
export GLOO_SOCKET_IFNAME='<ifname>'
export TP_SOCKET_IFNAME='<ifname>'
export HCCL_SOCKET_IFNAME='<ifname>'
export HCCL_OP_EXPANSION_MODE=AIV
export HCCL_BUFFSIZE=1024
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export OMP_NUM_THREADS=1
export LD_PRELOAD="/usr/lib/aarch64-linux-gnu/libjemalloc.so.2:$LD_PRELOAD"
export TASK_QUEUE_ENABLE=1
vllm serve your_model_path \
--served-model-name qwen3 \
--host '<host_ip>' \
--port '<port>' \
--async-scheduling \
--tensor-parallel-size 4 \
--data-parallel-size 4 \
--data-parallel-size-local 4 \
--data-parallel-start-rank 0 \
--data-parallel-address '<node_ip>' \
--data-parallel-rpc-port '<rpc_port>' \
--enable-expert-parallel \
--max-num-seqs 128 \
--max-model-len 32768 \
--max-num-batched-tokens 16384 \
--gpu-memory-utilization 0.9 \
--trust-remote-code \
--quantization ascend \
--no-enable-prefix-caching \
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \
--additional-config '{"enable_cpu_binding":true, "enable_flashcomm1": true, "enable_fused_mc2": 1}'

# GLM-4.7 W8A8 (float MTP) + MTP3, TP8 DP2 EP on one A3 node
# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/single_node/models/configs/GLM-4.7.yaml#L57-L67
# transcribed in docs/research/known-good/va-nightly-glm-4.7-w8a8-mtp3.yaml
export HCCL_BUFFSIZE=512
# SERVER_PORT is set by the vllm-ascend nightly harness (DEFAULT_PORT)
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_OP_EXPANSION_MODE=AIV
export VLLM_ASCEND_BALANCE_SCHEDULING=1
export VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE=1
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1
export VLLM_ASCEND_ENABLE_FUSED_MC2=1
vllm serve Eco-Tech/GLM-4.7-W8A8-floatmtp \
--enable-expert-parallel \
--tensor-parallel-size 8 \
--data-parallel-size 2 \
--port "$SERVER_PORT" \
--max-model-len 8192 \
--max-num-batched-tokens 8192 \
--max-num-seqs 16 \
--quantization ascend \
--trust-remote-code \
--gpu-memory-utilization 0.9 \
--speculative-config '{"num_speculative_tokens": 3, "method": "mtp"}' \
--additional-config '{"enable_shared_expert_dp": true, "ascend_fusion_config": {"fusion_ops_gmmswigluquant": false}}' \
--compilation-config '{"cudagraph_capture_sizes": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512], "cudagraph_mode": "FULL_DECODE_ONLY"}'

# vllm-ascend tutorial: Qwen3-32B W8A8 TP4 on an A2/A3 node, ASCEND_RT_VISIBLE_DEVICES=0,1,2,3, placeholders your_model_path and --port <port>
# source: https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/tutorials/models/Qwen3-Dense.md#L251-L268
# transcribed in docs/research/import-sources/va-tutorial-qwen3-32b-w8a8-tp4-placeholders.yaml
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export HCCL_OP_EXPANSION_MODE=AIV
vllm serve your_model_path \
--served-model-name qwen3 \
--trust-remote-code \
--async-scheduling \
--quantization ascend \
--distributed-executor-backend mp \
--tensor-parallel-size 4 \
--max-model-len 5500 \
--max-num-batched-tokens 40960 \
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \
--port '<port>' \
--gpu-memory-utilization 0.9 \
--additional-config '{"enable_flashcomm1": true}'

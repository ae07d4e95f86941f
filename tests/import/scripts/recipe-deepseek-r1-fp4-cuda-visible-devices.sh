# vLLM recipe: export VLLM_USE_FLASHINFER_MOE_FP4=1 in one block, then CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve … -–data-parallel-size 4 in the next
# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/deepseek-ai/DeepSeek-R1.yaml#L168-L187
# transcribed in docs/research/import-sources/recipe-deepseek-r1-fp4-cuda-visible-devices.yaml
export VLLM_USE_FLASHINFER_MOE_FP4=1
export VLLM_USE_FLASHINFER_MOE_FP8=1
CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve nvidia/DeepSeek-R1-FP4 \
--trust-remote-code \
--tensor-parallel-size 4 \
--enable-expert-parallel

# vLLM recipe: inline env before vllm serve (VLLM_ALLOW_LONG_MAX_MODEL_LEN=1) and a nested JSON --hf-overrides
# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/Qwen/Qwen3.5-397B-A17B.yaml#L240-L244
# transcribed in docs/research/import-sources/recipe-qwen3.5-yarn-inline-env.yaml
VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve Qwen/Qwen3.5-397B-A17B-FP8 \
--tensor-parallel-size 8 \
--max-model-len 1010000 \
--reasoning-parser qwen3 \
--hf-overrides '{"text_config": {"rope_parameters": {"mrope_interleaved": true, "mrope_section": [11, 11, 10], "rope_type": "yarn", "rope_theta": 10000000, "partial_rotary_factor": 0.25, "factor": 4.0, "original_max_position_embeddings": 262144}}}'

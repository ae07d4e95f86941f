# vLLM recipe: Kimi-K2-Instruct DP16 + EP over 2 nodes (node 1 --headless --data-parallel-start-rank 8), $MASTER_IP / $PORT variables
# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/models/moonshotai/Kimi-K2-Instruct.yaml#L174-L188
# transcribed in docs/research/import-sources/recipe-kimi-k2-dp16-2node.yaml
vllm serve moonshotai/Kimi-K2-Instruct \
--headless \
--data-parallel-start-rank 8 \
--port 8000 \
--served-model-name kimi-k2 \
--trust-remote-code \
--data-parallel-size 16 \
--data-parallel-size-local 8 \
--data-parallel-address "$MASTER_IP" \
--data-parallel-rpc-port "$PORT" \
--enable-expert-parallel \
--max-num-batched-tokens 8192 \
--max-num-seqs 256 \
--gpu-memory-utilization 0.85 \
--enable-auto-tool-choice \
--tool-call-parser kimi_k2

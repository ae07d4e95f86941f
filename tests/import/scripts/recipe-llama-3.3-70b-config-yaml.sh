# vLLM recipe: Llama-3.3-70B launch_server.sh choosing DTYPE and a YAML --config by compute capability; the YAML config file
# source: https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/Llama/Llama3.3-70B.md#L90-L109
# transcribed in docs/research/import-sources/recipe-llama-3.3-70b-config-yaml.yaml
if [ $COMPUTE_CAPABILITY = 10.0 ]; then
DTYPE=FP4
YAML_CONFIG=Llama3.3_Blackwell.yaml
else
DTYPE=FP8
YAML_CONFIG=Llama3.3_Hopper.yaml
fi
vllm serve "nvidia/Llama-3.3-70B-Instruct-$DTYPE" \
--config "${YAML_CONFIG}" \
--tensor-parallel-size 1 &

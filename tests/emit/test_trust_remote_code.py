"""`--trust-remote-code` where the checkpoint runs its own code (Kimi K2's tokenizer: vLLM's recipes
docs.vllm.ai/projects/recipes moonshotai/Kimi-K2 and Kimi-K2.5 start every server with it), on every
server and on the benchmark client, which loads the same tokenizer; nowhere else."""
from __future__ import annotations

from expect import ROOT, outputs_of, role_yaml

KIMI = (ROOT / "examples" / "trillion-supernode-128.sn").read_text(encoding="utf-8")
V4 = (ROOT / "examples" / "deepseek-v4-flash-a3-64.sn").read_text(encoding="utf-8")


def test_kimi_k2_servers_and_benchmark_trust_the_checkpoint_code():
    files = outputs_of(KIMI)
    assert role_yaml(files, "serve")["trust-remote-code"] is True
    assert "--trust-remote-code" in files["bench.sh"]


def test_a_model_vllm_implements_gets_no_remote_code():
    files = outputs_of(V4)
    assert not [name for name, text in files.items() if "trust-remote-code" in text]

"""SN3027: on vllm-ascend's Mooncake P/D connector the decode side reads the prefill side's KV layout
with its own speculative setting.  A hybrid linear-attention model's Mamba state is fetched from block
``len(remote blocks) - num_speculative_tokens - 1`` (mooncake_connector.py@v0.23.0 L867), so P and D
must draft the same number of tokens; a decode that drafts also pulls the draft layers' KV
(``num_draft_layers``, L539-551, L820-824), which a prefill without speculation never fills.

Report: https://github.com/vllm-project/vllm-ascend/issues/16160 (Qwen3.5-397B-A17B P/D tutorial:
prefill ``num_speculative_tokens`` 1, decode 3; fixed by vllm-ascend#16622).  The rule is the one
vllm-ascend documents from v0.23.0 (docs/source/user_guide/feature_guide/speculative_decoding.md,
added by vllm-ascend#12104)."""

from __future__ import annotations

import pytest

from expect import compile_text

HYBRID = '''plan "qwen3.5-pd-mtp" {
  model "qwen3.5-397b-a17b" { quant = w8a8  max_model_len = 32k }
  hardware { system = "atlas-800i-a3"  nodes = 2  cann = "9.1.0" }
  engine "vllm-ascend" { version = "VERSION" }
  prefill { devices = 16  tp = 4  ep = 4  max_num_seqs = 16  max_num_batched_tokens = 16k  chunked_prefill = 16k
            speculative { PSPEC } }
  decode  { devices = 16  tp = 4  ep = 4  max_num_seqs = 32  max_num_batched_tokens = 256
            speculative { draft_tokens = 3 } }
  speculative { method = mtp  acceptance = 0.8 }
  kv_transfer { connector = CONN }
  workload { requests = 200  concurrency = 32  input { mean = 8k  max = 16k }  output { mean = 1k  max = 4k } }
}
'''

DENSE_ATTN = '''plan "dsv4-flash-pd-mtp" {
  model "deepseek-v4-flash" { weights = "Eco-Tech/DeepSeek-V4-Flash-w8a8-mtp"  quant = w8a8  max_model_len = 64k }
  hardware { system = "atlas-800i-a3"  nodes = 2  cann = "9.1.0" }
  engine "vllm-ascend" { version = "v0.23.0" }
  prefill { devices = 16  tp = 4  ep = 4  max_num_seqs = 16  max_num_batched_tokens = 8192  chunked_prefill = 8k
            speculative { PSPEC } }
  decode  { devices = 16  tp = 1  ep = 16  max_num_seqs = 16  max_num_batched_tokens = 64
            speculative { draft_tokens = 3 } }
  speculative { method = mtp  acceptance = 0.8 }
  kv_transfer { connector = mooncake }
  workload { requests = 200  concurrency = 16  input { mean = 3500  max = 3500 }  output { mean = 1500  max = 1500 } }
}
'''


def _sn3027(text: str):
    return [d for d in compile_text(text).diagnostics if d.code.code == "SN3027"]


def _hybrid(pspec: str, version: str = "v0.23.0", conn: str = "mooncake") -> str:
    return HYBRID.replace("PSPEC", pspec).replace("VERSION", version).replace("CONN", conn)


def test_va16160_hybrid_model_drafts_differently_on_prefill_and_decode():
    (d,) = _sn3027(_hybrid("draft_tokens = 1"))
    assert d.is_error
    assert "prefill drafts 1" in d.message and "decode 3" in d.message and "Mamba" in d.message
    assert d.path == ("prefill", "speculative", "draft_tokens")
    assert any("16160" in n or "mooncake_connector.py" in n for n in d.notes)


def test_va16160_corrected_twin_drafts_the_same_on_both():
    assert _sn3027(_hybrid("draft_tokens = 3")) == []


def test_hybrid_prefill_without_speculation_counts_zero():
    (d,) = _sn3027(_hybrid("method = none"))
    assert "prefill drafts 0" in d.message


@pytest.mark.parametrize("version", ["v0.18.0", "v0.11.0"])
def test_releases_before_the_mamba_transfer_are_not_judged(version):
    assert _sn3027(_hybrid("draft_tokens = 1", version=version)) == []


def test_other_connectors_are_not_judged():
    assert _sn3027(_hybrid("draft_tokens = 1", conn="llmdatadist")) == []


def test_decode_draft_layers_need_a_drafting_prefill():
    (d,) = _sn3027(DENSE_ATTN.replace("PSPEC", "method = none"))
    assert d.is_error and "draft layer" in d.message
    assert d.path == ("prefill", "speculative", "method")


def test_non_hybrid_one_draft_on_prefill_more_on_decode_passes():
    """The vllm-ascend v0.23.0 nightly configs (DeepSeek-V4-Flash, Kimi-K2.6) draft 1 on P and 3 or 15 on D."""
    assert _sn3027(DENSE_ATTN.replace("PSPEC", "draft_tokens = 1")) == []

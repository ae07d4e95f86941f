"""SN4008 (`max_num_seqs` full-context sequences overflow the KV cache) on the seed plan.

Source: seed 000 (DeepSeek-R1 W8A8, 7P1D on an Atlas 900 A3 SuperPoD, 608 QPM, TTFT 1.93 s,
TPOT 47 ms), written as ``examples/deepseek-r1-a3-7p1d.sn``.  Its decode instance is one DP
rank per device (TP 1 x EP 64) with ``max_num_seqs = 48`` and a 48k context (16k input + 32k
output).  sncc's memory model (sncc/capacity.py) gives each device 57.60 GiB (64 GiB x 0.9);
weights 32.04 GiB, the Omni-Infer reserve fitted to this very run 10.34 GiB and the HCCL
buffers 1.86 GiB leave 13.36 GiB of KV cache.  The seed writes ``kv_cache.dtype = int8``, which
Omni-Infer release_v0.3.0 reads nowhere (SN4041): its servers run the model's BF16 KV cache, so
memory is sized with BF16 (``Facts.kv_dtype_run``), and OmniAttn (``optimize { omni_attn }``)
gives the full layers 1.73x the tokens of a uniform pool (``RoleFacts.omni_attn``, Omni-Infer
kv_cache_interface.py): 1.86 GiB per full-context sequence, 7 fit, 48 need 89.39 GiB (the reserve is fitted by bench/calibration.py with the profile constants,
memory.toml [reserve.omni-infer]).  The warning is true of the seed's settings (the engine starts and preempts
when long requests coincide; vLLM prints the same figure as "maximum concurrency" at start-up).

The failing plan is the seed; the corrected twin sets ``max_num_seqs`` to the 7 the help names.
Before the fix the twin warned too: with a fitted reserve the rule fired whenever one sequence
fitted, whatever the KV pool held.
"""

from __future__ import annotations

from expect import ROOT

SEED = (ROOT / "examples" / "deepseek-r1-a3-7p1d.sn").read_text(encoding="utf-8")


def _sn4008(max_num_seqs: int):
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    text = SEED.replace("max_num_seqs = 48", f"max_num_seqs = {max_num_seqs}")
    assert f"max_num_seqs = {max_num_seqs}" in text
    comp = compile_file(SourceFile("seed.sn", text))
    assert comp.plan is not None and not comp.has_errors
    return [d for d in comp.diagnostics if d.code.code == "SN4008"]


def test_seed_decode_overcommits_its_kv_cache():
    (d,) = _sn4008(48)
    assert d.path == ("decode", "max_num_seqs")
    assert "48 sequences at 48k tokens need 89.39 GiB" in d.message and "13.36 GiB is left" in d.message
    assert "max_num_seqs ≤ 7" in d.help
    assert any("KV 1.86 GiB per sequence" in n for n in d.notes)
    assert any("fitted to seed 000" in n for n in d.notes)


def test_corrected_twin_with_the_sequences_that_fit_is_clean():
    assert _sn4008(7) == []
    assert _sn4008(6) == []


def test_one_sequence_over_the_fit_warns():
    (d,) = _sn4008(8)
    assert "8 sequences" in d.message


def test_memory_uses_the_kv_dtype_the_engine_runs():
    """The seed's int8 is ignored by Omni-Infer release_v0.3.0 (SN4041): check and simulator size BF16
    KV; the same plan on vllm-ascend v0.11.0 (which runs INT8 KV, C8) keeps the int8 size."""
    from sncc.capacity import role_memory
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    comp = compile_file(SourceFile("seed.sn", SEED))
    f = comp.resolved
    assert (f.kv_dtype, f.kv_dtype_run) == ("int8", "bf16") and "SN4041" in f.kv_dtype_run_note
    mem = role_memory(comp.plan, f, "decode")
    from sncc.engines.registry import adapter_for

    assert adapter_for("vllm-ascend").kv_dtype_run("int8") == ("int8", "")
    from sncc.catalog import arch as catalog_arch

    # BF16 bytes per token, over OmniAttn's full-layer gain (the seed writes optimize { omni_attn })
    gain = f.roles["decode"].omni_attn.full_layer_token_gain
    assert mem.kv_per_token == catalog_arch.kv_bytes_per_token(f.arch, "bf16") / gain

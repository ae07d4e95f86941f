"""OmniAttn's KV layout as a role fact (Omni-Infer release_v0.3.0
``omni/accelerators/cache/kv_cache_interface.py``: SINK = 1 and RECENT = 3 blocks kept by each of
the 30 compressed layers of the 62-entry PATTERN, BETA = 0.2), read by the memory model and the
step cost alike."""

from __future__ import annotations

import os

import pytest

from expect import compile_text

from sncc.capacity import role_memory
from sncc.catalog.arch import kv_bytes_per_token_per_device

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = os.path.join(ROOT, "examples", "deepseek-r1-a3-7p1d.sn")


def _seed():
    with open(SEED, encoding="utf-8") as fh:
        return compile_text(fh.read())


def test_runs_on_the_kv_consumer_with_the_release_layout():
    comp = _seed()
    dec, pre = comp.facts.roles["decode"], comp.facts.roles["prefill"]
    assert pre.omni_attn is None                      # a KV producer keeps every layer whole
    lay = dec.omni_attn
    assert (lay.compressed_layers, lay.layers, lay.sink_blocks, lay.recent_blocks) == (30, 62, 1, 3)
    assert lay.kept_tokens(128) == 512
    # full layers get num_blocks x (1 + (1 - 0.2) x 30 / (32 + 1)) blocks
    assert lay.full_layer_token_gain == pytest.approx(1 + 0.8 * 30 / 33)
    assert "omni_attn" in dec.notes


def test_memory_model_counts_the_full_layers_gain():
    comp = _seed()
    f = comp.facts
    mem = role_memory(comp.plan, f, "decode")
    base = kv_bytes_per_token_per_device(f.arch, f.kv_dtype_run, f.roles["decode"].tp, include_mtp=False)
    assert mem.kv_per_token == pytest.approx(base / f.roles["decode"].omni_attn.full_layer_token_gain)
    pre = role_memory(comp.plan, f, "prefill")
    assert pre.kv_per_token == pytest.approx(kv_bytes_per_token_per_device(f.arch, f.kv_dtype_run,
                                                                           f.roles["prefill"].tp, include_mtp=False))


def test_no_layout_without_the_block():
    with open(SEED, encoding="utf-8") as fh:
        text = fh.read()
    start = text.index("omni_attn")
    end = text.index("}", start) + 1
    comp = compile_text(text[:start] + text[end:])
    assert all(rf.omni_attn is None for rf in comp.facts.roles.values())

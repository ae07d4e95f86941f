"""break4 report: a role key written in another block got a misleading hint.  A user who reads
`optimize { prefix_cache_hit }` and the role key `prefix_caching` in the README writes
`optimize { prefix_cache_hit = 50%  prefix_caching = true }` and was told "did you mean
`prefix_cache_hit`?", the key already beside it; vLLM's spelling `enable_prefix_caching` in a
role was only a fuzzy match, and in `optimize` a bare list of known keys.  A key of another block
now names the blocks it belongs in, and vLLM's `enable_prefix_caching` (vLLM engine arguments,
https://github.com/vllm-project/vllm/blob/v0.11.0/vllm/engine/arg_utils.py) is an alias of
`prefix_caching`."""

from __future__ import annotations

import pytest

from expect import compile_text

PLAN = '''plan "llama" {
  model "llama-3.1-70b" { weights = "/data/models/Llama-3.1-70B-Instruct"  quant = bf16 }
  hardware { system = "hgx-h100"  nodes = 1 }
  engine "vllm" { version = "0.23.0" }
  serve { instances = 2  devices = 4  tp = 4  chunked_prefill = 8k  ROLE }
  optimize { prefix_cache_hit = 50%  OPTIMIZE }
  workload { input { mean = 1k  max = 8k }  output { mean = 256  max = 1k } }
}
'''


def _sn2001(role: str = "max_num_seqs = 32", optimize: str = "") -> list:
    text = PLAN.replace("ROLE", role).replace("  OPTIMIZE", f"  {optimize}" if optimize else "")
    return [d for d in compile_text(text).diagnostics if d.code.code == "SN2001"]


def test_the_plan_is_clean():
    assert not [d for d in compile_text(PLAN.replace("ROLE", "max_num_seqs = 32").replace("  OPTIMIZE", "")).diagnostics
                if d.is_error]


def test_a_role_key_in_optimize_names_the_role_blocks():
    (d,) = _sn2001(optimize="prefix_caching = true")
    assert d.message == "unknown key `prefix_caching` in `optimize`"
    assert d.help.startswith("`prefix_caching` is a key of `prefill`, `decode` and `serve`"), d.help
    assert not d.fixes   # renaming it to `prefix_cache_hit` would change its meaning


@pytest.mark.parametrize("block, key", [("optimize", "chunked_prefill = 8k"), ("optimize", "nodes = 2")])
def test_other_keys_of_another_block_name_their_block(block, key):
    (d,) = _sn2001(optimize=key)
    name = key.split()[0]
    where = {"chunked_prefill": "`prefill`, `decode` and `serve`", "nodes": "`hardware`"}[name]
    assert d.help.startswith(f"`{name}` is a key of {where}"), d.help


@pytest.mark.parametrize("where", ["role", "optimize"])
def test_vllm_enable_prefix_caching_is_prefix_caching(where):
    (d,) = _sn2001(role="enable_prefix_caching = false") if where == "role" else _sn2001(optimize="enable_prefix_caching = false")
    if where == "role":
        assert d.help.startswith("vLLM's `enable_prefix_caching` is `prefix_caching` here"), d.help
        assert [e.new_text for f in d.fixes for e in f.edits] == ["prefix_caching"]
    else:
        assert d.help.startswith("vLLM's `enable_prefix_caching` is `prefix_caching` in a `prefill`, `decode` or `serve` block"), d.help

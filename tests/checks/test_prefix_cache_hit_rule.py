"""SN5023: `optimize { prefix_cache_hit > 0 }` credits prompt tokens served from the prefix cache,
which a role that computes prompts with prefix caching off cannot have.

Source: vLLM docs, "Automatic Prefix Caching"
(https://docs.vllm.ai/en/latest/features/automatic_prefix_caching/): APC reuses the KV cache of a
shared prefix so that a new request skips computing it, and it is what `enable_prefix_caching`
switches.  Omni-Infer release_v0.3.0 runs OmniAttn's KV consumers with its own cache manager, which
turns prefix caching off whatever the flag says
(https://github.com/omni-ai-npu/omni-infer/blob/release_v0.3.0/omni/accelerators/cache/kv_cache_manager.py,
OmniKVCacheManager.__init__)."""

from __future__ import annotations

import pytest

from expect import ROOT, compile_text

BROKEN = (ROOT / "examples" / "broken" / "prefix-cache-hit-without-prefix-caching.sn").read_text(encoding="utf-8")
FIXED = (ROOT / "tests" / "cases" / "fixed" / "prefix-cache-hit-without-prefix-caching.sn").read_text(encoding="utf-8")
PD = (ROOT / "tests" / "golden" / "vllm-h100-qwen3-pd" / "plan.sn").read_text(encoding="utf-8")
OMNI_SERVE = """plan "r1-omni-serve" {
  model "deepseek-r1" { quant = w8a8  max_model_len = 16k }
  hardware { system = "atlas-900-a3-superpod"  nodes = 2 }
  engine "omni-infer" {}
  serve { devices = 32  tp = 8  ep = 4  max_num_seqs = 16  chunked_prefill = 8k }
  optimize { prefix_cache_hit = 0.5OMNI_ATTN }
  workload { input { mean = 1k  max = 4k }  output { mean = 1k  max = 4k } }
}
"""


def _sn5023(text: str):
    return [d for d in compile_text(text).diagnostics if d.code.code == "SN5023"]


def test_off_with_cache_hits_is_an_error_at_the_hit_value():
    (d,) = _sn5023(BROKEN)
    assert d.is_error
    start = BROKEN.index("prefix_cache_hit = ") + len("prefix_cache_hit = ")
    assert (d.span.start, d.span.end) == (start, start + len("50%"))
    assert d.path == ("optimize", "prefix_cache_hit")
    assert "`serve`" in d.message and "prefix caching off" in d.message
    assert "prefix_caching = true" in d.help and "prefix_cache_hit = 0" in d.help
    role_key = BROKEN.index("prefix_caching = false") + len("prefix_caching = ")
    assert [r.span.start for r in d.related] == [role_key]


def test_the_corrected_twin_is_clean():
    assert _sn5023(FIXED) == []
    assert not [d for d in compile_text(FIXED).diagnostics if d.is_error]


@pytest.mark.parametrize("switch", ["", "    prefix_caching = true\n"])
def test_on_or_the_engine_default_is_no_contradiction(switch):
    assert _sn5023(BROKEN.replace("    prefix_caching = false\n", switch)) == []


def test_no_hits_no_error():
    assert _sn5023(BROKEN.replace("prefix_cache_hit = 50%", "prefix_cache_hit = 0")) == []


def test_a_decode_role_never_prefills_so_its_switch_is_free():
    """In P/D the prefill role computes the prompts: a decode role without prefix caching (as P/D
    decode configs often run) takes no cache hit of the simulator's."""
    pd = PD.replace("  workload {", "  optimize { prefix_cache_hit = 0.5 }\n  workload {", 1)
    assert _sn5023(pd.replace("decode { devices", "decode { prefix_caching = false  devices", 1)) == []
    assert len(_sn5023(pd.replace("prefill { devices", "prefill { prefix_caching = false  devices", 1))) == 1


def test_omni_attn_turns_prefix_caching_off_on_a_serve_role():
    assert _sn5023(OMNI_SERVE.replace("OMNI_ATTN", "")) == []
    (d,) = _sn5023(OMNI_SERVE.replace("OMNI_ATTN", "  omni_attn {}"))
    assert "OmniAttn" in d.message and "omni_attn" in d.help
    assert any("kv_cache_manager.py" in n for n in d.notes)


def test_the_effective_switch_is_a_role_fact():
    f = compile_text(BROKEN).facts
    assert f.roles["serve"].prefix_caching is False and "serve.prefix_caching = false" in f.roles["serve"].notes["prefix_caching"]
    f = compile_text(FIXED.replace("    prefix_caching = true\n", "")).facts
    assert f.roles["serve"].prefix_caching is True and "engine default" in f.roles["serve"].notes["prefix_caching"]
    f = compile_text(OMNI_SERVE.replace("OMNI_ATTN", "  omni_attn {}")).facts
    assert f.roles["serve"].prefix_caching is False


def test_the_simulator_reads_the_fact_not_the_plan():
    """With prefix caching off on the role that computes prompts, the simulator credits no hits."""
    from sncc.cost.from_facts import features

    comp = compile_text(FIXED)
    assert features(comp.plan, comp.facts, set()).prefix_cache_hit_rate == 0.5
    comp = compile_text(BROKEN)
    assert features(comp.plan, comp.facts, set()).prefix_cache_hit_rate == 0.0


def test_a_search_candidate_keeps_the_role_s_switch():
    """`sncc search` varies the layout, not the switch: each candidate role keeps `prefix_caching`."""
    from sncc.search.candidate import Candidate, RoleChoice, candidate_facts, candidate_plan
    from sncc.search.space import Layout

    comp = compile_text(BROKEN)
    cand = Candidate("aggregated", (RoleChoice(Layout("serve", 8, 1, 1, False, 8192, 8192, False), 1, 32),))
    p2 = candidate_plan(comp.plan, cand, moe=False)
    assert p2.serve.prefix_caching is False
    assert candidate_facts(p2, comp.facts).roles_without_prefix_cache() == ("serve",)

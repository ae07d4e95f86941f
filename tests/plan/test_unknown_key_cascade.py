"""A wrong key name does not cascade: vLLM's `tensor_parallel_size` is SN2001 naming `tp`
(an alias table of engine spellings, sncc/plan/data/engine_aliases.toml), and no check reasons
from the default of a key the builder rejected (`tp` = 1 gave "1 × 1 × 1 = 1" and a
631 GiB memory error); `tp = 0` reports the 0 the user wrote."""

from __future__ import annotations

import pytest

from tests_helpers import compile_plan

M = '''plan "m" {
  model "qwen3-32b" {}
  hardware { system = "hgx-h100"  nodes = 1 }
  engine "vllm" {}
  serve { devices = 8  ROLE }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''


def _errors(role: str):
    text = M.replace("ROLE", role)
    diags = compile_plan(text).diagnostics
    return text, diags, [d for d in diags if d.is_error]


def test_plan_m_is_clean():
    _, _, errors = _errors("tp = 8")
    assert not errors, [(d.code.code, d.message) for d in errors]


def test_engine_spelling_names_the_sncc_key_and_stops_there():
    text, diags, errors = _errors("tensor_parallel_size = 8")
    assert [d.code.code for d in errors] == ["SN2001"], [(d.code.code, d.message) for d in diags]
    (d,) = errors
    assert "vLLM's `tensor_parallel_size` is `tp` here" in d.help
    assert [e.new_text for f in d.fixes for e in f.edits] == ["tp"]
    assert d.span.start == text.index("tensor_parallel_size")


@pytest.mark.parametrize("key", ["tensor-parallel-size", "tp_size"])
def test_other_spellings(key):
    _, diags, errors = _errors(f"{key} = 8")
    assert [d.code.code for d in errors] == ["SN2001"], [(d.code.code, d.message) for d in diags]
    assert "`tp`" in errors[0].help


def test_alias_for_another_block_says_where():
    _, diags, errors = _errors("tp = 8  kv_cache_dtype = fp8")
    assert [d.code.code for d in errors] == ["SN2001"], [(d.code.code, d.message) for d in diags]
    assert "`dtype` in `kv_cache { }`" in errors[0].help


def test_zero_is_reported_as_written_without_cascade():
    text, diags, errors = _errors("tp = 0")
    assert [d.code.code for d in errors] == ["SN2009"], [(d.code.code, d.message) for d in diags]
    assert "found `0`" in errors[0].message
    assert errors[0].span.start == text.index("0  }") if "0  }" in text else True


def test_misspelt_key_does_not_fire_checks_on_its_default():
    """`max_num_seq` (typo) leaves max_num_seqs at 256; checks about it must stay quiet."""
    _, base_diags, _ = _errors("tp = 8  max_num_batched_tokens = 128  chunked_prefill = 128")
    assert any("max_num_seqs" in d.message for d in base_diags), "the default 256 > 128 tokens draws a check"
    _, diags, errors = _errors("tp = 8  max_num_batched_tokens = 128  chunked_prefill = 128  max_num_seq = 16")
    assert "SN2001" in [d.code.code for d in errors], [(d.code.code, d.message) for d in diags]
    assert not any("max_num_seqs" in d.message and d.code.code != "SN2001" for d in diags)


def test_alias_table_names_real_keys():
    """Every alias points at a key the plan model has (or, for keys the language is adding,
    at one of its `also` fallbacks), in the block it names."""
    from sncc.plan import model as m
    from sncc.plan.build import _aliases

    blocks = {"role": m.Role, "kv_cache": m.KVCache, "model": m.Model, "speculative": m.Speculative,
              "graph": m.Graph, "kv_transfer": m.KVTransfer}
    every = {f for cls in (m.Role, m.Hardware, m.KVCache, m.Model, m.Speculative, m.Graph, m.KVTransfer)
             for f in cls.model_fields}
    for name, a in _aliases().items():
        fields = blocks[a["block"]].model_fields if a.get("block") else every
        assert any(k in fields for k in [a["key"], *a.get("also", [])]), name


def _facts_probe(text: str) -> list:
    """What a check that reads only the role's facts (not the plan) reports through run_unpoisoned."""
    from sncc.compiler import compile_file
    from sncc.plan.model import run_unpoisoned
    from sncc.source import SourceFile

    comp = compile_file(SourceFile("p.sn", text))

    def check(plan, facts):
        if facts.roles["serve"].max_num_seqs > 128:
            yield "max_num_seqs over 128"

    return run_unpoisoned(check, comp.plan, comp.facts)


def test_facts_derived_from_a_rejected_key_do_not_cascade():
    """Checks read the facts layer (RoleFacts), derived before any check runs: a fact computed
    from a poisoned default is poisoned too."""
    assert _facts_probe(M.replace("ROLE", "tp = 8")) == ["max_num_seqs over 128"]  # the default 256
    assert _facts_probe(M.replace("ROLE", "tp = 8  max_num_seq = 16")) == []
    assert _facts_probe(M.replace("ROLE", "tp = 8  max_num_seqs = 0")) == []

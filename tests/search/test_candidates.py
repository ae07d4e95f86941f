"""Candidates are typed plans derived from one compilation, and pass the checks."""
from __future__ import annotations

from pathlib import Path

from expect import ROOT, compile_text
from sncc.checks import run_checks
from sncc.search.candidate import Candidate, RoleChoice, candidate_facts, candidate_plan
from sncc.search.space import Layout


def _seed():
    return compile_text((ROOT / "examples" / "search" / "deepseek-r1-a3-11-nodes.sn").read_text(),
                        str(ROOT / "examples" / "search" / "deepseek-r1-a3-11-nodes.sn"))


def test_a_candidate_is_a_model_copy_with_new_roles_and_shared_catalog_facts(monkeypatch):
    comp = _seed()
    plan, facts = comp.plan, comp.facts
    import sncc.syntax.parser as parser
    import sncc.catalog.hf_config as hf

    def no(*a, **k):
        raise AssertionError("a candidate must not parse or read config.json")

    monkeypatch.setattr(parser, "parse", no)
    monkeypatch.setattr(hf, "read_weights_dir", no)
    cand = Candidate("disaggregated", (RoleChoice(Layout("prefill", 4, 4, 1, True, 32768, 16384, False), 3),
                                       RoleChoice(Layout("decode", 4, 32, 1, True, 8192, None, False), 1, 16)))
    p2 = candidate_plan(plan, cand)
    f2 = candidate_facts(p2, facts)
    assert p2.search is None and p2.workload is plan.workload and p2.optimize is plan.optimize
    assert (p2.prefill.instances, p2.prefill.tp, p2.prefill.dp_size, p2.decode.dp_size) == (3, 4, 4, 32)
    assert f2.arch is facts.arch and f2.weight_bytes_per_param is facts.weight_bytes_per_param
    assert f2.roles["decode"].ep_size == 128 and f2.roles["prefill"].devices == 16
    assert plan.prefill.instances == 7                      # the base plan is unchanged
    errors = [d for d in run_checks(p2, f2) if d.is_error]
    assert not errors, [(d.code.code, d.message) for d in errors]


def test_an_aggregated_candidate_from_a_disaggregated_plan_keeps_the_role_settings():
    comp = _seed()
    cand = Candidate("aggregated", (RoleChoice(Layout("serve", 1, 16, 1, True, 8192, 8192, False), 11, 32),))
    p2 = candidate_plan(comp.plan, cand)
    assert p2.prefill is None and p2.decode is None and p2.kv_transfer is None
    assert p2.serve.devices == 16 and p2.serve.instances == 11 and p2.serve.max_num_seqs == 32
    assert p2.serve.expert_parallel is True and p2.disaggregated is False


def test_a_dense_model_gets_no_expert_parallel_key():
    comp = compile_text((Path(__file__).parent / "small_space.sn").read_text(), "small.sn")
    cand = Candidate("aggregated", (RoleChoice(Layout("serve", 2, 2, 1, False, 8192, 8192, False), 2, 32),))
    p2 = candidate_plan(comp.plan, cand, moe=False)
    assert p2.serve.is_default("expert_parallel")
    assert not [d for d in run_checks(p2, candidate_facts(p2, comp.facts)) if d.is_error]


def test_the_base_layout_as_a_candidate_derives_the_facts_its_own_build_derives():
    """The seed's own layout, rebuilt as a search candidate, keeps what depends on the whole plan
    (OmniAttn's layout on the decode role, the all-to-all backend): without them its decode pool
    held 1/1.73 of the tokens, and the search reported 349 QPM where `sncc simulate` said 627."""
    from sncc.search.run import base_candidate

    comp = _seed()
    base = base_candidate(comp.plan, comp.facts)
    f2 = candidate_facts(candidate_plan(comp.plan, base), comp.facts)
    assert comp.facts.roles["decode"].omni_attn is not None
    for name, rf in comp.facts.roles.items():
        got = f2.roles[name]
        assert got.omni_attn == rf.omni_attn, name
        assert got.all2all_backend == rf.all2all_backend, name
        assert (got.devices, got.ep_size, got.redundant_experts) == (rf.devices, rf.ep_size, rf.redundant_experts), name

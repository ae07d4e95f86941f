"""The search space: the dimension table, construction rules and the SN81xx diagnostics."""
from __future__ import annotations

from pathlib import Path

import pytest

from expect import ROOT, compile_text
from sncc.search.space import DIMENSIONS, DIMENSION_BY_NAME, build_space, space_diagnostics

SMALL = (Path(__file__).parent / "small_space.sn").read_text()


def _comp(text: str = SMALL):
    comp = compile_text(text, "small.sn")
    assert comp.plan is not None and not [d for d in comp.diagnostics if d.is_error], comp.diagnostics
    return comp


def test_every_dimension_is_one_entry_with_a_search_key():
    from sncc.plan.model import Search

    names = [d.name for d in DIMENSIONS]
    assert len(names) == len(set(names))
    for d in DIMENSIONS:
        key = "prefill_instances" if d.name == "instances" else d.name
        assert key in Search.model_fields, d.name
        assert d.roles and d.doc


def test_a_tp_that_does_not_divide_the_heads_is_dropped_and_said():
    comp = _comp()
    space = build_space(comp.plan, comp.facts)
    tps = {lay.tp for ls in space.layouts.values() for lay in ls}
    assert tps == {1, 2, 4, 8}                        # 3 does not divide Qwen3-32B's 64 heads
    assert ("tp", 3, "does not divide the 64 attention heads") in space.dropped
    diags = space_diagnostics(comp.plan, comp.facts, space)
    assert [d.code.code for d in diags] == ["SN8102"]
    assert comp.source.text[diags[0].span.start:diags[0].span.end] == "[1, 2, 3, 4, 8]"


def test_layouts_fit_the_budget_and_roles_follow_the_modes():
    comp = _comp(SMALL.replace("devices = 8\n    tp", "devices = 4\n    mode = disaggregated\n    tp"))
    space = build_space(comp.plan, comp.facts)
    assert space.modes == ("disaggregated",) and set(space.layouts) == {"prefill", "decode"}
    assert all(lay.devices <= 4 for ls in space.layouts.values() for lay in ls)
    assert space.batches == (16, 32, 64, 128)


def test_cli_values_override_the_block():
    comp = _comp()
    space = build_space(comp.plan, comp.facts, {"tp": [2], "dp": [1], "max_num_seqs": [8], "mode": "aggregated"})
    assert [(lay.tp, lay.dp) for lay in space.layouts["serve"]] == [(2, 1)]
    assert space.batches == (8,)


def test_defaults_are_powers_of_two_dividing_the_heads_and_the_batch_grid():
    comp = compile_text((ROOT / "examples" / "deepseek-r1-a3-7p1d.sn").read_text(), "seed.sn")
    ctx_space = build_space(comp.plan, comp.facts, {"mode": "disaggregated"})
    tps = sorted({lay.tp for lay in ctx_space.layouts["decode"]})
    assert tps == [1, 2, 4, 8, 16]                    # 128 heads, 16 devices per A3 node
    for lay in ctx_space.layouts["decode"]:           # EP group divides the 256 routed experts
        assert not lay.expert_parallel or 256 % (lay.tp * lay.dp) == 0
    assert DIMENSION_BY_NAME["max_num_seqs"].default(None, "decode")[:4] == [1, 2, 4, 8]


BUDGET = SMALL.replace("  search {\n    devices = 8", "  search {\n    devices = 16")


@pytest.mark.parametrize("bad,good,code", [
    (BUDGET, SMALL, "SN8103"),                         # 16 devices on an 8-device plan
    (SMALL.replace("top = 4", "top = 4\n    speculative = both"), SMALL, "SN8104"),
    (SMALL.replace("tp = [1, 2, 3, 4, 8]", "tp = [3]"), SMALL, "SN8101"),
    # every chunk (the plan's serve chunked_prefill = 8k) above every token budget listed
    (SMALL.replace("top = 4", "top = 4\n    max_num_batched_tokens = [100]"),
     SMALL.replace("top = 4", "top = 4\n    max_num_batched_tokens = [8192]"), "SN8101"),
])
def test_search_errors_and_their_corrected_twins(bad, good, code):
    for text, want in ((bad, code), (good, None)):
        comp = _comp(text)
        pre = space_diagnostics(comp.plan, comp.facts, None)
        if not pre:
            pre = space_diagnostics(comp.plan, comp.facts, build_space(comp.plan, comp.facts))
        errors = [d.code.code for d in pre if d.is_error]
        assert errors == ([want] if want else []), (code, [d.message for d in pre])
        for d in pre:
            assert d.span is not None


def _empty(overrides: dict, text: str = SMALL):
    comp = _comp(text)
    space = build_space(comp.plan, comp.facts, overrides)
    return comp, [d for d in space_diagnostics(comp.plan, comp.facts, space, overrides) if d.code.code == "SN8101"]


def test_a_token_budget_flag_below_every_chunk_says_which_flag_and_rule_emptied_the_space():
    comp, got = _empty({"max_num_batched_tokens": [100], "mode": "aggregated"})
    assert len(got) == 1, got
    d = got[0]
    assert "layout" not in d.message
    assert d.message == ("no `serve` candidate is left: every `chunked_prefill` searched (8192, the plan's `serve` "
                         "value) is larger than every `max_num_batched_tokens` searched (100, from "
                         "--max-num-batched-tokens), and a prefill chunk cannot exceed the step's token budget")
    assert "`--max-num-batched-tokens 8192`" in d.help and "`--chunked-prefill 100`" in d.help
    assert comp.source.text[d.span.start:d.span.end] == "search"          # the flag: at the search block
    assert _empty({"max_num_batched_tokens": [8192], "mode": "aggregated"})[1] == []     # corrected twin


def test_the_token_rule_in_the_block_is_reported_at_the_block_value_in_both_modes():
    comp, got = _empty({}, SMALL.replace("top = 4", "top = 4\n    max_num_batched_tokens = [100, 200]"))
    assert len(got) == 1 and got[0].message.startswith("no `serve` / `prefill` candidate is left")
    assert "(100, 200, the search block's `max_num_batched_tokens`)" in got[0].message
    assert comp.source.text[got[0].span.start:got[0].span.end] == "[100, 200]"


def test_instance_counts_above_the_budget_empty_the_space_and_say_so():
    comp, got = _empty({"serve_instances": [9], "mode": "aggregated", "tp": [1], "dp": [1]})
    assert len(got) == 1
    assert got[0].message == ("no candidate is left: the fewest instances searched need more than the budget of "
                              "8 devices (9 `serve` × 1 device = 9); instance counts from --serve-instances")
    assert _empty({"serve_instances": [8], "mode": "aggregated", "tp": [1], "dp": [1]})[1] == []


def _codes(overrides: dict, text: str = SMALL):
    comp = _comp(text)
    space = build_space(comp.plan, comp.facts, overrides)
    return comp, space_diagnostics(comp.plan, comp.facts, space, overrides)


def test_an_instance_count_that_empties_one_mode_of_both_is_a_warning():
    """User report: `--prefill-instances 100` with `mode = both` skipped disaggregated plans silently
    (with `--mode disaggregated` it is SN8101): the search says which value emptied which mode."""
    _, got = _codes({"prefill_instances": [100], "mode": "both", "tp": [1], "dp": [1]})
    assert [d.code.code for d in got] == ["SN8102"], got
    assert got[0].message == ("`prefill_instances = 100` (from --prefill-instances) is skipped: it needs 100 "
                              "`prefill` × 1 device + 1 `decode` × 1 device = 101 devices at the fewest, more "
                              "than the budget of 8; no disaggregated candidate is left")
    # a count that still leaves candidates of its mode is named, without the mode being emptied
    _, got = _codes({"prefill_instances": [2, 100], "mode": "both", "tp": [1], "dp": [1]})
    assert [d.code.code for d in got] == ["SN8102"] and "no disaggregated" not in got[0].message
    # only the mode searched: the error alone, as before
    _, got = _codes({"prefill_instances": [100], "mode": "disaggregated", "tp": [1], "dp": [1]})
    assert [d.code.code for d in got] == ["SN8101"]
    assert _codes({"prefill_instances": [2], "mode": "both", "tp": [1], "dp": [1]})[1] == []
    # a count the search block lists is reported at its value
    comp, got = _codes({"mode": "both", "tp": [1], "dp": [1]},
                       SMALL.replace("top = 4", "top = 4\n    serve_instances = [20]"))
    assert [d.code.code for d in got] == ["SN8102"] and "no aggregated candidate is left" in got[0].message
    assert comp.source.text[got[0].span.start:got[0].span.end] == "[20]"


PD_SMALL = """\
plan "qwen3-32b-h200-pd" {
  model "qwen3-32b" { weights = "/models/Qwen3-32B"  quant = fp8 }
  hardware { system = "hgx-h200"  devices = 8 }
  engine "vllm" {}
  prefill { instances = 1  devices = 2  tp = 2  max_num_batched_tokens = 16k }
  decode { instances = 1  devices = 4  tp = 4  max_num_seqs = 64 }
  kv_transfer { connector = nixl }
  workload {
    requests = 200
    concurrency = 64
    input { mean = 3.5k  max = 8k }
    output { mean = 1k  max = 4k }
  }
  slo { ttft < 2s  tpot < 50ms }
  search { mode = both  tp = [2, 4]  dp = [1]  max_num_seqs = [32]  top = 2 }
}
"""


def test_aggregated_candidates_of_a_disaggregated_plan_take_the_prefill_token_budget():
    """Fresh-user report (break3): `mode = both` from a P/D plan refused every aggregated candidate
    with SN5002: the serve role took the decode role's 8k token budget with chunked prefill off,
    below the 12k max_model_len, so the search could never answer "aggregated or not".  A serve
    role prefills prompts, so it takes the prefill role's budget and chunk (here 16k, no chunk)."""
    from sncc.checks import run_checks
    from sncc.search.candidate import Candidate, RoleChoice, candidate_facts, candidate_plan

    comp = _comp(PD_SMALL)
    space = build_space(comp.plan, comp.facts)
    serve = space.layouts["serve"]
    assert serve and {(lay.max_num_batched_tokens, lay.chunk) for lay in serve} == {(16384, None)}
    cand = Candidate("aggregated", (RoleChoice(serve[0], 1, 32),))
    p2 = candidate_plan(comp.plan, cand, moe=False)
    codes_ = [d.code.code for d in run_checks(p2, candidate_facts(p2, comp.facts)) if d.is_error]
    assert "SN5002" not in codes_, codes_

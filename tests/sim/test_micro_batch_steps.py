"""Two-micro-batch overlap hides communication only on the steps the engine splits.

Omni-Infer release_v0.3.0 ``enable_prefill_micro_batch``: ``DeepseekV3Model.forward`` takes
``forward_micro_batch`` only when the step's prefill metadata holds more than one sequence
(omni/models/deepseek/deepseek_v3.py).  vllm-ascend's dual-batch overlap (``VLLM_ASCEND_ENABLE_DBO``,
v0.9.1-v0.11.0): ``can_run_ms`` returns False when ``num_prefills == 0`` (vllm_ascend/models/
deepseek_dbo.py).  Before, seed 000's decode (Omni-Infer, ``micro_batch = 2``) hid 16.9 ms of EP
dispatch/combine per step that its engine never overlaps, and its TPOT came out 33 % low."""
from __future__ import annotations

import dataclasses as dc

import pytest

from sncc.cost.from_facts import micro_batch_steps
from sncc.cost.model_shape import model_shape
from sncc.cost.profile import load_profile
from sncc.cost.step import StepModel
from sncc.engines.registry import adapter_for
from sncc.sim.calibration.scenarios import seed000_spec


def _models(rule: str, micro_batch: int = 2):
    spec = seed000_spec(7)
    spec = dc.replace(spec, features=dc.replace(spec.features, micro_batch=micro_batch, micro_batch_steps=rule))
    prof = load_profile("ascend-a3")
    return {name: StepModel(spec, name, role, prof, model_shape(spec.model)) for name, role in spec.roles}


def test_each_engine_says_which_steps_it_splits():
    assert micro_batch_steps(adapter_for("omni-infer")) == "prefill-multi"
    assert micro_batch_steps(adapter_for("vllm-ascend")) == "prefill"
    assert micro_batch_steps(adapter_for("vllm")) == "all"       # writes no micro_batch key at all
    assert micro_batch_steps(None) == "all"


def test_an_unknown_rule_is_refused():
    class Fake:
        data = {"micro_batch_steps": "decode-only"}

    with pytest.raises(ValueError, match="micro_batch_steps"):
        micro_batch_steps(Fake())


def test_omni_infer_splits_prefill_steps_of_two_prompts_or_more():
    m = _models("prefill-multi")
    d, p = m["decode"], m["prefill"]
    hide = load_profile("ascend-a3").get("overlap.microbatch_hide_fraction")
    assert d.hide_fraction(d.step(0.0, 0.0, 9, 9 * 4096.0, 9 * 64)) == 0.0
    one, two = p.step(3584.0, 0.0, 0, 0.0, 0, n_prompts=1), p.step(7168.0, 0.0, 0, 0.0, 0, n_prompts=2)
    assert p.hide_fraction(one) == 0.0 and p.hide_fraction(two) == hide
    # against no micro-batching: a two-prompt step is faster, one prompt and a decode step are not
    off = _models("prefill-multi", micro_batch=1)
    two_p, one_p = [(3584, 0.0), (3584, 0.0)], [(3584, 0.0)]
    assert p.prefill_step(two_p) < off["prefill"].prefill_step(two_p)
    assert p.prefill_step(one_p) == off["prefill"].prefill_step(one_p)
    assert d.decode_step(9, 9 * 4096, 9 * 64) == off["decode"].decode_step(9, 9 * 4096, 9 * 64)
    assert d.decode_step(9, 9 * 4096, 9 * 64) > _models("all")["decode"].decode_step(9, 9 * 4096, 9 * 64)


def test_vllm_ascend_dbo_splits_steps_that_hold_prefill():
    d = _models("prefill")["decode"]
    assert d.hide_fraction(d.step(0.0, 0.0, 9, 9 * 4096.0, 9 * 64)) == 0.0
    assert d.hide_fraction(d.step(512.0, 0.0, 9, 9 * 4096.0, 9 * 64)) > 0.0


def test_seed_decode_pays_its_dispatch_and_combine():
    from sncc.sim.calibration.scenarios import seed000_spec as s0
    spec = s0(7)
    assert spec.features.micro_batch_steps == "prefill-multi"
    d = dict(spec.roles)["decode"]
    sm = StepModel(spec, "decode", d, load_profile("ascend-a3"), model_shape(spec.model))
    b = sm.breakdown(0, 9, 9 * 4198.0, 9 * 64)
    assert b["hidden"] == {} and b["terms"]["comm.ep_dispatch_combine"] > 0.010

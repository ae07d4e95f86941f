"""DEEP CHECK (slower, opt-in: SNCC_CONFORMANCE_DEEP=1; `.ci/run` sets it).

Beyond parsing, vLLM's own `EngineArgs.create_engine_config` builds the whole `VllmConfig` for the
plain-vLLM fixture's command lines (internal data parallelism over two nodes, expert parallelism):
the model is swapped for a tiny Qwen3-MoE `config.json` (tests/conformance/models/), since only the
config is read, and `--swap-space 0` is added (vLLM checks swap space against the checking machine's
RAM). This is where vLLM checks what depends on the model (experts present for EP, heads
divisible by TP, context length), which the parser alone cannot.
"""

from __future__ import annotations

import os

import pytest

import conformance_harness as H

TINY_MOE = H.REPO / "tests" / "conformance" / "models" / "tiny-qwen3-moe"

pytestmark = pytest.mark.skipif(os.environ.get("SNCC_CONFORMANCE_DEEP", "") != "1",
                                reason="deep check (create_engine_config) is opt-in: SNCC_CONFORMANCE_DEEP=1")


def _swap_model(argv, model):
    """The command line with the model swapped for the tiny config, and ``--swap-space 0``: vLLM checks
    the CPU swap space (4 GiB per TP rank by default) against *this* machine's RAM, not the server's."""
    assert argv[0] == "serve" and not argv[1].startswith("-")
    return ["serve", str(model), *argv[2:], "--swap-space", "0"]


def test_fixture_builds_a_full_vllm_config(fixture_trees):
    built = fixture_trees["vllm-0.11.0-dp-two-nodes"]
    python = H.vllm_python(built.tree.vllm_version)
    if python is None:
        msg = f"no virtualenv with vLLM {built.tree.vllm_version}"
        if H.require_vllm():
            pytest.fail(msg)
        pytest.skip(msg)
    cases = [dict(c, argv=_swap_model(c["argv"], TINY_MOE)) for c in built.cases()]
    # the same command line with expert parallelism on a dense model must fail here, not at parse time
    dense = dict(cases[0], id="dense-with-ep", argv=[*cases[0]["argv"], "--hf-overrides", '{"num_experts": 0}'])
    results = H.check_with_vllm(python, [*cases, dense], deep=True)
    for case in cases:
        r = results[case["id"]]
        assert r["ok"] and r["stage"] == "engine_config", H.describe_rejection(case, r)
    bad = results["dense-with-ep"]
    assert not bad["ok"] and bad["stage"] == "engine_config", bad

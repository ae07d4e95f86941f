"""Every emitted `vllm serve` command line (launch script + the `--config` YAML it names) is accepted by
the real vLLM parser of the engine's pinned release: parse_args, the serve subcommand's validation and
its data-parallel rules, and `AsyncEngineArgs.from_cli_args` (tools/vllm_cli.py).

Needs the vLLM virtualenvs (tools/setup_vllm_venv.sh; `.ci/run` makes them): without one a test skips
with the reason, and fails when SNCC_REQUIRE_VLLM=1.
"""

from __future__ import annotations

import pytest

import conformance_harness as H

PLANS = [H.plan_id(p) for p in H.plan_files()]
FIXTURES = sorted(p.name for p in H.FIXTURES.iterdir() if p.is_dir())


def _require_launch_tree(built_plans, name):
    built = built_plans[name]
    if built.tree is None:
        pytest.fail(f"sncc build {name} failed:\n{built.output}")
    if not built.tree.has_launch_tree:
        pytest.fail(f"sncc build {name} wrote no launch/ tree (manifest.json deployment + launch/*.sh)")
    return built


def _assert_scripts_start_one_server(built):
    assert built.runs, f"{built.name}: no launch/*.sh"
    for run in built.runs:
        assert run.returncode == 0, f"{built.name}: bash {run.script} exited {run.returncode}:\n{run.output}"
        serves = [r for r in run.recordings if r.serve_argv is not None]
        assert len(serves) == 1, (f"{built.name}: {run.script} started {len(serves)} `vllm serve` "
                                  f"(recorded: {[(r.program, r.argv[:3]) for r in run.recordings]})")


def _assert_accepted(built, vllm_results):
    results = vllm_results.for_tree(built)
    cases = {c["id"]: c for c in built.cases()}
    rejected = [H.describe_rejection(cases[i], r) for i, r in sorted(results.items()) if not r["ok"]]
    assert not rejected, "\n\n".join(rejected)
    return results


@pytest.mark.parametrize("name", PLANS)
def test_plan_launch_scripts_start_vllm_serve(built_plans, name):
    built = _require_launch_tree(built_plans, name)
    _assert_scripts_start_one_server(built)


@pytest.mark.parametrize("name", PLANS)
def test_plan_command_lines_accepted_by_real_vllm(built_plans, vllm_results, name):
    built = _require_launch_tree(built_plans, name)
    _assert_scripts_start_one_server(built)
    results = _assert_accepted(built, vllm_results)
    # every server a launch script starts is checked, and vLLM reached the point of starting it
    assert len(results) == len(built.runs)
    assert all(r["launcher"] for r in results.values())


@pytest.mark.parametrize("name", [f for f in FIXTURES])
def test_fixture_command_lines_meet_expectation(fixture_trees, vllm_results, name):
    built = fixture_trees[name]
    _assert_scripts_start_one_server(built)
    expect = built.expect
    if expect.get("parser") == "accept":
        _assert_accepted(built, vllm_results)
        return
    results = vllm_results.for_tree(built)
    assert results, f"{name}: nothing recorded"
    for case_id, r in results.items():
        assert not r["ok"], f"{name}: vLLM accepted {case_id}, which must be rejected ({expect})"
        assert r["stage"] == expect["stage"], (case_id, r)
        assert expect["error_contains"] in (r["error"] or ""), (case_id, r["error"])


def test_recorded_command_line_is_the_scripts_own(fixture_trees):
    """The stand-in records what bash really passed: quoting, the JSON argument and the operator's
    node address survive intact."""
    built = fixture_trees["vllm-ascend-v0.23.0-pd"]
    (case,) = [c for c in built.cases() if "prefill" in c["id"]]
    argv = case["argv"]
    assert argv[:2] == ["serve", "/data/models/DeepSeek-R1-W8A8"]
    assert argv[argv.index("--data-parallel-address") + 1] == "127.0.0.1"
    kv = argv[argv.index("--kv-transfer-config") + 1]
    assert kv.startswith('{"kv_connector": "MooncakeConnectorV1"')
    assert case["env"]["HCCL_IF_IP"] == "127.0.0.1" and case["env"]["HCCL_BUFFSIZE"] == "1024"
    assert case["cwd"] == str(built.tree.root)

"""Every variable sncc writes into an env file is read by someone: the pinned engine release (its
manifest, ``sncc/engines/<engine>/data/<version>.json``, extracted from the tagged source), the
vLLM it runs, or the stack below it (``sncc/engines/data/runtime_env.toml``: CANN HCCL, NCCL,
gloo, torch_npu, the device runtimes, each with its source)."""

from __future__ import annotations

import pytest

from conftest import ROOT, deployment_of
from sncc.engines.base import Manifest
from sncc.engines.registry import adapter_for
from sncc.engines.runtime_env import reader, runtime_vars, unread_variables, written_variables

GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "plan.sn").is_file())


def _deployment(case: str):
    return deployment_of((GOLDEN / case / "plan.sn").read_text(), str(GOLDEN / case / "plan.sn"))


def _manifests(dep) -> list:
    a = adapter_for(dep.engine)
    return [a.manifest(dep.engine_version), a.vllm_manifest(dep.engine_version)]


@pytest.mark.parametrize("case", CASES)
def test_every_written_variable_has_a_reader(case):
    dep = _deployment(case)
    unread = unread_variables(dep, _manifests(dep))
    if unread is None:
        pytest.skip(f"no manifest of {dep.engine} {dep.engine_version} yet (tools/extract_*.py writes it)")
    assert unread == [], {n: written_variables(dep)[n] for n in unread}


def test_the_check_finds_a_variable_nobody_reads():
    """Against a manifest that lacks one written variable, that variable is reported."""
    dep = _deployment("vllm-ascend-r1-v011-options")
    written = set(written_variables(dep)) - runtime_vars(dep.vendor)
    assert "VLLM_ASCEND_ENABLE_DBO" in written and "VLLM_HOST_IP" in written
    partial = Manifest(engine="vllm-ascend", version="v0.11.0", arguments={},
                       env=frozenset(written - {"VLLM_ASCEND_ENABLE_DBO"}))
    assert unread_variables(dep, [partial]) == ["VLLM_ASCEND_ENABLE_DBO"]
    assert unread_variables(dep, [None]) is None


def test_plan_env_entries_are_the_user_s_and_not_checked():
    dep = _deployment("vllm-ascend-v4flash-pd")
    assert "HCCL_OP_EXPANSION_MODE" not in written_variables(dep)   # from the plan's env block
    assert "HCCL_CONNECT_TIMEOUT" in written_variables(dep) and reader("HCCL_CONNECT_TIMEOUT") == "CANN HCCL"


def test_runtime_variables_have_sources():
    import tomllib

    data = tomllib.loads((ROOT / "sncc" / "engines" / "data" / "runtime_env.toml").read_text())
    for row in data["var"]:
        assert row["source"].startswith("https://"), row["name"]
        assert set(row["vendors"]) <= {"ascend", "nvidia"}, row["name"]
    for vendor, names in data["nic"].items():
        if vendor != "source":
            assert set(names) <= runtime_vars(vendor), vendor

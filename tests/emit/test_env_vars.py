"""Every variable sncc writes into an env file is read by someone: the pinned engine release (its
manifest, ``sncc/engines/<engine>/data/<version>.json``, extracted from the tagged source), the
vLLM it runs, or the stack below it (``sncc/engines/cann_env.json``: CANN HCCL, NCCL, gloo,
torch_npu, the device runtimes, each with its reader and source)."""

from __future__ import annotations

import pytest

from expect import ROOT, deployment_of
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
    assert unread is not None, f"no manifest of {dep.engine} {dep.engine_version} (tools/extract_*.py writes it)"
    assert unread == [], {n: written_variables(dep)[n] for n in unread}


def test_the_check_finds_a_variable_nobody_reads():
    """Against a manifest that lacks one written variable, that variable is reported."""
    from pathlib import Path

    from sncc.engines.manifest import Manifest

    dep = _deployment("vllm-ascend-r1-v011-options")
    written = set(written_variables(dep)) - runtime_vars(dep.vendor)
    assert "VLLM_ASCEND_ENABLE_DBO" in written and "VLLM_HOST_IP" in written
    partial = Manifest(engine="vllm-ascend", version="v0.11.0", path=Path("x.json"),
                       data={"env": {n: {} for n in written - {"VLLM_ASCEND_ENABLE_DBO"}}})
    assert unread_variables(dep, [partial]) == ["VLLM_ASCEND_ENABLE_DBO"]
    assert unread_variables(dep, [None]) is None


def test_plan_env_entries_are_the_user_s_and_not_checked():
    dep = _deployment("vllm-ascend-v4flash-pd")
    assert "HCCL_OP_EXPANSION_MODE" not in written_variables(dep)   # from the plan's env block
    assert "HCCL_CONNECT_TIMEOUT" in written_variables(dep) and reader("HCCL_CONNECT_TIMEOUT") == "CANN HCCL"


def test_runtime_variables_split_by_vendor():
    from sncc.engines.runtime_env import nic_vars

    assert "HCCL_BUFFSIZE" in runtime_vars("ascend") and "HCCL_BUFFSIZE" not in runtime_vars("nvidia")
    assert "NCCL_SOCKET_IFNAME" in runtime_vars("nvidia") and "NCCL_SOCKET_IFNAME" not in runtime_vars("ascend")
    assert "GLOO_SOCKET_IFNAME" in runtime_vars("ascend") & runtime_vars("nvidia")
    for vendor in ("ascend", "nvidia"):
        assert set(nic_vars(vendor)) <= runtime_vars(vendor), vendor


READY_PLAN = '''plan "t" {{
  model "qwen3-32b" {{ max_model_len = 16k }}
  hardware {{ system = "atlas-800-a2"  nodes = 1 }}
  engine "vllm-ascend" {{ version = "{version}"  ready_timeout = 30min }}
  serve {{ devices = 4  tp = 4  chunked_prefill = 4k }}
  workload {{ input {{ mean = 1k  max = 4k }}  output {{ mean = 1k  max = 4k }} }}
}}
'''


@pytest.mark.parametrize("version, written", [("v0.23.0", True), ("v0.11.0", False)])
def test_ready_timeout_is_the_variable_the_pinned_vllm_reads(version, written):
    """`engine.ready_timeout` becomes VLLM_ENGINE_READY_TIMEOUT_S (whole seconds) where the vLLM the pin
    runs reads it (its manifest lists it: 0.23.0); vLLM 0.11.0 has no such variable, so nothing is
    exported and manifest.json says why."""
    dep = deployment_of(READY_PLAN.format(version=version))
    vllm = adapter_for(dep.engine).vllm_manifest(dep.engine_version)
    assert ("VLLM_ENGINE_READY_TIMEOUT_S" in vllm.env_vars) is written
    env = {v.name: v.value for v in dep.common_env}
    assert env.get("VLLM_ENGINE_READY_TIMEOUT_S") == ("1800" if written else None)
    fact = dep.manifest_facts["ready_timeout"]
    assert fact["seconds"] == 1800 and (fact["variable"] is not None) is written
    assert written or "reads no VLLM_ENGINE_READY_TIMEOUT_S" in fact["note"]


#: vllm-ascend's Mixtral tutorial exports VLLM_USE_V1=1, which v0.23.0 reads nowhere
#: (tests/known-good/va-tutorial-mixtral-8x7b-tp4.sn names the tutorial); its corrected twin drops it
UNREAD_PLAN = '''plan "t" {{
  model "qwen3-32b" {{ max_model_len = 16k }}
  hardware {{ system = "atlas-800-a2"  nodes = 1 }}
  engine "vllm-ascend" {{ version = "v0.23.0" }}
  serve {{ devices = 4  tp = 4  chunked_prefill = 4k  env {{ {role_env} }} }}
  env {{ HCCL_OP_EXPANSION_MODE = "AIV"  {env} }}
  workload {{ input {{ mean = 1k  max = 4k }}  output {{ mean = 1k  max = 4k }} }}
}}
'''


@pytest.mark.parametrize("env, role_env, unread", [
    ('VLLM_USE_V1 = "1"', 'OMP_NUM_THREADS = "10"', {"VLLM_USE_V1"}),
    ("", 'VLLM_ASCEND_ENABLE_FLASHCOMM = "1"', {"VLLM_ASCEND_ENABLE_FLASHCOMM"}),
    ("", 'VLLM_ASCEND_ENABLE_FLASHCOMM1 = "1"', set()),
])
def test_plan_env_nobody_reads_is_reported_and_not_exported(env, role_env, unread):
    from expect import compile_text, outputs_of

    text = UNREAD_PLAN.format(env=env, role_env=role_env)
    comp = compile_text(text)
    got = {d.message.split("`")[1] for d in comp.diagnostics if d.code.code == "SN4044"}
    # a near-miss of a variable the release reads (FLASHCOMM for FLASHCOMM1) is a warning: its value is lost
    assert got == unread and all(d.severity == ("warning" if "FLASHCOMM" in d.message else "info")
                                 for d in comp.diagnostics if d.code.code == "SN4044")
    for d in comp.diagnostics:
        if d.code.code == "SN4044":   # the caret sits under the variable's name, not its value
            name = d.message.split("`")[1]
            assert text[d.span.start:d.span.end] == name
    if "FLASHCOMM" in role_env and unread:
        assert any("VLLM_ASCEND_ENABLE_FLASHCOMM1" in (d.help or "") for d in comp.diagnostics if d.code.code == "SN4044")
    files = outputs_of(text)
    exported = "".join(t for n, t in files.items() if n.startswith("env/"))
    for name in unread:
        assert f"export {name}=" not in exported
    assert "export HCCL_OP_EXPANSION_MODE=" in exported
    assert set(deployment_of(text).manifest_facts.get("env_not_written", {})) == unread

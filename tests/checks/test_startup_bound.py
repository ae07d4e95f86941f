"""SN6020's readiness bound follows what the release can read: vLLM before 0.14.1 hard-codes the
600 s engine handshake wait (vllm/v1/engine/core_client.py@0.12.0 L524; vllm#27444 made it
VLLM_ENGINE_READY_TIMEOUT_S), so a written `ready_timeout` cannot raise it there."""
from __future__ import annotations

import pytest

from expect import ROOT, compile_text

CASE = (ROOT / "tests" / "cases" / "startup-vllm27444.fixed.sn").read_text(encoding="utf-8")


def _sn6020(text: str):
    comp = compile_text(text)
    return [d for d in comp.diagnostics if d.code.code == "SN6020"]


def _on(version: str) -> str:
    assert 'version = "0.23.0"' in CASE
    return CASE.replace('version = "0.23.0"', f'version = "{version}"')


@pytest.mark.parametrize("version", ["0.11.0", "0.9.0"])
def test_a_bound_the_release_cannot_read_is_reported_with_the_fixed_wait(version):
    (d,) = _sn6020(_on(version))
    assert "600 s readiness bound" in d.message and "cannot raise it" in d.message
    assert "0.14.1 or later" in d.help


@pytest.mark.parametrize("version", ["0.23.0", "0.33.0", "0.14.1"])
def test_a_release_that_reads_the_variable_takes_the_written_bound(version):
    assert _sn6020(_on(version)) == []

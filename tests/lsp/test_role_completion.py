"""Key completion offers what the builder accepts (bt28 #8): in a role block `env { }` (the
README: a role may hold `env { }`) was missing, because completion hid the plan-only blocks
from every block; the list is now the builder's own (sncc.plan.build.settable_fields)."""

from __future__ import annotations

import pytest

from expect import compile_text
from sncc.lsp import features
from sncc.plan import model as m
from sncc.source import SourceFile

PLAN = '''plan "c" {
  model "qwen3-32b" {}
  hardware { system = "hgx-h100"  nodes = 1 }
  engine "vllm" {}
  ROLE { devices = 8  tp = 8  CURSOR }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''


def _offered(role: str) -> dict[str, str]:
    text = PLAN.replace("ROLE", role)
    offset = text.index("CURSOR")
    text = text.replace("CURSOR", "      ")
    return {i.label: i.detail for i in features.complete(SourceFile("c.sn", text), offset)}


@pytest.mark.parametrize("role", ["serve", "prefill", "decode"])
def test_role_completion_offers_env_as_a_block(role):
    offered = _offered(role)
    assert offered.get("env") == "block", offered
    assert set(offered) == {n for n in m.Role.model_fields if n != m.Role.label_field}


def test_every_offered_role_block_is_accepted():
    offered = _offered("serve")
    assert "env" in offered
    text = PLAN.replace("ROLE", "serve").replace("CURSOR", 'env { HCCL_BUFFSIZE = "512" }')
    diags = compile_text(text).diagnostics
    assert not [d for d in diags if d.code.code in ("SN2001", "SN2004")], [(d.code.code, d.message) for d in diags]


def test_plan_completion_still_offers_slo_and_env():
    text = PLAN.replace("ROLE", "serve").replace("CURSOR", "")
    offset = text.index("  workload")
    offered = {i.label: i.detail for i in features.complete(SourceFile("c.sn", text), offset)}
    assert offered.get("slo") == "block" and offered.get("env") == "block", offered

"""env/common.sh on Ascend sources CANN's set_env.sh and exports the variables vllm-ascend's
tutorials export at the pinned tag; cross-node NIXL on NVIDIA exports the UCX variables vLLM's NIXL
guide names.  A plan ``env`` entry always wins.

Before: no Ascend env file sourced set_env.sh or set PYTORCH_NPU_ALLOC_CONF, TASK_QUEUE_ENABLE or
HCCL_OP_EXPANSION_MODE, and a two-node NIXL deployment had no UCX variable.
"""
from __future__ import annotations

import os
import subprocess

from expect import ROOT, outputs_of

GOLDEN = ROOT / "tests" / "golden"
A2 = (GOLDEN / "vllm-ascend-qwen3-32b-a2" / "plan.sn").read_text(encoding="utf-8")
A2_V23 = A2.replace('version = "v0.11.0"', 'version = "v0.23.0"').replace('cann = "8.3.RC2"', 'cann = "9.1.0"')
H100_PD = (GOLDEN / "vllm-h100-qwen3-pd" / "plan.sn").read_text(encoding="utf-8")


def _common(text: str) -> str:
    return outputs_of(text)["env/common.sh"]


def _exports(sh: str) -> dict[str, str]:
    out = {}
    for line in sh.splitlines():
        if line.startswith("export "):
            k, v = line[len("export "):].split("  #")[0].split("=", 1)
            assert k not in out, f"{k} exported twice"
            out[k] = v
    return out


def test_ascend_sources_cann_set_env_under_the_default_root_or_the_install_path():
    sh = _common(A2)
    assert ". /usr/local/Ascend/ascend-toolkit/set_env.sh" in sh and ". /usr/local/Ascend/nnal/atb/set_env.sh" in sh
    assert "installation.md L87" in sh                       # the path's source
    own = _common(A2.replace("engine \"vllm-ascend\"", 'software { install_path = "/opt/Ascend" }\n  engine "vllm-ascend"'))
    assert ". /opt/Ascend/ascend-toolkit/set_env.sh" in own and "/usr/local/Ascend" not in own
    assert "set_env.sh" not in _common(H100_PD)              # NVIDIA: no CANN


def test_tutorial_variables_of_the_pinned_tag_with_their_source():
    v11 = _exports(_common(A2))
    assert v11["PYTORCH_NPU_ALLOC_CONF"] == "max_split_size_mb:256"
    assert "TASK_QUEUE_ENABLE" not in v11 and "HCCL_OP_EXPANSION_MODE" not in v11   # not in v0.11.0's tutorials
    sh = _common(A2_V23)
    v23 = _exports(sh)
    assert (v23["PYTORCH_NPU_ALLOC_CONF"], v23["TASK_QUEUE_ENABLE"], v23["HCCL_OP_EXPANSION_MODE"]) == \
        ("expandable_segments:True", "1", "AIV")
    assert "Qwen3-Dense.md L253" in sh


def test_a_plan_env_entry_wins_and_deterministic_hccl_drops_aiv():
    plan = A2_V23.replace("slo {", 'env { TASK_QUEUE_ENABLE = 2  HCCL_DETERMINISTIC = "true" }\n  slo {')
    v = _exports(_common(plan))
    assert v["TASK_QUEUE_ENABLE"] == "2"
    assert "HCCL_OP_EXPANSION_MODE" not in v                  # AIV expansion cannot run with deterministic HCCL


def test_cross_node_nixl_exports_the_ucx_variables():
    two = H100_PD.replace("hardware { system = \"hgx-h100\"  devices = 4 }",
                          "hardware { system = \"hgx-h100\"  nodes = 2 }").replace(
        "prefill { devices = 2  tp = 2", "prefill { devices = 8  tp = 8").replace(
        "decode { devices = 2  tp = 2", "decode { devices = 8  tp = 8")
    v = _exports(_common(two))
    assert v["UCX_NET_DEVICES"] == "all" and v["UCX_TLS"] == "all"
    assert "UCX_NET_DEVICES" not in _exports(_common(H100_PD))            # one node: no UCX variables
    mine = _exports(_common(two.replace("slo {", 'env { UCX_NET_DEVICES = "mlx5_0:1" }\n  slo {')))
    assert mine["UCX_NET_DEVICES"] == "mlx5_0:1"


def test_common_sh_sources_the_scripts_under_nounset_and_sncc_values_win(tmp_path):
    root = tmp_path / "Ascend"
    (root / "ascend-toolkit").mkdir(parents=True)
    (root / "nnal" / "atb").mkdir(parents=True)
    # a vendor script that reads an unset variable and sets one sncc also sets
    (root / "ascend-toolkit" / "set_env.sh").write_text(
        'export LD_LIBRARY_PATH="/x/lib:$LD_LIBRARY_PATH"\nexport PYTORCH_NPU_ALLOC_CONF=vendor\nexport CANN_DONE=1\n')
    plan = A2.replace("engine \"vllm-ascend\"", f'software {{ install_path = "{root}" }}\n  engine "vllm-ascend"')
    sh = tmp_path / "common.sh"
    sh.write_text(_common(plan))
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    r = subprocess.run(["bash", "-c", f'set -euo pipefail; . "{sh}"; echo "$CANN_DONE $PYTORCH_NPU_ALLOC_CONF"; '
                                      'case $- in *u*) echo nounset;; esac'],
                       capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["1 max_split_size_mb:256", "nounset"]
    assert "NNAL (ATB) environment not found" in r.stderr     # the missing one is reported, not fatal

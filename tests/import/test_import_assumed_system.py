"""The system `sncc import` assumes when the script names none: the vendor's default, unless the
command's device mask names more devices than that system's nodes hold (a break test's decode
script with 16 visible NPUs became an 8-device Atlas A2 node, so the plan failed SN3020)."""

from __future__ import annotations

from expect import compile_text
from sncc.importer import import_sources
from sncc.source import SourceFile

SCRIPT = """export ASCEND_RT_VISIBLE_DEVICES=MASK
vllm serve Qwen/Qwen3-32B --tensor-parallel-size TP --max-model-len 8192
"""


def _system(mask: str, tp: int) -> tuple[str, str]:
    res = import_sources([SourceFile("run.sh", SCRIPT.replace("MASK", mask).replace("TP", str(tp)))])
    plan = compile_text(res.text).plan
    return plan.hardware.system, res.text


def test_sixteen_visible_npus_assume_an_a3_node():
    system, text = _system(",".join(str(i) for i in range(16)), 16)
    assert system == "atlas-800i-a3", text
    assert "its device mask names 16 devices" in text


def test_eight_or_fewer_keep_the_default():
    assert _system("0,1,2,3", 4)[0] == "atlas-800-a2"
    assert _system("4,5,6,7", 4)[0] == "atlas-800-a2"


def test_a_high_device_id_counts_as_the_node_size_it_needs():
    assert _system("8,9,10,11", 4)[0] == "atlas-800i-a3"

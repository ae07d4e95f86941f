"""`env { }` values: a number beyond 2^53 - 1 is SN2009 on the value (it once reached the
checks and raised OverflowError), as for every other numeric value."""

from __future__ import annotations

import pytest

from tests_helpers import compile_plan

BASE = '''plan "m" {
  model "qwen3-32b" {}
  hardware { system = "atlas-800-a2"  nodes = 1 }
  engine "vllm-ascend" {}
  serve { devices = 8  tp = 8 }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
  env { ENV }
}
'''


@pytest.mark.parametrize("entry", ["HCCL_BUFFSIZE = 1" + "0" * 305, "HCCL_BUFFSIZE = 1" + "0" * 20,
                                   "HCCL_CONNECT_TIMEOUT = 1" + "0" * 400 + "s",
                                   "HCCL_BUFFSIZE = -1" + "0" * 30, "HCCL_BUFFSIZE = \"1" + "0" * 305 + "\""])
def test_huge_env_number_is_out_of_range(entry):
    text = BASE.replace("ENV", entry)
    diags = compile_plan(text).diagnostics
    got = [d.code.code for d in diags]
    assert "SN9001" not in got
    hit = [d for d in diags if d.code.code == "SN2009"]
    assert len(hit) == 1, [(d.code.code, d.message) for d in diags]
    assert hit[0].span.start == text.index(entry.split(" = ")[1])
    assert "1" + "0" * 200 not in hit[0].message  # the literal is shortened


def test_ordinary_env_numbers_pass():
    diags = compile_plan(BASE.replace("ENV", "HCCL_BUFFSIZE = 1024  OMP_NUM_THREADS = 1")).diagnostics
    assert not [d for d in diags if d.is_error], [(d.code.code, d.message) for d in diags]

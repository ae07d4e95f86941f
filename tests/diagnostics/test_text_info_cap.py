"""Text output shows every error and warning, and of each info code the first ten, then one line
counting the rest: a plan with thousands of unread `env` entries (SN4044, info) printed thousands of
blocks.  JSON keeps every diagnostic."""
from __future__ import annotations

import json

from click.testing import CliRunner

from sncc.cli import main
from sncc.diagnostics.render_text import INFO_PER_CODE

PLAN = '''plan "many-env" {{
  model "qwen3-32b" {{ quant = bf16 }}
  hardware {{ system = "hgx-h200"  nodes = 1 }}
  engine "vllm" {{ version = "0.23.0" }}
  serve {{ devices = 2  tp = 2 }}
  workload {{ input {{ mean = 1k  max = 2k }}  output {{ mean = 100  max = 200 }} }}
  env {{
{entries}
  }}
}}
'''


def _check(tmp_path, n: int, fmt: str = "text"):
    entries = "\n".join(f"    SNCC_TEST_UNREAD_{k} = \"{k}\"" for k in range(n))
    path = tmp_path / "plan.sn"
    path.write_text(PLAN.format(entries=entries))
    return CliRunner().invoke(main, ["check", str(path), "--format", fmt])


def test_info_diagnostics_past_ten_of_a_code_are_counted_not_printed(tmp_path):
    out = _check(tmp_path, 25).output
    assert out.count("info[SN4044]: ") == INFO_PER_CODE + 1, out
    assert f"info[SN4044]: {25 - INFO_PER_CODE} more like the above, not shown" in out
    ten = _check(tmp_path, INFO_PER_CODE).output
    assert ten.count("info[SN4044]: ") == INFO_PER_CODE and "more like the above" not in ten


def test_json_lists_every_info(tmp_path):
    res = _check(tmp_path, 25, "json")
    assert sum(d["code"] == "SN4044" for d in json.loads(res.output)["diagnostics"]) == 25

"""`sncc check --import`: a plan diagnostic's related locations that point at imported values are
moved onto the script lines those values came from, as its primary location is; only the
"as imported into the plan" note stays in the imported plan (a file that is not on disk)."""

from __future__ import annotations

from sncc.importer.command import check_imported

SCRIPT = """#!/bin/bash
vllm serve /weights/DeepSeek-R1-W8A8 \\
  --tensor-parallel-size 8 --data-parallel-size 2 \\
  --enable-expert-parallel \\
  --quantization ascend \\
  --max-num-seqs 16 \\
  --max-model-len 16384 \\
  --max-num-batched-tokens 4096 \\
  --gpu-memory-utilization 0.92
"""


def test_related_locations_of_imported_values_point_into_the_script(tmp_path):
    p = tmp_path / "run.sh"
    p.write_text(SCRIPT)
    diags, sources = check_imported([str(p)], system="atlas-800i-a3")
    (d,) = [d for d in diags if d.code.code == "SN4008"]
    src = sources[str(p)]
    assert d.span.file == str(p) and src.line_col(d.span.start)[0] == 6   # --max-num-seqs 16
    by_msg = {r.message: r for r in d.related}
    mml = by_msg["`max_model_len` set here"]
    util = by_msg["memory utilization 0.92"]
    assert mml.span.file == str(p) and src.line_col(mml.span.start)[0] == 7, mml
    assert src.text[mml.span.start:mml.span.end] == "--max-model-len 16384"
    assert util.span.file == str(p) and src.line_col(util.span.start)[0] == 9, util
    # the one location left in the imported plan says so
    assert [r.message for r in d.related if r.span.file != str(p)] == ["as imported into the plan"]

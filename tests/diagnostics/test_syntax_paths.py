"""The JSON ``path`` (and SARIF ``properties.path``) of the diagnostics no plan builder names: syntax
errors (SN1001–SN1004) and suppression problems (SN1005, SN1006) get the block and key their
position is inside, read from the text before it (sncc/syntax/paths.py); SN2011 the role block it
points at, or ``["plan"]`` for a plan with no role; ``[]`` only outside every block.

Each case is a plan marking its diagnostic inline, ``# E: CODE:COL`` (tests/expect.py), with the
path it must carry."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from expect import expectations
from sncc.cli import main
from sncc.syntax.paths import enclosing_path

CASES = [
    # a second `=`: inside the `tp` item, whose value is not written yet
    ('plan "p" {\n  prefill { tp = = 8 }  # E: SN1001:18\n}\n', ["prefill", "tp"]),
    # after a complete value: between items, so the block alone
    ('plan "p" {\n  decode { tp = 1, ep = 2 }  # E: SN1001:18\n}\n', ["decode"]),
    # a key without `=`; nested blocks; the plan block is the root and left out
    ('plan "p" {\n  optimize { omni_placement { adjust_interval 100 } }  # E: SN1001:47\n}\n',
     ["optimize", "omni_placement", "adjust_interval"]),
    # a space inside a quantity (`16 k`): at the number, in its key
    ('plan "p" {\n  serve { max_num_batched_tokens = 16 k }  # E: SN1001:36\n}\n', ["serve", "max_num_batched_tokens"]),
    # a dotted SLO key is one element, as the builder writes it
    ('plan "p" {\n  slo { ttft.p99 < < 2s }  # E: SN1001:20\n}\n', ["slo", "ttft.p99"]),
    # a block label is not part of a path
    ('plan "p" {\n  model "m" { weights = @ }  # E: SN1002:25\n}\n', ["model", "weights"]),
    # inside a call's arguments
    ('plan "p" {\n  gateway { api_key = env("K" "L") }  # E: SN1001:31\n}\n', ["gateway", "api_key"]),
    # directly inside the plan block: `["plan"]`
    ('plan "p" {\n  @  # E: SN1002:3\n}\n', ["plan"]),
    # outside every block: `[]`
    ('plan "p" { }\n@  # E: SN1002:1\n', []),
    # the `{` of a block never closed: that block
    ('plan "p" {\n  decode { tp = 1  # E: SN1003:10\n}\n', ["decode"]),
    # braces in strings and comments do not count
    ('plan "p" {\n  # {\n  model "m" { weights = "}{" }\n  engine "x" { ; = }  # E: SN1001:18\n}\n', ["engine"]),
]


def _check(tmp_path, text: str, fmt: str, name: str = "plan.sn"):
    f = tmp_path / name
    f.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    res = CliRunner().invoke(main, ["check", str(f), "--format", fmt])
    return f, json.loads(res.output)


@pytest.mark.parametrize("text, path", CASES)
def test_a_syntax_error_names_the_block_and_key_it_is_in(tmp_path, text, path):
    f, doc = _check(tmp_path, text, "json")
    (code, line, col), = expectations(f)
    got = [(d["code"], d["range"]["start"]["line"], d["range"]["start"]["column"], d["path"])
           for d in doc["diagnostics"] if d["code"].startswith("SN1")]
    assert got == [(code, line, col, path)], got


@pytest.mark.parametrize("text, path", CASES[:1] + CASES[-3:])
def test_sarif_carries_the_same_path(tmp_path, text, path):
    _, doc = _check(tmp_path, text, "sarif")
    results = doc["runs"][0]["results"]
    assert [r["properties"]["path"] for r in results if r["ruleId"].startswith("SN1")] == [path]


def test_an_invalid_utf8_byte_names_the_key_it_is_in(tmp_path):
    _, doc = _check(tmp_path, b'plan "p" {\n  serve { tp = \xff }\n}\n', "json")
    assert [(d["code"], d["path"]) for d in doc["diagnostics"]] == [("SN1004", ["serve", "tp"])]


def test_suppression_problems_name_the_block_their_comment_is_in(tmp_path):
    text = ('plan "p" {\n  model "m" {  # sncc: ignore[SN4008]\n  }\n'
            '  # sncc: ignore[SN3001] no such error here\n  serve { devices = 8 }\n}\n'
            '# sncc: ignore[SN9999] outside\n')
    _, doc = _check(tmp_path, text, "json")
    got = sorted((d["code"], d["range"]["start"]["line"], d["path"]) for d in doc["diagnostics"] if d["code"].startswith("SN1"))
    assert got == [("SN1005", 2, ["model"]), ("SN1005", 7, [])], got


def test_a_plan_without_roles_is_at_the_plan_block(tmp_path):
    text = ('plan "p" {\n  model "qwen3-32b" { quant = bf16 }\n  hardware { system = "atlas-800-a2"  nodes = 1 }\n'
            '  engine "vllm-ascend" {}\n  workload { requests = 10  concurrency = 1\n'
            '    input { mean = 1k  max = 2k }  # sncc: ignore[SN3001] stale\n'
            '    output { mean = 100  max = 200 } }\n}\n')
    _, doc = _check(tmp_path, text, "json")
    got = sorted((d["code"], d["path"]) for d in doc["diagnostics"] if d["code"] in ("SN2011", "SN1006"))
    assert got == [("SN1006", ["workload"]), ("SN2011", ["plan"])], got


def test_the_scan_ends_and_clamps():
    text = 'plan "p" { decode { tp = 1 }'
    assert enclosing_path(text, text.index("1")) == ("decode", "tp")
    assert enclosing_path(text, len(text)) == ("plan",)   # after decode's `}`, in the plan block
    assert enclosing_path(text, 10**9) == ("plan",)
    assert enclosing_path(text, 0) == ()
    assert enclosing_path('import "a.sn" ', 14) == ()        # an import is no block

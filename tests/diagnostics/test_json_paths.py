"""Every diagnostic about a key carries that key's path in JSON (`path`), the plan errors of the
syntax-tree-to-plan phase (SN2xxx) included: editors and CI annotate by it.  SN2011 (role layouts
mixed or incomplete) names the role block it points at; the syntax errors and suppression problems
(SN1xxx), which have no syntax tree, the block and key their position is in
(tests/diagnostics/test_syntax_paths.py)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sncc.cli import main


@pytest.mark.parametrize("plan, code, path", [
    ("examples/broken/duplicate-key.sn", "SN2002", ["serve", "tp"]),
    ("examples/broken/invalid-value.sn", "SN2004", ["kv_cache", "dtype"]),
    ("examples/broken/zero-devices.sn", "SN2009", ["serve", "ep"]),
    ("examples/broken/literal-secret.sn", "SN2007", ["gateway", "api_key"]),
    ("examples/broken/wrong-unit.sn", "SN2003", ["slo"]),
    ("examples/broken/mixed-roles.sn", "SN2011", ["prefill"]),
])
def test_the_json_path_names_the_key(plan, code, path):
    res = CliRunner().invoke(main, ["check", plan, "--format", "json"])
    got = [d["path"] for d in json.loads(res.output)["diagnostics"] if d["code"] == code]
    assert got and got[0] == path, got

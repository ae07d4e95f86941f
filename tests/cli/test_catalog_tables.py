"""`sncc catalog` and `sncc explain` render through rich (issue 14 item 7, for every command
but `simulate`): tables with a header row and aligned columns, numbers with units and digit
grouping (no scientific notation), the same entries as the catalog, every source kept."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from sncc import catalog
from sncc.cli import main


def run(*args):
    return CliRunner().invoke(main, list(args))


def _table(output: str) -> tuple[list[str], list[str]]:
    """(header cells, body lines) of a rich table with a simple-head box."""
    lines = [ln for ln in output.splitlines() if ln.strip()]
    rule = next(i for i, ln in enumerate(lines) if set(ln.strip()) <= set("─━ "))
    return lines[rule - 1].split(), lines[rule + 1:]


@pytest.mark.parametrize("kind,ids,header", [
    ("systems", lambda: catalog.systems(), ["system", "devices/node", "chip", "name"]),
    ("chips", lambda: catalog.chips(), ["chip", "device", "HBM", "weight", "status", "source"]),
    ("models", lambda: catalog.models(), ["model", "kind", "layers", "max", "positions", "aliases"]),
    ("releases", lambda: {r.version: r for r in catalog.vllm_ascend_releases()}, ["vllm-ascend", "vLLM", "CANN"]),
    ("connectors", lambda: catalog.kv_connectors(), ["connector", "class", "engines"]),
])
def test_catalog_is_a_table_of_every_entry(kind, ids, header):
    r = run("catalog", kind)
    assert r.exit_code == 0, r.output
    head, body = _table(r.output)
    assert all(h in head for h in header), head
    for key in ids():
        assert any(ln.split()[0] == key or ln.split()[:2] == ["vllm-ascend", key] or key in ln.split() for ln in body), key


def test_numbers_are_formatted():
    chips = run("catalog", "chips").output
    assert re.search(r"\b64 GiB\b", chips) and "e+" not in chips
    models = run("catalog", "models").output
    assert "163,840" in models  # DeepSeek's max positions, grouped
    assert "163840" not in models


def test_explain_page():
    r = run("explain", "SN3001")
    assert r.exit_code == 0
    out = r.output
    assert out.splitlines()[0].startswith("SN3001 parallel-size-mismatch")
    assert "Failing example" in out and "Fixed" in out and "decode { devices = 64  tp = 8  ep = 4 }" in out
    assert "https://" in out

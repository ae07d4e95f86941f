"""A UTF-16/32 plan file (a byte-order mark; Windows editors save "Unicode" so) is SN1004 saying
the file must be UTF-8, on the file alone.  Before: "invalid UTF-8 byte 0xff" with a snippet of
the bytes decoded as UTF-8, NULs and replacement characters."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sncc.cli import main

PLAN = 'plan "x" {\n  model "qwen3-32b" {}\n}\n'


@pytest.mark.parametrize("codec,name", [("utf-16", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32"),
                                        ("utf-32-be", "UTF-32")])
def test_a_utf16_or_utf32_file_must_be_utf8(tmp_path, codec, name):
    p = tmp_path / "p.sn"
    data = PLAN.encode(codec)
    if not codec.endswith("-be"):
        assert data[:2] == b"\xff\xfe"
    else:
        data = ("\ufeff" + PLAN).encode(codec)
    p.write_bytes(data)
    r = CliRunner().invoke(main, ["check", str(p)])
    assert r.exit_code == 1
    assert f"error[SN1004]: the file is {name}" in r.output and "plan files must be UTF-8" in r.output
    assert "\x00" not in r.output and "\ufffd" not in r.output and " | " not in r.output   # no snippet
    assert "1 error in 1 file" in r.output
    doc = json.loads(CliRunner().invoke(main, ["check", "--format", "json", str(p)]).stdout)
    (d,) = doc["diagnostics"]
    assert d["code"] == "SN1004" and d["file"] == str(p) and doc["summary"]["files"] == 1


def test_an_imported_utf16_file_says_so(tmp_path):
    (tmp_path / "defs.sn").write_bytes('hardware { system = "hgx-h200"  nodes = 1 }\n'.encode("utf-16"))
    (tmp_path / "p.sn").write_text('import "defs.sn"\n' + PLAN)
    r = CliRunner().invoke(main, ["check", str(tmp_path / "p.sn")])
    assert "UTF-16 (little-endian) text, not UTF-8" in r.output, r.output


def test_invalid_utf8_elsewhere_keeps_its_message(tmp_path):
    p = tmp_path / "p.sn"
    p.write_bytes(b'plan "x" { model "\xff" {} }')
    r = CliRunner().invoke(main, ["check", str(p)])
    assert "invalid UTF-8 byte 0xff" in r.output

"""`sncc check` output formats, flags, inline suppressions, `sncc schema` and docs/codes.md.

The golden test renders one set of diagnostics (three plans, one with a tab
and non-ASCII text before an error) in every format; ``SNCC_UPDATE_GOLDEN=1``
rewrites the files under ``tests/golden/formats/``.
"""

from __future__ import annotations

import json
import os
import re

import jsonschema
from click.testing import CliRunner

from expect import ROOT, expectations
from sncc import __version__
from sncc.cli import main
from sncc.resources import schema

GOLDEN = ROOT / "tests" / "golden" / "formats"
INPUTS = ["examples/broken/tp-ep-mismatch.sn", "examples/broken/wrong-unit.sn", "tests/golden/formats/plans/unicode-tab.sn"]
FORMATS = {"text": "check.txt", "concise": "check.concise.txt", "json": "check.json", "sarif": "check.sarif",
           "github": "check.github.txt"}
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


def _unescape_gh(value: str) -> str:
    return value.replace("%2C", ",").replace("%3A", ":").replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")


def test_every_format_renders_the_same_diagnostics(monkeypatch):
    monkeypatch.chdir(ROOT)
    out = {}
    for fmt, golden in FORMATS.items():
        r = run("check", "--no-color", "--format", fmt, *INPUTS)
        assert r.exit_code == 1, r.output
        text = r.output.replace(f'"{__version__}"', '"<version>"')
        out[fmt] = text
        path = GOLDEN / golden
        if os.environ.get("SNCC_UPDATE_GOLDEN"):
            path.write_text(text, encoding="utf-8")
        assert text == path.read_text(encoding="utf-8"), f"{golden} changed; SNCC_UPDATE_GOLDEN=1 rewrites it"

    doc = json.loads(out["json"])
    jsonschema.validate(doc, schema("diagnostics"))
    diags = doc["diagnostics"]
    codes = [d["code"] for d in diags]
    # the set covers an error with related spans, warnings, suppression problems, non-ASCII columns
    assert {"SN3001", "SN4008", "SN2003", "SN1005", "SN1006"} <= set(codes)
    assert "SN3003" not in codes  # suppressed inline (`# sncc: ignore[idle-devices] ...`)
    tab = next(d for d in diags if d["file"].endswith("unicode-tab.sn") and d["code"] == "SN2003")
    line = (ROOT / INPUTS[2]).read_text(encoding="utf-8").splitlines()[tab["range"]["start"]["line"] - 1]
    assert "\t" in line and "🚀" in line
    # columns count code points: the column indexes the Python string of the line
    assert line[tab["range"]["start"]["column"] - 1:].startswith("10GiB")

    # SARIF: valid against the official schema, same positions, one rule per code with helpUri
    sarif = json.loads(out["sarif"])
    jsonschema.validators.validator_for(SARIF_SCHEMA)(SARIF_SCHEMA).validate(sarif)
    run_ = sarif["runs"][0]
    assert sarif["version"] == "2.1.0" and run_["columnKind"] == "unicodeCodePoints"
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(set(codes))
    assert all(r["helpUri"] == f"https://sncc.dev/codes/{r['id']}" for r in rules)
    assert len(run_["results"]) == len(diags)
    for d, res in zip(diags, run_["results"]):
        assert res["ruleId"] == d["code"] and rules[res["ruleIndex"]]["id"] == d["code"]
        assert res["level"] == {"error": "error", "warning": "warning", "info": "note"}[d["severity"]]
        reg = res["locations"][0]["physicalLocation"]["region"]
        rng = d["range"]
        assert (reg["startLine"], reg["startColumn"], reg["endLine"], reg["endColumn"]) == (
            rng["start"]["line"], rng["start"]["column"], rng["end"]["line"], rng["end"]["column"])
        assert len(res.get("relatedLocations", [])) == len(d["related"])
        assert res["message"]["text"].startswith(d["message"])

    # concise: file:line:col: severity[CODE] message, one line each, same order
    lines = out["concise"].splitlines()
    assert lines[-1] == "3 errors, 5 warnings in 3 files"  # SN4041: the seed's INT8 KV cache has no Omni-Infer key
    for d, ln in zip(diags, lines):
        assert ln == f"{d['file']}:{d['range']['start']['line']}:{d['range']['start']['column']}: " \
                     f"{d['severity']}[{d['code']}] {d['message']}"

    # github: one command per diagnostic, errors first, escaped, same positions
    cmds = [ln for ln in out["github"].splitlines() if ln.startswith("::")]
    assert len(cmds) == len(diags)
    kinds = [c[2:].split(" ", 1)[0] for c in cmds]
    assert kinds == sorted(kinds, key=["error", "warning", "notice"].index)
    pat = re.compile(r"::(error|warning|notice) (?P<props>[^:]*)::(?P<data>.*)\Z")
    seen = []
    for c in cmds:
        m = pat.match(c)
        assert m, c
        props = dict(kv.split("=", 1) for kv in m.group("props").split(","))
        assert "\n" not in m.group("data")
        seen.append((_unescape_gh(props["file"]), int(props["line"]), int(props["col"]),
                     int(props["endColumn"]), props["title"].split(" ")[0], _unescape_gh(m.group("data")).split("\n")[0]))
    expected = [(d["file"], d["range"]["start"]["line"], d["range"]["start"]["column"], d["range"]["end"]["column"],
                 d["code"], d["message"]) for d in diags]
    assert sorted(seen) == sorted(expected)


def test_github_escaping():
    from sncc.diagnostics.render_github import escape_data, escape_property

    assert escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_sarif_uri_of_unusual_paths():
    from sncc.diagnostics.render_sarif import artifact_uri

    assert artifact_uri("plans/my plan#1.sn") == "plans/my%20plan%231.sn"
    assert artifact_uri("/abs/x.sn") == "file:///abs/x.sn"


# --- flags ----------------------------------------------------------------------------

SEED = str(ROOT / "examples" / "deepseek-r1-a3-7p1d.sn")  # one SN4008 warning
BROKEN = str(ROOT / "examples" / "broken" / "tp-ep-mismatch.sn")  # SN3001 error + SN4008 warning


#: the seed's INT8 KV cache and placement interval have no key in Omni-Infer release_v0.3.0 (SN4041),
#: and the seed names no Omni-Infer release (SN4046, sncc's default pin, an info);
#: the tests below are about filtering the other codes
PINNED = ("SN4041", "SN4046")


def _codes(r) -> list[str]:
    return [d["code"] for d in json.loads(r.output)["diagnostics"] if d["code"] not in PINNED]


def test_strict_and_exit_zero():
    assert run("check", SEED).exit_code == 0
    r = run("check", "--strict", SEED)
    assert r.exit_code == 1 and "warning[SN4008]" in r.output
    r = run("check", "--exit-zero", BROKEN)
    assert r.exit_code == 0 and "error[SN3001]" in r.output
    assert run("check", "--strict", "--exit-zero", SEED).exit_code == 2


def test_select_and_ignore_by_code_prefix_and_name():
    assert _codes(run("check", "--format", "json", BROKEN)) == ["SN3001", "SN4008"]
    assert _codes(run("check", "--format", "json", "--select", "SN4", BROKEN)) == ["SN4008"]
    assert _codes(run("check", "--format", "json", "--select", "parallel-size-mismatch", BROKEN)) == ["SN3001"]
    r = run("check", "--format", "json", "--ignore", "kv-cache-overcommitted", "--ignore", "sn3001", BROKEN)
    assert _codes(r) == [] and r.exit_code == 0
    r = run("check", "--format", "json", "--select", "SN3001,SN4008", "--ignore", "SN30", BROKEN)
    assert _codes(r) == ["SN4008"] and r.exit_code == 0
    r = run("check", "--select", "kv-cache-overcommited", BROKEN)
    assert r.exit_code == 2 and "did you mean `kv-cache-overcommitted`" in r.output
    # (SN8 became a family with `sncc import`'s SN80xx: SN0 has no code)
    assert run("check", "--ignore", "SN0", BROKEN).exit_code == 2


def test_several_files_and_stdin():
    text = (ROOT / "examples" / "broken" / "wrong-unit.sn").read_text()
    r = run("check", "--format", "concise", "--stdin-filename", "mine.sn", SEED, "-", input=text)
    assert r.exit_code == 1
    (line, col), = [(ln, c) for code, ln, c in expectations(ROOT / "examples" / "broken" / "wrong-unit.sn")]
    assert any(ln.startswith(f"mine.sn:{line}:{col}: error[SN2003]") for ln in r.output.splitlines())
    assert r.output.rstrip().endswith("in 2 files")


# --- inline suppressions ---------------------------------------------------------------

DECODE = "  decode { instances = 1  devices = 64  tp = 1  ep = 64  max_num_seqs = 48 }"


def _seed_with(old: str, new: str) -> str:
    text = (ROOT / "examples" / "deepseek-r1-a3-7p1d.sn").read_text(encoding="utf-8")
    assert old in text
    return text.replace(old, new)


def _check_text(text: str, *args):
    r = run("check", "--format", "json", *args, "--stdin-filename", "p.sn", "-", input=text)
    return r, [d for d in json.loads(r.output)["diagnostics"] if d["code"] not in PINNED]


def test_suppression_on_the_line_and_above():
    _, ds = _check_text(_seed_with(DECODE, DECODE + "  # sncc: ignore[SN4008] replayed trace: p99 prompt 6k"))
    assert ds == []
    _, ds = _check_text(_seed_with(DECODE, "  # sncc: ignore[kv-cache-overcommitted] replayed trace\n" + DECODE))
    assert ds == []
    # two lines above (a blank line between) covers nothing: the warning stays and the comment is unused
    r, ds = _check_text(_seed_with(DECODE, "  # sncc: ignore[SN4008] replayed trace\n\n" + DECODE), "--strict")
    assert [d["code"] for d in ds] == ["SN1006", "SN4008"] and r.exit_code == 1


def test_suppression_on_a_block_line_covers_the_block():
    # SN4008 points into the decode block; a suppression on `decode {` covers the whole block
    text = _seed_with(DECODE, "  decode {  # sncc: ignore[SN4008] replayed trace\n    instances = 1  devices = 64\n"
                              "    tp = 1  ep = 64\n    max_num_seqs = 48\n  }")
    _, ds = _check_text(text)
    assert ds == []


def test_invalid_suppressions_are_reported_and_suppress_nothing():
    _, ds = _check_text(_seed_with(DECODE, DECODE + "  # sncc: ignore[SN4008]"))
    assert sorted(d["code"] for d in ds) == ["SN1005", "SN4008"]
    assert "suppression of `SN4008` gives no reason" in [d["message"] for d in ds]
    _, ds = _check_text(_seed_with(DECODE, DECODE + "  # sncc: ignore[SN4008, SN4444] reason"))
    assert [d["code"] for d in ds] == ["SN1005"] and "`SN4444`" in ds[0]["message"]
    assert ds[0]["range"]["end"]["column"] - ds[0]["range"]["start"]["column"] == len("SN4444")
    _, ds = _check_text(_seed_with(DECODE, DECODE + "  # sncc: ignore[SN1001] reason"))
    assert sorted(d["code"] for d in ds) == ["SN1005", "SN4008"]
    assert any("cannot be suppressed" in d["message"] for d in ds)
    _, ds = _check_text(_seed_with(DECODE, DECODE + "  # sncc: ignroe SN4008"))
    assert sorted(d["code"] for d in ds) == ["SN1005", "SN4008"] and any("malformed" in d["message"] for d in ds)
    # a `#` inside a string is not a comment
    _, ds = _check_text(_seed_with('model_id = "deepseek-r1"', 'model_id = "# sncc: ignore[SN4008]"'))
    assert "SN1005" not in [d["code"] for d in ds]


def test_unused_suppression_has_a_safe_removal_fix():
    line = '  kv_cache { dtype = int8  block_size = 128 }'
    _, ds = _check_text(_seed_with(line, line + "  # sncc: ignore[SN3001] old layout"))
    unused = [d for d in ds if d["code"] == "SN1006"]
    assert len(unused) == 1
    fix = unused[0]["fixes"][0]
    assert fix["applicability"] == "safe" and fix["edits"][0]["new_text"] == ""
    assert fix["edits"][0]["range"]["start"]["column"] == len(line) + 1


def test_no_unused_suppression_report_when_the_file_does_not_parse():
    text = 'plan "p" {  # sncc: ignore[SN4008] reason\n  decode { tp = = 1 }\n}\n'
    _, ds = _check_text(text)
    assert [d["code"] for d in ds] == ["SN1001"]


def test_scan_comments_skips_strings():
    from sncc.diagnostics.filters import scan_comments

    text = 'a = "x # y \\" # z"  # real\nb = "unterminated # no\n# own line\r\n'
    assert [c.text for c in scan_comments(text)] == ["# real", "# own line"]


# --- sncc schema, docs/codes.md ---------------------------------------------------------


def test_schema_command():
    r = run("schema", "diagnostics")
    assert r.exit_code == 0 and json.loads(r.output) == schema("diagnostics")
    r = run("schema", "nope")
    assert r.exit_code == 2 and "diagnostics" in r.output and "omni-infer" in r.output
    assert "diagnostics" in run("schema").output.split()


def test_docs_codes_md_is_current():
    from sncc.diagnostics.codes import REGISTRY
    from sncc.docs import codes_markdown

    text = codes_markdown()
    assert all(f"### {code} `{ec.name}`" in text for code, ec in REGISTRY.items())
    current = (ROOT / "docs" / "codes.md").read_text(encoding="utf-8")
    assert current == text, "docs/codes.md is stale: run `python -m sncc.docs > docs/codes.md`"


def test_docs_codes_md_groups_every_block():
    # the import (SN80xx) and search (SN81xx) blocks of docs/design.md §8 have their own sections
    from sncc.docs import codes_markdown

    text = codes_markdown()
    assert "\n## Other\n" not in text
    heads = [line for line in text.splitlines() if line.startswith("## SN")]
    assert [h.split(":")[0] for h in heads][-3:] == ["## SN80xx", "## SN81xx", "## SN9xxx"]
    assert text.index("### SN8013 ") < text.index("## SN81xx") < text.index("### SN8101 ")

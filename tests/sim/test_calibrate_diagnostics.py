"""`sncc calibrate` reports a malformed measurements file as `sncc check` reports a plan: every
problem at once, each a located diagnostic (file:line:col, caret, help) with a registered code
(SN1080, SN2080–SN2085), exit 1 and nothing written; an unreadable file is SN1060, exit 2; never a
traceback.  `--format json` prints the diagnostics document (schemas/diagnostics.schema.json), with
`calibrate` holding the fit when the profile is written."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from expect import ROOT
from sncc.cli import main
from sncc.diagnostics.codes import REGISTRY
from sncc.resources import schema
from sncc.sim.calibration import keymap

PLAN = ROOT / "examples" / "deepseek-r1-a3-7p1d.sn"
BROKEN_PLAN = ROOT / "examples" / "broken" / "experts-not-divisible.sn"
H200_PLAN = ROOT / "tests" / "fixtures" / "plans" / "qwen3-32b-h200.sn"


def _run(tmp_path: Path, body: str, name: str = "m.toml", *flags: str):
    meas = tmp_path / name
    meas.write_text(body, encoding="utf-8")
    out = tmp_path / "o.toml"
    r = CliRunner().invoke(main, ["calibrate", str(meas), "-o", str(out), *flags])
    assert "Traceback" not in r.output and "internal error" not in r.output, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert not out.exists()
    return meas, r


def _doc(tmp_path: Path, body: str, name: str = "m.toml", exit_code: int = 1) -> dict:
    """The JSON diagnostics document of a calibrate run (schema-checked), after its exit code."""
    _, r = _run(tmp_path, body, name, "--format", "json")
    assert r.exit_code == exit_code, r.output
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, schema("diagnostics"))
    assert doc["summary"]["valid"] is False and doc["summary"]["errors"] == len(doc["diagnostics"])
    return doc


def _found(doc: dict) -> list[tuple[str, int, int]]:
    """(code, line, column) of each diagnostic, in the document's order."""
    return [(d["code"], d["range"]["start"]["line"], d["range"]["start"]["column"]) for d in doc["diagnostics"]]


# ------------------------------------------------------------------ every problem at once
MANY = f'''profle = "ascend-a3"
fit = ["compute.eta_mm", "compute.eta_m", "compute.eta_m"]
residual_floor = "yes"

[[point]]
plan = "{PLAN}"
ttft_s = "fast"
tpot = 47

[[point]]
ttft_s = 1.0

[[point]]
plan = "nope.sn"
qpm = -3
requests = 0
'''


def test_every_problem_of_a_toml_file_is_reported_at_once_with_its_position(tmp_path):
    doc = _doc(tmp_path, MANY)
    assert _found(doc) == [
        ("SN2080", 1, 1),     # profle
        ("SN2081", 2, 8),     # compute.eta_mm
        ("SN2081", 2, 43),    # compute.eta_m listed twice
        ("SN2081", 3, 18),    # residual_floor = "yes"
        ("SN2081", 7, 10),    # ttft_s = "fast"
        ("SN2080", 8, 1),     # tpot
        ("SN2082", 10, 1),    # the second [[point]] has no plan
        ("SN2084", 14, 8),    # nope.sn
        ("SN2081", 15, 7),    # qpm = -3
        ("SN2081", 16, 12),   # requests = 0
    ]
    by_line = {d["range"]["start"]["line"]: d for d in doc["diagnostics"]}
    assert by_line[1]["help"].startswith("did you mean `profile`?")
    assert by_line[8]["help"].startswith("did you mean `tpot_ms`?") and by_line[8]["path"] == ["point", 0, "tpot"]
    assert by_line[7]["path"] == ["point", 0, "ttft_s"] and "seconds" in by_line[7]["message"]
    assert by_line[10]["path"] == ["point", 1] and by_line[10]["message"] == "point 2 has no `plan`"
    twice = doc["diagnostics"][2]
    assert twice["related"][0]["range"]["start"] == {"line": 2, "column": 26, "offset": 46}
    assert all(d["help"] and d["url"].endswith(d["code"]) for d in doc["diagnostics"])


def test_the_text_report_has_file_line_col_a_caret_and_help(tmp_path):
    meas, r = _run(tmp_path, MANY)
    assert r.exit_code == 1, r.output           # errors found, as `sncc check` exits
    out = r.stdout
    assert out.count("error[SN") == 10 and out.rstrip().endswith("10 errors in 1 file")
    block = out[out.index('error[SN2081]: point 1: `ttft_s`'):]
    block = block[: block.index("\n\n")].splitlines()
    assert block[1].strip() == f"--> {meas}:7:10"
    assert block[3].endswith('7 | ttft_s = "fast"') and block[4].endswith("|          ^^^^^^")
    assert block[5].strip().startswith("= help: write the measured value as a bare number in seconds")


# ------------------------------------------------------------------ one kind of malformed file each
@pytest.mark.parametrize("name, body, want", [
    # a syntax error: the reader's message at its position, nothing else checked
    ("syntax.toml", '[[point]]\nplan = examples/seed.sn\n', [("SN1080", 2, 8)]),
    ("syntax.json", '{"point": [{"plan": "a.sn",\n  "ttft_s": 1.0,,}]}', [("SN1080", 2, 17)]),
    ("twice.toml", f'[[point]]\nplan = "{PLAN}"\ntpot_ms = 1\ntpot_ms = 2\n', [("SN1080", 4, 1)]),
    # an empty file: no point in TOML, not a document in JSON
    ("empty.toml", "", [("SN2082", 1, 1)]),
    ("blank.toml", "\n# nothing measured yet\n\n", [("SN2082", 1, 1)]),
    ("empty.json", "", [("SN1080", 1, 1)]),
    ("array.json", "[1, 2]\n", [("SN1080", 1, 1)]),
    # wrong types
    ("types.toml", f'profile = 3\nfit = "compute.eta_m"\n[[point]]\nplan = "{PLAN}"\ntpot_ms = true\n'
                   'requests = 2.5\n', [("SN2081", 1, 11), ("SN2081", 2, 7), ("SN2081", 5, 11), ("SN2081", 6, 12)]),
    ("types.json", json.dumps({"point": [{"plan": 7, "qpm": "600"}], "residual_floor": 1}, indent=1),
     [("SN2081", 4, 12), ("SN2081", 5, 11), ("SN2081", 8, 20)]),
    ("point-type.toml", "point = 3\n", [("SN2081", 1, 9)]),
    # missing fields
    ("missing.toml", '[[point]]\nttft_s = 1.0\n[[point]]\nplan = "x.sn"\n',
     [("SN2082", 1, 1), ("SN2082", 3, 1), ("SN2084", 4, 8)]),
    ("inline.toml", 'point = [{plan = "x.sn", ttft_s = "a"}, {qpm = 3}]\n',
     [("SN2084", 1, 18), ("SN2081", 1, 35), ("SN2082", 1, 41)]),
    # unknown keys, at the top level and in a point
    ("unknown.toml", f'tpot_ms = 47\n[[point]]\nplan = "{PLAN}"\nqpm = 600\nplna = "x"\n',
     [("SN2080", 1, 1), ("SN2080", 5, 1)]),
    ("unknown.json", '{\n  "point": [\n    {"plan": "%s", "qpm": 600, "tpot": 4}\n  ],\n  "fitt": []\n}' % PLAN,
     None),
])
def test_malformed_files_are_located_diagnostics(tmp_path, name, body, want):
    doc = _doc(tmp_path, body, name)
    if want is None:      # columns computed from the text (an absolute path of any length)
        line3 = body.splitlines()[2]
        want = [("SN2080", 3, line3.index('"tpot"') + 1), ("SN2080", 5, 3)]
    assert _found(doc) == want, doc["diagnostics"]


def test_keys_that_exclude_each_other_are_sn2083_at_the_second(tmp_path):
    doc = _doc(tmp_path, f'point = [{{plan = "{PLAN}", qpm = 1}}]\npoints = [{{plan = "{PLAN}", qpm = 1}}]\n')
    assert _found(doc) == [("SN2083", 2, 1)]
    assert doc["diagnostics"][0]["related"][0]["range"]["start"]["line"] == 1
    bench = tmp_path / "bench-result.json"
    bench.write_text(json.dumps({"mean_tpot_ms": 14.0, "completed": 10, "failed": 0}))
    doc = _doc(tmp_path, f'[[point]]\nplan = "{H200_PLAN}"\nbench_result = "bench-result.json"\nrun_tpot_ms = 14\n')
    assert _found(doc) == [("SN2083", 4, 1)]


def test_files_the_measurements_name_are_checked(tmp_path):
    (tmp_path / "bad-bench.json").write_text("not json")
    doc = _doc(tmp_path, f'profile = "no-such-profile"\n'
                         f'[[point]]\nplan = "{PLAN}"\ntpot_ms = 47\n'
                         f'[[point]]\nplan = "{H200_PLAN}"\nbench_result = "bad-bench.json"\n')
    assert _found(doc) == [("SN2084", 1, 11), ("SN2084", 7, 16)]
    assert "not a readable JSON file" in doc["diagnostics"][1]["message"]


def test_plans_are_compiled_once_the_file_is_clean(tmp_path):
    """A plan with errors (SN2084) and a point of another chip generation (SN2085), both at
    their `plan`, in one run; the default fit's underdetermination (SN2082) with them."""
    doc = _doc(tmp_path, f'[[point]]\nplan = "{BROKEN_PLAN}"\ntpot_ms = 47\n'
                         f'[[point]]\nplan = "{H200_PLAN}"\ntpot_ms = 14\n')
    # without `fit`, 3 decode constants for 2 measured values: underdetermined, at the file
    assert _found(doc) == [("SN2082", 1, 1), ("SN2084", 2, 8), ("SN2085", 5, 8)]
    assert "underdetermined" in doc["diagnostics"][0]["message"]
    assert "sncc check" in doc["diagnostics"][1]["help"]
    assert 'profile = "nvidia-h200"' in doc["diagnostics"][2]["help"]
    doc = _doc(tmp_path, f'[[point]]\nplan = "{PLAN}"\ntpot_ms = 47\n')
    assert _found(doc) == [("SN2082", 1, 1)] and "underdetermined" in doc["diagnostics"][0]["message"]


def test_every_calibrate_code_is_registered_and_shown_here():
    shown = {"SN1080", "SN2080", "SN2081", "SN2082", "SN2083", "SN2084", "SN2085"}
    assert all(REGISTRY[c].name.startswith("measurements-") for c in shown)


# ------------------------------------------------------------------ never a traceback
@pytest.mark.parametrize("name, data", [
    ("bin.toml", b"\xff\xfe\x00\x01"),                               # SN1004, not UTF-8
    ("bom.toml", "\ufeff[[point]]\nplan = 'x.sn'\nqpm = 1\n".encode()),
    ("crlf.toml", b'[[point]]\r\nplan = "x.sn"\r\nqpm = "a"\r\n'),
    ("deep.json", b"[" * 100_000),
    ("deep.toml", b"a = " + b"[" * 100_000),
    ("nul.toml", b"a = 1\x00\n"),
    ("date.toml", b"profile = 1979-05-27\n[[point]]\nplan = 'x.sn'\nqpm = 1979-05-27T07:32:00Z\n"),
    ("nested.toml", b"[point]\nplan = 'x.sn'\n[point.x]\ny = 1\n"),
    ("multiline.toml", b'fit = [\n  "a",  # one\n  """b""",\n]\n[[point]]\nplan = \'\'\'x.sn\'\'\'\nqpm = 0\n'),
    ("strange.json", b'{"point": [{"plan": "x.sn", "qpm": NaN, "ttft_s": -Infinity, "k\\u00e9": null}]}'),
])
def test_no_malformed_file_gives_a_traceback(tmp_path, name, data):
    meas = tmp_path / name
    meas.write_bytes(data)
    for fmt in ("text", "json"):
        r = CliRunner().invoke(main, ["calibrate", str(meas), "-o", str(tmp_path / "o.toml"), "--format", fmt])
        assert r.exit_code == 1, r.output
        assert "Traceback" not in r.output and "internal error" not in r.output, r.output
        if fmt == "json":
            doc = json.loads(r.stdout)
            jsonschema.validate(doc, schema("diagnostics"))
            assert doc["diagnostics"] and all(d["range"] for d in doc["diagnostics"])


def test_crlf_and_bom_files_are_located_like_any_other(tmp_path):
    doc = _doc(tmp_path, '[[point]]\r\nplan = "x.sn"\r\nqpm = "a"\r\n', "crlf.toml")
    assert _found(doc) == [("SN2084", 2, 8), ("SN2081", 3, 7)]
    doc = _doc(tmp_path, '\ufeff[[point]]\nqpm = 1\n', "bom.toml")
    assert _found(doc) == [("SN2082", 1, 1)]


def test_an_unreadable_file_is_sn1060_exit_2(tmp_path):
    missing = tmp_path / "missing.toml"
    r = CliRunner().invoke(main, ["calibrate", str(missing), "-o", str(tmp_path / "o.toml")])
    assert r.exit_code == 2 and "error[SN1060]" in r.output and "measurements file" in r.output, r.output
    r = CliRunner().invoke(main, ["calibrate", str(tmp_path), "-o", str(tmp_path / "o.toml"), "--format", "json"])
    assert r.exit_code == 2, r.output
    doc = json.loads(r.stdout)
    assert [d["code"] for d in doc["diagnostics"]] == ["SN1060"] and "is a directory" in doc["error"]
    r = CliRunner().invoke(main, ["calibrate", "-", "-o", str(tmp_path / "o.toml")])
    assert r.exit_code == 2 and "stdin" in r.output


def test_a_bad_output_path_is_exit_2_with_the_error_in_json(tmp_path):
    meas = tmp_path / "m.toml"
    meas.write_text(MANY)
    r = CliRunner().invoke(main, ["calibrate", str(meas), "-o", str(tmp_path), "--format", "json"])
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, schema("diagnostics"))
    assert "is a directory" in doc["error"] and doc["summary"]["valid"] is False


# ------------------------------------------------------------------ a clean file
def test_json_success_is_one_document_with_the_fit(tmp_path):
    meas = tmp_path / "m.json"
    meas.write_text(json.dumps({"profile": "ascend-a3", "fit": ["compute.eta_m"],
                                "point": [{"plan": str(PLAN), "tpot_ms": 45, "requests": 400}]}))
    out = tmp_path / "fitted.toml"
    r = CliRunner().invoke(main, ["calibrate", str(meas), "-o", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)                  # the report went to stderr
    jsonschema.validate(doc, schema("diagnostics"))
    assert doc["summary"]["valid"] is True and doc["diagnostics"] == []
    cal = doc["calibrate"]
    assert cal["profile"] == str(out) and list(cal["values"]) == ["compute.eta_m"] and out.exists()
    assert cal["rows"][0]["family"] == "tpot" and abs(cal["rows"][0]["residual"]) < 0.05
    assert "wrote" in r.stderr and "wrote" not in r.stdout


def test_the_library_loader_names_the_first_problem_with_its_position(tmp_path):
    from sncc.sim.calibration.fit import CalibrationError, load_measurements

    meas = tmp_path / "m.toml"
    meas.write_text(MANY)
    with pytest.raises(CalibrationError, match=rf"^{meas}:1:1: unknown key `profle` \(and 9 more problems\)$"):
        load_measurements(str(meas))


# ------------------------------------------------------------------ the position map
def test_toml_key_map_places_headers_keys_and_values():
    text = ('# c\nprofile = "a3"   # x\nfit = [\n  "a",  # one\n  \'b\',\n]\n'
            '[[point]]\nplan = """p\n.sn"""\n"q.x" = {u = 1, v.w = [1, {z = 2}]}\n[[point]]\nqpm = 1e3\n')
    km = keymap.key_map(text, "TOML")

    def at(path, key=False):
        s, e = keymap.locate(km, path, key=key)
        return text[s:e]

    assert at(("profile",)) == '"a3"' and at(("profile",), key=True) == "profile"
    assert at(("fit", 0)) == '"a"' and at(("fit", 1)) == "'b'"
    assert at(("point", 0)) == "[[point]]" and at(("point", 0, "plan")) == '"""p\n.sn"""'
    assert at(("point", 0, "q.x", "u")) == "1" and at(("point", 0, "q.x", "v", "w", 1, "z")) == "2"
    assert at(("point", 1, "qpm")) == "1e3" and at(("point", 1)) == "[[point]]"
    assert keymap.locate(km, ("point", 1, "absent")) == keymap.locate(km, ("point", 1))
    assert keymap.locate({}, ("x",)) == (0, 0)


def test_json_key_map_places_keys_and_values():
    text = '{"point": [{"plan": "a\\"b.sn", "qpm": -1.5e2}, 3], "fit": [true, null]}'
    km = keymap.key_map(text, "JSON")
    s, e = km[("point", 0, "plan")].value
    assert text[s:e] == '"a\\"b.sn"'
    s, e = km[("point", 0, "qpm")].key
    assert text[s:e] == '"qpm"'
    assert text[slice(*km[("point", 1)].value)] == "3" and text[slice(*km[("fit", 1)].value)] == "null"

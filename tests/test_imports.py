"""Imports across three files: overrides, provenance, diagnostics located in
the right file with the "imported here" chain, cycles and missing files."""

from __future__ import annotations

import json

from click.testing import CliRunner

from expect import ROOT, compile_text
from sncc.cli import main
from sncc.compiler import compile_file
from sncc.source import SourceFile

CLUSTER = '''# cluster.sn
hardware {
  system = "atlas-900-a3-superpod"
  nodes  = 11
  cann   = "8.0.RC3"
}
engine "omni-infer" {}
'''

MODEL = '''# model.sn
import "cluster.sn"
model "deepseek-r1" { quant = w8a8 }
kv_cache { dtype = int8 }
'''

PLAN = '''import "lib/model.sn"
plan "p" {
  hardware { cann = "8.2.RC1" }
  prefill { instances = 7  devices = 16  tp = 8  ep = 2  max_num_batched_tokens = 32k  chunked_prefill = 16k }
  decode  { instances = 1  devices = 64  tp = 1  ep = 64  max_num_seqs = 8 }
  workload { input { mean = 3.5k  max = 16k }  output { mean = 1.2k  max = 16k } }
}
'''


def _write(tmp_path, plan=PLAN, cluster=CLUSTER):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "cluster.sn").write_text(cluster)
    (tmp_path / "lib" / "model.sn").write_text(MODEL)
    p = tmp_path / "plan.sn"
    p.write_text(plan)
    return p


def _compile(path):
    return compile_file(SourceFile(str(path), path.read_text()))


def test_three_files_merge_with_override_and_provenance(tmp_path):
    p = _write(tmp_path)
    comp = _compile(p)
    assert not [d for d in comp.diagnostics if d.is_error], [(d.code.code, d.message) for d in comp.diagnostics]
    plan = comp.plan
    assert plan.hardware.cann == "8.2.RC1" and plan.hardware.nodes == 11
    assert plan.hardware.span_of("cann").file == str(p)                       # overridden here
    assert plan.hardware.span_of("nodes").file.endswith("lib/cluster.sn")      # from two imports down
    assert plan.model.span_of("quant").file.endswith("lib/model.sn")
    assert plan.kv_cache.dtype == "int8" and len(comp.sources) == 3


def test_diagnostic_points_into_imported_file_with_chain(tmp_path):
    p = _write(tmp_path, plan=PLAN.replace('  hardware { cann = "8.2.RC1" }\n', ""))
    comp = _compile(p)
    d = next(d for d in comp.diagnostics if d.code.code == "SN4005")
    assert d.span.file.endswith("lib/cluster.sn")
    src = comp.sources[d.span.file]
    assert src.line_col(d.span.start) == (5, 12)
    chain = [r for r in d.related if "imported here" in r.message]
    assert [r.span.file for r in chain] == [str(tmp_path / "lib" / "model.sn"), str(p)]
    r = CliRunner().invoke(main, ["check", "--format", "json", str(p)])
    doc = json.loads(r.output)
    j = next(x for x in doc["diagnostics"] if x["code"] == "SN4005")
    assert j["file"].endswith("lib/cluster.sn") and j["range"]["start"]["line"] == 5
    assert [x["range"]["start"]["line"] for x in j["related"] if "imported here" in x["message"]] == [2, 1]
    text = CliRunner().invoke(main, ["check", "--no-color", str(p)]).output
    assert "lib/cluster.sn:5:12" in text and "imported here" in text


def test_missing_and_cyclic_imports(tmp_path):
    (tmp_path / "a.sn").write_text('import "b.sn"\nhardware { nodes = 1 }\n')
    (tmp_path / "b.sn").write_text('import "a.sn"\nengine "vllm" {}\n')
    p = tmp_path / "plan.sn"
    p.write_text('import "a.sn"\nimport "nope.sn"\nplan "x" { }\n')
    comp = _compile(p)
    codes = {(d.code.code, d.span.file.rsplit("/", 1)[-1]) for d in comp.diagnostics}
    assert ("SN2012", "plan.sn") in codes
    assert ("SN2013", "b.sn") in codes


def test_definitions_file_checks_alone():
    comp = _compile(ROOT / "examples" / "shared" / "deepseek-r1-w8a8.sn")
    assert comp.plan is None and not comp.diagnostics
    comp = compile_file(SourceFile("lib.sn", 'hardwre { nodes = 2 }\n'))
    assert [d.code.code for d in comp.diagnostics] == ["SN2006"]


def test_lsp_definition_jumps_to_imported_definitions(tmp_path):
    """Go-to-definition across imports: from a plan key to the imported value it overrides."""
    from sncc.lsp.features import definition

    p = _write(tmp_path)
    text = p.read_text()
    comp = _compile(p)
    locs = definition(comp, text.index('cann = "8.2.RC1"'))
    assert [(loc.uri.rsplit("/", 1)[-1], loc.range.start.line) for loc in locs] == [("cluster.sn", 4)]
    locs = definition(comp, text.index('"lib/model.sn"') + 2)
    assert [loc.uri.rsplit("/", 1)[-1] for loc in locs] == ["model.sn"]
    assert definition(comp, text.index("decode")) == []


SHARED_HW = '''hardware {
  system = "hgx-h200"
  nodes = 1
  memory_utilization = 190%
}

engine "vllm" {
  version = "0.23.0"
}
'''

SHARED_BAD = '''hardware {
  system = "hgx-h20"
  nodes = -1
  bogus = 3
}

serve {
  tp = 3
}
'''

SHARED_MORE = '''model "qwen3-32bb" {}

hardware {
  chip = "nope"
}

serve {
  speculative { acceptance = 2 }
}

kv_cache {
  dtype = int9
}
'''

IMPORTER = '''import "shared/hw.sn"

plan "NAME" {
  model "qwen3-32b" { max_model_len = 16k }
  serve { instances = 1  devices = 4  tp = 4  max_num_seqs = 32 }
  workload {
    requests = 100
    concurrency = 32
    input { mean = 2k  max = 8k }
    output { mean = 512  max = 2k }
  }
}
'''


def _located(comp) -> list[tuple[str, int, int, str, str]]:
    out = []
    for d in comp.diagnostics:
        line, col = comp.sources[d.span.file].line_col(d.span.start)
        out.append((d.span.file.rsplit("/", 1)[-1], line, col, d.code.code, d.message))
    return out


def test_definitions_file_alone_validates_its_values_as_an_importer_does(tmp_path):
    """A definitions file checked on its own gets the value diagnostics (range, unknown system)
    a plan importing it gets, at the same positions; a check of the whole plan (tp = 3 against
    the model, devices per instance) does not run."""
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "hw.sn").write_text(SHARED_HW)
    (tmp_path / "shared" / "bad.sn").write_text(SHARED_BAD)
    alone = _compile(tmp_path / "shared" / "hw.sn")
    assert [x[1:4] for x in _located(alone)] == [(4, 24, "SN2009")]
    p = tmp_path / "p.sn"
    p.write_text(IMPORTER.replace("NAME", "p"))
    in_plan = [x for x in _located(_compile(p)) if x[0] == "hw.sn" and x[3] == "SN2009"]
    assert in_plan == _located(alone)     # same code, position and message

    bad = _compile(tmp_path / "shared" / "bad.sn")
    assert [x[1:4] for x in _located(bad)] == [(2, 12, "SN2008"), (3, 11, "SN2009"), (4, 3, "SN2001")]
    assert bad.plan is None
    msgs = [x[4] for x in _located(bad)]
    assert msgs[0] == "unknown system `hgx-h20`" and "`nodes` in `hardware` must be at least 1" in msgs[1]

    # the same for an unknown chip and model, a nested block's value, an enum name
    other = compile_text(SHARED_MORE, name="lib.sn")
    assert [d.code.code for d in other.diagnostics] == ["SN2008", "SN2008", "SN2009", "SN2004"]
    r = CliRunner().invoke(main, ["check", str(tmp_path / "shared" / "hw.sn")])
    assert r.exit_code == 1, r.output


def test_shared_file_problem_is_reported_once_per_run(tmp_path):
    """`sncc check a.sn b.sn shared/hw.sn`: each problem in the shared file once (one SARIF
    result per location), not once per importer."""
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "hw.sn").write_text(SHARED_HW)
    for name in ("p1", "p2"):
        (tmp_path / f"{name}.sn").write_text(IMPORTER.replace("NAME", name))
    files = [str(tmp_path / "p1.sn"), str(tmp_path / "p2.sn"), str(tmp_path / "shared" / "hw.sn")]
    r = CliRunner().invoke(main, ["check", "--format", "sarif", *files])
    results = json.loads(r.stdout)["runs"][0]["results"]
    keys = [(x["ruleId"], x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             x["locations"][0]["physicalLocation"]["region"]["startLine"],
             x["locations"][0]["physicalLocation"]["region"]["startColumn"], x["message"]["text"]) for x in results]
    assert len(keys) == len(set(keys)), keys
    assert sum(1 for k in keys if k[0] == "SN2009") == 1
    assert sum(1 for k in keys if k[0] == "SN5002") == 2     # one in each plan: different files
    doc = json.loads(CliRunner().invoke(main, ["check", "--format", "json", *files]).stdout)
    assert sum(1 for d in doc["diagnostics"] if d["code"] == "SN2009") == 1

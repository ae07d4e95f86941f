"""Imports across three files: overrides, provenance, diagnostics located in
the right file with the "imported here" chain, cycles and missing files."""

from __future__ import annotations

import json

from click.testing import CliRunner

from expect import ROOT
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

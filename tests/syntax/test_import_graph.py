"""Import resolution on hostile graphs: a diamond lattice is parsed once per file (not once per
path through it), a very deep chain is a located diagnostic (not a RecursionError), a folder
symlinked to itself is one import cycle (SN2013), and a NUL byte in an import path is SN2012."""

from __future__ import annotations

from sncc.compiler import Compilation
from sncc.source import SourceFile


def _compile(path, parse_counter=None):
    comp = Compilation(SourceFile(str(path), path.read_text(encoding="utf-8")))
    if parse_counter is not None:
        import sncc.syntax.parser as parser

        real = parser.parse

        def counting(src):
            parse_counter[src.name] = parse_counter.get(src.name, 0) + 1
            return real(src)

        parser.parse = counting
        try:
            return comp, comp.diagnostics
        finally:
            parser.parse = real
    return comp, comp.diagnostics


PLAN = '''import "l0a.sn"
plan "p" {
  model "qwen3-32b" {}
  engine "vllm" {}
  serve { devices = 8  tp = 8 }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''


def test_diamond_lattice_parses_each_file_once(tmp_path):
    levels = 16
    for lvl in range(levels):
        for side in "ab":
            imports = "" if lvl == levels - 1 else f'import "l{lvl + 1}a.sn"\nimport "l{lvl + 1}b.sn"\n'
            body = 'hardware { system = "hgx-h100"  nodes = 1 }\n' if lvl == levels - 1 else ""
            (tmp_path / f"l{lvl}{side}.sn").write_text(imports + body, encoding="utf-8")
    plan = tmp_path / "plan.sn"
    plan.write_text(PLAN, encoding="utf-8")
    counts: dict[str, int] = {}
    comp, diags = _compile(plan, counts)
    assert comp.plan is not None and comp.plan.hardware.system == "hgx-h100"
    assert not [d for d in diags if d.is_error], [(d.code.code, d.message) for d in diags]
    imported = {k: v for k, v in counts.items() if k != str(plan)}
    assert len(imported) == 2 * levels - 1  # l0b is not imported by the plan
    assert max(imported.values()) == 1, sorted(imported.items(), key=lambda kv: -kv[1])[:3]


def test_deep_chain_is_a_diagnostic(tmp_path):
    depth = 1200
    for i in range(depth):
        nxt = f'import "c{i + 1}.sn"\n' if i + 1 < depth else 'hardware { nodes = 1 }\n'
        (tmp_path / f"c{i}.sn").write_text(nxt, encoding="utf-8")
    plan = tmp_path / "plan.sn"
    plan.write_text(PLAN.replace("l0a.sn", "c0.sn"), encoding="utf-8")
    comp, diags = _compile(plan)
    codes = [d.code.code for d in diags]
    assert "SN9001" not in codes
    deep = [d for d in diags if d.code.code == "SN2012" and "deep" in d.message]
    assert len(deep) == 1, [(d.code.code, d.message) for d in diags][:5]
    assert deep[0].span is not None


def test_folder_symlinked_to_itself_is_one_cycle(tmp_path):
    (tmp_path / "loop").symlink_to(".")
    (tmp_path / "a.sn").write_text('import "loop/a.sn"\nhardware { nodes = 1 }\n', encoding="utf-8")
    plan = tmp_path / "plan.sn"
    plan.write_text(PLAN.replace("l0a.sn", "a.sn"), encoding="utf-8")
    comp, diags = _compile(plan)
    got = [d.code.code for d in diags if d.is_error]
    assert got.count("SN2013") == 1, [(d.code.code, d.message) for d in diags]
    assert "SN2014" not in got and "SN2012" not in got


def test_nul_byte_in_import_path(tmp_path):
    plan = tmp_path / "plan.sn"
    plan.write_text(PLAN.replace("l0a.sn", "x\\u0000.sn").replace('"x\\u0000.sn"', '"x\x00.sn"'), encoding="utf-8")
    comp, diags = _compile(plan)
    got = [d.code.code for d in diags]
    assert "SN9001" not in got
    assert "SN2012" in got or "SN1002" in got, got

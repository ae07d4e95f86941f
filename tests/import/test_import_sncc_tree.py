"""`sncc import` of a tree `sncc build` wrote: the role YAML's header names the engine, release and
system it was built for (`# vllm-ascend v0.23.0 (vLLM 0.23.0) on atlas-800-a2, serve role; ...`),
and the import reads all three back, so that build → import → check is clean."""
from __future__ import annotations

from expect import compile_text, outputs_of

from sncc.importer import import_files

ASCEND = '''plan "q32" {
  model "qwen3-32b" { max_model_len = 8k }
  hardware { system = "atlas-800-a2"  devices = 4 }
  engine "vllm-ascend" { version = "v0.23.0" }
  serve { devices = 4  tp = 4  max_num_seqs = 16  chunked_prefill = 8k }
  workload {
    input { mean = 1k  max = 2k }
    output { mean = 128  max = 512 }
  }
}
'''

B200_LMCACHE = '''plan "q32" {
  model "qwen3-32b" { max_model_len = 8k }
  hardware { system = "hgx-b200"  devices = 4 }
  engine "vllm" { version = "0.23.0" }
  serve { devices = 4  tp = 4  max_num_seqs = 64  max_num_batched_tokens = 8k }
  kv_transfer { connector = lmcache }
  workload {
    input { mean = 1k  max = 2k }
    output { mean = 128  max = 512 }
  }
}
'''


def _built(tmp_path, text, edit=None):
    files = outputs_of(text, "plan.sn")
    for name, body in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(edit(name, body) if edit else body, encoding="utf-8")
    return [str(tmp_path / n) for n in sorted(files) if n.startswith("launch/")]


def _errors(text):
    return [(d.code.code, d.message) for d in compile_text(text).diagnostics if d.is_error]


def test_a_vllm_ascend_tree_imports_on_its_own_system(tmp_path):
    """The vendor was guessed from the script (nvidia: hgx-h100) under engine vllm-ascend: SN4007."""
    res = import_files(_built(tmp_path, ASCEND)[:1])
    assert 'system = "atlas-800-a2"  # from the sncc header of serve.yaml' in res.text, res.text
    assert 'engine "vllm-ascend"' in res.text and 'version = "v0.23.0"  # from the sncc header' in res.text
    assert not [d for d in res.diagnostics if d.code.code == "SN8008"], [d.message for d in res.diagnostics]
    assert _errors(res.text) == []


def test_a_header_without_a_system_takes_the_vendor_from_the_engine(tmp_path):
    """Trees built before the header named the system: vllm-ascend runs on Ascend only."""
    old = _built(tmp_path, ASCEND, lambda n, b: b.replace(" on atlas-800-a2,", ",") if n.endswith(".yaml") else b)
    res = import_files(old[:1])
    assert 'system = "atlas-800-a2"  # assumed' in res.text, res.text
    assert _errors(res.text) == []


def test_the_engine_option_decides_the_vendor():
    from sncc.importer import import_sources
    from sncc.source import SourceFile

    res = import_sources([SourceFile("run.sh", "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4 "
                                               "--max-model-len 8192\n")], engine="vllm-ascend")
    assert 'system = "atlas-800-a2"' in res.text and 'engine "vllm-ascend"' in res.text


def test_a_tree_at_sncc_s_default_pin_reads_its_release_and_system_from_the_header(tmp_path):
    """A vLLM 0.23.0 tree said `assumed: sncc's default pin` and hgx-h100 for a B200 build."""
    res = import_files(_built(tmp_path, B200_LMCACHE)[:1])
    assert 'version = "0.23.0"  # from the sncc header of serve.yaml' in res.text, res.text
    assert 'system = "hgx-b200"  # from the sncc header of serve.yaml' in res.text


def test_an_lmcache_connector_imports_back_as_the_plan_s_connector(tmp_path):
    """`--kv-transfer-config {"kv_connector": "LMCacheConnectorV1", ...}` was kept as a comment only."""
    res = import_files(_built(tmp_path, B200_LMCACHE)[:1])
    assert "connector = lmcache  # from serve-0-node0.sh" in res.text, res.text
    assert not [d for d in res.diagnostics if "kv-transfer-config" in d.message]
    again = outputs_of(res.text, "imported.sn")
    first = outputs_of(B200_LMCACHE, "plan.sn")
    line = next(x for x in first["launch/serve-0-node0.sh"].splitlines() if "--kv-transfer-config" in x)
    assert line in again["launch/serve-0-node0.sh"].splitlines()


def test_a_p_d_transfer_connector_stays_a_comment():
    from sncc.importer import import_sources
    from sncc.source import SourceFile

    res = import_sources([SourceFile("run.sh", "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4 --max-model-len 8192 "
                                               "--kv-transfer-config '{\"kv_connector\": \"NixlConnector\", "
                                               "\"kv_role\": \"kv_both\"}'\n")], system="hgx-h100")
    (d,) = [d for d in res.diagnostics if "kv-transfer-config" in d.message]
    assert d.code.code == "SN8004" and "prefill/decode" in d.message
    assert "kv_transfer" not in res.text.split("# not imported")[0]


def test_a_script_and_its_config_yaml_given_together_count_and_list_once(tmp_path):
    """`sncc import launch/prefill-0-node0.sh prefill.yaml` said "1 warning in 3 files" and
    "from prefill-0-node0.sh, prefill.yaml, prefill.yaml"."""
    from click.testing import CliRunner

    from sncc.cli import main

    script = _built(tmp_path, B200_LMCACHE)[0]
    yaml_file = str(tmp_path / "serve.yaml")
    res = import_files([script, yaml_file])
    assert "# imported by `sncc import` from serve-0-node0.sh, serve.yaml (never executed)" in res.text, res.text
    assert len([n for n in res.sources if "/env/" not in n]) == 2   # and the env files the script sources
    plain = '\nexport HF_TOKEN=hf_' + "a" * 32 + '\n'   # a warning (SN8013), so that the summary line is printed
    p = tmp_path / "launch" / "serve-0-node0.sh"
    p.write_text(p.read_text(encoding="utf-8").replace("\nexec vllm", plain + "exec vllm", 1), encoding="utf-8")
    for given in ([script, yaml_file], [script, yaml_file, str(tmp_path / "." / "serve.yaml")]):
        r = CliRunner().invoke(main, ["import", *given, "-o", str(tmp_path / "imp.sn")])
        assert r.output.rstrip().endswith("1 warning in 2 files"), r.output[-300:]
    r = CliRunner().invoke(main, ["import", script, "-o", str(tmp_path / "imp.sn")])
    assert r.output.rstrip().endswith("1 warning in 1 file"), r.output[-300:]


ASCEND_W4A8 = ASCEND.replace('model "qwen3-32b" { max_model_len = 8k }',
                             'model "qwen3-32b" {\n    quant = w4a8\n    max_model_len = 8k\n  }')


def test_the_manifest_decides_among_the_formats_of_one_method(tmp_path):
    """`--quantization ascend` is every msModelSlim format: a tree built for w4a8 (whose model
    path names no format) was imported as `w8a8 assumed`; the build's manifest.json says w4a8."""
    from click.testing import CliRunner

    from sncc.cli import main

    (tmp_path / "plan.sn").write_text(ASCEND_W4A8, encoding="utf-8")
    got = CliRunner().invoke(main, ["build", str(tmp_path / "plan.sn"), "-o", str(tmp_path / "out")])
    assert got.exit_code == 0, got.output
    res = import_files([str(tmp_path / "out" / "launch" / "serve-0-node0.sh")])
    assert "quant = w4a8  # from serve.yaml:7 (--quantization ascend, `w4a8` from the manifest.json of the build)" \
        in res.text, res.text
    assert "assumed" not in res.text.split("hardware {")[0]

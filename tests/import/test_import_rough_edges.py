"""`sncc import` rough edges from a fresh-user break test: Hugging Face variables are known, one
diagnostic per option, a repeated YAML key is reported, the release of an sncc-built tree is read
from its header, `check --import` counts the files given, and an unreadable file is SN1060."""
from __future__ import annotations

import json

from click.testing import CliRunner
from expect import ROOT, outputs_of

from sncc.cli import main
from sncc.importer import import_files

DOCKER = ('#!/bin/bash\n'
          'docker run --gpus all -e HF_TOKEN -e HF_HOME=/models -e VLLM_USE_V1=1 -p 8000:8000 vllm/vllm-openai:v0.23.0 \\\n'
          '  --model Qwen/Qwen3-32B --tensor-parallel-size 8 --max-model-len 8192\n')


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def _about(res, name):
    return [d.code.code for d in res.diagnostics if f"`{name}`" in d.message]


def test_hugging_face_variables_are_known_and_each_option_has_one_diagnostic(tmp_path):
    """`-e HF_TOKEN` got SN8002 ("read by no engine... remove it") and SN8005 for the same option."""
    res = import_files([str(_write(tmp_path, "run.sh", DOCKER))], system="hgx-h100")
    assert _about(res, "HF_TOKEN") == ["SN8005"]          # the host's value, passed through: not in the plan
    assert _about(res, "HF_HOME") == []
    assert _about(res, "VLLM_USE_V1") == ["SN8002"]       # vLLM 0.23.0 reads it no more


def test_hugging_face_variables_cite_the_hub_docs():
    from sncc.engines.manifest import runtime_env

    rows = runtime_env().data["env"]
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HOME", "HF_ENDPOINT"):
        assert rows[name]["source"].startswith("https://huggingface.co/docs/huggingface_hub/"), name


def test_check_import_reports_an_unread_variable_once_and_counts_the_files_given(tmp_path):
    """VLLM_USE_V1 came as SN8002 and SN4044; one script was "3 warnings in 2 files"."""
    script = _write(tmp_path, "run.sh", DOCKER)
    r = CliRunner().invoke(main, ["check", "--import", str(script), "--format", "json"])
    doc = json.loads(r.output)
    codes = [d["code"] for d in doc["diagnostics"] if "VLLM_USE_V1" in d["message"]]
    assert codes == ["SN8002"], codes
    r = CliRunner().invoke(main, ["check", "--import", str(script)])
    assert r.output.rstrip().endswith("in 1 file"), r.output[-200:]


def test_a_repeated_yaml_key_is_reported_at_the_second(tmp_path):
    """A repeated `max-num-seqs` in a --config YAML silently kept the last value."""
    cfg = _write(tmp_path, "cfg.yaml", "model: Qwen/Qwen3-32B\ntensor-parallel-size: 8\nmax-num-seqs: 64\n"
                                       "max-model-len: 8192\nmax-num-seqs: 256\n")
    res = import_files([str(cfg)], system="hgx-h100")
    (d,) = [d for d in res.diagnostics if d.code.code == "SN8012"]
    assert d.severity == "warning" and res.sources[str(cfg)].line_col(d.span.start)[0] == 5
    assert "line 3" in d.message and "`256`" in d.message
    assert "max_num_seqs = 256" in res.text


def test_an_sncc_built_script_imports_with_the_release_it_was_built_for(tmp_path):
    """launch/serve-0-node0.sh of a vLLM 0.11.0 build imported as 0.23.0 (sncc's default pin)."""
    text = (ROOT / "tests" / "golden" / "vllm-h100-llama-serve" / "plan.sn").read_text(encoding="utf-8")
    text = text.replace('engine "vllm" { version = "0.23.0" }', 'engine "vllm" { version = "0.11.0" }')
    assert 'version = "0.11.0"' in text
    files = outputs_of(text, "plan.sn")
    for name, body in files.items():
        _write(tmp_path, name, body)
    script = sorted(n for n in files if n.startswith("launch/"))[0]
    res = import_files([str(tmp_path / script)], system="hgx-h100")
    assert 'version = "0.11.0"  # from the sncc header of' in res.text, res.text
    assert not [d for d in res.diagnostics if d.code.code == "SN8008" and "release" in d.message]


def test_an_unreadable_file_is_sn1060(tmp_path):
    """`sncc import none.sh` printed a bare "sncc: error: ..."."""
    missing = str(tmp_path / "none.sh")
    r = CliRunner().invoke(main, ["import", missing])
    assert r.exit_code == 2 and "SN1060" in r.output and "launch script" in r.output, r.output
    r = CliRunner().invoke(main, ["check", "--import", missing, "--format", "json"])
    assert r.exit_code == 2 and [d["code"] for d in json.loads(r.output)["diagnostics"]] == ["SN1060"]

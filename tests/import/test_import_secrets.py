"""`sncc import` never writes a credential into the plan (SN8013): SN2007's rule
(sncc/diagnostics/secrets.py) decides what is one; an `env` variable is named in a comment and
left to the serving shell, an engine argument is kept as a comment without its value."""
from __future__ import annotations

from expect import compile_text

from sncc.importer import import_sources
from sncc.source import SourceFile

TOKEN = "hf_" + "abcdefghijklmnopqrstuvwxyz" + "123456"
KEY = "sk-" + "abcdefghijklmnop1234"


def _imp(text, name="run.sh"):
    return import_sources([SourceFile(name, text)], system="hgx-h100")


def test_an_exported_token_is_not_copied_and_is_reported_at_its_line():
    res = _imp(f"#!/bin/bash\nexport HF_TOKEN={TOKEN}\n"
               "vllm serve Qwen/Qwen3-30B-A3B --tensor-parallel-size 4 --max-model-len 8192\n")
    assert TOKEN not in res.text
    assert "# HF_TOKEN: value not copied (a credential, from run.sh:2)" in res.text
    got = [d for d in res.diagnostics if d.code.code == "SN8013"]
    assert len(got) == 1 and "`HF_TOKEN`" in got[0].message
    assert res.sources["run.sh"].line_col(got[0].span.start)[0] == 2
    comp = compile_text(res.text)
    assert not [d for d in comp.diagnostics if d.code.code == "SN2007"]


def test_a_container_env_token_is_not_copied():
    res = _imp(f"docker run --gpus all -e HUGGING_FACE_HUB_TOKEN={TOKEN} vllm/vllm-openai:v0.23.0 "
               "--model Qwen/Qwen3-32B --tensor-parallel-size 8 --max-model-len 8192\n")
    assert TOKEN not in res.text
    assert [d.code.code for d in res.diagnostics if "HUGGING_FACE_HUB_TOKEN" in d.message] == ["SN8013"]


def test_an_api_key_argument_is_kept_without_its_value():
    res = _imp(f"vllm serve Qwen/Qwen3-32B --tensor-parallel-size 8 --max-model-len 8192 --api-key {KEY}\n")
    assert KEY not in res.text
    assert "--api-key <value not copied: a credential>" in res.text
    assert [d.code.code for d in res.diagnostics if "--api-key" in d.message] == ["SN8013"]


def test_a_plain_value_is_still_copied():
    res = _imp("export HF_HOME=/models\nvllm serve Qwen/Qwen3-32B --tensor-parallel-size 8 --max-model-len 8192\n")
    assert 'HF_HOME = "/models"' in res.text
    assert not [d for d in res.diagnostics if d.code.code == "SN8013"]

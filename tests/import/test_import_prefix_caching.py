"""`--enable-prefix-caching` / `--no-enable-prefix-caching` (and the `--config` YAML key) import to
the role's `prefix_caching`, and build → import keeps it.  The vllm-ascend nightly configs and
tutorials run with `--no-enable-prefix-caching` (e.g.
https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/tests/e2e/nightly/single_node/models/configs/Qwen3-32B-Int8-A2.yaml,
tests/import/scripts/va-nightly-qwen3-32b-w8a8-a2.sh); before, it was SN8004 "has no plan key"."""

from __future__ import annotations

import pytest
from expect import ROOT, compile_text, outputs_of

from sncc.importer import import_files, import_sources
from sncc.source import SourceFile

SCRIPTS = ROOT / "tests" / "import" / "scripts"
LINE = "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 8 --max-model-len 8192{}\n"


def _imported(text: str, **kw):
    res = import_sources([SourceFile("run.sh", text)], system="hgx-h100", **kw)
    assert not [d for d in res.diagnostics if d.code.code == "SN8004"], [d.message for d in res.diagnostics]
    return res, compile_text(res.text)


@pytest.mark.parametrize("flag, value", [(" --no-enable-prefix-caching", False), (" --enable-prefix-caching", True)])
def test_the_switch_imports_to_the_role_key(flag, value):
    res, comp = _imported(LINE.format(flag))
    assert comp.plan.serve.prefix_caching is value
    assert f"prefix_caching = {str(value).lower()}  # from run.sh:1" in res.text


def test_without_the_switch_the_key_is_not_written():
    res, comp = _imported(LINE.format(""))
    assert "prefix_caching" not in res.text and comp.plan.serve.prefix_caching is None


def test_the_config_yaml_key_imports_too(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("model: Qwen/Qwen3-32B\ntensor-parallel-size: 8\nmax-model-len: 8192\nenable-prefix-caching: true\n",
                   encoding="utf-8")
    res = import_files([str(cfg)], system="hgx-h100")
    assert compile_text(res.text).plan.serve.prefix_caching is True, res.text
    cfg.write_text("model: Qwen/Qwen3-32B\ntensor-parallel-size: 8\nmax-model-len: 8192\nno-enable-prefix-caching: true\n",
                   encoding="utf-8")
    res = import_files([str(cfg)], system="hgx-h100")
    assert compile_text(res.text).plan.serve.prefix_caching is False, res.text


def test_a_vllm_ascend_nightly_config_keeps_prefix_caching_off():
    res = import_files([str(SCRIPTS / "va-nightly-qwen3-32b-w8a8-a2.sh")])
    assert "--no-enable-prefix-caching" not in res.text           # no longer kept as a comment (SN8004)
    assert compile_text(res.text).plan.serve.prefix_caching is False


@pytest.mark.parametrize("value", ["true", "false"])
def test_build_then_import_keeps_it(value, tmp_path):
    plan = (ROOT / "tests" / "golden" / "vllm-h100-llama-serve" / "plan.sn").read_text(encoding="utf-8")
    plan = plan.replace("chunked_prefill = 8k\n", f"chunked_prefill = 8k\n    prefix_caching = {value}\n")
    files = outputs_of(plan)
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    res = import_files([str(tmp_path / "launch" / "serve-0-node0.sh")], system="hgx-h100")
    assert compile_text(res.text).plan.serve.prefix_caching is (value == "true"), res.text

"""`sncc import --system ID` / `--model ID` with an id the catalog does not know is SN2008 (with the
closest known id) and writes no plan, instead of a plan naming it with exit 0; a known `--model` keeps
the repository the script loads as `weights`."""

from __future__ import annotations

from click.testing import CliRunner
from expect import compile_text

from sncc.importer import import_sources
from sncc.source import SourceFile

CFG = "model: Qwen/Qwen3-32B\ntensor-parallel-size: 4\nmax-model-len: 16384\n"


def _import(**kw):
    return import_sources([SourceFile("cfg.yaml", CFG)], **kw)


def test_unknown_system_is_sn2008_with_the_closest_id():
    res = _import(system="hgx-h10")
    got = [d for d in res.diagnostics if d.code.code == "SN2008"]
    assert len(got) == 1 and got[0].is_error, [(d.code.code, d.message) for d in res.diagnostics]
    assert "`hgx-h10`" in got[0].message and "--system" in got[0].message
    assert "hgx-h100" in got[0].help
    assert res.text == ""


def test_unknown_system_lists_the_known_ones():
    (d,) = [d for d in _import(system="nope").diagnostics if d.code.code == "SN2008"]
    assert "atlas-800-a2" in d.help and "hgx-h100" in d.help


def test_unknown_model_is_sn2008():
    res = _import(model="qwen3-32")
    (d,) = [d for d in res.diagnostics if d.code.code == "SN2008"]
    assert "`qwen3-32`" in d.message and "--model" in d.message and "qwen3-32b" in d.help
    assert res.text == ""


def test_an_uncatalogued_model_with_a_local_checkpoint_imports(tmp_path):
    ck = tmp_path / "my-model"
    ck.mkdir()
    (ck / "config.json").write_text("{}", encoding="utf-8")
    res = import_sources([SourceFile(str(tmp_path / "run.sh"), f"vllm serve {ck} --tensor-parallel-size 4\n")],
                         model="my-model")
    assert not [d for d in res.diagnostics if d.code.code == "SN2008"]
    assert f'weights = "{ck}"' in res.text


def test_model_override_keeps_the_config_repository_as_weights():
    res = _import(model="qwen3-32b")
    assert 'model "qwen3-32b"' in res.text
    assert 'weights = "Qwen/Qwen3-32B"' in res.text, res.text
    assert [d.code.code for d in compile_text(res.text).diagnostics if d.is_error] == []


def test_cli_exit_code(tmp_path):
    from sncc.cli import main

    p = tmp_path / "cfg.yaml"
    p.write_text(CFG, encoding="utf-8")
    r = CliRunner().invoke(main, ["import", str(p), "--system", "nope"])
    assert r.exit_code == 1 and 'system = "nope"' not in r.output
    r = CliRunner().invoke(main, ["check", "--import", str(p), "--model", "nope-model"])
    assert r.exit_code == 1 and "SN2008" in r.output

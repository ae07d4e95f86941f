"""`sncc import` of the command line itself: a container's explicit `vllm serve` command after a
non-vLLM image, extra positionals, `--model` where `vllm serve` refuses it, two models, no model."""

from sncc.importer import import_sources
from sncc.source import SourceFile


def _imp(text, name="run.sh", **kw):
    return import_sources([SourceFile(name, text)], **kw)


def _codes(res):
    return [(d.code.code, d.severity) for d in res.diagnostics]


ASCEND_DOCKER = (
    "docker run --rm --net=host --device /dev/davinci0 --device /dev/davinci1 --device /dev/davinci2 \\\n"
    "  --device /dev/davinci3 -v /data/models:/data/models \\\n"
    "  -e HCCL_BUFFSIZE=512 --env ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 \\\n"
    "  -it quay.io/ascend/vllm-ascend:v0.11.0 \\\n"
    "  vllm serve /data/models/Qwen3-32B --tensor-parallel-size 4 --max-model-len 16384\n")


def test_explicit_vllm_serve_after_another_image_is_imported_with_its_docker_env():
    res = _imp(ASCEND_DOCKER)
    assert "SN8006" not in [c for c, _ in _codes(res)], res.diagnostics
    assert 'model "/data/models/Qwen3-32B"' in res.text
    assert "tp = 4" in res.text and 'engine "vllm-ascend"' in res.text
    assert 'HCCL_BUFFSIZE = "512"' in res.text and 'ASCEND_RT_VISIBLE_DEVICES = "0,1,2,3"' in res.text


def test_api_server_module_after_another_image_is_imported():
    res = _imp("docker run --rm my/image:1 python3 -m vllm.entrypoints.openai.api_server "
               "--model Qwen/Qwen3-32B --max-model-len 4096\n")
    assert "SN8006" not in [c for c, _ in _codes(res)]
    assert 'model "Qwen/Qwen3-32B"' in res.text


def test_extra_positionals_are_errors_at_their_position():
    text = "vllm serve Qwen/Qwen3-32B /data/other extra --tensor-parallel-size 2 --max-model-len 4096\n"
    res = _imp(text)
    extra = [d for d in res.diagnostics if d.code.code == "SN8001"]
    assert [text[d.span.start:d.span.end] for d in extra] == ["/data/other", "extra"]
    assert all(d.severity == "error" for d in extra) and res.has_errors


def test_vllm_serve_given_to_the_vllm_image_is_refused_with_the_reason():
    res = _imp("docker run --rm vllm/vllm-openai:v0.11.0 vllm serve /data/m --max-model-len 4096\n")
    extra = [d for d in res.diagnostics if d.code.code == "SN8001"]
    assert extra and all("entry point" in (d.help or "") for d in extra), res.diagnostics
    assert res.has_errors


def test_model_option_is_refused_on_0_11_0():
    text = "vllm serve --model /data/x --tensor-parallel-size 2 --max-model-len 4096\n"
    res = _imp(text, engine_version="0.11.0")
    bad = [d for d in res.diagnostics if d.code.code == "SN8001"]
    assert len(bad) == 1 and text[bad[0].span.start:bad[0].span.end] == "--model", res.diagnostics
    assert "positional" in bad[0].message
    # a release whose parser takes it: no error
    assert not _imp(text, engine_version="0.23.0").has_errors


def test_two_different_models_are_an_error_naming_both():
    text = "vllm serve Qwen/Qwen3-32B --model /data/x --tensor-parallel-size 2 --max-model-len 4096\n"
    res = _imp(text, engine_version="0.23.0")
    bad = [d for d in res.diagnostics if d.severity == "error"]
    assert len(bad) == 1 and "Qwen/Qwen3-32B" in bad[0].message and "/data/x" in bad[0].message, res.diagnostics
    assert text[bad[0].span.start:bad[0].span.end] == "--model /data/x"
    assert 'model "Qwen/Qwen3-32B"' in res.text


def test_no_model_is_a_clear_diagnostic_at_the_command():
    text = "vllm serve --tensor-parallel-size 2 --max-model-len 4096\n"
    res = _imp(text)
    msgs = [d.message for d in res.diagnostics]
    assert not any("``" in m for m in msgs), msgs
    d = next(d for d in res.diagnostics if "no model given" in d.message)
    assert d.severity == "warning" and text[d.span.start:d.span.end] == text.strip()


def test_an_ansible_inventory_is_named_not_read_as_a_vllm_config():
    """Break test 28: Omni-Infer's Ansible inventory given to `sncc import` was read as a vLLM
    --config YAML (SN8001 "`all` is no `vllm serve` option", SN8003, a no-model warning)."""
    from sncc.importer import import_sources
    from sncc.source import SourceFile

    inv = SourceFile("omni.yml", "all:\n  children:\n    P:\n      hosts:\n        p0: {ansible_host: 10.0.0.1}\n")
    res = import_sources([inv])
    assert res.text == ""
    assert [d.code.code for d in res.diagnostics] == ["SN8006"]
    assert "Ansible inventory" in res.diagnostics[0].message
    assert res.sources["omni.yml"].line_col(res.diagnostics[0].span.start) == (1, 1)

"""`sncc import` of ``docker run … vllm/vllm-openai …`` and of a parallel size computed at run time.

Before: a docker script got SN8006 ("no engine command") with no hint, and
``--tensor-parallel-size $(nvidia-smi …)`` warned SN8005 but wrote ``devices = 1`` from tp's default."""
from __future__ import annotations

from expect import compile_text
from sncc.importer import import_files

DOCKER = ('#!/bin/bash\n'
          'docker run --runtime nvidia --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface \\\n'
          '  --env "HF_TOKEN=$HF_TOKEN" -p 8000:8000 --ipc=host vllm/vllm-openai:v0.11.0 \\\n'
          '  --model Qwen/Qwen3-32B --tensor-parallel-size 4 --max-model-len 8192\n')


def _imp(tmp_path, text, name="run.sh", **kw):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return import_files([str(p)], **kw)


def _codes(res):
    return [d.code.code for d in res.diagnostics]


def test_docker_run_of_the_vllm_image_reads_the_arguments_after_the_image(tmp_path):
    res = _imp(tmp_path, DOCKER, system="hgx-h100")
    assert "SN8006" not in _codes(res), [d.message for d in res.diagnostics]
    assert "tp = 4" in res.text and "devices = 4" in res.text and "max_model_len = 8192" in res.text
    assert 'version = "0.11.0"  # the image tag vllm/vllm-openai:v0.11.0' in res.text
    assert not [d for d in compile_text(res.text).diagnostics if d.is_error]


def test_an_entrypoint_override_is_read_as_the_command(tmp_path):
    res = _imp(tmp_path, "docker run --rm -it --entrypoint vllm vllm/vllm-openai:latest serve Qwen/Qwen3-32B "
                         "--max-model-len 4096 -tp 2\n", system="hgx-h100")
    assert "SN8006" not in _codes(res) and "tp = 2" in res.text


def test_another_image_gets_sn8006_with_a_hint_at_the_command(tmp_path):
    res = _imp(tmp_path, "# start it\ndocker run --rm -it ubuntu:22.04 bash\n")
    (d,) = [d for d in res.diagnostics if d.code.code == "SN8006"]
    assert "vllm/vllm-openai" in d.help and d.span.start == len("# start it\n")


def test_an_unresolved_parallel_size_never_becomes_a_device_count(tmp_path):
    res = _imp(tmp_path, "vllm serve Qwen/Qwen3-32B --tensor-parallel-size $(nvidia-smi -L | wc -l) "
                         "--max-model-len 8192\n", system="hgx-h100", engine_version="0.11.0")
    assert "SN8005" in _codes(res)
    lines = [ln.strip() for ln in res.text.splitlines()]
    assert not any(ln.startswith(("devices =", "tp =")) for ln in lines), res.text
    assert any(ln.startswith("# tp = ?") and "nvidia-smi" in ln for ln in lines)
    assert any(ln.startswith("# devices = ?") for ln in lines)
    # the plan says what is missing instead of deploying one device
    assert "SN2005" in [d.code.code for d in compile_text(res.text).diagnostics if d.is_error]


def test_docker_env_options_become_the_plans_env(tmp_path):
    """`-e NAME=v`, `--env NAME=v`, `--env=NAME=v` and `-eNAME=v` set the container's environment (Docker's
    `docker container run` reference); before, they were dropped without a word."""
    res = _imp(tmp_path, '#!/bin/bash\ndocker run --gpus all -e VLLM_USE_V1=1 --env "VLLM_LOGGING_LEVEL=DEBUG" '
                         '--env=VLLM_ENGINE_ITERATION_TIMEOUT_S=120 -eVLLM_RPC_TIMEOUT=20000 '
                         'vllm/vllm-openai:v0.11.0 --model Qwen/Qwen3-32B -tp 4 --max-model-len 8192\n',
               system="hgx-h100")
    env = res.text[res.text.index("env {"):]
    for line in ('VLLM_USE_V1 = "1"', 'VLLM_LOGGING_LEVEL = "DEBUG"', 'VLLM_ENGINE_ITERATION_TIMEOUT_S = "120"',
                 'VLLM_RPC_TIMEOUT = "20000"'):
        assert line in env, res.text
    assert not [d for d in compile_text(res.text).diagnostics if d.is_error]


def test_a_host_variable_passed_into_the_container_is_never_written(tmp_path):
    res = _imp(tmp_path, DOCKER.replace('--env "HF_TOKEN=$HF_TOKEN"', "-e HF_TOKEN"), system="hgx-h100")
    assert "HF_TOKEN" not in res.text
    (d,) = [d for d in res.diagnostics if d.code.code == "SN8005"]
    assert "host" in d.message and "HF_TOKEN" in d.message


def test_an_env_file_next_to_the_script_becomes_the_plans_env(tmp_path):
    """`docker run --env-file F`: F's `NAME=value` lines (comments and blank lines skipped, values
    verbatim, Docker's `docker container run --env` reference) become the plan's env, each
    diagnostic located in F; a missing file is an unresolved SN8005 on its path."""
    (tmp_path / "vllm.env").write_text("# engine settings\nVLLM_LOGGING_LEVEL=DEBUG\n\nVLLM_FROBNICATE=1\n"
                                       "VLLM_USE_V1\n", encoding="utf-8")
    script = ('docker run --gpus all --env-file vllm.env -e VLLM_RPC_TIMEOUT=20000 vllm/vllm-openai:v0.11.0 '
              '--model Qwen/Qwen3-32B -tp 4 --max-model-len 8192\n')
    res = _imp(tmp_path, script, system="hgx-h100")
    env = res.text[res.text.index("env {"):]
    assert 'VLLM_LOGGING_LEVEL = "DEBUG"' in env and 'VLLM_RPC_TIMEOUT = "20000"' in env
    assert "VLLM_USE_V1" not in res.text          # the host's value: never written
    envf = str(tmp_path / "vllm.env")
    src = res.sources[envf]
    where = {(d.code.code, d.span.file, src.line_col(d.span.start)[0])
             for d in res.diagnostics if d.code.code in ("SN8002", "SN8005")}
    assert where == {("SN8002", envf, 4), ("SN8005", envf, 5)}, res.diagnostics
    assert not [d for d in compile_text(res.text).diagnostics if d.is_error]
    missing = _imp(tmp_path, script.replace("vllm.env", "absent.env"), system="hgx-h100")
    (d,) = [d for d in missing.diagnostics if d.code.code == "SN8005"]
    assert "--env-file absent.env" in d.message and "VLLM_LOGGING_LEVEL" not in missing.text


def test_a_later_env_file_overrides_an_earlier_one_and_e_overrides_both(tmp_path):
    (tmp_path / "a.env").write_text("VLLM_LOGGING_LEVEL=INFO\nVLLM_RPC_TIMEOUT=1\n", encoding="utf-8")
    (tmp_path / "b.env").write_text("VLLM_LOGGING_LEVEL=DEBUG\n", encoding="utf-8")
    res = _imp(tmp_path, "docker run --env-file a.env --env-file=b.env -e VLLM_RPC_TIMEOUT=20000 "
                         "vllm/vllm-openai:v0.11.0 --model Qwen/Qwen3-32B -tp 4 --max-model-len 8192\n",
               system="hgx-h100")
    env = res.text[res.text.index("env {"):]
    assert 'VLLM_LOGGING_LEVEL = "DEBUG"' in env and 'VLLM_RPC_TIMEOUT = "20000"' in env, res.text

"""A `docker run` engine command: the container's environment is what `docker run` passes it, and
its device mask indexes the devices the container is given.

* `--device /dev/davinciN` (and the Ascend Docker Runtime's `-e ASCEND_VISIBLE_DEVICES=4,5`, a list of
  host NPUs it mounts: hiascend.com MindX DL "Ascend Docker Runtime" user guide) give the container
  those host NPUs, numbered 0, 1, ... inside it; an `-e ASCEND_RT_VISIBLE_DEVICES` picks among them
  by that number (vllm-ascend#16256: "host devices 3,4,5,6,7 are numbered 0,1,2,3,4 inside the
  tested container.  With ASCEND_RT_VISIBLE_DEVICES=2, application-visible device 0 refers to host
  physical device 5").  The plan's mask names host NPUs, so `--device /dev/davinci4..7` with
  `-e ASCEND_RT_VISIBLE_DEVICES=0,1` is `"4,5"` (it was `"0,1"`).
* The host's `export X=...` lines do not reach the container: only `-e X=v`, `-e X` (the host's
  value of X) and `--env-file` do (docs.docker.com "docker container run": `--env`, `--env-file`).
"""

from __future__ import annotations

from expect import compile_text

from sncc.importer import import_sources
from sncc.source import SourceFile

DEVICES = " ".join(f"--device /dev/davinci{i}" for i in range(4, 8))
RUN = (f"docker run --rm {DEVICES} --device /dev/davinci_manager OPTS -it quay.io/ascend/vllm-ascend:v0.11.0 \\\n"
       "  vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len 8192 --quantization ascend\n")


def _imp(text):
    return import_sources([SourceFile("run.sh", text)])


def _env(res):
    return compile_text(res.text).plan.env


def test_a_mask_in_the_container_picks_among_the_mounted_npus():
    res = _imp(RUN.replace("OPTS", "-e ASCEND_RT_VISIBLE_DEVICES=0,1"))
    assert _env(res)["ASCEND_RT_VISIBLE_DEVICES"] == "4,5", res.text
    assert "container devices 0,1 of the NPUs" in res.text
    assert not [d for d in compile_text(res.text).diagnostics if d.is_error]


def test_the_mounted_npus_alone_are_the_mask():
    res = _imp(RUN.replace("OPTS", ""))
    assert _env(res)["ASCEND_RT_VISIBLE_DEVICES"] == "4,5,6,7"


def test_a_mask_past_the_mounted_npus_is_an_error_at_the_mask():
    text = RUN.replace("OPTS", "-e ASCEND_RT_VISIBLE_DEVICES=2,4")
    res = _imp(text)
    (d,) = [d for d in res.diagnostics if d.code.code == "SN8009"]
    assert text[d.span.start:d.span.end] == "ASCEND_RT_VISIBLE_DEVICES=2,4"
    assert "4 NPUs" in d.message and "numbered 0-3" in d.message


def test_the_ascend_docker_runtime_mount_list_is_the_container_devices():
    text = RUN.replace(DEVICES + " ", "").replace("OPTS", "--runtime ascend -e ASCEND_VISIBLE_DEVICES=4,5,6,7 "
                                                          "-e ASCEND_RT_VISIBLE_DEVICES=1,3")
    res = _imp(text)
    env = _env(res)
    assert env["ASCEND_RT_VISIBLE_DEVICES"] == "5,7", res.text
    assert "ASCEND_VISIBLE_DEVICES" not in env
    assert not [d for d in res.diagnostics if d.code.code == "SN8002"]


HOST = ("export HCCL_BUFFSIZE=512\n"
        "export VLLM_USE_V1=1\n"
        "export http_proxy=http://proxy:3128\n" + RUN)


def test_host_exports_do_not_enter_the_container():
    res = _imp(HOST.replace("OPTS", ""))
    env = _env(res)
    assert "HCCL_BUFFSIZE" not in env and "VLLM_USE_V1" not in env, res.text
    got = [d for d in res.diagnostics if d.code.code == "SN8017"]
    assert sorted(d.message.split("`")[1] for d in got) == ["HCCL_BUFFSIZE=512", "VLLM_USE_V1=1"]
    assert all("-e " in d.help for d in got)


def test_a_host_variable_passed_by_name_takes_the_host_value():
    text = HOST.replace("OPTS", "-e HCCL_BUFFSIZE -e VLLM_USE_V1=0")
    res = _imp(text)
    assert 'HCCL_BUFFSIZE = "512"  # from run.sh:1' in res.text, res.text
    assert _env(res)["VLLM_USE_V1"] == "0"
    assert not [d for d in res.diagnostics if d.code.code in ("SN8005", "SN8017")], [d.message for d in res.diagnostics]


def test_a_host_script_keeps_its_exports():
    res = _imp("export HCCL_BUFFSIZE=512\nvllm serve Qwen/Qwen3-32B -tp 2 --max-model-len 8192 --quantization ascend\n")
    assert _env(res)["HCCL_BUFFSIZE"] == "512"

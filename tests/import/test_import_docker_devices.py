"""The devices a `docker run` gives its container are the command's device mask, read as
`ASCEND_RT_VISIBLE_DEVICES` / `CUDA_VISIBLE_DEVICES` are: into the plan's `env` (so `check --import`
judges it against the parallelism, SN3007 at the `--device` line) and into the assumed system.

Sources:
* vllm-ascend's own docker commands pass one `--device /dev/davinciN` per NPU next to the control
  devices `/dev/davinci_manager`, `/dev/devmm_svm`, `/dev/hisi_hdc`
  (https://docs.vllm.ai/projects/ascend/en/v0.11.0/tutorials/multi_npu_moge.html: davinci0-3 for
  `--tensor-parallel-size 4`; https://docs.vllm.ai/projects/ascend/en/v0.13.0/quick_start.html:
  "Update DEVICE according to your device (/dev/davinci[0-7])").
* Docker's `--gpus`: `all`, a count, or `"device=0,2"` (quoted so the CSV value keeps its comma)
  (https://docs.docker.com/engine/containers/resource_constraints/#gpu; docker/cli opts/gpus.go
  parses the CSV; moby daemon/nvidia_linux.go sets NVIDIA_VISIBLE_DEVICES to `0,...,N-1` for a
  count N, to the ids for `device=`, to `all` for `all`).
"""

from __future__ import annotations

from expect import compile_text

from sncc.importer import import_sources
from sncc.importer.command import check_imported
from sncc.source import SourceFile

ASCEND = ("docker run --rm --name vllm-ascend \\\n"
          "  --device /dev/davinci0 --device /dev/davinci1 \\\n"
          "  --device=/dev/davinci2 --device /dev/davinci3:/dev/davinci3:rwm \\\n"
          "  --device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc \\\n"
          "  -v /usr/local/dcmi:/usr/local/dcmi -p 8000:8000 \\\n"
          "  -it quay.io/ascend/vllm-ascend:v0.11.0 \\\n"
          "  vllm serve Qwen/Qwen3-32B --tensor-parallel-size TP --max-model-len 8192 --quantization ascend\n")


def _imp(text, **kw):
    return import_sources([SourceFile("run.sh", text)], **kw)


def test_ascend_device_files_are_the_mask_of_the_command():
    res = _imp(ASCEND.replace("TP", "4"))
    assert 'ASCEND_RT_VISIBLE_DEVICES = "0,1,2,3"  # from run.sh:2' in res.text, res.text
    plan = compile_text(res.text).plan
    assert plan.hardware.system == "atlas-800-a2" and plan.engine.kind == "vllm-ascend"
    assert not [d for d in compile_text(res.text).diagnostics if d.is_error]


def test_sixteen_ascend_device_files_assume_an_a3_node():
    devices = " ".join(f"--device=/dev/davinci{i}" for i in range(16))
    res = _imp(f"docker run --rm {devices} -it quay.io/ascend/vllm-ascend:v0.11.0 "
               "vllm serve Qwen/Qwen3-32B -tp 16 --max-model-len 8192\n")
    assert compile_text(res.text).plan.hardware.system == "atlas-800i-a3", res.text
    assert "its device mask names 16 devices" in res.text


def test_check_import_reports_too_few_device_files_at_the_device_line(tmp_path):
    p = tmp_path / "run.sh"
    p.write_text(ASCEND.replace("TP", "8"), encoding="utf-8")
    diags, sources = check_imported([str(p)])
    (d,) = [d for d in diags if d.code.code == "SN3007"]
    assert sources[d.span.file].line_col(d.span.start)[0] == 2


def _cuda(gpus, tp=2):
    return _imp(f"docker run --runtime nvidia --gpus {gpus} -p 8000:8000 --ipc=host vllm/vllm-openai:v0.11.0 "
                f"--model Qwen/Qwen3-32B --tensor-parallel-size {tp} --max-model-len 8192\n")


def test_gpus_device_ids_and_counts_are_the_cuda_mask():
    assert 'CUDA_VISIBLE_DEVICES = "0,2"' in _cuda("'\"device=0,2\"'").text
    assert 'CUDA_VISIBLE_DEVICES = "1"' in _cuda("device=1", tp=1).text
    assert 'CUDA_VISIBLE_DEVICES = "0,1"' in _cuda("2").text
    assert 'CUDA_VISIBLE_DEVICES = "0,1"' in _cuda("count=2").text
    assert 'CUDA_VISIBLE_DEVICES = "0,1"' in _imp("docker run --gpus=2 vllm/vllm-openai:v0.11.0 --model Qwen/Qwen3-32B "
                                                  "-tp 2 --max-model-len 8192\n").text


def test_all_gpus_or_uuids_give_no_mask():
    assert "CUDA_VISIBLE_DEVICES" not in _cuda("all").text
    assert "CUDA_VISIBLE_DEVICES" not in _cuda("device=GPU-3a23c669-1f69-c64e-cf85-44e9b07e7a2a", tp=1).text


def test_check_import_reports_a_count_below_the_parallelism(tmp_path):
    p = tmp_path / "run.sh"
    p.write_text("docker run --gpus 2 vllm/vllm-openai:v0.11.0 --model Qwen/Qwen3-32B -tp 4 --max-model-len 8192\n",
                 encoding="utf-8")
    diags, _ = check_imported([str(p)], system="hgx-h100")
    assert [d.code.code for d in diags if d.code.code == "SN3007"] == ["SN3007"], [(d.code.code, d.message) for d in diags]


def test_an_explicit_mask_given_to_the_container_wins():
    res = _imp(ASCEND.replace("TP", "2").replace("-it quay", "-e ASCEND_RT_VISIBLE_DEVICES=0,1 -it quay"))
    assert 'ASCEND_RT_VISIBLE_DEVICES = "0,1"' in res.text, res.text

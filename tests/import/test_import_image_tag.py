"""The vllm-ascend image a `docker run` names is the engine and its tag the release:
`quay.io/ascend/vllm-ascend:v0.23.0` (and the hardware variants `-a3`, `-310p`, `-950dt`,
`-openeuler` of one tag; the mirrors `m.daocloud.io/quay.io/...`, `quay.nju.edu.cn/...` keep the
tag) runs vllm-ascend v0.23.0
(https://docs.vllm.ai/projects/ascend/en/v0.13.0/quick_start.html: "Atlas A3:
quay.io/ascend/vllm-ascend:|vllm_ascend_version|-a3";
https://docs.vllm.ai/projects/ascend/zh-cn/latest/getting_started/quick_start.html: the mirrors, and
"keep the full original image tag, including suffixes such as -a3, -310p, -950dt and -openeuler").
A tag sncc pins is the plan's release; another one is mapped to the pin that runs the same vLLM
(software.toml [[vllm_ascend]], from vllm-ascend's versioning_policy.md: v0.11.0rc1 and v0.23.0rc1 run
vLLM v0.11.0 / v0.23.0, as the pins v0.11.0 / v0.23.0 do), else to the nearest pin (v0.11.0rc0 runs
vLLM v0.11.0rc3: the pin v0.11.0), with a note; never an error.  Before, the image was not read at all: the command became
`engine "vllm"` on hgx-h100 at sncc's default pin."""

from __future__ import annotations

from expect import compile_text

from sncc.importer import import_sources
from sncc.source import SourceFile


def _imp(image, **kw):
    text = f"docker run --rm -it {image} vllm serve Qwen/Qwen3-32B -tp 2 --max-model-len 8192\n"
    return import_sources([SourceFile("run.sh", text)], **kw)


def _engine(res):
    plan = compile_text(res.text).plan
    return plan.engine.kind, plan.engine.version


def _version_line(res):
    return next(ln.strip() for ln in res.text.splitlines() if ln.strip().startswith("version ="))


def _assumed(res):
    return " ".join(d.message for d in res.diagnostics if d.code.code == "SN8008")


def test_a_pinned_tag_is_the_plans_release_and_engine():
    for image in ("quay.io/ascend/vllm-ascend:v0.23.0", "quay.io/ascend/vllm-ascend:v0.23.0-a3",
                  "m.daocloud.io/quay.io/ascend/vllm-ascend:v0.23.0-a3-openeuler",
                  "quay.nju.edu.cn/ascend/vllm-ascend:v0.11.0-310p"):
        res = _imp(image)
        assert _engine(res) == ("vllm-ascend", image.rsplit(":", 1)[1][:7]), (image, res.text)
        assert _version_line(res).endswith(f"# the image tag {image}"), res.text
        assert "release" not in _assumed(res) and "engine" not in _assumed(res), _assumed(res)
        assert not res.has_errors


def test_the_ascend_image_makes_an_ascend_plan():
    res = _imp("quay.io/ascend/vllm-ascend:v0.23.0")
    assert compile_text(res.text).plan.hardware.system == "atlas-800-a2", res.text


def test_a_release_candidate_takes_the_pin_running_the_same_vllm():
    res = _imp("quay.io/ascend/vllm-ascend:v0.11.0rc1")
    assert _engine(res) == ("vllm-ascend", "v0.11.0")
    line = _version_line(res)
    assert "v0.11.0rc1" in line and "vLLM 0.11.0" in line, line
    assert "v0.11.0rc1" in _assumed(res) and not res.has_errors
    assert _engine(_imp("quay.io/ascend/vllm-ascend:v0.23.0rc1-a3")) == ("vllm-ascend", "v0.23.0")


def test_v0_11_0rc0_takes_the_nearest_pin():
    res = _imp("quay.io/ascend/vllm-ascend:v0.11.0rc0")
    assert _engine(res) == ("vllm-ascend", "v0.11.0")
    line = _version_line(res)
    assert "v0.11.0rc0 is not pinned" in line and "nearest pinned release v0.11.0" in line, line
    assert not res.has_errors


def test_an_unknown_tag_gets_the_nearest_pin_with_a_note_never_an_error():
    res = _imp("quay.io/ascend/vllm-ascend:v0.99.0-a3")
    assert _engine(res) == ("vllm-ascend", "v0.23.0")
    assert "nearest pinned release v0.23.0" in _version_line(res) and "v0.99.0" in _assumed(res)
    assert not res.has_errors and not [d for d in res.diagnostics if d.severity == "error"]
    assert _engine(_imp("quay.io/ascend/vllm-ascend:v0.18.0")) == ("vllm-ascend", "v0.11.0")


def test_a_tag_that_names_no_release_keeps_the_default_pin():
    res = _imp("quay.io/ascend/vllm-ascend:latest")
    assert _engine(res) == ("vllm-ascend", "v0.11.0") and "sncc's default pin" in _version_line(res)


def test_engine_version_given_on_the_command_line_wins():
    res = _imp("quay.io/ascend/vllm-ascend:v0.11.0", engine_version="v0.23.0")
    assert _engine(res) == ("vllm-ascend", "v0.23.0")


def test_an_a3_image_assumes_an_a3_node():
    """The quick start's A3 image (`...:v0.13.0-a3`, "Atlas A3") is built for an A3 node: the plan
    assumes `atlas-800i-a3` and says why, not the vendor default `atlas-800-a2`; the A2 image keeps
    the default, and a system given by the user wins."""
    a3 = _imp("quay.io/ascend/vllm-ascend:v0.23.0-a3")
    assert compile_text(a3.text).plan.hardware.system == "atlas-800i-a3"
    assert "is built for atlas-800i-a3" in _assumed(a3)
    a2 = _imp("quay.io/ascend/vllm-ascend:v0.23.0")
    assert compile_text(a2.text).plan.hardware.system == "atlas-800-a2"
    mirror = _imp("m.daocloud.io/quay.io/ascend/vllm-ascend:v0.23.0-a3-openeuler")
    assert compile_text(mirror.text).plan.hardware.system == "atlas-800i-a3"
    given = _imp("quay.io/ascend/vllm-ascend:v0.23.0-a3", system="atlas-900-a3-superpod")
    assert compile_text(given.text).plan.hardware.system == "atlas-900-a3-superpod"

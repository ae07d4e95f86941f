"""An engine image whose tag names no release (`vllm/vllm-openai` with no tag, `:latest`,
`:nightly`; `quay.io/ascend/vllm-ascend:latest`) runs whatever vLLM the registry holds when it is
pulled (Docker pulls `:latest` when no tag is given: docs.docker.com "docker image pull"; vLLM's
"Using Docker" page names `vllm/vllm-openai:latest`; `nightly` images are builds of the main
branch).  The import says at the image word which release it assumed (a warning: sncc read the
arguments against that release), where it said "the script does not say" among other guesses.  A
release tag sncc does not pin takes the nearest pinned release, with the same warning."""

from __future__ import annotations

import pytest

from expect import compile_text

from sncc.importer import import_sources
from sncc.source import SourceFile


def _imp(image, argv="--model Qwen/Qwen3-32B -tp 2 --max-model-len 8192", **kw):
    text = f"docker run --rm --gpus 2 {image} {argv}\n"
    return text, import_sources([SourceFile("run.sh", text)], system="hgx-h100", **kw)


def _tagged(res):
    return [d for d in res.diagnostics if d.code.code == "SN8008" and "image" in d.message]


@pytest.mark.parametrize("image, what", [
    ("vllm/vllm-openai", "has no tag"),
    ("vllm/vllm-openai:latest", "`latest`"),
    ("vllm/vllm-openai:nightly", "`nightly`"),
    ("docker.io/vllm/vllm-openai:latest", "`latest`"),
])
def test_a_moving_tag_names_the_assumed_release_at_the_image(image, what):
    text, res = _imp(image)
    (d,) = _tagged(res)
    assert d.severity == "warning"
    assert text[d.span.start:d.span.end] == image
    assert what in d.message and "vLLM 0.23.0" in d.message and "default pin" in d.message
    assert "--engine-version" in d.help
    version = next(ln for ln in res.text.splitlines() if ln.strip().startswith("version ="))
    assert f"image {image}" in version and "0.23.0" in version
    assert "release 0.23.0" not in " ".join(d.message for d in res.diagnostics if "does not say" in d.message)
    assert compile_text(res.text).plan.engine.version == "0.23.0"


def test_an_unpinned_release_tag_takes_the_nearest_pin_with_the_warning():
    text, res = _imp("vllm/vllm-openai:v0.30.0")
    (d,) = _tagged(res)
    assert "0.30.0" in d.message and "nearest pinned release 0.23.0" in d.message
    assert compile_text(res.text).plan.engine.version == "0.23.0"


def test_the_ascend_image_latest_names_its_assumed_release():
    text = "docker run --rm -it quay.io/ascend/vllm-ascend:latest vllm serve Qwen/Qwen3-32B -tp 2 --max-model-len 8192\n"
    res = import_sources([SourceFile("run.sh", text)])
    (d,) = _tagged(res)
    assert "`latest`" in d.message and "vllm-ascend v0.11.0" in d.message


@pytest.mark.parametrize("kw", [{}, {"engine_version": "0.11.0"}])
def test_a_pinned_tag_or_a_chosen_release_is_no_warning(kw):
    _, res = _imp("vllm/vllm-openai:v0.11.0" if not kw else "vllm/vllm-openai:latest", **kw)
    assert _tagged(res) == []

"""A role's ``prefix_caching`` switch becomes vLLM's ``--enable-prefix-caching`` /
``--no-enable-prefix-caching`` (a ``BooleanOptionalAction`` in every pinned vLLM's manifest,
``sncc/engines/vllm/data/<version>.json``), written only when the plan says it: unset, the engine
keeps its own default (vLLM docs, "Automatic Prefix Caching":
https://docs.vllm.ai/en/latest/features/automatic_prefix_caching/).  A pinned release without the
argument is SN4041 at the key, and nothing is written."""

from __future__ import annotations

import pytest

from expect import ROOT, compile_text, deployment_of, outputs_of, role_toml, role_yaml

LLAMA = (ROOT / "tests" / "golden" / "vllm-h100-llama-serve" / "plan.sn").read_text(encoding="utf-8")
QWEN_A2 = """plan "qwen3-32b-a2" {
  model "qwen3-32b" { quant = bf16 }
  hardware { system = "atlas-800-a2"  nodes = 1 }
  engine "vllm-ascend" { version = "VERSION" }
  serve {
    devices = 8
    tp = 8
    max_num_seqs = 64
    max_num_batched_tokens = 8k
    chunked_prefill = 8k
SWITCH  }
  workload { input { mean = 2k  max = 16k }  output { mean = 512  max = 4k } }
}
"""
OMNI = """plan "r1-omni" {
  model "deepseek-r1" { quant = w8a8  max_model_len = 16k }
  hardware { system = "atlas-900-a3-superpod"  nodes = 3 }
  engine "omni-infer" {}
  prefill {
    instances = 1
    devices = 16
    tp = 8
    ep = 2
    chunked_prefill = 8k
SWITCH  }
  decode { instances = 1  devices = 32  tp = 1  ep = 32  max_num_seqs = 16 }
  workload { input { mean = 1k  max = 4k }  output { mean = 1k  max = 4k } }
}
"""


def _llama(switch: str, version: str = "0.23.0") -> str:
    text = LLAMA.replace("chunked_prefill = 8k\n", f"chunked_prefill = 8k\n    {switch}\n" if switch else "chunked_prefill = 8k\n")
    return text.replace('version = "0.23.0"', f'version = "{version}"')


def _args(text: str, role: str = "serve") -> dict:
    dep = deployment_of(text)
    return {a.name: a.value for a in next(r for r in dep.roles if r.name == role).args}


@pytest.mark.parametrize("version", ["0.11.0", "0.23.0"])
def test_unset_writes_nothing_the_engine_default_stays(version):
    assert "enable-prefix-caching" not in _args(_llama("", version))


@pytest.mark.parametrize("version", ["0.11.0", "0.23.0"])
def test_off_is_the_no_switch_on_every_launch_line(version):
    files = outputs_of(_llama("prefix_caching = false", version))
    assert "enable-prefix-caching" not in role_yaml(files, "serve")       # vLLM's --config loader drops `false`
    for name in ("launch/serve-0-node0.sh", "launch/serve-1-node0.sh"):
        assert "--no-enable-prefix-caching" in files[name], name
    assert "--no-enable-prefix-caching" in files["serve.yaml"]             # the header names the switch


def test_on_is_written_in_the_role_yaml():
    files = outputs_of(_llama("prefix_caching = true"))
    assert role_yaml(files, "serve")["enable-prefix-caching"] is True
    assert "serve.prefix_caching = true" in files["serve.yaml"]            # the comment says where it comes from


def test_on_off_spelling_is_the_language_s_bool():
    assert _args(_llama("prefix_caching = off"))["enable-prefix-caching"] is False
    assert _args(_llama("prefix_caching = on"))["enable-prefix-caching"] is True


@pytest.mark.parametrize("version", ["v0.11.0", "v0.23.0"])
def test_vllm_ascend_toml_carries_both_values(version):
    text = QWEN_A2.replace("VERSION", version)
    assert "enable-prefix-caching" not in role_toml(outputs_of(text.replace("SWITCH", "")), "serve")
    files = outputs_of(text.replace("SWITCH", "    prefix_caching = false\n"))
    assert role_toml(files, "serve")["enable-prefix-caching"] is False
    assert any("--no-enable-prefix-caching" in v for k, v in files.items() if k.startswith("launch/"))


def test_omni_infer_passes_the_switch_to_its_servers():
    """Omni-Infer release_v0.3.0 starts `vllm serve` of its vLLM 0.9.0 base, whose parser has the
    switch (its own tools/scripts/start_api_servers.py passes --no-enable-prefix-caching)."""
    assert "enable-prefix-caching" not in _args(OMNI.replace("SWITCH", ""), "prefill")
    text = OMNI.replace("SWITCH", "    prefix_caching = false\n")
    assert _args(text, "prefill")["enable-prefix-caching"] is False
    assert "enable-prefix-caching" not in _args(text, "decode")
    files = outputs_of(text)
    assert any("--no-enable-prefix-caching" in v for k, v in files.items() if k.startswith("launch/prefill"))


def test_every_pinned_release_has_the_switch():
    from sncc.engines.registry import adapter_for

    for kind in ("vllm", "vllm-ascend", "omni-infer"):
        a = adapter_for(kind)
        for pin in a.pins:
            for value in (True, False):
                assert a.switch_absent(pin.version, "enable-prefix-caching", value) is None, (kind, pin.version, value)


def test_a_release_without_the_switch_is_sn4041_and_writes_nothing(monkeypatch):
    from sncc.engines.manifest import Manifest
    from sncc.engines.registry import adapter_for

    a = adapter_for("vllm")
    real = a.vllm_manifest("0.23.0")
    args = {k: v for k, v in real.data["arguments"].items() if k != "enable-prefix-caching"}
    bare = Manifest(real.engine, real.version, {**real.data, "arguments": args}, real.path)
    monkeypatch.setattr(type(a), "vllm_manifest", lambda self, version: bare)
    text = _llama("prefix_caching = false")
    comp = compile_text(text)
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN4041"]
    assert d.severity == "warning" and "--enable-prefix-caching" in d.message and "written nowhere" in d.message
    start = text.index("prefix_caching = false") + len("prefix_caching = ")
    assert (d.span.start, d.span.end) == (start, start + len("false"))
    assert d.path == ("serve", "prefix_caching")
    assert "enable-prefix-caching" not in _args(text)

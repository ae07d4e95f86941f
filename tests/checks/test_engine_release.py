"""The engine release every release check judges (Facts.engine_version): the one written, else
sncc's default pin, which is what `sncc build` writes files for (fresh-user break test items 1, 3, 4).

Leaving out `version` used to skip SN4002, SN4006 and SN4007 although the build then wrote launch
files for a release that cannot run the plan; `release_v0.3.0`, Omni-Infer's own name for its
release, was SN2004; a vLLM release newer than any sncc knows was only an info.
"""

from __future__ import annotations

from tests_helpers import compile_plan

MINIMAX_950 = '''plan "minimax-950" {
  model "minimax-m2" { quant = fp8 }
  hardware { system = "atlas-950-superpod"  nodes = 1 }
  engine "vllm-ascend" {ENGINE}
  serve { instances = 1  devices = 8  tp = 4  dp = 2  max_num_seqs = 32  chunked_prefill = 8k }
  workload { requests = 40  concurrency = 16  input { mean = 2k  max = 8k }  output { mean = 1k  max = 4k } }
}
'''

GLM_A2 = '''plan "glm-a2" {
  model "glm-4.5" { weights = "/data/GLM-4.5-w8a8"  quant = w8a8 }
  hardware { system = "atlas-800-a2"  nodes = 2  cann = "8.0.0" }
  engine "vllm-ascend" {ENGINE}
  serve { devices = 16  tp = 16  max_num_seqs = 32  chunked_prefill = 8k }
  workload { requests = 40  concurrency = 16  input { mean = 2k  max = 8k }  output { mean = 1k  max = 4k } }
}
'''


def _codes(text: str, engine: str, wanted=("SN4002", "SN4006", "SN4007")):
    comp = compile_plan(text.replace("{ENGINE}", engine))
    return comp, sorted(d.code.code for d in comp.diagnostics if d.code.code in wanted)


def test_unversioned_engine_is_judged_as_its_default_pin():
    comp, unversioned = _codes(MINIMAX_950, "{}")
    _, written = _codes(MINIMAX_950, '{ version = "v0.11.0" }')
    assert unversioned == written == ["SN4002", "SN4007"]
    assert comp.facts.engine_version == "v0.11.0" and comp.facts.engine_version_origin == "default"
    for d in comp.diagnostics:
        if d.code.code in ("SN4002", "SN4007"):
            assert "sncc's default pin" in d.message, d.message
            assert "write `version = " in (d.help or ""), d.help
            assert d.span is not None


def test_unversioned_engine_draws_the_cann_pairing_of_its_default_pin():
    _, unversioned = _codes(GLM_A2, "{}")
    _, written = _codes(GLM_A2, '{ version = "v0.11.0" }')
    assert unversioned == written == ["SN4006"]


def test_written_release_keeps_its_origin():
    comp, codes_ = _codes(GLM_A2.replace('cann = "8.0.0"', 'cann = "9.1.0"'), '{ version = "v0.23.0" }')
    assert codes_ == []
    assert comp.facts.engine_version == "v0.23.0" and comp.facts.engine_version_origin == "plan"


OMNI = '''plan "omni" {
  model "deepseek-r1" { weights = "/data/models/DeepSeek-R1-W8A8"  quant = w8a8 }
  hardware { system = "atlas-900-a3-superpod"  nodes = 4  cann = "8.2.RC1" }
  engine "omni-infer" { version = "VERSION" }
  prefill { instances = 2  devices = 16  tp = 16  chunked_prefill = 16k }
  decode { devices = 32  tp = 1  ep = 32  max_num_seqs = 32 }
  workload { requests = 40  concurrency = 16  input { mean = 2k  max = 8k }  output { mean = 1k  max = 4k } }
}
'''


def test_omni_infer_release_is_accepted_under_its_own_name():
    for spelling in ("release_v0.3.0", "v0.3.0"):
        comp = compile_plan(OMNI.replace("VERSION", spelling))
        bad = [(d.code.code, d.message) for d in comp.diagnostics if d.code.code in ("SN2004", "SN4040")]
        assert not bad, (spelling, bad)


def test_vllm_release_newer_than_any_known_is_a_warning_not_an_error():
    text = MINIMAX_950.replace('engine "vllm-ascend" {ENGINE}', 'engine "vllm" { version = "0.99.0" }') \
        .replace("atlas-950-superpod", "hgx-h200").replace("quant = fp8", "quant = fp8  max_model_len = 12k")
    comp = compile_plan(text)
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN4040"]
    assert d.severity == "warning" and "newer than any release sncc knows" in d.message, d.message
    assert "0.33.0" in d.message  # the newest release sncc has facts for (the 0.33.0 manifest)
    # an unpinned release inside the known range stays an info
    comp = compile_plan(text.replace("0.99.0", "0.13.0"))
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN4040"]
    assert d.severity == "info"


def test_an_unknown_vllm_ascend_release_is_said_once():
    # the release matrix reports v0.99.0 unknown (SN2008); the "newer than any release" warning
    # (SN4040) would say the same at the same span
    comp = compile_plan(MINIMAX_950.replace("{ENGINE}", '{ version = "v0.99.0" }'))
    got = [(d.code.code, d.severity) for d in comp.diagnostics if d.code.code in ("SN2008", "SN4040")]
    assert got == [("SN2008", "error")], [(d.code.code, d.message) for d in comp.diagnostics]


def test_model_not_in_release_is_located_and_pathed_at_the_model_name():
    # the finding is about the model (whatever the release, written or sncc's default pin): its span
    # and its path both name the model's id
    from expect import ROOT

    comp = compile_plan((ROOT / "examples" / "broken" / "model-not-in-release.sn").read_text())
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN4023"]
    assert d.path == ("model", "id") and d.span == comp.plan.model.span_of("id"), (d.path, d.span)
    assert comp.source.text[d.span.start:d.span.end] == '"qwen3.5-397b"'


def test_an_unversioned_engine_is_told_its_default_pin():
    comp = compile_plan(MINIMAX_950.replace("{ENGINE}", "{}"))
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN4046"]
    assert d.severity == "info" and d.path == ("engine",)
    assert d.message == "no engine release named: sncc checks and builds this plan for vllm-ascend v0.11.0, its default pin"
    assert comp.source.text[d.span.start:d.span.end] == '"vllm-ascend"'
    written = compile_plan(MINIMAX_950.replace("{ENGINE}", '{ version = "v0.23.0" }'))
    assert not [d for d in written.diagnostics if d.code.code == "SN4046"]

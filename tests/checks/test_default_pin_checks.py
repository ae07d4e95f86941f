"""The release checks that read the written `engine.version` now judge Facts.engine_version (the
release written, else sncc's default pin, which `sncc build` writes the launch files for), and their
messages name the release judged, marking sncc's default pin as such.

Each check: a plan with no `version` draws what the written default pin (vllm-ascend v0.11.0,
Omni-Infer release_v0.3.0) draws, and a twin draws nothing.  SN3022's FlashComm1 budgets used to be
skipped without a version; the others judged the default pin already (through the adapter) but did
not say so.
"""

from __future__ import annotations

import pytest

from expect import ROOT, compile_text
from sncc.fmt import format_source
from sncc.source import SourceFile

DEFAULT_PIN = "vllm-ascend v0.11.0"
UNVERSIONED, WRITTEN = "{}", '{ version = "v0.11.0" }'


def _diags(text: str, *codes_):
    assert format_source(SourceFile("plan.sn", text)) == text   # `sncc fmt --check` clean
    comp = compile_text(text)
    assert comp.plan is not None
    return comp, [d for d in comp.diagnostics if d.code.code in codes_]


def _related_at_engine(comp, d, label: str) -> None:
    """``d`` names the release ``label`` as related location: at the engine label for the default
    pin, at the `version` value when written."""
    rel = [x for x in d.related if x.message == label]
    assert rel, [x.message for x in d.related]
    at = comp.source.text[rel[0].span.start:rel[0].span.end]
    assert at == ('"vllm-ascend"' if "default pin" in label else '"v0.11.0"'), at


# --------------------------------------------------------------------------- SN3022 (divisibility)

FLASHCOMM = (ROOT / "tests" / "cases" / "spec-tp-sp-va7832.sn").read_text(encoding="utf-8")


def _flashcomm(engine: str, seqs: int = 90) -> str:
    text = FLASHCOMM.replace('{ version = "v0.17.0rc1" }', engine)
    return text.replace("max_num_seqs = 90", f"max_num_seqs = {seqs}")


def test_flashcomm_budget_is_judged_on_the_default_pin():
    comp, (d,) = _diags(_flashcomm(UNVERSIONED), "SN3022")
    _, written = _diags(_flashcomm(WRITTEN), "SN3022")
    assert [x.code.code for x in written] == ["SN3022"] and written[0].message == d.message.replace(" (sncc's default pin)", "")
    assert d.message.startswith(f"`serve`: {DEFAULT_PIN} (sncc's default pin) fails at init under FlashComm1")
    _related_at_engine(comp, d, f"{DEFAULT_PIN} (sncc's default pin)")
    _related_at_engine(_diags(_flashcomm(WRITTEN), "SN3022")[0], written[0], DEFAULT_PIN)
    assert "write `version = " in d.help and "write `version = " not in written[0].help


def test_flashcomm_budget_twin_on_the_default_pin_is_clean():
    assert _diags(_flashcomm(UNVERSIONED, seqs=96), "SN3022")[1] == []


# --------------------------------------------------------------------------- SN3020 (runtime_env)

MASK = '''plan "mask" {
  model "qwen3-32b" { max_model_len = 16k }
  hardware { system = "atlas-800-a2"  nodes = 1 }
  engine "vllm-ascend" ENGINE
  serve { devices = 4  tp = 4  chunked_prefill = 4k }
  env { ASCEND_RT_VISIBLE_DEVICES = "0,1,2,5" }
  workload {
    input { mean = 1k  max = 4k }
    output { mean = 1k  max = 4k }
  }
}
'''


def _contiguity(engine: str):
    return [d for d in _diags(MASK.replace("ENGINE", engine), "SN3020")[1] if "not contiguous" in d.message]


def test_device_mask_contiguity_is_judged_on_the_default_pin():
    # the default pin has the fix (vllm-ascend#452, v0.8.4rc1): nothing, as for the written pin
    assert _contiguity(UNVERSIONED) == _contiguity(WRITTEN) == []


def test_device_mask_contiguity_names_an_older_release():
    (d,) = _contiguity('{ version = "v0.7.3" }')
    assert "and vllm-ascend v0.7.3 fails on discontinuous devices" in d.message
    assert [x.message for x in d.related] == ["vllm-ascend v0.7.3"]


# --------------------------------------------------------------------------- SN4044, SN4045 (engine_options)

PLAN = '''plan "env" {
  model "qwen3-32b" { max_model_len = 16k }
  hardware { system = "atlas-800-a2"  nodes = 1 }
  engine "vllm-ascend" ENGINE
  kv_cache { block_size = BLOCK }
  serve { devices = 4  tp = 4  chunked_prefill = 4k }
  env { VAR = "1" }
  workload {
    input { mean = 1k  max = 4k }
    output { mean = 1k  max = 4k }
  }
}
'''


def _plan(engine: str, var: str = "VLLM_ASCEND_ENABLE_DBO", block: int = 128) -> str:
    return PLAN.replace("ENGINE", engine).replace("VAR", var).replace("BLOCK", str(block))


def test_env_variable_unread_by_the_default_pin_names_it():
    # VLLM_ASCEND_ENABLE_FUSED_MC2 is read from v0.23.0 on, not by v0.11.0
    _, (d,) = _diags(_plan(UNVERSIONED, var="VLLM_ASCEND_ENABLE_FUSED_MC2"), "SN4044")
    _, (w,) = _diags(_plan(WRITTEN, var="VLLM_ASCEND_ENABLE_FUSED_MC2"), "SN4044")
    assert d.message == ("`VLLM_ASCEND_ENABLE_FUSED_MC2` is read by neither vLLM 0.11.0, vllm-ascend v0.11.0 "
                         "(sncc's default pin) nor CANN; sncc does not export it"), d.message
    assert w.message == d.message.replace(" (sncc's default pin)", "")


def test_env_variable_read_by_the_default_pin_is_clean():
    assert _diags(_plan(UNVERSIONED, var="VLLM_ASCEND_ENABLE_DBO"), "SN4044")[1] == []


def test_engine_choice_of_the_default_pin_names_it():
    _, (d,) = _diags(_plan(UNVERSIONED, block=48), "SN4045")
    _, (w,) = _diags(_plan(WRITTEN, block=48), "SN4045")
    assert d.message == ("`kv_cache.block_size = 48`: vLLM 0.11.0 (of vllm-ascend v0.11.0, sncc's default pin) "
                         "takes `--block-size` only as one of 1, 8, 16, 32, 64, 128"), d.message
    assert w.message == "`kv_cache.block_size = 48`: vLLM 0.11.0 takes `--block-size` only as one of 1, 8, 16, 32, 64, 128"


def test_engine_choice_the_default_pin_takes_is_clean():
    assert _diags(_plan(UNVERSIONED, block=128), "SN4045")[1] == []


# --------------------------------------------------------------------------- SN4015 (engine_options)

DBO = '''plan "a2" {
  model "MODEL" { quant = w8a8 }
  hardware { system = "atlas-800-a2"  nodes = 2  cann = "8.3.RC2" }
  engine "vllm-ascend" ENGINE
  serve {
    devices = 16
    tp = TP
    ep = EP
    max_num_seqs = 16
    max_num_batched_tokens = 4k
    chunked_prefill = 4k
  }
  optimize { micro_batch = 2 }
  workload {
    requests = 100
    concurrency = 16
    input { mean = 2k  max = 4k }
    output { mean = 512  max = 2k }
  }
}
'''


def _dbo(engine: str, model: str = "qwen3-30b-a3b", tp: int = 2, ep: int = 8) -> str:
    return DBO.replace("ENGINE", engine).replace("MODEL", model).replace("TP", str(tp)).replace("EP", str(ep))


@pytest.mark.parametrize("engine, label", [(UNVERSIONED, f"{DEFAULT_PIN} (sncc's default pin)"), (WRITTEN, DEFAULT_PIN)])
def test_option_without_effect_points_at_the_release_judged(engine, label):
    comp, (d,) = _diags(_dbo(engine), "SN4015", "SN4017")
    assert d.code.code == "SN4015" and "MLA" in d.message
    _related_at_engine(comp, d, label)


def test_option_with_effect_on_the_default_pin_is_clean():
    assert _diags(_dbo(UNVERSIONED, model="deepseek-r1", tp=4, ep=4), "SN4015", "SN4017")[1] == []


# --------------------------------------------------------------------------- SN6020 (startup)

LOAD = '''plan "load" {
  model "qwen3-32b" { max_model_len = 16k }
  hardware { system = "atlas-800-a2"  nodes = 1  storage_bandwidth = BW }
  engine "vllm-ascend" ENGINE
  serve { devices = 4  tp = 4  chunked_prefill = 4k }
  workload {
    input { mean = 1k  max = 4k }
    output { mean = 1k  max = 4k }
  }
}
'''


def _load(engine: str, bw: str = "50MB/s") -> str:
    return LOAD.replace("ENGINE", engine).replace("BW", bw)


def test_fixed_readiness_wait_of_the_default_pin_names_it():
    comp, (d,) = _diags(_load("{ ready_timeout = 60min }"), "SN6020")
    wcomp, (w,) = _diags(_load('{ version = "v0.11.0"  ready_timeout = 60min }'), "SN6020")
    assert "(fixed in vLLM 0.11.0 (of vllm-ascend v0.11.0, sncc's default pin), which reads no " in d.message, d.message
    assert "(fixed in vLLM 0.11.0, which reads no " in w.message, w.message
    _related_at_engine(comp, d, f"{DEFAULT_PIN} (sncc's default pin)")
    _related_at_engine(wcomp, w, DEFAULT_PIN)
    assert "write `version = " in d.help and "write `version = " not in w.help


def test_start_up_within_the_default_pins_wait_is_clean():
    assert _diags(_load("{ ready_timeout = 60min }", bw="2GB/s"), "SN6020")[1] == []


# --------------------------------------------------------------------------- SN4041 (features)

SEED = (ROOT / "examples" / "deepseek-r1-a3-7p1d.sn").read_text(encoding="utf-8")


def _int8(text: str):
    return [d for d in _diags(text, "SN4041")[1] if d.path == ("kv_cache", "dtype")]


def test_option_absent_in_the_default_omni_infer_pin_names_it():
    assert 'engine "omni-infer" {}' in SEED
    (d,) = _int8(SEED)
    (w,) = _int8(SEED.replace('engine "omni-infer" {}', 'engine "omni-infer" { version = "release_v0.3.0" }'))
    assert "Omni-Infer release_v0.3.0 (sncc's default pin) has no INT8 KV-cache switch" in d.message, d.message
    assert w.message == d.message.replace(" (sncc's default pin)", "")


def test_option_the_default_omni_infer_pin_has_is_clean():
    assert "kv_cache { dtype = int8  block_size = 128 }" in SEED
    assert _int8(SEED.replace("kv_cache { dtype = int8  block_size = 128 }", "kv_cache { block_size = 128 }")) == []


# --------------------------------------------------------------------------- SN4011 (graph)

GRAPH = '''plan "graph" {
  model "MODEL" { quant = w8a8 }
  hardware { system = "atlas-800-a2"  nodes = 2 }
  engine "vllm-ascend" ENGINE
GRAPH  serve { devices = 16  tp = 4  ep = 4  max_num_seqs = 16  chunked_prefill = 8k }
  workload {
    requests = 200
    concurrency = 16
    input { mean = 2k  max = 6k }
    output { mean = 512  max = 2k }
  }
}
'''


def _graph(engine: str, mode: str | None = None, model: str = "qwen3-30b-a3b"):
    text = GRAPH.replace("MODEL", model).replace("ENGINE", engine)
    return _diags(text.replace("GRAPH", f"  graph {{ mode = {mode} }}\n" if mode else ""), "SN4011")


def test_graph_mode_missing_from_the_default_pin_names_it():
    # npugraph_ex exists from v0.15.0rc1: the default pin has none (the check used to be skipped without a version)
    comp, (d,) = _graph(UNVERSIONED, "npugraph_ex")
    wcomp, (w,) = _graph(WRITTEN, "npugraph_ex")
    assert d.message == f"{DEFAULT_PIN} (sncc's default pin) has no `npugraph_ex` graph mode (available from v0.15.0rc1)"
    assert w.message == d.message.replace(" (sncc's default pin)", "")
    _related_at_engine(comp, d, f"{DEFAULT_PIN} (sncc's default pin)")
    _related_at_engine(wcomp, w, DEFAULT_PIN)
    assert "write `version = " in d.help and "write `version = " not in w.help


def test_graph_mode_of_the_default_pin_is_clean():
    assert _graph(UNVERSIONED, "torchair")[1] == _graph(WRITTEN, "torchair")[1] == []


def test_default_graph_mode_is_judged_on_the_default_pin():
    # aclgraph (the default) refuses DeepSeek before v0.9.1rc1 only: the default pin runs it, as the written
    # pin does (without a version the refusal used to be reported as if the newest release had it)
    assert _graph(UNVERSIONED, model="deepseek-v3")[1] == _graph(WRITTEN, model="deepseek-v3")[1] == []
    _, (d,) = _graph('{ version = "v0.9.0rc2" }', model="deepseek-v3")
    assert d.message == "vllm-ascend v0.9.0rc2 `aclgraph` graph mode (the default) does not run `deepseek_v3` models"


# --------------------------------------------------------------------------- all-to-all backend (facts)

WIDE_EP = (ROOT / "tests" / "cases" / "fixed" / "all2all-backend-not-a-choice.sn").read_text(encoding="utf-8")
VLLM_WRITTEN = '{ version = "0.23.0" }'   # vLLM's default pin


def _wide_ep(engine: str, backend: str | None = "deepep_low_latency"):
    text = WIDE_EP.replace('{ version = "0.11.0" }', engine)
    env = '  env { VLLM_ALL2ALL_BACKEND = "deepep_low_latency" }\n'
    text = text.replace(env, env.replace("deepep_low_latency", backend) if backend else "")
    comp, ds = _diags(text, "SN4082", "SN4044")
    rf = comp.resolved.roles["serve"]
    return (rf.all2all_backend, rf.notes["all2all_backend"]), ds


def test_all2all_backend_is_derived_on_the_default_pin():
    # the default pin (0.23.0) takes the backend as `--all2all-backend`, which sncc does not write: the plan's
    # VLLM_ALL2ALL_BACKEND is unread, whatever its value (no SN4082), as for the written pin
    for backend in ("deepep_low_latency", "bogus"):
        fact, (d,) = _wide_ep(UNVERSIONED, backend)
        wfact, (w,) = _wide_ep(VLLM_WRITTEN, backend)
        assert fact == wfact and fact[0] == "allgather_reducescatter" and "not read by this release" in fact[1]
        assert d.code.code == w.code.code == "SN4044" and w.message == d.message.replace(" (sncc's default pin)", "")


def test_all2all_backend_of_the_default_pin_is_clean():
    fact, ds = _wide_ep(UNVERSIONED, None)
    assert ds == [] and fact == _wide_ep(VLLM_WRITTEN, None)[0]


def test_all2all_backend_reads_the_release_the_facts_judge():
    # the fact follows Facts.engine_version, not the written `version` (a search candidate re-derives its roles
    # from the base facts: sncc.search.candidate.candidate_facts)
    import dataclasses

    from sncc.facts import derive_roles

    comp, _ = _diags(WIDE_EP.replace('{ version = "0.11.0" }', UNVERSIONED), "SN4082")
    f = dataclasses.replace(comp.resolved, engine_version="0.11.0", roles={}, diagnostics=[])
    derive_roles(comp.plan, f)
    assert f.roles["serve"].all2all_backend == "deepep_low_latency"

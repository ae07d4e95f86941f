"""SN4015: engine/chip-specific options on targets that lack them are reported
(user test: Omni-Infer and Ascend options on a vLLM/H100 plan were silently
dropped from the outputs yet credited by the simulator)."""

from __future__ import annotations

from expect import compile_text

PLAN = '''plan "llama-h100" {
  model "llama-3.1-70b" { quant = bf16 }
  hardware { system = "hgx-h100"  nodes = 1 }
  engine "vllm" { version = "0.23.0" }
  serve { devices = 8  tp = 8  max_num_seqs = 64  max_num_batched_tokens = 8k  chunked_prefill = 8k }
  OPT
  workload { requests = 100  concurrency = 8  input { mean = 2k  max = 8k }  output { mean = 512  max = 2k } }
}
'''


def _codes(opt: str):
    comp = compile_text(PLAN.replace("OPT", opt))
    return [(d.code.code, d.severity, comp.source.line_col(d.span.start)[0]) for d in comp.diagnostics]


def test_ascend_and_omni_options_on_nvidia_are_reported():
    got = _codes("optimize { superkernel_layers = 58  omni_attn { compress_ratio = 0.5 }  omni_proxy { policy = OAS } }")
    assert sorted(c for c, _, _ in got) == ["SN4015", "SN4015", "SN4015"]
    assert all(sev == "warning" and line == 6 for _, sev, line in got)


def test_plain_plan_is_clean():
    assert _codes("") == []


def test_graph_cache_on_vllm_ascend_needs_torchair_graphs():
    from engines.test_vllm_ascend_options import r1

    def sn4015(text):
        comp = compile_text(text)
        return [d for d in comp.diagnostics if d.code.code == "SN4015" and "graph_cache" in d.message]

    cache = 'micro_batch = 2  graph_cache = "/data/torchair_cache"'
    broken = sn4015(r1(version="v0.11.0", opt=cache, graph="", sched=""))          # no TorchAir: dropped
    assert len(broken) == 1 and "TorchAir" in broken[0].message
    assert sn4015(r1(version="v0.11.0", opt=cache, sched="")) == []                 # twin: graph { mode = torchair }


def test_burstiness_needs_a_rate():
    """SN2016: burstiness with concurrency (or with no rate) would be silently ignored."""
    wl = "workload {{ requests = 100  {mode}  input {{ mean = 2k  max = 8k }}  output {{ mean = 512  max = 2k }} }}"
    for mode in ("concurrency = 8  burstiness = 0.5", "burstiness = 0.5"):
        comp = compile_text(PLAN.replace("OPT", "").replace(
            "workload { requests = 100  concurrency = 8  input { mean = 2k  max = 8k }  output { mean = 512  max = 2k } }",
            wl.format(mode=mode)))
        errs = [d.code.code for d in comp.diagnostics if d.is_error]
        assert errs == ["SN2016"], (mode, errs)
    twin = compile_text(PLAN.replace("OPT", "").replace("concurrency = 8", "rate = 2  burstiness = 0.5"))
    assert not [d for d in twin.diagnostics if d.is_error]


GW = '''plan "gw" {{
  model "qwen3-32b" {{ quant = bf16 }}
  hardware {{ system = "hgx-h100"  nodes = 1 }}
  engine "vllm" {{}}
  serve {{ instances = 2  devices = 4  tp = 4  max_num_seqs = 32  max_num_batched_tokens = 8k  chunked_prefill = 8k }}
  workload {{ requests = 100  concurrency = 16  input {{ mean = 2k  max = 8k }}  output {{ mean = 2k  max = 16k }} }}
  {slo}
  gateway {{ base_url = "http://nginx:80/v1"  model_id = "qwen3-32b"  timeout = {timeout}  stream = false }}
}}
'''


def test_gateway_timeout_without_latency_slos_is_bounded_by_physics_and_e2e():
    """SN6002 (misconfig BR-35) also without TTFT/TPOT targets: max_tokens x the batch-1 TPOT
    floor is a lower bound on the longest generation; an e2e target bounds it too."""
    def sn6002(slo, timeout):
        comp = compile_text(GW.format(slo=slo, timeout=timeout))
        return [d.message for d in comp.diagnostics if d.code.code == "SN6002"]

    floor = sn6002("", "1s")
    assert len(floor) == 1 and "TPOT floor" in floor[0]
    assert sn6002("", "30min") == []                                   # twin
    e2e = sn6002("slo { e2e < 5min }", "60s")
    assert len(e2e) == 1 and "e2e target" in e2e[0]
    assert sn6002("slo { e2e < 5min }", "10min") == []                 # twin


def test_gateway_timeout_names_the_slo_targets_it_derives_from():
    """With `tpot < 50s` SN6002 said "the longest generation, 455 h" without saying where it came from."""
    comp = compile_text(GW.format(slo="slo { ttft < 2s  tpot < 50s }", timeout="30min"))
    (m,) = [d.message for d in comp.diagnostics if d.code.code == "SN6002"]
    assert "ttft target 2 s" in m and "tpot target 50 s" in m and "max_tokens" in m, m


def test_superkernel_layers_past_the_models_layers_are_out_of_range():
    """`superkernel_layers = 99` on the 61-layer DeepSeek-R1 raised nothing."""
    from expect import ROOT

    seed = (ROOT / "examples" / "deepseek-r1-a3-7p1d.sn").read_text(encoding="utf-8")
    comp = compile_text(seed.replace("superkernel_layers = 58", "superkernel_layers = 99"), "seed.sn")
    (e,) = [d for d in comp.diagnostics if d.is_error]
    assert e.code.code == "SN2009" and "61 layers" in e.message and comp.source.text[e.span.start:e.span.end] == "99"
    comp = compile_text(seed.replace("superkernel_layers = 58", "superkernel_layers = 61"), "seed.sn")
    assert not [d for d in comp.diagnostics if d.is_error]

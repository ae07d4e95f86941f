"""vllm-ascend spelling of ``scheduler = ascend``, ``optimize.superkernel_layers`` and
``optimize.micro_batch = 2`` by release (engines.toml ``[[vllm_ascend_options]]``,
software.toml ``[[features]]``): written with the keys the release requires where it has
them, reported (SN4013 / SN4015 / SN4017) everywhere else, never silently dropped.

The v0.11.0 case is also a golden (``tests/golden/vllm-ascend-r1-v011-options``).  Releases
sncc does not pin get SN4040 besides; their launch files follow the nearest pin.
"""

from __future__ import annotations

import pytest
from expect import additional_config, compile_text

from sncc.emit.validate import validate_outputs
from sncc.engines.vllm_ascend.options import plan_options, spellings

#: DeepSeek-R1 W8A8 PD on an A3 SuperPoD: prefill TP4 x EP4 eager, decode TP1 x EP64 (TorchAir graphs)
R1_A3 = '''plan "r1" {{
  model "deepseek-r1" {{ weights = "/data/models/DeepSeek-R1-W8A8"  quant = {quant} }}
  hardware {{ system = "atlas-900-a3-superpod"  nodes = 6{cann} }}
  engine "vllm-ascend" {{{version}}}
  prefill {{ instances = 2  devices = 16  tp = 4  ep = 4  max_num_batched_tokens = 16k  max_num_seqs = 16{sched} }}
  decode  {{ instances = 1  devices = 64  tp = {dtp}  ep = {dep}  max_num_seqs = 32  max_num_batched_tokens = 256 }}
  {graph}{xfer}
  optimize {{ {opt} }}
  workload {{ requests = 200  concurrency = 64  input {{ mean = 4k  max = 8k }}  output {{ mean = 1k  max = 2k }} }}
  env {{ HCCL_BUFFSIZE = 1024 }}
}}
'''

#: one DeepSeek or Qwen serve instance on two Atlas 800 A2 nodes
A2_SERVE = '''plan "a2" {{
  model "{model}" {{ quant = w8a8 }}
  hardware {{ system = "atlas-800-a2"  nodes = 2  cann = "{cann}" }}
  engine "vllm-ascend" {{ version = "{version}" }}
  serve {{ devices = 16  tp = {tp}  ep = {ep}  max_num_seqs = 16  max_num_batched_tokens = 4k  chunked_prefill = 4k{sched} }}
  {extra}
  workload {{ requests = 100  concurrency = 16  input {{ mean = 2k  max = 4k }}  output {{ mean = 512  max = 2k }} }}
}}
'''


def r1(version="v0.11.0", cann="8.3.RC2", opt="micro_batch = 2  superkernel_layers = 58", dtp=1, dep=64,
       graph="graph { mode = torchair }", sched="  scheduler = ascend", quant="w8a8"):
    # Mooncake on Ascend needs CANN newer than 8.3.RC1 (SN4009): older releases use LLMDataDist
    old_cann = cann is not None and cann in ("8.1.RC1", "8.2.RC1")
    return R1_A3.format(version=f' version = "{version}" ' if version else "", cann=f'  cann = "{cann}"' if cann else "",
                        opt=opt, dtp=dtp, dep=dep, graph=graph, sched=sched, quant=quant,
                        xfer="\n  kv_transfer { connector = llmdatadist }" if old_cann else "")


def compile_(text):
    comp = compile_text(text)
    assert comp.plan is not None
    return comp


def diags(comp, *codes_):
    return [(d.code.code, d.severity, *comp.source.line_col(d.span.start), d.message)
            for d in comp.diagnostics if d.code.code in codes_]


def build(comp) -> dict[str, str]:
    """The outputs of ``comp`` (no errors allowed), plus ``env`` = every env file joined."""
    errors = [f"{d.code.code} {d.message}" for d in comp.diagnostics if d.is_error]
    assert not errors, errors
    files = dict(comp.outputs)
    assert validate_outputs(files) == []
    files["env"] = "\n".join(t for n, t in sorted(files.items()) if n.startswith("env/"))
    return files


def ac(files, role) -> dict:
    """The role's ``--additional-config`` object."""
    return additional_config(files, role)


def exports(files) -> dict[str, str]:
    out = {}
    for ln in files["env"].splitlines():
        if ln.startswith("export "):
            k, v = ln[len("export "):].split("  #")[0].split("=", 1)
            out[k] = v
    return out


# --------------------------------------------------------------------------- written where the release has them

def test_v011_writes_each_option_with_the_keys_it_requires():
    files = build(compile_(r1()))
    dec, pre = ac(files, "decode"), ac(files, "prefill")
    # decode runs TorchAir graphs with tp = 1: super kernel plus v0.11's multistream key
    assert dec["torchair_graph_config"] == {"enabled": True, "enable_super_kernel": True}
    assert dec["multistream_overlap_shared_expert"] is True
    # prefill is eager (no TorchAir): no super kernel there; it runs the Ascend scheduler
    assert "torchair_graph_config" not in pre and "multistream_overlap_shared_expert" not in pre
    assert pre["ascend_scheduler_config"] == {"enabled": True}
    assert "ascend_scheduler_config" not in dec
    assert exports(files)["VLLM_ASCEND_ENABLE_DBO"] == "1"


def test_v091_branch_spells_the_multistream_key_inside_torchair_graph_config():
    comp = compile_(r1(version="v0.9.1", cann="8.2.RC1", sched=""))  # A3 on v0.9.1: accepted with a warning (SN4007)
    assert diags(comp, "SN4015", "SN4017") == []
    files = build(comp)
    a = ac(files, "decode")
    assert a["torchair_graph_config"] == {"enabled": True, "enable_super_kernel": True, "enable_multistream_moe": True}
    assert "multistream_overlap_shared_expert" not in a
    assert exports(files)["VLLM_ASCEND_ENABLE_DBO"] == "1"


def test_ascend_scheduler_before_v090_is_switched_on_by_an_empty_table():
    # v0.8.5rc1 passes every ascend_scheduler_config key to a dataclass: `enabled` would be rejected
    text = A2_SERVE.format(model="qwen3-32b", cann="8.1.RC1", version="v0.8.5rc1", tp=8, ep=1, sched="  scheduler = ascend",
                           extra="").replace("max_num_batched_tokens = 4k  chunked_prefill = 4k", "max_num_batched_tokens = 8k")
    text = text.replace("nodes = 2", "nodes = 1").replace("devices = 16", "devices = 8")
    text = text.replace('model "qwen3-32b" { quant = w8a8 }', 'model "qwen3-32b" {}')
    files = build(compile_(text))
    assert ac(files, "serve")["ascend_scheduler_config"] == {}


def test_a_plan_env_value_wins_over_the_option_env():
    text = r1().replace("env { HCCL_BUFFSIZE = 1024 }", "env { HCCL_BUFFSIZE = 1024  VLLM_ASCEND_ENABLE_DBO = 0 }")
    env = build(compile_(text))["env/common.sh"]
    assert env.count("VLLM_ASCEND_ENABLE_DBO") == 1 and "export VLLM_ASCEND_ENABLE_DBO=0  # from plan env\n" in env


# --------------------------------------------------------------------------- releases without them: SN4015, nothing written

def test_v013_warns_at_each_option_and_writes_none_of_their_keys():
    text = r1(version="v0.13.0", cann="8.5.0", graph="", sched="")
    comp = compile_(text)
    got = diags(comp, "SN4015")
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "superkernel_layers" in ln)
    src = text.splitlines()[line - 1]
    assert sorted((c, sev, ln, col) for c, sev, ln, col, _ in got) == [
        ("SN4015", "warning", line, src.index("2") + 1), ("SN4015", "warning", line, src.index("58") + 1)]
    assert all("removed in v0.12.0rc1" in m for *_, m in got)
    files = build(comp)
    for name in ("prefill.toml", "decode.toml"):
        assert "super_kernel" not in files[name] and "multistream" not in files[name]
    assert "VLLM_ASCEND_ENABLE_DBO" not in files["env"]


def test_ascend_scheduler_on_v013_stays_one_error():
    comp = compile_(r1(version="v0.13.0", cann="8.5.0", graph="", opt=""))
    assert [c for c, *_ in diags(comp, "SN4013", "SN4015", "SN4017")] == ["SN4013"]


def test_a_release_between_the_two_super_kernel_lines_says_where_it_exists():
    comp = compile_(r1(version="v0.10.0rc1", cann="8.2.RC1", sched=""))
    (got,) = diags(comp, "SN4015")
    assert "v0.9.1rc2 to before v0.9.2rc1" in got[-1] and "v0.11.0rc1 to before v0.12.0rc1" in got[-1]
    files = build(comp)
    assert "enable_super_kernel" not in files["decode.toml"]
    assert exports(files)["VLLM_ASCEND_ENABLE_DBO"] == "1"  # dual-batch overlap exists in v0.10.0rc1


def test_an_unversioned_plan_looks_its_options_up_for_the_default_pin():
    """No ``version``: the build uses sncc's default pin, so the options are spelled for that
    release (as the checks judge it), exactly as when the pin is written."""
    from sncc.engines.registry import adapter_for

    pin = adapter_for("vllm-ascend").choose(None).pin.version
    bare = compile_(r1(version=None, cann=None, sched=""))
    written = compile_(r1(version=pin, cann=None, sched=""))
    assert not diags(bare, "SN4015") and not diags(written, "SN4015")
    files, files_w = build(bare), build(written)
    assert "enable_super_kernel" in files["decode.toml"]
    assert files["decode.toml"] == files_w["decode.toml"] and files["env"] == files_w["env"]


# --------------------------------------------------------------------------- preconditions

def test_super_kernel_with_tp_above_one_is_an_error_pointing_at_the_role():
    comp = compile_(r1(dtp=4, dep=16, opt="superkernel_layers = 58"))
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN4017"]
    assert d.is_error and "tensor_parallel_size = 1" in d.message and "`decode` has tp = 4" in d.message
    assert any("tp = 4" in r.message for r in d.related) and "tp = 1" in d.help


def test_super_kernel_without_torchair_is_an_error():
    comp = compile_(r1(graph="", opt="superkernel_layers = 58", sched=""))
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN4017"]
    assert "TorchAir" in d.message and "graph { mode = torchair }" in d.help


def test_super_kernel_on_bf16_weights_is_not_written_and_warned():
    comp = compile_(r1(opt="superkernel_layers = 58", sched="", quant="bf16").replace(
        'weights = "/data/models/DeepSeek-R1-W8A8"  ', ""))
    got = diags(comp, "SN4015", "SN4017")
    assert [(c, sev) for c, sev, *_ in got] == [("SN4015", "warning")] and "W8A8" in got[0][-1]
    uses = plan_options(comp.plan, comp.resolved)
    assert [u.written for u in uses] == [False]


def test_dual_batch_overlap_on_a_non_mla_model_is_not_written_and_warned():
    text = A2_SERVE.format(model="qwen3-30b-a3b", cann="8.3.RC2", version="v0.11.0", tp=2, ep=8, sched="",
                           extra="optimize { micro_batch = 2 }")
    comp = compile_(text)
    got = diags(comp, "SN4015", "SN4017")
    assert [(c, sev) for c, sev, *_ in got] == [("SN4015", "warning")] and "MLA" in got[0][-1]
    assert "VLLM_ASCEND_ENABLE_DBO" not in build(comp)["env"]


def test_dual_batch_overlap_with_mtp_is_refused_only_where_the_release_refuses_it():
    spec = "speculative { method = mtp  draft_tokens = 1  acceptance = 0.7 }  optimize { micro_batch = 2 }"
    v091 = compile_(A2_SERVE.format(model="deepseek-r1", cann="8.2.RC1", version="v0.9.1", tp=4, ep=4, sched="", extra=spec))
    assert [c for c, *_ in diags(v091, "SN4017")] == ["SN4017"]
    v011 = compile_(A2_SERVE.format(model="deepseek-r1", cann="8.3.RC2", version="v0.11.0", tp=4, ep=4, sched="", extra=spec))
    assert diags(v011, "SN4015", "SN4017") == []
    assert "VLLM_ASCEND_ENABLE_DBO" in build(v011)["env"]


# --------------------------------------------------------------------------- the invariant: nothing vanishes silently

@pytest.mark.parametrize("version,cann", [
    ("v0.8.5rc1", "8.1.RC1"), ("v0.9.1", "8.2.RC1"), ("v0.10.2rc1", "8.2.RC1"), ("v0.11.0", "8.3.RC2"),
    ("v0.12.0rc1", "8.3.RC2"), ("v0.18.0", "8.5.1"), (None, None)])
@pytest.mark.parametrize("dtp", [1, 4])
def test_every_option_is_written_or_reported(version, cann, dtp):
    comp = compile_(r1(version=version, cann=cann, dtp=dtp, dep=64 // dtp))
    reported = {d.path[-1] for d in comp.diagnostics if d.code.code in ("SN4013", "SN4015", "SN4017") and d.path}
    uses = plan_options(comp.plan, comp.resolved)
    assert {u.option for u in uses} == {"scheduler", "superkernel_layers", "micro_batch"}
    for u in uses:
        assert u.written != (u.option in reported), (u.option, u.written, reported)
    if any(d.is_error for d in comp.diagnostics):
        return
    text = "".join(comp.outputs.values())
    for u in uses:
        key = u.spelling.key.split(".")[-1] if u.spelling else {"scheduler": "ascend_scheduler_config",
                                                                "superkernel_layers": "enable_super_kernel",
                                                                "micro_batch": "VLLM_ASCEND_ENABLE_DBO"}[u.option]
        assert (key in text) == u.written, (u.option, key)


def test_every_spelling_row_names_a_sourced_feature_of_vllm_ascend():
    rows = spellings()
    assert {s.option for s in rows} == {"scheduler", "superkernel_layers", "micro_batch"}
    for s in rows:
        assert s.feature.engine == "vllm-ascend" and s.feature.source and s.source
        assert s.status in ("R", "R2", "I", "A", "M", "C")


# --------------------------------------------------------------------------- other engines and chips (sncc.checks.features)

VLLM_PLAN = '''plan "v" {{
  model "qwen3-32b" {{}}
  hardware {{ system = "{system}"  nodes = 1 }}
  engine "vllm" {{}}
  serve {{ devices = 8  tp = 8  max_num_seqs = 16  chunked_prefill = 4k }}
  optimize {{ micro_batch = 2  superkernel_layers = 10 }}
  workload {{ requests = 100  concurrency = 16  input {{ mean = 1k  max = 4k }}  output {{ mean = 512  max = 2k }} }}
}}
'''


@pytest.mark.parametrize("system", ["hgx-h100", "hgx-h200"])   # on Ascend upstream vLLM is SN4007
def test_engine_vllm_reports_micro_batch_and_super_kernel(system):
    text = VLLM_PLAN.format(system=system)
    comp = compile_(text)
    src = text.splitlines()[5]
    got = sorted((c, sev, ln, col) for c, sev, ln, col, _ in diags(comp, "SN4015"))
    assert got == [("SN4015", "warning", 6, src.index("2") + 1), ("SN4015", "warning", 6, src.index("10") + 1)]
    env = build(comp)["env"]
    assert "DBO" not in env and "MICRO_BATCH" not in env and "SUPERKERNEL" not in env


@pytest.mark.parametrize("version,credited", [("v0.11.0", True), ("v0.13.0", False)])
def test_simulator_credits_what_the_build_writes(version, credited):
    """micro_batch / superkernel_layers are simulated exactly when the build writes them."""
    from sncc.sim.from_plan import applicable_features

    comp = compile_text(r1(version=version))
    applied, notes = applicable_features(comp.plan, comp.resolved)
    for name in ("micro_batch", "superkernel_layers"):
        assert (name in applied) is credited
        assert any(n.startswith(f"optimize.{name}") for n in notes) is (not credited)

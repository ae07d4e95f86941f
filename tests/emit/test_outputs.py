"""Emitters, output schemas and the output writer.

Golden files: ``tests/golden/<case>/plan.sn`` plus the expected outputs (the
``schemas/`` copies are not stored; they are compared with ``schemas/``).
Run with ``SNCC_UPDATE_GOLDEN=1`` to rewrite the expected outputs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sncc import resources
from sncc.emit import EMITTERS, emit_all, outputs_for, schema_for
from sncc.emit import writer as writer_mod
from sncc.emit.validate import validate_output, validate_outputs
from sncc.emit.writer import MANIFEST, OutputError, write_outputs
from sncc.plan.build import build_plan
from sncc.plan.resolve import resolve
from sncc.source import SourceFile
from sncc.syntax.parser import parse

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "plan.sn").is_file())
UPDATE = os.environ.get("SNCC_UPDATE_GOLDEN") == "1"
SECRET_VALUE = "sk-should-never-appear-0000"
#: env.sh is a bash script; bash is required (.ci/run itself runs under bash), not skipped
BASH = shutil.which("bash") or "bash-is-required-to-test-env.sh"
REPO = Path(__file__).resolve().parent.parent


def compile_text(text: str, name: str = "plan.sn"):
    """(plan, resolved) for plan source ``text``; fails the test on parse/build errors."""
    module, diags = parse(SourceFile(name, text))
    assert not [d for d in diags if d.severity == "error"], diags
    plan, diags = build_plan(module)
    assert plan is not None and not [d for d in diags if d.severity == "error"], diags
    return plan, resolve(plan)


def compile_case(case: str):
    return compile_text((GOLDEN / case / "plan.sn").read_text(encoding="utf-8"))


def emit_case(case: str, **kw) -> dict[str, str]:
    plan, resolved = compile_case(case)
    return emit_all(plan, resolved, **kw)


# --------------------------------------------------------------------------- golden files

@pytest.mark.parametrize("case", CASES)
def test_golden(case):
    files = emit_case(case, schemas=False)
    d = GOLDEN / case
    if UPDATE:
        for p in d.iterdir():
            if p.name != "plan.sn" and p.is_file():
                p.unlink()
        for name, text in files.items():
            (d / name).write_bytes(text.encode("utf-8"))
    expected = {p.name: p.read_text(encoding="utf-8") for p in d.iterdir() if p.is_file() and p.name != "plan.sn"}
    assert sorted(files) == sorted(expected), "output set differs; run with SNCC_UPDATE_GOLDEN=1 to rewrite"
    for name in files:
        assert files[name] == expected[name], f"{case}/{name} differs; run with SNCC_UPDATE_GOLDEN=1 to rewrite"


def test_golden_cases_cover_the_brief():
    assert {"omni-infer-r1-7p1d", "vllm-ascend-v4flash-pd", "vllm-ascend-qwen3-32b-a2"} <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_every_output_validates(case):
    files = emit_case(case)
    assert validate_outputs(files) == []
    for name in files:
        if name.startswith("schemas/"):
            continue
        if name.endswith((".json", ".toml")):
            assert schema_for(name) is not None
            assert f"schemas/{schema_for(name)}.schema.json" in files


@pytest.mark.parametrize("case", CASES)
def test_schema_copies_match_shipped_schemas(case):
    files = emit_case(case)
    copies = {n: t for n, t in files.items() if n.startswith("schemas/")}
    assert copies
    for name, text in copies.items():
        assert text == resources.schema_path(name[len("schemas/"):-len(".schema.json")]).read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES)
def test_schema_references_resolve_inside_the_output(case):
    files = emit_case(case)
    for name, text in files.items():
        if name.startswith("schemas/"):
            continue
        if name.endswith(".json"):
            ref = json.loads(text)["$schema"]
        elif name.endswith(".toml"):
            first = text.splitlines()[0]
            assert first.startswith("#:schema "), first
            ref = first[len("#:schema "):]
        else:
            continue
        assert ref.startswith("./schemas/")
        assert ref[2:] in files


@pytest.mark.parametrize("case", CASES)
def test_two_emissions_are_identical(case):
    assert emit_case(case) == emit_case(case)


def test_emission_independent_of_hash_seed():
    code = (
        "import hashlib, sys, json\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from tests.test_emit import emit_case, CASES\n"
        "out = {c: {n: hashlib.sha256(t.encode()).hexdigest() for n, t in emit_case(c).items()} for c in CASES}\n"
        "print(json.dumps(out, sort_keys=True))\n"
    )
    results = set()
    for seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True, text=True, env=env, cwd=REPO)
        assert r.returncode == 0, r.stderr
        results.add(r.stdout)
    assert len(results) == 1


# --------------------------------------------------------------------------- env.sh

@pytest.mark.parametrize("case", CASES)
def test_env_sh_passes_bash_n(case, tmp_path):
    text = emit_case(case)["env.sh"]
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    p = tmp_path / "env.sh"
    p.write_text(text)
    r = subprocess.run([BASH, "-n", str(p)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_env_sh_sources_and_requires_the_secret(tmp_path):
    p = tmp_path / "env.sh"
    p.write_text(emit_case("omni-infer-r1-7p1d")["env.sh"])
    env = {k: v for k, v in os.environ.items() if k != "GATEWAY_API_KEY"}
    r = subprocess.run([BASH, "-c", f'. {p}; echo "$HCCL_BUFFSIZE"'], capture_output=True, text=True, env=env)
    assert r.returncode != 0 and "set GATEWAY_API_KEY" in r.stderr
    env["GATEWAY_API_KEY"] = "x"
    r = subprocess.run([BASH, "-c", f'. {p}; echo "$HCCL_BUFFSIZE $ASCEND_RT_VISIBLE_DEVICES $ASCEND_SUPERKERNEL_FUSION_LAYERS"'],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1000", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15", "58"]


def test_env_sh_seed000_variables():
    text = emit_case("omni-infer-r1-7p1d")["env.sh"]
    for line in ("export ASCEND_OMNI_MICRO_BATCH=2", "export ASCEND_OMNI_STREAM_SPLIT=1",
                 "export ASCEND_SUPERKERNEL_ENABLE=1", "export ASCEND_SUPERKERNEL_FUSION_LAYERS=58",
                 "export TORCHAIR_CACHE_COMPILE=1", "export TORCHAIR_CACHE_DIR=/data/torchair_cache/deepseek-r1-w8a8",
                 "export HCCL_BUFFSIZE=1000", "export HCCL_CONNECT_TIMEOUT=", "export HCCL_EXEC_TIMEOUT="):
        assert line in text
    assert text.count("export HCCL_BUFFSIZE=") == 1
    plain = emit_case("vllm-ascend-qwen3-32b-a2")["env.sh"]
    assert "ASCEND_OMNI_MICRO_BATCH" not in plain and "TORCHAIR" not in plain
    assert "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7" in plain


def test_env_sh_quotes_hostile_values(tmp_path):
    src = (GOLDEN / "vllm-ascend-qwen3-32b-a2" / "plan.sn").read_text()
    hostile = "a b;$(touch PWNED) `id` 'q' \\\"x\\\" *"
    src = src.replace("slo {", f'env {{ WEIRD = "{hostile}"  EMPTY = "" }}\n  slo {{')
    plan, resolved = compile_text(src)
    expected = plan.env["WEIRD"]
    text = emit_all(plan, resolved)["env.sh"]
    p = tmp_path / "env.sh"
    p.write_text(text)
    r = subprocess.run([BASH, "-c", f'. {p}; printf "%s|%s" "$WEIRD" "$EMPTY"'], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == expected + "|"
    assert not (tmp_path / "PWNED").exists()


# --------------------------------------------------------------------------- secrets

@pytest.mark.parametrize("case", CASES)
def test_no_secret_value_in_any_output(case, monkeypatch, tmp_path):
    monkeypatch.setenv("GATEWAY_API_KEY", SECRET_VALUE)
    plan, resolved = compile_case(case)
    files = emit_all(plan, resolved)
    for name, text in files.items():
        assert SECRET_VALUE not in text, name
    out = tmp_path / "out"
    write_outputs(files, out, plan_source=(GOLDEN / case / "plan.sn").read_text())
    for p in out.rglob("*"):
        if p.is_file():
            assert SECRET_VALUE.encode() not in p.read_bytes(), p


def test_secret_referenced_by_name_only():
    files = emit_case("vllm-ascend-v4flash-pd")
    settings = json.loads(files["settings.json"])
    assert settings["api_key_env"] == "GATEWAY_API_KEY"
    assert "api_key" not in settings
    assert ': "${GATEWAY_API_KEY:?set GATEWAY_API_KEY}"' in files["env.sh"]
    for name in ("vllm-ascend.prefill.toml", "vllm-ascend.decode.toml"):
        assert "api_key" not in files[name]
        assert "GATEWAY_API_KEY" not in files[name]


def test_settings_schema_rejects_a_literal_key():
    doc = json.loads(emit_case("vllm-ascend-v4flash-pd")["settings.json"])
    doc["api_key"] = "sk-abc"
    errors = validate_output("settings.json", json.dumps(doc))
    assert errors and all(e.startswith("settings.json: ") for e in errors)


# --------------------------------------------------------------------------- content

def test_omni_infer_json_shape():
    doc = json.loads(emit_case("omni-infer-r1-7p1d")["omni-infer.json"])
    assert doc["model"] == "deepseek-r1"
    assert (doc["prefill_nodes"], doc["decode_nodes"], doc["tp_size"]) == (7, 1, 8)
    assert doc["batch_size_per_die"] == 48  # decode max_num_seqs, not the client concurrency 3168
    assert (doc["max_input_len"], doc["max_output_len"]) == (16384, 32768)
    assert doc["prefill"]["model_parallel_config"] == {"dp_size": 2}
    assert doc["decode"]["model_parallel_config"] == {"dp_size": 64}
    assert doc["omni_placement"] == {"enable": True, "redundant_experts": 2, "dynamic_adjust_interval": 100}
    assert doc["omni_attn"] == {"enable": True, "compress_ratio": 0.5, "search_mode": "evolutionary"}
    assert doc["omni_proxy"] == {"enable": True, "scheduling_policy": "OAS", "apc_aware": True}
    assert list(doc)[:2] == ["$schema", "model"]


def test_vllm_ascend_pd_toml():
    files = emit_case("vllm-ascend-v4flash-pd")
    assert "vllm-ascend.toml" not in files and "omni-infer.json" not in files
    pre = tomllib.loads(files["vllm-ascend.prefill.toml"])
    dec = tomllib.loads(files["vllm-ascend.decode.toml"])
    assert set(dec) >= {"model", "parallel", "ascend", "scheduler", "server"}
    assert dec["parallel"]["tensor_parallel_size"] == 8
    assert dec["parallel"]["data_parallel_size"] == 8
    assert dec["parallel"]["enable_expert_parallel"] is True
    assert dec["kv_transfer_config"]["kv_role"] == "kv_consumer"
    assert pre["kv_transfer_config"]["kv_role"] == "kv_producer"
    assert dec["kv_transfer_config"]["kv_connector_extra_config"]["decode"] == {"dp_size": 8, "tp_size": 8}
    assert dec["model"]["quantization"] == "ascend"
    assert dec["model"]["served_model_name"] == "deepseek-v4-flash"
    assert dec["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 1}
    assert pre["scheduler"]["enable_chunked_prefill"] is True
    assert pre["scheduler"]["long_prefill_token_threshold"] == 8192
    assert "# one instance = tp × ep × pp = 8 × 8 × 1 = 64 devices (4 nodes of 16)" in files["vllm-ascend.decode.toml"]


def test_vllm_ascend_aggregated_toml():
    files = emit_case("vllm-ascend-qwen3-32b-a2")
    assert sorted(n for n in files if not n.startswith("schemas/")) == ["env.sh", "vllm-ascend.toml"]
    doc = tomllib.loads(files["vllm-ascend.toml"])
    assert doc["parallel"]["enable_expert_parallel"] is False  # dense model
    assert "kv_transfer_config" not in doc and "quantization" not in doc["model"]
    assert doc["model"]["max_model_len"] == 16384 + 8192


@pytest.mark.parametrize("version,expect_additional", [("v0.11.0", True), ("v0.23.0", False)])
def test_int8_kv_cache_per_release(version, expect_additional):
    src = (GOLDEN / "vllm-ascend-qwen3-32b-a2" / "plan.sn").read_text()
    src = src.replace('version = "v0.11.0"', f'version = "{version}"').replace("slo {", "kv_cache { dtype = int8 }\n  slo {")
    plan, resolved = compile_text(src)
    text = emit_all(plan, resolved)["vllm-ascend.toml"]
    doc = tomllib.loads(text)
    assert doc["ascend"]["kv_cache_dtype"] == "auto"
    assert ("additional_config" in doc["ascend"]) is expect_additional
    assert validate_output("vllm-ascend.toml", text) == []


def test_outputs_for_selects_per_engine():
    plan, _ = compile_case("omni-infer-r1-7p1d")
    assert outputs_for(plan) == ["omni-infer.json", "settings.json", "env.sh"]
    plan, _ = compile_case("vllm-ascend-v4flash-pd")
    assert outputs_for(plan) == ["vllm-ascend.prefill.toml", "vllm-ascend.decode.toml", "settings.json", "env.sh"]
    plan, _ = compile_case("vllm-ascend-qwen3-32b-a2")
    assert outputs_for(plan) == ["vllm-ascend.toml", "env.sh"]
    assert set(EMITTERS) == {"omni-infer.json", "vllm-ascend.prefill.toml", "vllm-ascend.decode.toml",
                             "vllm-ascend.toml", "settings.json", "env.sh"}


# --------------------------------------------------------------------------- schemas

SCHEMAS = ["omni-infer", "vllm-ascend", "settings", "simulate"]


def _walk_properties(schema, path="#"):
    if isinstance(schema, dict):
        for key, sub in schema.get("properties", {}).items():
            yield f"{path}/properties/{key}", sub
            yield from _walk_properties(sub, f"{path}/properties/{key}")
        for kw in ("items", "additionalProperties"):
            if isinstance(schema.get(kw), dict):
                yield from _walk_properties(schema[kw], f"{path}/{kw}")


@pytest.mark.parametrize("name", SCHEMAS)
def test_schema_is_documented_draft_2020_12(name):
    import jsonschema

    schema = resources.schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] and schema["title"] and schema["description"]
    for path, sub in _walk_properties(schema):
        assert isinstance(sub, dict) and sub.get("title") and sub.get("description"), path


def test_validate_output_reports_problems():
    files = emit_case("vllm-ascend-qwen3-32b-a2")
    doc = tomllib.loads(files["vllm-ascend.toml"])
    del doc["scheduler"]
    doc["parallel"]["tensor_parallel_size"] = 0
    import tomlkit

    errors = validate_output("vllm-ascend.toml", tomlkit.dumps(doc))
    assert len(errors) == 2 and all("\n" not in e for e in errors)
    assert validate_output("vllm-ascend.toml", "[model\n")[0].startswith("vllm-ascend.toml: invalid TOML")
    assert validate_output("settings.json", "{")[0].startswith("settings.json: invalid JSON")
    if BASH:
        assert validate_output("env.sh", "if then fi (\n")


def test_simulate_schema_accepts_a_result():
    from sncc.emit.validate import validate_instance

    result = {
        "requests": {"completed": 3000},
        "duration_s": 296.1,
        "qpm": 608.0,
        "ttft_s": {"mean": 1.93, "p50": 1.8, "p90": 2.6, "p99": 3.9},
        "tpot_ms": {"mean": 47.0, "p50": 46.0, "p90": 52.0, "p99": 60.0},
        "output_tokens_per_s": 12450.0,
        "output_tokens_per_s_per_device": 70.7,
        "tokens_per_s_per_user": {"mean": 21.3},
        "slo": [{"name": "ttft", "target": 2.0, "observed": 1.93, "met": True}],
        "extra": {"anything": 1},
    }
    assert validate_instance("simulate.json", result, "simulate") == []
    del result["qpm"]
    assert validate_instance("simulate.json", result, "simulate")


# --------------------------------------------------------------------------- writer

def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.parent.iterdir())


def test_writer_writes_files_and_manifest(tmp_path):
    files = emit_case("vllm-ascend-v4flash-pd")
    out = tmp_path / "out"
    paths = write_outputs(files, out, plan_source="plan text")
    assert paths == sorted([out / n for n in files] + [out / MANIFEST])
    for name, text in files.items():
        assert (out / name).read_text(encoding="utf-8") == text
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["generator"] == "sncc"
    assert manifest["plan_sha256"] == hashlib.sha256(b"plan text").hexdigest()
    assert manifest["files"] == {n: hashlib.sha256(t.encode()).hexdigest() for n, t in files.items()}
    assert os.access(out / "env.sh", os.X_OK)
    first = (out / MANIFEST).read_bytes()
    write_outputs(files, out, plan_source="plan text")
    assert (out / MANIFEST).read_bytes() == first
    assert _siblings(out) == ["out"]


def test_writer_replaces_an_owned_folder(tmp_path):
    out = tmp_path / "out"
    write_outputs({"a.txt": "1", "sub/b.txt": "2"}, out)
    write_outputs({"c.txt": "3"}, out)
    assert sorted(_snapshot(out)) == ["c.txt", MANIFEST]
    assert _siblings(out) == ["out"]


def test_writer_refuses_a_foreign_folder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "precious.txt").write_text("keep me")
    with pytest.raises(OutputError) as e:
        write_outputs({"a.txt": "1"}, out)
    assert "not written by sncc" in str(e.value) and "\n" not in str(e.value)
    assert _snapshot(out) == {"precious.txt": b"keep me"}
    assert _siblings(out) == ["out"]
    write_outputs({"a.txt": "1"}, out, force=True)
    assert sorted(_snapshot(out)) == ["a.txt", MANIFEST]


def test_writer_accepts_an_empty_folder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    write_outputs({"a.txt": "1"}, out)
    assert (out / "a.txt").read_text() == "1"


def test_writer_keeps_old_folder_when_a_write_fails(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_outputs({"a.txt": "old a", "b.txt": "old b"}, out)
    before = _snapshot(out)
    real = writer_mod._write_file
    calls = []

    def flaky(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(writer_mod, "_write_file", flaky)
    with pytest.raises(OutputError) as e:
        write_outputs({"a.txt": "new a", "b.txt": "new b", "c.txt": "new c"}, out)
    assert "No space left on device" in str(e.value) and "\n" not in str(e.value)
    assert _snapshot(out) == before
    assert _siblings(out) == ["out"]


def test_writer_keeps_old_folder_when_the_swap_fails(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_outputs({"a.txt": "old"}, out)
    before = _snapshot(out)
    real_rename = os.rename

    def failing_rename(src, dst):
        if Path(src).name.startswith(".out.sncc-new-"):
            raise OSError(5, "Input/output error")
        real_rename(src, dst)

    monkeypatch.setattr(writer_mod.os, "rename", failing_rename)
    with pytest.raises(OutputError):
        write_outputs({"a.txt": "new"}, out)
    assert _snapshot(out) == before
    assert _siblings(out) == ["out"]


def test_writer_symlinks(tmp_path):
    outside = tmp_path / "elsewhere" / "target"
    outside.mkdir(parents=True)
    parent = tmp_path / "builds"
    parent.mkdir()
    link = parent / "out"
    link.symlink_to(outside)
    with pytest.raises(OutputError) as e:
        write_outputs({"a.txt": "1"}, link)
    assert "outside" in str(e.value)
    assert list(outside.iterdir()) == []

    inside = parent / "out.v1"
    link2 = parent / "current"
    link2.symlink_to(inside.name)
    write_outputs({"a.txt": "1"}, link2)
    assert link2.is_symlink() and (inside / "a.txt").read_text() == "1"
    write_outputs({"a.txt": "2"}, link2)
    assert link2.is_symlink() and (link2 / "a.txt").read_text() == "2"
    assert sorted(p.name for p in parent.iterdir()) == ["current", "out", "out.v1"]


@pytest.mark.parametrize("bad", ["../x", "/etc/x", "a/../../x", "", MANIFEST, "a//b"])
def test_writer_rejects_bad_names(tmp_path, bad):
    with pytest.raises(OutputError):
        write_outputs({bad: "x"}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_writer_refuses_a_file(tmp_path):
    f = tmp_path / "out"
    f.write_text("x")
    with pytest.raises(OutputError):
        write_outputs({"a.txt": "1"}, f)
    assert f.read_text() == "x"


def test_vllm_on_nvidia():
    src = """
plan "qwen3-32b-h100" {
  model "qwen3-32b" {}
  hardware { system = "hgx-h100"  nodes = 1 }
  engine "vllm" {}
  serve { instances = 2  devices = 4  tp = 4  max_num_seqs = 32 }
  workload { input { mean = 1k  max = 4k }  output { mean = 256  max = 1k } }
}
"""
    plan, resolved = compile_text(src)
    files = emit_all(plan, resolved)
    assert validate_outputs(files) == []
    doc = tomllib.loads(files["vllm-ascend.toml"])
    assert doc["ascend"]["device"] == "cuda" and "cann_version" not in doc["ascend"]
    assert "export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7" in files["env.sh"]
    assert "HCCL" not in files["env.sh"] and "ASCEND_RT_VISIBLE_DEVICES" not in files["env.sh"]

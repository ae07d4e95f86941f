"""`sncc import` reads the launch scripts `sncc build` writes: `exec vllm serve MODEL --config
"$SNCC_OUT/<role>.yaml" ...`, with `SNCC_OUT` the script folder's parent (the idiom
`$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)`), so build → import → build gives the same
engine arguments; and the shell prefixes real scripts put before the engine command."""

from __future__ import annotations

import pathlib

import pytest
import yaml
from expect import ROOT, compile_text, outputs_of

from sncc.importer import import_files, import_sources
from sncc.source import SourceFile
from tests_helpers import QWEN3_32B_W8A8_H100 as NVIDIA_W8A8

PLANS = [ROOT / "tests" / "golden" / "vllm-h100-llama-serve" / "plan.sn",
         ROOT / "examples" / "search" / "deepseek-v3-h200-64.sn"]


def _write(files: dict[str, str], out: pathlib.Path) -> None:
    for name, text in files.items():
        p = out / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.stem)
def test_a_built_launch_script_imports_to_the_same_engine_arguments(plan, tmp_path):
    text = plan.read_text(encoding="utf-8")
    files = outputs_of(text, plan.name)
    _write(files, tmp_path)
    script = sorted(n for n in files if n.startswith("launch/"))[0]
    assert "\nexec vllm serve " in files[script]
    res = import_files([str(tmp_path / script)], system=compile_text(text).plan.hardware.system)
    errors = [(d.code.code, d.message) for d in res.diagnostics if d.is_error or d.code.code in ("SN8005", "SN8006")]
    assert errors == [], errors
    again = outputs_of(res.text, "imported.sn")
    role = script.split("/")[1].split("-")[0]
    assert yaml.safe_load(again[f"{role}.yaml"]) == yaml.safe_load(files[f"{role}.yaml"])


@pytest.mark.parametrize("line", [
    "exec vllm serve Qwen/Qwen3-32B --tensor-parallel-size 8 --max-model-len 8192",
    "nohup vllm serve Qwen/Qwen3-32B --tensor-parallel-size 8 --max-model-len 8192 > serve.log 2>&1 &",
    "VLLM_LOGGING_LEVEL=DEBUG vllm serve Qwen/Qwen3-32B --tensor-parallel-size 8 --max-model-len 8192",
    "exec env VLLM_LOGGING_LEVEL=DEBUG nice -n 5 vllm serve Qwen/Qwen3-32B --tensor-parallel-size 8 --max-model-len 8192",
    "setsid /usr/bin/time -o t.txt python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-32B -tp 8 --max-model-len 8192",
])
def test_shell_prefixes_before_the_engine_command(line):
    res = import_sources([SourceFile("run.sh", line + "\n")], system="hgx-h100")
    assert not [d for d in res.diagnostics if d.code.code == "SN8006"], [d.message for d in res.diagnostics]
    comp = compile_text(res.text)
    assert comp.plan.serve.tp == 8 and comp.plan.model.max_model_len == 8192
    if "VLLM_LOGGING_LEVEL" in line:
        assert 'VLLM_LOGGING_LEVEL = "DEBUG"' in res.text


def _sncc_build(text: str, tmp_path: pathlib.Path) -> pathlib.Path:
    from click.testing import CliRunner

    from sncc.cli import main

    tmp_path.mkdir(parents=True, exist_ok=True)
    plan = tmp_path / "plan.sn"
    plan.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    got = CliRunner().invoke(main, ["build", str(plan), "-o", str(out)])
    assert got.exit_code == 0, got.output
    return out


def test_nvidia_w8a8_survives_build_then_import(tmp_path):
    """The build wrote no --quantization for W8A8 on CUDA, and the import lost `quant = w8a8`."""
    out = _sncc_build(NVIDIA_W8A8, tmp_path)
    assert "quantization" not in yaml.safe_load((out / "serve.yaml").read_text(encoding="utf-8"))
    res = import_files([str(out / "launch" / "serve-0-node0.sh")])
    assert "quant = w8a8  # from the manifest.json of the build" in res.text, res.text
    comp = compile_text(res.text)
    assert comp.plan.model.quant == "w8a8"
    assert [d.code.code for d in comp.diagnostics if d.is_error] == []
    again = outputs_of(res.text, "imported.sn")
    assert yaml.safe_load(again["serve.yaml"]) == yaml.safe_load((out / "serve.yaml").read_text(encoding="utf-8"))


def test_the_manifest_of_an_edited_tree_or_a_native_dtype_adds_no_quant(tmp_path):
    out = _sncc_build(NVIDIA_W8A8.replace("quant = w8a8", "quant = bf16").replace("RedHatAI/Qwen3-32B-quantized.w8a8", "Qwen/Qwen3-32B"),
                      tmp_path / "bf16")
    assert "quant =" not in import_files([str(out / "launch" / "serve-0-node0.sh")]).text
    out = _sncc_build(NVIDIA_W8A8, tmp_path / "edited")
    y = out / "serve.yaml"
    y.write_text(y.read_text(encoding="utf-8").replace("max-num-seqs: 64", "max-num-seqs: 32"), encoding="utf-8")
    assert "quant =" not in import_files([str(out / "launch" / "serve-0-node0.sh")]).text

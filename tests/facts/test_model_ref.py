"""What the engine loads when a plan names its model (``Resolved.model_ref``)."""
from __future__ import annotations

import pytest

from sncc.facts.catalog_facts import model_ref


@pytest.mark.parametrize("weights, model_id, loads", [
    # a plan's weights always win
    ("/data/models/DeepSeek-R1-W8A8", "deepseek-r1", "/data/models/DeepSeek-R1-W8A8"),
    # a catalog id is no repository: `vllm serve qwen3-32b` does not start; the catalog's
    # repository alias is loaded instead
    (None, "qwen3-32b", "Qwen/Qwen3-32B"),
    (None, "deepseek-r1", "deepseek-ai/DeepSeek-R1"),
    (None, "kimi-k2", "moonshotai/Kimi-K2-Instruct"),
    # an alias naming one release loads that release's repository, not the entry's first one
    (None, "kimi-k2-thinking", "moonshotai/Kimi-K2-Thinking"),
    (None, "glm-4.7", "zai-org/GLM-4.7"),
    # a shorthand no repository is named after loads the entry's first repository (the note says so)
    (None, "qwen3-235b", "Qwen/Qwen3-235B-A22B"),
    # a repository id as written stays as written (an imported `vllm serve Qwen/Qwen3-32B`)
    (None, "Qwen/Qwen3-32B", "Qwen/Qwen3-32B"),
    # a name the catalog does not know is passed through
    (None, "my-finetune", "my-finetune"),
])
def test_the_engine_loads_weights_else_a_repository_id(weights, model_id, loads):
    got, note = model_ref(weights, model_id)
    assert got == loads
    assert note


def test_a_plan_without_weights_launches_the_catalog_repository(tmp_path):
    from expect import compile_text

    comp = compile_text('plan "p" {\n  model "qwen3-32b" {}\n  hardware { system = "hgx-h200"  devices = 2 }\n'
                        '  engine "vllm" {}\n  serve { devices = 2  tp = 2 }\n'
                        '  workload { requests = 10  concurrency = 2  input { mean = 1k  max = 2k }  output { mean = 1k  max = 2k } }\n}\n', str(tmp_path / "p.sn"))
    dep = comp.deployment
    assert dep.model_path == "Qwen/Qwen3-32B"
    assert dep.served_name == "qwen3-32b"           # clients keep sending the plan's name


_PLAN = ('plan "p" {{\n  model "{model}" {{ {body} }}\n  hardware {{ system = "{system}"  devices = 8 }}\n'
         '  engine "{engine}" {{}}\n  serve {{ devices = 8  tp = 8 }}\n'
         '  workload {{ requests = 10  concurrency = 2  input {{ mean = 1k  max = 2k }}  output {{ mean = 1k  max = 2k }} }}\n}}\n')


@pytest.mark.parametrize("model, body, system, engine, warned", [
    # the FP8 repository of DeepSeek-R1 is not the W8A8 checkpoint an Ascend plan quantizes to
    ("deepseek-r1", "quant = w8a8", "atlas-800i-a3", "vllm-ascend", True),
    ("deepseek-r1", 'quant = w8a8  weights = "/models/DeepSeek-R1-W8A8"', "atlas-800i-a3", "vllm-ascend", False),
    # BF16 Qwen3 with W8A8 needs msModelSlim's export
    ("qwen3-32b", "quant = w8a8", "atlas-800i-a3", "vllm-ascend", True),
    # vLLM quantizes a BF16 checkpoint to FP8 as it loads it (quant.toml quantizes_at_load)
    ("qwen3-32b", "quant = fp8", "hgx-h200", "vllm", False),
    # the repository's own format, or the plan silent about quant
    ("deepseek-r1", "quant = fp8", "hgx-h200", "vllm", False),
    ("qwen3-32b", "", "hgx-h200", "vllm", False),
    # Kimi-K2-Thinking's repository is INT4 on the experts (models.toml kimi-k2-thinking), not a W4A8 export
    ("kimi-k2-thinking", "quant = w4a8", "atlas-800i-a3", "vllm-ascend", True),
    ("kimi-k2-thinking", "", "atlas-800i-a3", "vllm-ascend", False),
])
def test_sn4022_the_loaded_repository_against_quant(tmp_path, model, body, system, engine, warned):
    from expect import compile_text

    comp = compile_text(_PLAN.format(model=model, body=body, system=system, engine=engine), str(tmp_path / "p.sn"))
    got = [d for d in comp.diagnostics if d.code.code == "SN4022"]
    assert bool(got) == warned, [d.message for d in comp.diagnostics]

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

"""tools/_source_ast.py: how the manifest extractors read an engine's source without importing it."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import _source_ast as S  # noqa: E402

ASCEND_CONFIG = textwrap.dedent('''
    class AscendConfig:
        def __init__(self, vllm_config):
            additional_config = vllm_config.additional_config or {}
            torchair = additional_config.get("torchair_graph_config", {})
            self.enabled = torchair.get("enabled", False)
            self.mode = torchair["mode"]
            self.eplb = EplbConfig(additional_config.get("eplb_config", {}))
            self.sched = additional_config.get("ascend_scheduler_config", {})
            self.refresh = "refresh" in additional_config
            self.fused = _get_config_value(additional_config, "enable_fused_mc2", "VLLM_ASCEND_ENABLE_FUSED_MC2", 0)

        def scheduler(self):
            for k, v in self.sched.items():
                setattr(self, k, v)

    class EplbConfig:
        _defaults = {"dynamic_eplb": False, "num_redundant_experts": 0}

        def __init__(self, user_config):
            for k, v in user_config.items():
                setattr(self, k, v)

    def _get_config_value(additional_config, config_key, env_key, env_value):
        return additional_config.get(config_key, env_value)
''')

ENVS = textwrap.dedent('''
    import os
    env_variables = {
        "VLLM_ASCEND_ENABLE_MLAPO": lambda: bool(int(os.getenv("VLLM_ASCEND_ENABLE_MLAPO", "0"))),
        "HCCN_PATH": lambda: os.getenv("HCCN_PATH", "/usr/local/Ascend/driver/tools/hccn_tool"),
        "TORCHAIR_CACHE_HOME": lambda: os.getenv("TORCHAIR_CACHE_HOME", os.path.join(os.getcwd(), ".torchair_cache")),
    }
''')


def test_additional_config_keys_are_followed_through_dicts_calls_and_classes():
    keys = S.ConfigReads({"pkg/ascend_config.py": ast.parse(ASCEND_CONFIG)}).keys
    assert keys["torchair_graph_config.enabled"]["default"] is False
    assert keys["torchair_graph_config"]["kind"] == "dict"
    assert "subscript" in keys["torchair_graph_config.mode"]["how"]
    # a class that keeps a literal table of accepted keys: the table's keys, with its defaults
    assert keys["eplb_config.num_redundant_experts"]["default"] == 0
    assert not keys["eplb_config"].get("open")
    # a dict copied item by item is open: any key is read
    assert keys["ascend_scheduler_config"]["open"] is True
    assert "in" in keys["refresh"]["how"]
    # a key passed as a string to a helper, with the env var beside it as a fallback
    assert keys["enable_fused_mc2"]["env_fallback"] == ["VLLM_ASCEND_ENABLE_FUSED_MC2"]
    assert "tp_size" not in keys


def test_env_table_defaults_and_casts():
    table = S.env_table(ENVS, "pkg/envs.py")
    assert table["VLLM_ASCEND_ENABLE_MLAPO"]["default"] == "0"
    assert table["VLLM_ASCEND_ENABLE_MLAPO"]["cast"] == "bool-int"
    assert table["HCCN_PATH"]["default"] == "/usr/local/Ascend/driver/tools/hccn_tool"
    assert table["TORCHAIR_CACHE_HOME"]["default"] == {"<expr>": "os.path.join(os.getcwd(), '.torchair_cache')"}


def test_env_reads_resolve_module_constants():
    src = 'import os\nLOCAL = "RANK_TABLE_FILE_PATH"\npath = os.getenv(LOCAL)\nx = os.environ["ROLE"]\n'
    trees = {"pkg/ranktable.py": ast.parse(src)}
    reads = S.env_reads(trees, constants=S.module_constants(trees))
    assert set(reads) == {"RANK_TABLE_FILE_PATH", "ROLE"}


def test_tag_tree_reads_only_the_wanted_files(tmp_path):
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "pkg").mkdir()
    (repo / "pkg" / "a.py").write_text("X = 1\n")
    (repo / "pkg" / "big.npy").write_bytes(b"\0" * 10)
    run = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)  # noqa: E731
    run("add", ".")
    run("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "x")
    run("tag", "v1")
    tree = S.TagTree(str(repo / ".git"), "v1", ["pkg"])
    assert tree.files == {"pkg/a.py": "X = 1\n"} and len(tree.commit) == 40
    with pytest.raises(subprocess.CalledProcessError):
        S.TagTree(str(repo / ".git"), "v2", ["pkg"])

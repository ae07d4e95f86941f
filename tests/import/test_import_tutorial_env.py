"""Variables vllm-ascend's own v0.23.0 tutorials and nightly configs export are read by the Ascend stack
below the engine, so `sncc import` keeps them without SN8002 ("read by no engine or runtime library")
and `sncc check` without SN4044: `ASCEND_A3_EBA_ENABLE` (the v0.23.0 nightly config
tests/e2e/nightly/multi_node/internal_dp/config/DeepSeek-V3_2-W8A8-A3-dual-nodes.yaml), and five of
the tutorials (docs/source/tutorials/models/GLM5.md, GLM5.2.md, DeepSeek-V3.2.md, DeepSeek-V4-Pro.md
at v0.23.0): `ASCEND_A3_ENABLE`, `ASCEND_AGGREGATE_ENABLE`, `ASCEND_TRANSPORT_PRINT`, `HCCL_ALGO`,
`CPU_AFFINITY_CONF`.  Each row of sncc/engines/cann_env.json cites the file at its tag."""

from __future__ import annotations

import json
import re

import pytest

from expect import ROOT, compile_text

from sncc.importer import import_sources
from sncc.source import SourceFile

VARS = {"ASCEND_A3_EBA_ENABLE": "1", "ASCEND_A3_ENABLE": "1", "ASCEND_AGGREGATE_ENABLE": "1",
        "ASCEND_TRANSPORT_PRINT": "1", "HCCL_ALGO": "level0:fullmesh", "CPU_AFFINITY_CONF": "1"}


def _script(names):
    return "".join(f"export {n}={VARS.get(n, '1')}\n" for n in names) + \
        "vllm serve Qwen/Qwen3-32B -tp 4 --max-model-len 8192 --quantization ascend\n"


def _import(names):
    return import_sources([SourceFile("run.sh", _script(names))], system="atlas-800i-a3", engine_version="v0.23.0")


@pytest.mark.parametrize("name", sorted(VARS))
def test_a_tutorial_variable_is_read_by_the_ascend_stack(name):
    res = _import([name])
    assert not [d for d in res.diagnostics if d.code.code == "SN8002"], [d.message for d in res.diagnostics]
    assert f'{name} = "{VARS[name]}"' in res.text
    assert not [d for d in compile_text(res.text).diagnostics if d.code.code == "SN4044" and name in d.message]


def test_each_row_cites_a_tagged_source():
    rows = json.loads((ROOT / "sncc" / "engines" / "cann_env.json").read_text(encoding="utf-8"))["env"]
    for name in VARS:
        src = rows[name]["source"]
        assert "/v0.23.0/" in src or re.search(r"/blob/[0-9a-f]{40}/", src), (name, src)


def test_a_misspelling_is_still_unread():
    res = _import(["ASCEND_A3_EBA_ENABLED"])
    assert [d.code.code for d in res.diagnostics if d.code.code == "SN8002"] == ["SN8002"]


#: more variables the v0.23.0 tutorials export (`git grep -o "export [A-Z_0-9]*=" v0.23.0 --
#: docs/source/tutorials`), each with the reader its cann_env.json row names: HCCL (`HCCL_DFS_CONFIG`,
#: CANN's env-var reference; `HCCL_TRANSFER_TIMEOUT`, named by GLM5.2.md only), prometheus_client
#: (vLLM's multiprocess /metrics), HF tokenizers, tiktoken, openai_harmony, Ray's NPU manager, CPython
READ_BELOW = {"HCCL_DFS_CONFIG": "task_exception:off,inconsistent_check:off", "HCCL_TRANSFER_TIMEOUT": "600",
              "PROMETHEUS_MULTIPROC_DIR": "/dev/shm/vllm_metrics", "TOKENIZERS_PARALLELISM": "false",
              "TIKTOKEN_CACHE_DIR": "/data/tiktoken", "TIKTOKEN_ENCODINGS_BASE": "/data/tiktoken_encodings",
              "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES": "1", "PYTHONPATH": "/vllm-workspace/vllm-ascend"}

#: exported by the v0.23.0 tutorials but read by nothing the servers run: MindIE's memory fraction
#: (gpt-oss-120b.md), the connector's `ascend_local_comm_res_path` spelled as a variable
#: (DeepSeek-V4-Flash.md: vllm_ascend/utils.py reads the kv_connector_extra_config key and sets
#: ASCEND_LOCAL_COMM_RES itself), a module constant of patch_kv_cache_coordinator.py (GLM5.2.md,
#: commented out there), the memcache meta service's config (Kimi-K3.md, another process)
UNREAD = ("NPU_MEMORY_FRACTION", "ASCEND_LOCAL_COMM_RES_PATH", "USE_MULTI_GROUPS_KV_CACHE", "USE_MULTI_BLOCK_POOL",
          "MMC_META_CONFIG_PATH")


@pytest.mark.parametrize("name", sorted(READ_BELOW))
def test_more_tutorial_variables_have_a_reader(name):
    res = import_sources([SourceFile("run.sh", f"export {name}={READ_BELOW[name]}\n"
                                     "vllm serve Qwen/Qwen3-32B -tp 4 --max-model-len 8192 --quantization ascend\n")],
                         system="atlas-800i-a3", engine_version="v0.23.0")
    assert not [d for d in res.diagnostics if d.code.code == "SN8002"], [d.message for d in res.diagnostics]
    assert f'{name} = "{READ_BELOW[name]}"' in res.text
    assert not [d for d in compile_text(res.text).diagnostics if d.code.code == "SN4044" and name in d.message]
    rows = json.loads((ROOT / "sncc" / "engines" / "cann_env.json").read_text(encoding="utf-8"))["env"]
    assert rows[name]["source"].startswith("https://"), rows[name]


@pytest.mark.parametrize("name", UNREAD)
def test_tutorial_variables_nothing_reads_stay_reported(name):
    res = _import([name])
    assert [d.code.code for d in res.diagnostics if d.code.code == "SN8002"] == ["SN8002"]

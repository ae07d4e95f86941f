"""Multi-node `docker run` scripts (one `docker run ... vllm serve` per node, merged into one plan):
every node's command is read by the container rules, not only the first node's.  A container's
environment is what `docker run` passes it (`-e`, `--env-file`; a host `export` reaches the docker
client only: SN8017), and an `-e ASCEND_RT_VISIBLE_DEVICES` picks among the NPUs `--device
/dev/davinciN` gives it (one past them is SN8009; sncc/engines/data/container.toml).  A further node
whose container sees other host NPUs than the first node's is SN8011: the plan has one mask."""

from __future__ import annotations

from sncc.importer import import_sources
from sncc.source import SourceFile

IMAGE = "quay.io/ascend/vllm-ascend:v0.23.0"
ARGS = ("vllm serve Qwen/Qwen3-32B -tp 4 --data-parallel-size 2 --data-parallel-size-local 1 "
        "--data-parallel-address 10.0.0.1 --data-parallel-rpc-port 13399 --max-model-len 8192")


def _node(first: int, mask: str, exports: str = "", passed: str = "", headless: bool = False) -> str:
    devs = " ".join(f"--device /dev/davinci{i}" for i in range(first, first + 4))
    tail = " --headless --data-parallel-start-rank 1" if headless else ""
    return (f"{exports}docker run --rm --net=host {devs} {passed}-e ASCEND_RT_VISIBLE_DEVICES={mask} \\\n"
            f"  {IMAGE} \\\n  {ARGS}{tail}\n")


NODE0 = _node(0, "0,1,2,3", exports="export HCCL_BUFFSIZE=512\n", passed="-e HCCL_BUFFSIZE ")


def _import(node1: str):
    return import_sources([SourceFile("node0.sh", NODE0), SourceFile("node1.sh", node1)], system="atlas-800i-a3")


def _codes(res, code):
    return [d for d in res.diagnostics if d.code.code == code]


def test_the_nodes_merge_cleanly_when_they_agree():
    res = _import(_node(0, "0,1,2,3", exports="export HCCL_BUFFSIZE=512\n", passed="-e HCCL_BUFFSIZE ", headless=True))
    assert "nodes = 2" in res.text, res.text
    assert not [d for d in res.diagnostics if d.code.code in ("SN8009", "SN8011", "SN8017")], \
        [(d.code.code, d.message) for d in res.diagnostics]


def test_a_further_nodes_host_export_does_not_reach_its_container():
    node1 = _node(0, "0,1,2,3", exports="export HCCL_BUFFSIZE=512\nexport HCCL_CONNECT_TIMEOUT=1200\n",
                  passed="-e HCCL_BUFFSIZE ", headless=True)
    (d,) = _codes(_import(node1), "SN8017")
    assert d.span.file == "node1.sh" and "1200" in node1[d.span.start:d.span.end], d
    assert "HCCL_CONNECT_TIMEOUT" in d.message


def test_a_further_nodes_mask_past_its_npus_is_refused():
    node1 = _node(4, "0,1,2,4", exports="export HCCL_BUFFSIZE=512\n", passed="-e HCCL_BUFFSIZE ", headless=True)
    (d,) = _codes(_import(node1), "SN8009")
    assert d.span.file == "node1.sh" and "0,1,2,4" in node1[d.span.start:d.span.end], d
    assert "host NPUs 4,5,6,7" in d.message, d.message


def test_a_further_node_on_other_host_npus_differs_from_the_first():
    node1 = _node(4, "0,1,2,3", exports="export HCCL_BUFFSIZE=512\n", passed="-e HCCL_BUFFSIZE ", headless=True)
    (d,) = _codes(_import(node1), "SN8011")
    assert d.span.file == "node1.sh" and "0,1,2,3" in node1[d.span.start:d.span.end], d
    assert "4,5,6,7" in d.message and "0,1,2,3" in d.message, d.message

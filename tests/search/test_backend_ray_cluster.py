"""`sncc search --backend ray --address auto` against a Ray cluster that something else started.

A real head node is started with `ray start --head` (2 CPUs, a free port, no dashboard), the
search runs in a separate `sncc` process that joins it through ``--address auto`` (the address
file `ray start` writes), and its ranking must equal the local backend's.  The cluster must
still be running afterwards: a backend that joined a cluster never shuts it down.  Joining by an
explicit address without RAY_AUTH_MODE is refused by the cluster's token authentication (Ray
2.60): the error must say what to set.

Skipped when Ray is absent, unless ``SNCC_REQUIRE_RAY=1`` (set by ``.ci/run``).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

if os.environ.get("SNCC_REQUIRE_RAY") == "1":
    import ray  # noqa: F401  (a missing Ray fails here, in CI)
else:
    pytest.importorskip("ray")

SMALL = Path(__file__).parent / "small_space.sn"
FLAGS = ["--mode", "aggregated", "--tp", "2,4", "--dp", "1", "--max-num-seqs", "64", "--top", "2",
         "--format", "json"]


def _ray_cli() -> str:
    exe = Path(sys.executable).with_name("ray")
    return str(exe) if exe.exists() else (shutil.which("ray") or "ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ranking(stdout: str) -> list:
    doc = json.loads(stdout)
    return [(r["layout"], r["status"], round(r["qpm"], 6)) for r in doc["ranked"]]


@pytest.fixture
def ray_head():
    """A running Ray head node started by `ray start`; yields its address; `ray stop` after."""
    port = _free_port()
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    started = subprocess.run([_ray_cli(), "start", "--head", "--num-cpus=2", "--include-dashboard=false",
                              "--disable-usage-stats", f"--port={port}"],
                             capture_output=True, text=True, env=env, timeout=180)
    assert started.returncode == 0, started.stderr[-2000:]
    try:
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([_ray_cli(), "stop", "--force"], capture_output=True, env=env, timeout=180)


def _search(*extra: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sncc", "search", str(SMALL), *FLAGS, *extra],
                          capture_output=True, text=True, env=env, timeout=600)


def test_search_joins_a_running_cluster_and_leaves_it_running(ray_head):
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_AUTH_MODE")}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    joined = _search("--backend", "ray", "--address", "auto", env=env)
    assert joined.returncode == 0, joined.stderr[-2000:]
    local = _search("--backend", "local", "--workers", "1", env=env)
    assert local.returncode == 0, local.stderr[-2000:]
    assert _ranking(joined.stdout) == _ranking(local.stdout)
    # the cluster the search joined is still up
    status = subprocess.run([_ray_cli(), "status", "--address", ray_head], capture_output=True, text=True,
                            env=dict(env, RAY_AUTH_MODE="token"), timeout=120)
    assert status.returncode == 0, status.stderr[-2000:]
    # an explicit address: the token is sent only with RAY_AUTH_MODE=token
    explicit = _search("--backend", "ray", "--address", ray_head, env=env)
    if explicit.returncode != 0:
        assert "RAY_AUTH_MODE=token" in explicit.stderr, explicit.stderr[-2000:]
        assert "Traceback" not in explicit.stderr
    with_token = _search("--backend", "ray", "--address", ray_head, env=dict(env, RAY_AUTH_MODE="token"))
    assert with_token.returncode == 0, with_token.stderr[-2000:]
    assert _ranking(with_token.stdout) == _ranking(local.stdout)

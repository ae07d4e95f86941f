"""bench.sh on several API servers without a router: one client per server with its share.

Before the split, an aggregated plan with two vLLM 0.23.0 instances (no DP load balancer, so no
proxy) got one ``vllm bench serve`` against instance 0 with the whole workload, while
``sncc simulate`` spreads the same workload over both instances.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from expect import ROOT, deployment_of, outputs_of

PLAN = (ROOT / "tests" / "golden" / "vllm-h100-llama-serve" / "plan.sn").read_text(encoding="utf-8")


def _with(requests=500, load="concurrency = 32"):
    return PLAN.replace("requests = 500", f"requests = {requests}").replace("concurrency = 32", load)


def _flag(client, name):
    return next(a.value for a in client.flags if a.name == name)


def test_two_servers_get_two_clients_with_half_the_workload_each():
    b = deployment_of(PLAN).bench
    assert [c.target.port for c in b.clients] == [8000, 8001]
    assert [_flag(c, "num-prompts") for c in b.clients] == [250, 250]
    assert [_flag(c, "max-concurrency") for c in b.clients] == [16, 16]
    assert b.result_files == ("bench-result-0.json", "bench-result-1.json")
    assert [_flag(c, "metadata")[-1] for c in b.clients] == ["sncc_bench_client=0/2", "sncc_bench_client=1/2"]


def test_uneven_shares_differ_by_one_and_a_zero_share_gets_no_client():
    b = deployment_of(_with(requests=501, load="concurrency = 3")).bench
    assert [_flag(c, "num-prompts") for c in b.clients] == [251, 250]
    assert [_flag(c, "max-concurrency") for c in b.clients] == [2, 1]
    one = deployment_of(_with(load="concurrency = 1")).bench
    assert len(one.clients) == 1 and one.result_files == ("bench-result-0.json",)
    assert any("servers 1-1 get no benchmark client" in n for n in one.notes)


def test_an_open_loop_rate_is_divided_evenly():
    b = deployment_of(_with(load="rate = 5")).bench
    rates = [_flag(c, "request-rate") for c in b.clients]
    assert rates == [2.5, 2.5] and sum(rates) == 5


def test_one_server_keeps_one_client_and_the_single_result_file():
    b = deployment_of(PLAN.replace("instances = 2", "instances = 1")).bench
    assert len(b.clients) == 1 and b.result_files == ("bench-result.json",)
    assert _flag(b.clients[0], "num-prompts") == 500


FAKE_VLLM = """import json, os, sys
a = sys.argv[1:]
def val(n): return a[a.index(n) + 1]
meta = dict(x.split("=", 1) for x in a[a.index("--metadata") + 1:] if "=" in x and not x.startswith("--"))
n = int(val("--num-prompts"))
doc = {"completed": n, "duration": 100.0, "request_throughput": n / 100.0, "output_throughput": n * 5.12,
       "mean_ttft_ms": 100.0 + n, "mean_tpot_ms": 20.0, "max_concurrency": int(val("--max-concurrency")),
       "request_rate": "inf", **meta}
open(os.path.join(val("--result-dir"), val("--result-filename")), "w").write(json.dumps(doc))
"""


def _run_bench(tmp_path, fake_vllm: str):
    """Build PLAN into ``tmp_path/out`` and run its bench.sh with ``fake_vllm`` as ``vllm`` on PATH."""
    out = tmp_path / "out"
    for name, text in outputs_of(PLAN).items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    fake = tmp_path / "bin" / "vllm"
    fake.parent.mkdir()
    fake.write_text(fake_vllm)
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}", "NODE_0_IP": "127.0.0.1",
           "SNCC_BENCH_DIR": str(tmp_path / "res")}
    return subprocess.run(["bash", str(out / "bench.sh")], env=env, capture_output=True, text=True, timeout=60)


def test_bench_sh_runs_every_client_and_calibrate_merges_their_files(tmp_path):
    """bench.sh run for real with a stand-in ``vllm`` that writes the result file its flags name
    (the counts are the flags' own), then the files read as one measurement."""
    r = _run_bench(tmp_path, f"#!{sys.executable}\n" + FAKE_VLLM)
    assert r.returncode == 0, r.stderr
    assert re.findall(r"client (\d): pid", r.stdout) == ["0", "1"]
    from sncc.sim.calibration.fit import read_bench_result

    files = [str(tmp_path / "res" / f) for f in ("bench-result-0.json", "bench-result-1.json")]
    got, run = read_bench_result(files, str(tmp_path), "m.toml: point 1")
    assert run["requests"] == 500 and run["max_concurrency"] == 32          # the plan's whole load
    assert got["run_qpm"] == pytest.approx(5.0 * 60) and got["client_ttft_s"] == pytest.approx(0.35)
    assert json.loads(open(files[0]).read())["sncc_bench_client"] == "0/2"


def test_a_failing_client_fails_bench_sh(tmp_path):
    r = _run_bench(tmp_path, '#!/bin/sh\ncase "$*" in *8001*) exit 3;; esac\nexit 0\n')
    assert r.returncode == 3 and "a benchmark client failed" in r.stderr

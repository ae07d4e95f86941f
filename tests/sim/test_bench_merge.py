"""sncc calibrate reads the result files of a split benchmark (one client per API server) as one
measurement: counts and throughputs summed, means weighted, percentiles pooled from the
per-request arrays (``--save-detailed``) or named as not merged."""
from __future__ import annotations

import json
import random

import pytest

from sncc.sim.calibration.bench_merge import merge, percentile
from sncc.sim.calibration.fit import CalibrationError, read_bench_result


def _detailed(rng, n, client, k=2, fail=0):
    """A --save-detailed result dict of ``n`` requests, as vLLM 0.11.0's serve.py writes it."""
    ttfts = [rng.uniform(0.05, 0.5) for _ in range(n)]
    outs = [rng.randint(2, 40) for _ in range(n)]
    itls = [[rng.uniform(0.01, 0.03) for _ in range(o - 1)] for o in outs]
    errs = [""] * (n - fail) + ["boom"] * fail
    ok = [i for i in range(n) if not errs[i]]
    tp = [sum(itls[i]) / (outs[i] - 1) for i in ok]
    return {"completed": len(ok), "duration": 60.0, "request_throughput": len(ok) / 60.0,
            "output_throughput": sum(outs[i] for i in ok) / 60.0,
            "total_output_tokens": sum(outs[i] for i in ok),
            "mean_ttft_ms": 1000 * sum(ttfts[i] for i in ok) / len(ok), "mean_tpot_ms": 1000 * sum(tp) / len(tp),
            "p99_ttft_ms": 1000 * percentile([ttfts[i] for i in ok], 99), "median_ttft_ms": 0.0,
            "ttfts": ttfts, "itls": itls, "output_lens": [o if not e else 0 for o, e in zip(outs, errs)],
            "errors": errs, "max_concurrency": 8, "request_rate": "inf", "sncc_bench_client": f"{client}/{k}"}


def test_percentile_is_numpys_linear_interpolation():
    assert percentile([1, 2, 3, 4], 50) == 2.5 and percentile([1, 2, 3, 4], 99) == pytest.approx(3.97)
    assert percentile([], 99) == 0.0


def test_detailed_files_pool_percentiles_over_every_request():
    rng = random.Random(7)
    a, b = _detailed(rng, 300, 0), _detailed(rng, 100, 1, fail=5)
    m = merge([a, b], ["a", "b"])
    ok = lambda d: [t for t, e in zip(d["ttfts"], d["errors"]) if not e]   # noqa: E731
    pooled = ok(a) + ok(b)
    assert m["completed"] == 395 and m["max_concurrency"] == 16
    assert m["p99_ttft_ms"] == pytest.approx(1000 * percentile(pooled, 99))
    assert m["mean_ttft_ms"] == pytest.approx(1000 * sum(pooled) / len(pooled))
    # the pooled p99 is not the mean of the clients' p99s (the reason to pool)
    assert m["p99_ttft_ms"] != pytest.approx((a["p99_ttft_ms"] + b["p99_ttft_ms"]) / 2, rel=1e-6)
    assert m["sncc_approximate"] == []


def test_without_arrays_means_are_weighted_and_the_rest_named_approximate():
    a = {"completed": 300, "duration": 60.0, "request_throughput": 5.0, "output_throughput": 500.0,
         "mean_ttft_ms": 100.0, "mean_tpot_ms": 10.0, "p99_ttft_ms": 400.0, "sncc_bench_client": "0/2"}
    b = {"completed": 100, "duration": 40.0, "request_throughput": 2.5, "output_throughput": 250.0,
         "mean_ttft_ms": 300.0, "mean_tpot_ms": 30.0, "p99_ttft_ms": 900.0, "sncc_bench_client": "1/2"}
    m = merge([a, b], ["a", "b"])
    assert m["mean_ttft_ms"] == pytest.approx(150.0) and m["request_throughput"] == 7.5
    assert "p99_ttft_ms" not in m and m["duration"] == 60.0
    text = " ".join(m["sncc_approximate"])
    assert "percentiles of ttft: not merged" in text and "--save-detailed" in text
    assert "mean_tpot_ms" in text and "durations differ by 33%" in text


def _write(tmp_path, docs):
    names = []
    for i, d in enumerate(docs):
        p = tmp_path / f"bench-result-{i}.json"
        p.write_text(json.dumps(d))
        names.append(p.name)
    return names


def test_a_missing_client_or_a_lone_client_file_is_refused(tmp_path):
    rng = random.Random(1)
    names = _write(tmp_path, [_detailed(rng, 10, 0, k=3), _detailed(rng, 10, 1, k=3)])
    with pytest.raises(CalibrationError, match="client 2 of 3 missing"):
        read_bench_result(names, str(tmp_path), "m: point 1")
    with pytest.raises(CalibrationError, match="one of 3 clients of a split benchmark"):
        read_bench_result(names[0], str(tmp_path), "m: point 1")
    with pytest.raises(CalibrationError, match="listed twice"):
        read_bench_result([names[0], names[0]], str(tmp_path), "m: point 1")
    with pytest.raises(CalibrationError, match="empty list"):
        read_bench_result([], str(tmp_path), "m: point 1")


def test_a_complete_set_reads_as_the_whole_run(tmp_path):
    rng = random.Random(2)
    names = _write(tmp_path, [_detailed(rng, 50, 0), _detailed(rng, 30, 1)])
    got, run = read_bench_result(names, str(tmp_path), "m: point 1")
    assert run["requests"] == 80 and run["max_concurrency"] == 16 and run["approximate"] == []
    assert got["run_qpm"] == pytest.approx(80.0)


def test_calibrate_cli_fits_a_split_benchmark_and_says_what_is_approximate(tmp_path):
    from click.testing import CliRunner

    from sncc.cli import main
    from sncc.sim.calibration.fit import _spec_of
    from sncc.sim.engine.run import simulate_spec
    from expect import ROOT

    plan = ROOT / "tests" / "fixtures" / "plans" / "qwen3-32b-h200.sn"      # concurrency 32
    base = simulate_spec(_spec_of(str(plan), "nvidia-h200", 200), series=False).tpot_ms["mean"]
    docs = [{"completed": 100, "duration": 60.0, "max_concurrency": 16, "mean_tpot_ms": 1.2 * base,
             "p99_tpot_ms": 2 * base, "sncc_bench_client": f"{i}/2", "sncc_plan": "qwen3-32b-h200"} for i in (0, 1)]
    names = _write(tmp_path, docs)
    meas = tmp_path / "m.toml"
    meas.write_text(f'profile = "nvidia-h200"\nfit = ["compute.eta_m"]\n[[point]]\nplan = "{plan}"\n'
                    f'bench_result = {json.dumps(names)}\n', encoding="utf-8")
    r = CliRunner().invoke(main, ["calibrate", str(meas), "-o", str(tmp_path / "fitted.toml")])
    assert r.exit_code == 0, r.output
    assert "note: point 1: merged bench results: mean_tpot_ms" in r.output
    assert "percentiles of tpot: not merged" in r.output

"""bench/aiconfigurator_anchor.py: parsing aiconfigurator's `cli default` report, the cached
virtualenv, and the recorded anchor when aiconfigurator cannot be run.

The real install and sweep run from the command line (``python bench/aiconfigurator_anchor.py``);
here a stand-in ``aiconfigurator.main`` prints the report captured from aiconfigurator 0.12.0.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
REPORT = pathlib.Path(__file__).parent / "data" / "aiconfigurator-0.12.0-default-dsv3-h200-64.txt"


@pytest.fixture(scope="module")
def anchor():
    spec = importlib.util.spec_from_file_location("aiconfigurator_anchor", ROOT / "bench" / "aiconfigurator_anchor.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def fake_aiconfigurator(tmp_path, monkeypatch):
    """A package ``aiconfigurator.main`` on PYTHONPATH that prints the captured report."""
    pkg = tmp_path / "fake" / "aiconfigurator"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "main.py").write_text(
        "import pathlib, sys\n"
        "if __name__ == '__main__':\n"
        "    assert sys.argv[1:4] == ['cli', 'default', '--model-path'], sys.argv\n"
        f"    print(pathlib.Path({str(REPORT)!r}).read_text())\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path / "fake"), os.environ.get("PYTHONPATH", "")]))
    return pkg


def test_parses_the_best_agg_and_disagg_rows(anchor):
    got = anchor.parse_default_output(REPORT.read_text())
    assert got["best"] == {"mode": "disagg", "tokens_per_s_per_gpu": 680.77, "tokens_per_s_per_user": 23.12,
                           "ttft_ms": 1462.29, "tpot_ms": 43.26, "sweep_seconds_reported": 98.0}
    agg, disagg = got["best_agg"], got["best_disagg"]
    assert (agg["Rank"], agg["parallel"], agg["bs"], agg["tokens/s/gpu"]) == (1, "tp1pp1dp16etp1ep16", 16, 415.65)
    assert (disagg["(p)workers"], disagg["(p)parallel"], disagg["(d)workers"], disagg["(d)parallel"],
            disagg["(d)bs"]) == (2, "tp1pp1dp16etp1ep16", 1, "tp1pp1dp32etp1ep32", 64)
    assert len(got["top_agg"]) == len(got["top_disagg"]) == 5
    # issue 12's disaggregated row (3 prefill × 8 + 5 decode × 8 GPUs) is rank 3 in 0.12.0
    assert got["top_disagg"][2]["gpus/replica"] == "64 (=3x8+5x8)"


def test_unrecognised_output_gives_no_rows(anchor):
    assert anchor.parse_default_output("no tables here") == {
        "best": {}, "best_agg": None, "best_disagg": None, "top_agg": [], "top_disagg": []}


def test_not_installed_returns_the_recorded_anchor(anchor, monkeypatch):
    monkeypatch.setattr(anchor, "ensure_venv", lambda timeout_s, cache: (None, {"reason": "no wheel"}))
    got = anchor.time_aiconfigurator()
    assert got["installed"] is False and got["recorded_seconds"] == [204, 229]
    assert got["source"].startswith("issue 12") and got["reason"] == "no wheel"


def test_a_failing_run_is_reported_not_raised(anchor, monkeypatch):
    monkeypatch.setattr(anchor, "ensure_venv", lambda timeout_s, cache: (pathlib.Path(sys.executable), {}))
    got = anchor.time_aiconfigurator(timeout_s=60)
    assert got["installed"] is True and got["seconds"] is None
    assert "exited 1" in got["reason"] and "aiconfigurator" in got["reason"]


def test_a_run_is_timed_and_parsed(anchor, monkeypatch, fake_aiconfigurator):
    monkeypatch.setattr(anchor, "ensure_venv", lambda timeout_s, cache: (pathlib.Path(sys.executable), {}))
    got = anchor.time_aiconfigurator(timeout_s=60)
    assert got["reason"] == "ran here" and got["seconds"] >= 0
    assert got["command"][:3] == ["aiconfigurator", "cli", "default"] and "3584" in got["command"]
    assert got["best_agg"]["parallel"] == "tp1pp1dp16etp1ep16"


def test_the_virtualenv_is_built_once_then_reused(anchor, monkeypatch, tmp_path, fake_aiconfigurator):
    cache = tmp_path / "cache" / "aiconfigurator-venv"
    monkeypatch.setattr(anchor, "CACHE_VENV", cache)
    installs = []

    def fake_install(target, timeout_s):
        installs.append(target)
        (target / "bin").mkdir(parents=True)
        (target / "bin" / "python").symlink_to(sys.executable)
        return True, 1.5, ""
    monkeypatch.setattr(anchor, "_install", fake_install)
    python, notes = anchor.ensure_venv()
    assert python == cache / "bin" / "python" and notes == {"cached": False, "install_seconds": 1.5}
    assert installs[0].parent.parent == cache.parent, "built beside the cache, then moved"
    assert sorted(p.name for p in cache.parent.iterdir()) == ["aiconfigurator-venv"]
    python, notes = anchor.ensure_venv()
    assert notes["cached"] is True and len(installs) == 1


def test_a_failed_install_leaves_no_cache(anchor, monkeypatch, tmp_path):
    cache = tmp_path / "cache" / "aiconfigurator-venv"
    monkeypatch.setattr(anchor, "CACHE_VENV", cache)
    monkeypatch.setattr(anchor, "_install", lambda target, timeout_s: (False, 0.2, "pip install aiconfigurator failed: x"))
    python, notes = anchor.ensure_venv()
    assert python is None and "failed" in notes["reason"]
    assert list(cache.parent.iterdir()) == []

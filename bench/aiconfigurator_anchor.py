"""The aiconfigurator anchor for ``bench/bench_search.py``: time NVIDIA aiconfigurator's ``default``
sweep on the same problem as sncc's search, or fall back to the recorded time.

The problem (issue 12): DeepSeek-V3 (FP8, the checkpoint's own quantization) on 64 × H200 SXM,
ISL 3584 tokens, OSL 1229 tokens, TTFT ≤ 2000 ms, TPOT ≤ 50 ms, aggregated against
disaggregated. The command and its flags are aiconfigurator 0.12.0's
(``aiconfigurator cli default --help``):

    aiconfigurator cli default --model-path deepseek-ai/DeepSeek-V3 --total-gpus 64 \
        --system h200_sxm --isl 3584 --osl 1229 --ttft 2000 --tpot 50

It needs no GPU: it prices layouts from the performance tables shipped in the wheel
(aiconfigurator-core carries DeepSeek-V3's config.json, so nothing is fetched from a model hub).
``pip install aiconfigurator`` brings about 850 MB (pandas, pyarrow, scipy, plotly, bokeh, the
tables), so it goes into a virtualenv of its own, never sncc's, kept between runs in
``~/.cache/sncc-bench/aiconfigurator-venv``: built in a temporary folder beside it and moved
into place only once the install succeeded.

Usage: ``python bench/aiconfigurator_anchor.py [--timeout 900] [--no-cache]`` prints the result
as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import venv

#: where the aiconfigurator virtualenv is kept between runs
CACHE_VENV = pathlib.Path.home() / ".cache" / "sncc-bench" / "aiconfigurator-venv"

#: what to install (the newest release on PyPI when this was written: 0.12.0)
PACKAGE = "aiconfigurator"

#: the problem of issue 12, as aiconfigurator's ``cli default`` flags
PROBLEM_ARGS = ["--model-path", "deepseek-ai/DeepSeek-V3", "--total-gpus", "64", "--system", "h200_sxm",
                "--isl", "3584", "--osl", "1229", "--ttft", "2000", "--tpot", "50"]

#: the anchor recorded on this machine class when aiconfigurator could not be run in the same
#: session: two runs of the ``default`` sweep above (issue 12)
RECORDED = {"installed": False, "recorded_seconds": [204, 229],
            "source": "issue 12: measured on this machine class"}


def _venv_python(root: pathlib.Path) -> pathlib.Path:
    return root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _has_package(python: pathlib.Path) -> bool:
    if not python.exists():
        return False
    probe = subprocess.run([str(python), "-c", f"import {PACKAGE}.main"], capture_output=True,
                           timeout=120)
    return probe.returncode == 0


def _install(target: pathlib.Path, timeout_s: float) -> tuple[bool, float, str]:
    """Create a virtualenv at ``target`` and pip-install aiconfigurator into it.

    Returns (installed, seconds, pip's last output lines on failure)."""
    t0 = time.perf_counter()
    venv.EnvBuilder(with_pip=True, clear=True).create(target)
    try:
        proc = subprocess.run([str(_venv_python(target)), "-m", "pip", "install", "--quiet",
                               "--disable-pip-version-check", PACKAGE],
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return False, time.perf_counter() - t0, f"pip install {PACKAGE} took over {timeout_s:.0f} s"
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        return False, seconds, f"pip install {PACKAGE} failed: {tail}"
    return True, seconds, ""


def ensure_venv(timeout_s: float = 900, cache: bool = True) -> tuple[pathlib.Path | None, dict]:
    """A Python with aiconfigurator installed: the cached virtualenv, or one built now.

    Returns (python path or None, notes: ``install_seconds`` when installed now, ``cached``,
    ``reason`` on failure, ``scratch`` the folder to delete when ``cache`` is False)."""
    if cache and _has_package(_venv_python(CACHE_VENV)):
        return _venv_python(CACHE_VENV), {"cached": True, "install_seconds": None}
    if cache:
        CACHE_VENV.parent.mkdir(parents=True, exist_ok=True)
        scratch = pathlib.Path(tempfile.mkdtemp(prefix="aiconfigurator-venv.", dir=CACHE_VENV.parent))
    else:
        scratch = pathlib.Path(tempfile.mkdtemp(prefix="sncc-bench-aiconfigurator."))
    built = scratch / "venv"
    ok, seconds, reason = _install(built, timeout_s)
    notes: dict = {"cached": False, "install_seconds": round(seconds, 1)}
    if not ok:
        shutil.rmtree(scratch, ignore_errors=True)
        return None, {**notes, "reason": reason}
    if not cache:
        return _venv_python(built), {**notes, "scratch": str(scratch)}
    # the venv runs as `bin/python -m aiconfigurator.main`, which does not depend on the folder's
    # name (its console scripts' shebangs would): move it into place whole
    if CACHE_VENV.exists():
        shutil.rmtree(CACHE_VENV)
    os.replace(built, CACHE_VENV)
    shutil.rmtree(scratch, ignore_errors=True)
    return _venv_python(CACHE_VENV), notes


# ------------------------------------------------------------------------------ parsing

_NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?)"


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _best_block(text: str) -> dict:
    """The "Overall Best Configuration" figures of aiconfigurator's summary, when printed
    (0.12.0 prints "Best Experiment Chosen: disagg at 680.77 tokens/s/gpu", "Per-User
    Throughput: 23.12 tokens/s/user", "TTFT: 1462.29ms", "TPOT: 43.26ms")."""
    out: dict = {}
    m = re.search(r"Best Experiment Chosen:\s*(\w+)\s+at\s+" + _NUM + r"\s*tokens/s/gpu", text)
    if m:
        out["mode"], out["tokens_per_s_per_gpu"] = m.group(1), _number(m.group(2))
    for key, pattern in (("tokens_per_s_per_user", r"(?:Per-)?User Throughput:\s*" + _NUM),
                         ("ttft_ms", r"\bTTFT:\s*" + _NUM), ("tpot_ms", r"\bTPOT:\s*" + _NUM)):
        m = re.search(pattern, text)
        if m:
            out[key] = _number(m.group(1))
    m = re.search(r"All experiments completed in\s*" + _NUM + r"\s*seconds", text)
    if m:
        out["sweep_seconds_reported"] = _number(m.group(1))
    return out


def _cell(text: str) -> str | int | float:
    if not re.fullmatch(_NUM, text):
        return text
    return _number(text) if "." in text else int(text.replace(",", ""))


def _table_rows(text: str, mode: str) -> list[dict]:
    """The rows of the top-configuration table printed for ``mode`` ("agg" or "disagg"): the
    first ``|`` line names the columns, each row is split on ``|``; plain numbers become numbers."""
    m = re.search(rf"(?<![A-Za-z]){mode} Top Configurations[^\n]*\n(.*?)(?:\n\s*\n|\Z)", text, re.S)
    if not m:
        return []
    lines = [ln.strip() for ln in m.group(1).splitlines() if ln.strip().startswith("|")]
    if len(lines) < 2:
        return []
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = []
    for ln in lines[1:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        if len(cells) == len(header):
            rows.append({h: _cell(c) for h, c in zip(header, cells)})
    return rows


def parse_default_output(text: str) -> dict:
    """From the text ``aiconfigurator cli default`` prints: ``best`` (the overall best figures),
    ``best_agg`` and ``best_disagg`` (rank 1 of each top table, column name → cell) and
    ``top_agg`` / ``top_disagg`` (every row); a key is None or empty where the format differs."""
    agg, disagg = _table_rows(text, "agg"), _table_rows(text, "disagg")
    return {"best": _best_block(text), "best_agg": agg[0] if agg else None,
            "best_disagg": disagg[0] if disagg else None, "top_agg": agg, "top_disagg": disagg}


# ------------------------------------------------------------------------------ timing

def time_aiconfigurator(timeout_s: float = 900, cache: bool = True) -> dict:
    """Install aiconfigurator if needed and time its ``default`` sweep on issue 12's problem.

    ``timeout_s``: limit for the install and, separately, for the sweep (seconds).

    Returns, when aiconfigurator installs: ``{"installed": True, "seconds": float | None (None
    when the sweep failed or timed out), "command": [...], "install_seconds": float | None
    (None: the cached virtualenv was used), "best": {...}, "best_agg": {...} | None,
    "best_disagg": {...} | None, "reason": str}``; when it does not install, :data:`RECORDED`
    plus ``"reason"`` (why not) and ``"command"``. Never raises for a failed install or run.
    """
    python, notes = ensure_venv(timeout_s, cache)
    command = [PACKAGE, "cli", "default", *PROBLEM_ARGS]
    if python is None:
        return {**RECORDED, "command": command, "reason": notes.get("reason", "not installed"),
                "install_seconds": notes.get("install_seconds")}
    save_dir = tempfile.mkdtemp(prefix="sncc-bench-aiconfigurator-out.")
    argv = [str(python), "-m", f"{PACKAGE}.main", "cli", "default", *PROBLEM_ARGS,
            "--no-color", "--save-dir", save_dir]
    result = {"installed": True, "seconds": None, "command": command,
              "install_seconds": notes.get("install_seconds"), "best": {}, "best_agg": None,
              "best_disagg": None, "reason": ""}
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        result["reason"] = f"the default sweep took over {timeout_s:.0f} s"
        return result
    finally:
        shutil.rmtree(save_dir, ignore_errors=True)
        if "scratch" in notes:
            shutil.rmtree(notes["scratch"], ignore_errors=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        result["reason"] = f"aiconfigurator exited {proc.returncode}: {tail}"
        return result
    result["seconds"] = round(seconds, 1)
    result.update(parse_default_output(proc.stdout + "\n" + proc.stderr))
    result["reason"] = ("ran here" if result["best_agg"] or result["best_disagg"]
                        else "ran here; its summary tables were not recognised")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=900, help="seconds for the install and for the run")
    ap.add_argument("--no-cache", action="store_true",
                    help=f"install into a temporary virtualenv, not {CACHE_VENV}")
    args = ap.parse_args(argv)
    print(json.dumps(time_aiconfigurator(args.timeout, cache=not args.no_cache), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

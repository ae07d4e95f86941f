#!/usr/bin/env python3
"""Find the light packages vLLM X's `vllm serve` parser imports; write tools/vllm_requirements/<X>.txt.

Usage (any python ≥ 3.10 with ``venv``; needs the package index, and the CPU torch 2.13.0 wheel)::

    python3 tools/find_vllm_light_imports.py --version 0.11.0 [--wheel vllm-0.11.0-….whl]

In a scratch virtualenv (``.venv-vllm-<X>-probe`` in the repository, removed at the end unless
``--keep``) it installs the CPU torch 2.13.0 and the vLLM wheel, both ``--no-deps``, then repeats:
build vLLM's own ``vllm serve`` parser on the CPU platform and check a sample command line plus a
``create_engine_config`` on tests/conformance/models/tiny-qwen3-moe (tools/vllm_cli.py); on
``ModuleNotFoundError: No module named 'm'``, install the distribution that provides ``m`` (with the
version range the vLLM wheel's ``Requires-Dist`` gives, and its own dependencies).  When the probe
passes, the virtualenv's ``pip freeze`` without torch and vLLM is the list: exact pins, installed
with ``--no-deps`` by tools/setup_vllm_venv.sh.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: import name → distribution name, where they differ (the rest are the same, ``_`` → ``-``)
DISTRIBUTIONS = {
    "yaml": "PyYAML", "zmq": "pyzmq", "PIL": "pillow", "cpuinfo": "py-cpuinfo", "multipart": "python-multipart",
    "google": "protobuf", "cv2": "opencv-python-headless", "sklearn": "scikit-learn", "dotenv": "python-dotenv",
    "jwt": "pyjwt", "pythonjsonlogger": "python-json-logger", "openai_harmony": "openai-harmony",
    "huggingface_hub": "huggingface-hub", "cachetools": "cachetools", "msgspec": "msgspec",
}

_PROBE = r'''
import sys
sys.path.insert(0, {tools!r})
import vllm_cli
vllm_cli.quiet_vllm_logging()
cli = vllm_cli.ServeCLI()
for argv, deep in ((["serve", "m", "-tp", "2", "--max-num-seqs", "8"], False),
                   (["serve", {model!r}, "--max-model-len", "4096"], True)):
    r = vllm_cli.check_serve_argv(cli, argv, deep=deep)
    if not r["ok"]:
        print("PROBE-ERROR", r["error"])
        sys.exit(3)
print("PROBE-OK")
'''

_MISSING = re.compile(r"No module named '([A-Za-z0-9_]+)")


def requires_dist(wheel: Path | None) -> dict[str, str]:
    """``{normalised name: requirement}`` from the vLLM wheel's METADATA (markers dropped)."""
    if wheel is None:
        return {}
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        text = zf.read(meta).decode("utf-8", "replace")
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("Requires-Dist:"):
            req = line.split(":", 1)[1].split(";", 1)[0].strip()
            req = re.sub(r"\[[^\]]*\]", "", req).replace(" ", "")
            name = re.split(r"[<>=!~]", req, 1)[0]
            out.setdefault(name.lower().replace("_", "-"), req)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", required=True)
    ap.add_argument("--wheel", type=Path, help="a downloaded vllm wheel (default: from the package index)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch virtualenv")
    ap.add_argument("--max-rounds", type=int, default=80)
    ns = ap.parse_args(argv)
    venv = REPO / f".venv-vllm-{ns.version}-probe"
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    pip = [py, "-m", "pip", "install", "--quiet", "--no-cache-dir", "--disable-pip-version-check"]
    subprocess.run([*pip, "--no-deps", "torch==2.13.0"], check=True)
    wheel = ns.wheel
    if wheel is None:
        dl = venv / "wheel"
        subprocess.run([py, "-m", "pip", "download", "--quiet", "--no-cache-dir", "--no-deps", "-d", str(dl),
                        f"vllm=={ns.version}"], check=True)
        wheel = next(dl.glob("vllm-*.whl"))
    subprocess.run([*pip, "--no-deps", str(wheel)], check=True)
    specs = requires_dist(wheel)
    probe = _PROBE.format(tools=str(REPO / "tools"), model=str(REPO / "tests/conformance/models/tiny-qwen3-moe"))
    for _ in range(ns.max_rounds):
        proc = subprocess.run([py, "-c", probe], capture_output=True, text=True)
        if "PROBE-OK" in proc.stdout:
            break
        found = _MISSING.findall(proc.stdout + proc.stderr)
        if not found:
            print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n", file=sys.stderr)
            return 1
        dist = DISTRIBUTIONS.get(found[-1], found[-1].replace("_", "-"))
        spec = specs.get(dist.lower(), dist)
        print(f"installing {spec} (for `import {found[-1]}`)", file=sys.stderr)
        subprocess.run([*pip, spec], check=True)
    else:
        print("gave up after --max-rounds", file=sys.stderr)
        return 1
    freeze = subprocess.run([py, "-m", "pip", "freeze", "--exclude", "torch", "--exclude", "vllm"],
                            check=True, capture_output=True, text=True).stdout.splitlines()
    # triton comes in as another package's dependency; vLLM's parser runs without it (vllm/triton_utils
    # puts a placeholder in its place on CPU), and it is 1 GB of GPU compilers per venv
    skip = ("torch==", "vllm==", "triton==")
    pins = sorted((ln for ln in freeze if "==" in ln and not ln.startswith(skip)), key=str.lower)
    out = REPO / "tools" / "vllm_requirements" / f"{ns.version}.txt"
    out.write_text(
        f"# Light packages vLLM {ns.version}'s `vllm serve` argument parser imports (beside torch==2.13.0 CPU and the "
        "vllm wheel, both --no-deps).\n"
        "# Exact pins of a working set, installed with --no-deps by .ci/run; regenerate: "
        f"python3 tools/find_vllm_light_imports.py --version {ns.version}\n"
        + "".join(p + "\n" for p in pins), encoding="utf-8")
    print(f"wrote {out.relative_to(REPO)} ({len(pins)} packages)", file=sys.stderr)
    if not ns.keep:
        shutil.rmtree(venv, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

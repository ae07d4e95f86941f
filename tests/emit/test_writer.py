"""The output writer (sncc/emit/writer.py): all or nothing, owned folders only, and an atomic swap.

Fault injection (issue 14 item 27): a build killed at any system call of the swap leaves the
output folder as the old tree or the new one, never missing.  With strace installed, the real
CLI runs under ``strace -f -e inject=<call>:signal=SIGKILL:when=N`` for every rename-family call
of the build; without it (``SNCC_REQUIRE_STRACE=1`` makes that a failure), an injected SIGKILL
between the steps stands in.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from expect import ROOT
from sncc.emit import writer as writer_mod
from sncc.emit.writer import MANIFEST, OutputError, exchange, is_sncc_folder, write_outputs

SEED = ROOT / "tests" / "golden" / "vllm-ascend-qwen3-32b-a2" / "plan.sn"
STRACE = shutil.which("strace")


# --------------------------------------------------------------------------- writer

def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.parent.iterdir())


def test_writer_writes_files_and_manifest(tmp_path):
    files = {"a.txt": "1", "launch/x.sh": "#!/bin/sh\n", "sub/b.json": "{}"}
    out = tmp_path / "out"
    paths = write_outputs(files, out, plan_source="plan text")
    assert paths == sorted([out / n for n in files] + [out / MANIFEST])
    for name, text in files.items():
        assert (out / name).read_text(encoding="utf-8") == text
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["generator"] == "sncc"
    assert manifest["plan_sha256"] == hashlib.sha256(b"plan text").hexdigest()
    assert manifest["files"] == {n: hashlib.sha256(t.encode()).hexdigest() for n, t in files.items()}
    assert os.access(out / "launch/x.sh", os.X_OK)
    first = (out / MANIFEST).read_bytes()
    write_outputs(files, out, plan_source="plan text")
    assert (out / MANIFEST).read_bytes() == first
    assert _siblings(out) == ["out"]


def test_writer_replaces_an_owned_folder(tmp_path):
    out = tmp_path / "out"
    write_outputs({"a.txt": "1", "sub/b.txt": "2"}, out)
    write_outputs({"c.txt": "3"}, out)
    assert sorted(_snapshot(out)) == ["c.txt", MANIFEST]
    assert _siblings(out) == ["out"]


def test_writer_refuses_a_foreign_folder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "precious.txt").write_text("keep me")
    with pytest.raises(OutputError) as e:
        write_outputs({"a.txt": "1"}, out)
    assert "not written by sncc" in str(e.value) and "\n" not in str(e.value)
    assert _snapshot(out) == {"precious.txt": b"keep me"}
    assert _siblings(out) == ["out"]
    write_outputs({"a.txt": "1"}, out, force=True)
    assert sorted(_snapshot(out)) == ["a.txt", MANIFEST]


def test_writer_accepts_an_empty_folder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    write_outputs({"a.txt": "1"}, out)
    assert (out / "a.txt").read_text() == "1"


def test_writer_keeps_old_folder_when_a_write_fails(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_outputs({"a.txt": "old a", "b.txt": "old b"}, out)
    before = _snapshot(out)
    real = writer_mod._write_file
    calls = []

    def flaky(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(writer_mod, "_write_file", flaky)
    with pytest.raises(OutputError) as e:
        write_outputs({"a.txt": "new a", "b.txt": "new b", "c.txt": "new c"}, out)
    assert "No space left on device" in str(e.value) and "\n" not in str(e.value)
    assert _snapshot(out) == before
    assert _siblings(out) == ["out"]


def test_writer_keeps_old_folder_when_the_swap_fails(tmp_path, monkeypatch):
    """Where the atomic exchange is unavailable, a failed second rename puts the old folder back."""
    out = tmp_path / "out"
    write_outputs({"a.txt": "old"}, out)
    before = _snapshot(out)
    monkeypatch.setattr(writer_mod, "exchange", lambda a, b: False)
    real_rename = os.rename

    def failing_rename(src, dst):
        if Path(src).name.startswith(".out.sncc-new-"):
            raise OSError(5, "Input/output error")
        real_rename(src, dst)

    monkeypatch.setattr(writer_mod.os, "rename", failing_rename)
    with pytest.raises(OutputError):
        write_outputs({"a.txt": "new"}, out)
    assert _snapshot(out) == before
    assert _siblings(out) == ["out"]


def test_writer_symlinks(tmp_path):
    outside = tmp_path / "elsewhere" / "target"
    outside.mkdir(parents=True)
    parent = tmp_path / "builds"
    parent.mkdir()
    link = parent / "out"
    link.symlink_to(outside)
    with pytest.raises(OutputError) as e:
        write_outputs({"a.txt": "1"}, link)
    assert "outside" in str(e.value)
    assert list(outside.iterdir()) == []

    inside = parent / "out.v1"
    link2 = parent / "current"
    link2.symlink_to(inside.name)
    write_outputs({"a.txt": "1"}, link2)
    assert link2.is_symlink() and (inside / "a.txt").read_text() == "1"
    write_outputs({"a.txt": "2"}, link2)
    assert link2.is_symlink() and (link2 / "a.txt").read_text() == "2"
    assert sorted(p.name for p in parent.iterdir()) == ["current", "out", "out.v1"]


@pytest.mark.parametrize("bad", ["../x", "/etc/x", "a/../../x", "", MANIFEST, "a//b"])
def test_writer_rejects_bad_names(tmp_path, bad):
    with pytest.raises(OutputError):
        write_outputs({bad: "x"}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_writer_refuses_a_file(tmp_path):
    f = tmp_path / "out"
    f.write_text("x")
    with pytest.raises(OutputError):
        write_outputs({"a.txt": "1"}, f)
    assert f.read_text() == "x"


def test_writer_keeps_old_folder_when_the_exchange_fails(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_outputs({"a.txt": "old"}, out)
    before = _snapshot(out)

    def failing(a, b):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(writer_mod, "exchange", failing)
    with pytest.raises(OutputError):
        write_outputs({"a.txt": "new"}, out)
    assert _snapshot(out) == before
    assert _siblings(out) == ["out"]


def test_exchange_swaps_two_folders(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    (b / "x").write_text("b")
    if not exchange(a, b):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available on this system")
    assert (a / "x").read_text() == "b" and (b / "x").read_text() == "a"


def test_a_legacy_manifest_still_marks_the_folder_as_sncc_s(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "sncc-manifest.json").write_text(json.dumps({"generator": "sncc"}))
    (out / "env.sh").write_text("old")
    assert is_sncc_folder(out)
    write_outputs({"a.txt": "1"}, out)
    assert sorted(_snapshot(out)) == ["a.txt", MANIFEST]


def test_the_manifest_records_the_deployment_facts(tmp_path):
    out = tmp_path / "out"
    write_outputs({"a.txt": "1"}, out, plan_source="p", facts={"chip": "ascend-910c", "cann": "8.3.RC2"})
    doc = json.loads((out / MANIFEST).read_text())
    assert doc["deployment"] == {"cann": "8.3.RC2", "chip": "ascend-910c"}
    assert doc["plan_sha256"] == hashlib.sha256(b"p").hexdigest()


# --------------------------------------------------------------------------- kill at any step


def _build(out: Path, plan: Path) -> list[str]:
    return [sys.executable, "-m", "sncc.cli", "build", str(plan), "-o", str(out)]


def _state(out: Path, old: dict, new: dict) -> str:
    snap = _snapshot(out) if out.is_dir() else None
    if snap == old:
        return "old"
    if snap == new:
        return "new"
    return "broken"


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory):
    """(plan A, plan B, tree of A, tree of B): two plans whose builds differ."""
    d = tmp_path_factory.mktemp("plans")
    a = d / "a.sn"
    b = d / "b.sn"
    text = SEED.read_text()
    a.write_text(text)
    b.write_text(text.replace("max_num_seqs = 48", "max_num_seqs = 32"))
    trees = []
    for p in (a, b):
        o = d / f"out-{p.stem}"
        subprocess.run(_build(o, p), check=True, capture_output=True, cwd=ROOT)
        trees.append(_snapshot(o))
    assert trees[0] != trees[1]
    return a, b, trees[0], trees[1]


@pytest.mark.skipif(STRACE is None and os.environ.get("SNCC_REQUIRE_STRACE") != "1",
                    reason="strace is not installed (SNCC_REQUIRE_STRACE=1 makes this a failure)")
@pytest.mark.parametrize("call", ["renameat2", "rename"])
@pytest.mark.parametrize("when", [1, 2])
def test_sigkill_at_each_rename_leaves_the_old_or_the_new_tree(two_builds, tmp_path, call, when):
    assert STRACE, "SNCC_REQUIRE_STRACE=1 but strace is not installed"
    a, b, old, new = two_builds
    out = tmp_path / "out"
    subprocess.run(_build(out, a), check=True, capture_output=True, cwd=ROOT)
    r = subprocess.run([STRACE, "-f", "-qq", "-o", "/dev/null", "-e", f"inject={call}:signal=SIGKILL:when={when}",
                        *_build(out, b)], capture_output=True, text=True, cwd=ROOT)
    state = _state(out, old, new)
    assert state in ("old", "new"), (call, when, r.returncode, r.stderr[-500:])
    # a killed build never leaves the folder missing, and the next build cleans up after it
    subprocess.run(_build(out, b), check=True, capture_output=True, cwd=ROOT)
    assert _state(out, old, new) == "new"
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]


def test_a_kill_between_the_steps_keeps_a_whole_tree(two_builds, tmp_path):
    """Without strace: SIGKILL the writing process right before and right after its swap."""
    a, b, old, new = two_builds
    out = tmp_path / "out"
    subprocess.run(_build(out, a), check=True, capture_output=True, cwd=ROOT)
    for point in ("before", "after"):
        code = (
            "import os, signal, sys\n"
            "import sncc.emit.writer as w\n"
            "real = w.exchange\n"
            "def ex(a, b):\n"
            f"    if {point!r} == 'before': os.kill(os.getpid(), signal.SIGKILL)\n"
            "    ok = real(a, b)\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n"
            "w.exchange = ex\n"
            "from sncc.cli import main\n"
            f"sys.argv = ['sncc', 'build', {str(b)!r}, '-o', {str(out)!r}]\n"
            "main()\n")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
        assert r.returncode == -signal.SIGKILL, r.stderr
        assert _state(out, old, new) == ("old" if point == "before" else "new"), point


def test_a_rebuild_keeps_files_the_manifest_does_not_list(tmp_path):
    """Fresh-user report: `build -o out; mkdir out/mydata; echo x > out/mydata/notes.txt; build`
    deleted mydata (and `cd out && bash bench.sh` left bench-result.json there to lose).  A rebuild
    still replaces what sncc wrote, but refuses, leaving the folder as it was, while it holds files
    the previous manifest does not list; --force replaces it anyway."""
    out = tmp_path / "out"
    write_outputs({"a.txt": "1", "sub/b.txt": "2"}, out)
    write_outputs({"a.txt": "1", "c.txt": "3"}, out)            # sncc's own files: replaced whole
    assert sorted(_snapshot(out)) == ["a.txt", "c.txt", MANIFEST]
    (out / "mydata").mkdir()
    (out / "mydata" / "notes.txt").write_text("x")
    (out / "bench-result.json").write_text("{}")
    for k in range(3):
        (out / f"extra{k}.txt").write_text("x")
    before = _snapshot(out)
    with pytest.raises(OutputError) as e:
        write_outputs({"a.txt": "2"}, out)
    msg = str(e.value)
    assert "5 entries" in msg and "bench-result.json, extra0.txt, extra1.txt and 2 more" in msg, msg
    assert "--force" in msg and "move them" in msg and "\n" not in msg
    assert _snapshot(out) == before and _siblings(out) == ["out"]
    write_outputs({"a.txt": "2"}, out, force=True)
    assert sorted(_snapshot(out)) == ["a.txt", MANIFEST]


def test_the_build_command_refuses_a_folder_with_unlisted_files(tmp_path):
    from click.testing import CliRunner

    from sncc.cli import main

    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["build", str(SEED), "-o", str(out)]).exit_code == 0
    (out / "mydata").mkdir()
    (out / "mydata" / "notes.txt").write_text("x")
    r = CliRunner().invoke(main, ["build", str(SEED), "-o", str(out)])
    assert r.exit_code == 2 and "mydata/notes.txt" in r.output and "--force" in r.output
    assert (out / "mydata" / "notes.txt").read_text() == "x"
    assert CliRunner().invoke(main, ["build", "--force", str(SEED), "-o", str(out)]).exit_code == 0
    assert not (out / "mydata").exists()


def test_check_of_a_folder_with_user_files_suggests_the_build_that_works(tmp_path):
    """`build --check` names the command that updates the folder: a plain rebuild refuses a folder
    holding files the build does not write, so the suggestion carries --force and says why."""
    from click.testing import CliRunner

    from sncc.cli import main

    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["build", str(SEED), "-o", str(out)]).exit_code == 0
    (out / "notes.txt").write_text("mine\n")
    res = CliRunner().invoke(main, ["build", "--check", str(SEED), "-o", str(out)])
    assert res.exit_code == 1
    assert "notes.txt is not written by the build" in res.output
    assert f"-o {out} --force` to update it" in res.output
    assert CliRunner().invoke(main, ["build", str(SEED), "-o", str(out)]).exit_code == 2   # the plain rebuild refuses


def test_a_folder_inside_an_sncc_output_folder_is_refused(tmp_path):
    """Break test 27: `build -o out` then `build -o out/sub` succeeded, after which `build -o out`
    was refused (out held entries its manifest does not list).  A folder inside another sncc output
    folder is refused, at any depth, even when it is already current, and even with --force; nothing
    is written."""
    from click.testing import CliRunner

    from sncc.cli import main

    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["build", str(SEED), "-o", str(out)]).exit_code == 0
    before = _snapshot(out)
    for inner, extra in ((out / "sub", []), (out / "a" / "b", ["--force"])):
        r = CliRunner().invoke(main, ["build", str(SEED), "-o", str(inner), *extra])
        assert r.exit_code == 2, r.output
        assert f"refusing to write {inner}: it lies inside {out}, an sncc output folder" in r.output
        assert "choose a folder outside" in r.output
        assert _snapshot(out) == before and _siblings(out) == ["out"]
    with pytest.raises(OutputError, match="lies inside"):
        write_outputs({"a.txt": "1"}, out / "sub")
    # an inner build written before the rule (or by hand) is refused too, though current
    shutil.copytree(out, tmp_path / "copy")
    shutil.move(tmp_path / "copy", out / "old")
    r = CliRunner().invoke(main, ["build", str(SEED), "-o", str(out / "old")])
    assert r.exit_code == 2 and "lies inside" in r.output
    assert CliRunner().invoke(main, ["build", str(SEED), "-o", str(tmp_path / "beside")]).exit_code == 0
    assert CliRunner().invoke(main, ["build", str(SEED), "-o", str(out), "--force"]).exit_code == 0

"""Write a build's files into an output folder, all or nothing.

:func:`write_outputs` writes every file into a fresh temporary folder beside
``out_dir`` (same parent, so the same filesystem), fsyncs the files and the
folder, then swaps it in: the old folder is renamed aside, the new one renamed
to ``out_dir``, the old one removed.  If anything fails before the swap the
temporary folder is removed and ``out_dir`` is untouched; if the second rename
fails the old folder is renamed back.  (Between the two renames — two
``rename(2)`` calls — ``out_dir`` briefly does not exist; a crash exactly there
leaves the old build in ``.<name>.sncc-old-<pid>-*`` beside it.)  The temporary
folders carry the writing process's id: after a successful swap, those left by a
process that no longer runs (a build killed mid-write) are removed
(:func:`_remove_stale`); those of a live process (a concurrent build) are kept.

Ownership: every build writes ``manifest.json`` (sncc version, sha256 of
the plan source, sha256 of every file; deterministic).  An existing non-empty
folder without a manifest is not sncc's and is only replaced with
``force=True``; nor is an sncc folder that holds files its manifest does not list
(:func:`unlisted_entries`: results or notes a user put there), which the swap would delete;
nor is a folder inside another sncc output folder written (:func:`refuse_nested`), which would
become such an unlisted entry of the outer one.  A symlinked ``out_dir`` is followed only when it points to a
folder inside its own parent; the swap then happens at the link's target.

Errors are :class:`OutputError` with a one-line message (the CLI exits 2).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path, PurePosixPath

import sncc

MANIFEST = "manifest.json"
#: manifest names of earlier sncc versions (their folders are still sncc's)
LEGACY_MANIFESTS = ("sncc-manifest.json",)
GENERATOR = "sncc"
#: renameat2 flag: exchange the two paths atomically (linux/fs.h)
RENAME_EXCHANGE = 2


class OutputError(Exception):
    """The output folder cannot be written; ``str(e)`` is one line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


def sha256_hex(data: str | bytes) -> str:
    """Hex sha256 of ``data`` (str is encoded as UTF-8)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def manifest_text(files: dict[str, str], plan_source: str | bytes | None = None, facts: dict | None = None) -> str:
    """The ``manifest.json`` text for ``files``: ``{"generator": "sncc", "sncc_version",
    "plan_sha256" (hex or null), "deployment": facts (chip, CANN, engine and vLLM versions, ...),
    "files": {name: sha256 hex}}``, keys sorted, trailing newline."""
    doc = {
        "generator": GENERATOR,
        "sncc_version": sncc.__version__,
        "plan_sha256": sha256_hex(plan_source) if plan_source is not None else None,
        "deployment": facts or {},
        "files": {name: sha256_hex(text) for name, text in sorted(files.items())},
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def manifest_files(path: Path) -> tuple[bool, set[str] | None]:
    """(``path`` holds a readable sncc manifest, this version's name or a legacy one; the file
    names it lists, itself included, or None when it lists none: an early manifest without
    ``files``, whose folder is replaced whole as before)."""
    for name in (MANIFEST, *LEGACY_MANIFESTS):
        try:
            doc = json.loads((path / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and doc.get("generator") == GENERATOR:
            files = doc.get("files")
            if not isinstance(files, dict):
                return True, None
            return True, {name, *(k for k in files if isinstance(k, str))}
    return False, None


#: files not in the previous manifest that a refusal names before "and N more"
FOREIGN_SHOWN = 3


def unlisted_entries(path: Path, listed: set[str]) -> list[str]:
    """The files (and empty folders, ``name/``) under ``path`` that ``listed`` does not name:
    what a user added to an sncc folder (``bench-result.json`` of ``cd out && bash bench.sh``,
    notes).  Sorted.  Symlinks are neither followed nor reported: removing one loses no data
    (what it points to stays), and one planted in an old build is replaced like any file."""
    out = []
    for root, dirs, files in os.walk(path):
        rel = os.path.relpath(root, path)
        rel = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for d in list(dirs):
            full = os.path.join(root, d)
            if os.path.islink(full):
                dirs.remove(d)
            elif not os.listdir(full) and not any(n.startswith(rel + d + "/") for n in listed):
                out.append(rel + d + "/")
        out += [rel + f for f in files if rel + f not in listed and not os.path.islink(os.path.join(root, f))]
    return sorted(out)


def is_sncc_folder(path: Path) -> bool:
    """True when ``path`` holds a readable manifest written by sncc (this version's or a legacy name)."""
    return manifest_files(path)[0]


def enclosing_sncc_folder(out_dir: Path) -> Path | None:
    """The nearest folder above ``out_dir`` (resolved; ``out_dir`` itself excluded, it need not
    exist) that is an sncc output folder (:func:`is_sncc_folder`), or None.  A build there would
    leave the outer folder holding entries its manifest does not list, so that the outer folder's
    own rebuild is refused (or, with ``--force``, deletes the inner build)."""
    try:
        here = Path(os.path.realpath(out_dir))
    except (OSError, ValueError):
        return None
    for up in here.parents:
        if is_sncc_folder(up):
            return up
    return None


def refuse_nested(out_dir: Path) -> None:
    """Raise :class:`OutputError` when ``out_dir`` lies inside another sncc output folder
    (:func:`enclosing_sncc_folder`), naming it and what to do instead."""
    outer = enclosing_sncc_folder(out_dir)
    if outer is None:
        return
    shown = os.path.relpath(outer) if not os.path.isabs(out_dir) else str(outer)
    raise OutputError(f"refusing to write {out_dir}: it lies inside {shown}, an sncc output folder "
                      f"({os.path.join(shown, MANIFEST)}), which is replaced as a whole when it is rebuilt "
                      f"and refuses entries its {MANIFEST} does not list; choose a folder outside {shown} "
                      f"(for example beside it)")


_LIBC = None


def exchange(a: Path, b: Path) -> bool:
    """Exchange directories ``a`` and ``b`` atomically (Linux ``renameat2(RENAME_EXCHANGE)``).

    Returns False when the call is not available here (not Linux, an old kernel or libc, a
    filesystem without exchange: ENOSYS, EINVAL, ENOTSUP); raises OSError for other failures."""
    global _LIBC
    import ctypes
    import errno
    import sys

    if not sys.platform.startswith("linux"):
        return False
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(None, use_errno=True)
        except OSError:
            return False
    fn = getattr(_LIBC, "renameat2", None)
    if fn is None:
        return False
    at_fdcwd = -100
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    rc = fn(at_fdcwd, os.fsencode(str(a)), at_fdcwd, os.fsencode(str(b)), RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, getattr(errno, "ENOTSUP", 95), errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _check_name(name: str) -> PurePosixPath:
    p = PurePosixPath(name)
    if (not name or p.is_absolute() or "\\" in name or any(part in ("", ".", "..") for part in name.split("/"))
            or name == MANIFEST):
        raise OutputError(f"refusing to write output file {name!r}: not a plain relative path")
    return p


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_file(path: Path, data: bytes) -> None:
    """Create ``path`` (and its folders), write ``data``, fsync.  Mode 0644 (0755 for ``*.sh``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = 0o755 if path.suffix == ".sh" else 0o644
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(path, mode)


def _target(out_dir: Path) -> Path:
    """The real folder to replace: ``out_dir`` itself, or its symlink target inside the same parent."""
    out_dir = Path(os.path.abspath(out_dir))
    if not out_dir.is_symlink():
        return out_dir
    parent = out_dir.parent.resolve()
    target = out_dir.resolve()
    if target.parent != parent:
        raise OutputError(f"refusing to write through symlink {out_dir}: it points to {target}, outside {parent}")
    if target.exists() and not target.is_dir():
        raise OutputError(f"{out_dir} points to {target}, which is not a folder")
    return target


def _pid_alive(pid: int) -> bool:
    """True when process ``pid`` exists (or cannot be probed: then it is left alone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _remove_stale(parent: Path, name: str) -> None:
    """Remove ``.<name>.sncc-new-<pid>-*`` and ``.<name>.sncc-old-<pid>-*`` folders in
    ``parent`` whose process no longer runs (left by a killed build).  Only real folders
    are removed (never through a symlink); errors are ignored."""
    pattern = re.compile(rf"\.{re.escape(name)}\.sncc-(?:new|old)-(\d+)-[^/]*")
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for e in entries:
        m = pattern.fullmatch(e.name)
        if m and e.is_dir(follow_symlinks=False) and int(m.group(1)) != os.getpid() and not _pid_alive(int(m.group(1))):
            shutil.rmtree(e.path, ignore_errors=True)


def remove_leftovers(out_dir: Path) -> None:
    """Remove the temporary folders a killed build of ``out_dir`` left beside it (as
    :func:`write_outputs` does first); for a build that finds ``out_dir`` current and writes
    nothing.  Errors are ignored."""
    try:
        target = _target(Path(out_dir))
    except OutputError:
        return
    _remove_stale(target.parent, target.name)


def write_outputs(files: dict[str, str], out_dir: Path, *, force: bool = False,
                  plan_source: str | bytes | None = None, facts: dict | None = None) -> list[Path]:
    """Replace ``out_dir`` atomically with a folder holding ``files`` plus ``manifest.json``.

    ``files`` maps relative POSIX paths (``"env.sh"``, ``"schemas/x.schema.json"``)
    to text, written as UTF-8 with the line ends given.  ``plan_source`` (the
    ``.sn`` text or bytes) is hashed into the manifest, ``facts`` recorded in it.  Validates nothing (the
    caller validates).  Returns the written paths (under ``out_dir`` as given,
    sorted, manifest included).  Raises :class:`OutputError` (one-line message)
    when ``out_dir`` is a foreign non-empty folder, or an sncc folder holding files its
    manifest does not list, and ``force`` is false, is
    not a folder, is a symlink pointing outside its parent, or on any I/O
    failure; the previous ``out_dir`` is then left exactly as it was.
    """
    out_given = Path(out_dir)
    names = sorted(files)
    for name in names:
        _check_name(name)
    refuse_nested(out_given)
    target = _target(out_given)
    parent = target.parent
    if target.exists() or target.is_symlink():
        if not target.is_dir() or target.is_symlink():
            raise OutputError(f"{out_given} exists and is not a folder")
        try:
            non_empty = any(target.iterdir())
        except OSError as e:
            raise OutputError(f"cannot read {out_given}: {e.strerror or e}") from e
        owned, listed = manifest_files(target) if non_empty else (False, None)
        if non_empty and not force and not owned:
            raise OutputError(f"{out_given} is not empty and was not written by sncc (no {MANIFEST}); "
                              "choose another folder or pass --force to replace it")
        if non_empty and not force and listed is not None:
            # the folder is replaced whole: files sncc did not write there (the previous manifest
            # does not list them) would be lost, so they stop the build
            foreign = unlisted_entries(target, listed)
            if foreign:
                named = ", ".join(foreign[:FOREIGN_SHOWN]) + (
                    f" and {len(foreign) - FOREIGN_SHOWN} more" if len(foreign) > FOREIGN_SHOWN else "")
                raise OutputError(f"refusing to replace {out_given}: it holds {len(foreign)} "
                                  f"{'entry' if len(foreign) == 1 else 'entries'} its {MANIFEST} does not list "
                                  f"({named}), which the rebuild would delete; move them out of the folder, "
                                  "or pass --force to replace it anyway")
        existed = True
    else:
        existed = False
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.sncc-new-{os.getpid()}-", dir=parent))
    except OSError as e:
        blocker = next((p for p in (parent, *parent.parents) if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            raise OutputError(f"cannot write {out_given}: {blocker} is a file, not a folder") from e
        raise OutputError(f"cannot create a folder in {parent}: {e.strerror or e}") from e
    try:
        os.chmod(tmp, 0o755)
        for name in names:
            _write_file(tmp / name, files[name].encode("utf-8"))
        _write_file(tmp / MANIFEST, manifest_text(files, plan_source, facts).encode("utf-8"))
        for d in sorted({(tmp / n).parent for n in names}, key=lambda p: len(p.parts), reverse=True):
            _fsync_dir(d)
    except OutputError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    except (OSError, UnicodeError) as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise OutputError(f"cannot write {out_given}: {getattr(e, 'strerror', None) or e}") from e
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise

    old: Path | None = None
    try:
        if existed and exchange(tmp, target):
            # one system call: target is now the new tree, tmp the old one
            _fsync_dir(parent)
            shutil.rmtree(tmp, ignore_errors=True)
            _remove_stale(parent, target.name)
            return sorted([out_given / n for n in names] + [out_given / MANIFEST])
        if existed:
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.sncc-old-{os.getpid()}-", dir=parent))
            os.rmdir(old)  # reserve a unique name; rename needs it absent
            os.rename(target, old)
        try:
            os.rename(tmp, target)
        except BaseException:
            if old is not None:
                os.rename(old, target)
                old = None
            raise
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise OutputError(f"cannot replace {out_given}: {e.strerror or e}") from e
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    _remove_stale(parent, target.name)
    return sorted([out_given / n for n in names] + [out_given / MANIFEST])

"""Replace one text file atomically (used by ``sncc fmt`` and ``sncc calibrate``; the
multi-file build output has its own staged writer, :mod:`sncc.emit.writer`)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8): write a temporary file beside it, fsync, keep
    an existing file's permission bits, then ``os.replace``.  A symlink's target is replaced.

    Raises :class:`OSError` when the folder is not writable or the rename fails; ``path`` is
    then unchanged and the temporary file is removed."""
    p = Path(path)
    target = p.resolve() if p.is_symlink() else p
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".sncc-tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.chmod(tmp, target.stat().st_mode & 0o7777)
        except OSError:
            pass
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

"""Replace one text file atomically (used by ``sncc fmt`` and ``sncc calibrate``; the
multi-file build output has its own staged writer, :mod:`sncc.emit.writer`), and turn a name
from a plan into one safe file-name component (:func:`file_name_component`)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path


#: longest component :func:`file_name_component` returns: NAME_MAX (255 bytes) less room for
#: the prefix and suffix a writer adds (``01-``, ``-01.sn.tmp``)
_COMPONENT_MAX = 200


def file_name_component(text: str, fallback: str = "plan") -> str:
    """``text`` (a plan name, say) as one file-name component that stays in its folder: every
    character outside ``A-Z a-z 0-9 . _ -`` (a ``/``, ``\\``, a space, a control or non-ASCII
    character) becomes ``-``, runs of ``-`` one, leading ``.`` and ``-`` and trailing ``-`` go (no
    hidden file, no ``..``, no option-like name), at most 200 characters; ``fallback`` when
    nothing is left.  ``"../../escape"`` → ``"escape"``, ``"team/qwen3"`` → ``"team-qwen3"``."""
    name = re.sub(r"[^A-Za-z0-9._-]", "-", text)
    name = re.sub(r"-{2,}", "-", name).lstrip(".-")[:_COMPONENT_MAX].rstrip("-")
    return name or fallback


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

"""``sncc build --check``: is an output folder exactly what a build would write?

Compares the files a build would write — every emitted file plus
``manifest.json`` (which hashes the plan source and records the sncc
version and the deployment's facts) — byte for byte with the folder's files, recursively, ignoring
nothing.  Writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from sncc.emit.writer import MANIFEST, manifest_text


def stale_reasons(files: dict[str, str], out_dir: Path, plan_source: str | bytes | None,
                  facts: dict | None = None) -> list[str]:
    """Why ``out_dir`` differs from a build of ``files`` (empty list: current).

    ``files`` maps relative POSIX paths to text as for
    :func:`sncc.emit.writer.write_outputs`.  Each reason is one line:
    ``missing X``, ``X differs``, ``X is not written by the build`` or that the
    folder does not exist.  Raises nothing: unreadable files count as
    differing.
    """
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        return [f"{out_dir} does not exist" if not out_dir.exists() else f"{out_dir} is not a folder"]
    expected = {name: text.encode("utf-8") for name, text in files.items()}
    expected[MANIFEST] = manifest_text(files, plan_source, facts).encode("utf-8")
    present: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(out_dir):
        dirnames.sort()
        rel = Path(dirpath).relative_to(out_dir)
        for f in filenames:
            present.add((rel / f).as_posix())
    reasons = []
    for name in sorted(expected):
        if name not in present:
            reasons.append(f"missing {name}")
            continue
        try:
            same = (out_dir / name).read_bytes() == expected[name]
        except OSError:
            same = False
        if not same:
            reasons.append(f"{name} differs")
    reasons += [f"{name} is not written by the build" for name in sorted(present - set(expected))]
    return reasons

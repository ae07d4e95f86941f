"""A small per-user disk cache for work every ``sncc`` process would redo:
the analysed Lark grammar and the parsed TOML data files (the catalog, the check
rules, the engines' pins: :func:`package_toml`).

It lives in the user's own cache directory: ``$SNCC_CACHE_DIR``, else
``$XDG_CACHE_HOME/sncc``, else ``~/.cache/sncc`` (created with mode 0700).
Entries are pickles, so a directory owned by another user, or a shared
temporary folder, is never used.  ``SNCC_NO_CACHE=1`` turns the cache off.
Every failure (read-only home, corrupt or truncated entry, concurrent
writers) silently falls back to computing the value: the cache can make sncc
faster, never different.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from typing import Any, Callable


def cache_dir() -> str | None:
    """The cache directory (created on first use), or None when caching is off or impossible."""
    if os.environ.get("SNCC_NO_CACHE"):
        return None
    try:
        base = os.environ.get("SNCC_CACHE_DIR") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "sncc")
        os.makedirs(base, mode=0o700, exist_ok=True)
        if hasattr(os, "getuid") and os.stat(base).st_uid != os.getuid():
            return None
        if not os.access(base, os.R_OK | os.W_OK):
            return None
        return base
    except Exception:  # noqa: BLE001 - no cache is always fine
        return None


def key_of(*parts: str) -> str:
    """A file-name-safe digest of ``parts`` plus the Python version."""
    h = hashlib.sha256()
    for p in (*parts, repr(sys.version_info[:2])):
        h.update(p.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:24]


def cached(kind: str, key: str, build: Callable[[], Any]) -> Any:
    """``build()``, memoised on disk as ``<kind>-<key>.pickle``.

    ``key`` must change whenever the value would (see :func:`key_of`).  The
    entry stores its key and is ignored unless it matches.  Writes are atomic
    (temporary file, then rename).  Exceptions from ``build`` propagate;
    cache problems never do.
    """
    base = cache_dir()
    if base is None:
        return build()
    path = os.path.join(base, f"{kind}-{key}.pickle")
    try:
        with open(path, "rb") as f:
            stored_key, value = pickle.load(f)
        if stored_key == key:
            return value
    except Exception:  # noqa: BLE001 - missing, truncated or stale: rebuild
        pass
    value = build()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{kind}-", dir=base)
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump((key, value), f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except Exception:  # noqa: BLE001
        pass
    return value


def package_toml(package: str, name: str) -> Any:
    """The parsed TOML data file ``name`` (a ``/``-separated path) shipped in ``package``
    (``package_toml("sncc.catalog", "data/memory.toml")``), memoised in this cache under a
    hash of the file's text (:func:`cached`): reading a table back costs a fraction of a
    millisecond, the pure-Python TOML parser several on every start.  The TOML parser is
    imported only on a cache miss.  Raises FileNotFoundError or ModuleNotFoundError for a
    missing file or package, and the parser's ``TOMLDecodeError`` for invalid TOML.
    """
    from importlib.resources import files

    path = files(package)
    for part in name.split("/"):
        path = path / part
    text = path.read_text(encoding="utf-8")

    def parse() -> Any:
        try:  # Python >= 3.11
            import tomllib
        except ModuleNotFoundError:  # pragma: no cover - Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        return tomllib.loads(text)

    kind = "toml-" + package.replace(".", "-") + "-" + name.replace("/", "-").removesuffix(".toml")
    return cached(kind, key_of(text), parse)

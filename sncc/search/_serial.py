"""The inline backend (the interface of :mod:`sncc.search.backend`, run serially in this
process: stages too small for a pool), and :func:`backend`, the search's way to the real ones."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Optional


class SerialBackend:
    """``imap(fn, items, context=..., chunksize=..., on_progress=...)`` calls ``fn(context, item)``
    for every item in this process and yields the results in input order."""

    name = "local"
    workers = 1

    def imap(self, fn: Callable, items: Iterable, *, context: Any = None, chunksize: Optional[int] = None,
             on_progress: Optional[Callable[[int, int], None]] = None) -> Iterator:
        """Results of ``fn(context, item)`` in input order (``chunksize`` is ignored)."""
        items = list(items)
        for i, item in enumerate(items):
            yield fn(context, item)
            if on_progress is not None:
                on_progress(i + 1, len(items))

    def map(self, fn: Callable, items: Iterable, **kw: Any) -> list:
        """``list(imap(...))``."""
        return list(self.imap(fn, items, **kw))

    def close(self) -> None:
        """Nothing to release."""

    def __enter__(self) -> "SerialBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def backend(name: str = "local", *, workers: Optional[int] = None, address: Optional[str] = None):
    """The backend called ``name`` (``local`` or ``ray``): :func:`sncc.search.backend.get_backend`.
    Raises ValueError for an unknown name, ``BackendUnavailable`` for Ray when it is not installed."""
    from sncc.search.backend import get_backend

    return get_backend(name, workers=workers, address=address)

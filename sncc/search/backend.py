"""Execution backends for ``sncc search``: run one function over many candidates, in order.

A backend maps ``fn(context, item)`` over a list of items and yields the results in input
order. ``context`` is the large, read-only part every call needs (the compiled plan, its
facts, the cost model); it is shipped once per worker process, never once per item. Two
backends share the same interface and give the same results, byte for byte, for the same
inputs: results are pickled values of ``fn``'s return, in input order, whatever the worker
that computed them.

- ``local`` (:class:`LocalBackend`): worker processes on this machine
  (:class:`concurrent.futures.ProcessPoolExecutor`, "spawn" start method), or inline in this
  process when there is one worker or one item.
- ``ray`` (:class:`RayBackend`): tasks on a Ray cluster, a local one started on demand or an
  existing one (``address="auto"``). Ray is an optional extra: ``pip install 'sncc[ray]'``.

``fn`` must be a module-level function (picklable by reference), ``context`` and items
picklable. Items are cheap (about 1 ms of work each for the search's screen), so the work is
sent in chunks: by default about 4 chunks per worker (:func:`default_chunksize`), enough to
balance uneven chunks without paying a round trip per item.
"""

from __future__ import annotations

import concurrent.futures as cf
from concurrent.futures.process import BrokenProcessPool
import math
import multiprocessing
import os
import signal
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

__all__ = [
    "BACKENDS", "Backend", "BackendUnavailable", "LocalBackend", "RayBackend",
    "default_chunksize", "get_backend",
]

C = TypeVar("C")
T = TypeVar("T")
R = TypeVar("R")

#: callback ``on_progress(done, total)``: items finished so far and items in all, called in
#: the calling process after each chunk completes (in completion order, not input order)
Progress = Callable[[int, int], None]

#: chunks per worker that the default chunk size aims at: enough slack for chunks of uneven
#: cost to even out across workers, few enough that the per-chunk round trip (~0.1-1 ms for a
#: process pool, a few ms for a Ray task) stays small against ~1 ms items
CHUNKS_PER_WORKER = 4

#: progress calls of an inline map (one every 1 % of the items): inline there is no round trip
#: to amortize, so the steps serve only the progress bar
INLINE_PROGRESS_STEPS = 100

#: the install line printed when the Ray backend is asked for and Ray is absent
RAY_INSTALL_HINT = "pip install 'sncc[ray]'"


class BackendUnavailable(RuntimeError):
    """A known backend whose optional dependency is not installed (e.g. Ray)."""


def default_chunksize(n_items: int, workers: int) -> int:
    """Items per chunk so that ``n_items`` make about :data:`CHUNKS_PER_WORKER` chunks per worker.

    ``n_items`` ≥ 0, ``workers`` ≥ 1; returns ≥ 1.
    """
    return max(1, math.ceil(n_items / (CHUNKS_PER_WORKER * max(1, workers))))


def _chunks(items: Sequence[T], size: int) -> list[Sequence[T]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _check_chunksize(chunksize: int | None, n_items: int, workers: int) -> int:
    if chunksize is None:
        return default_chunksize(n_items, workers)
    if isinstance(chunksize, bool) or not isinstance(chunksize, int) or chunksize < 1:
        raise ValueError(f"chunksize must be a positive integer, got {chunksize!r}")
    return chunksize


def _check_workers(workers: int | None) -> int | None:
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    return workers


class Backend(ABC):
    """Runs ``fn(context, item)`` over items, yielding results in input order.

    Use as a context manager, or call :meth:`close` when done; a closed backend may not be
    used again.
    """

    #: the name :func:`get_backend` knows this backend by
    name: str = ""

    @abstractmethod
    def imap(self, fn: Callable[[C, T], R], items: Iterable[T], *, context: C = None,
             chunksize: int | None = None, on_progress: Progress | None = None) -> Iterator[R]:
        """Yield ``fn(context, item)`` for every item, in the order of ``items``.

        ``items`` is read whole before the first call (its length is the progress total).
        ``chunksize``: items per task (default :func:`default_chunksize`). ``on_progress(done,
        total)`` is called in this process as chunks complete, ``done`` counting items.

        Raises, while iterating: the exception ``fn`` raised for the first failing chunk in
        input order (its type and message; the worker's traceback as ``__cause__`` where the
        backend has one); ``KeyboardInterrupt`` after cancelling the pending work. The results
        of the chunks before the failing one have been yielded and stay with the caller.
        At the call: ``ValueError`` for a bad ``chunksize``; ``RuntimeError`` once closed.
        """

    def map(self, fn: Callable[[C, T], R], items: Iterable[T], *, context: C = None,
            chunksize: int | None = None, on_progress: Progress | None = None) -> list[R]:
        """``list(imap(...))``: every result, in input order. Raises as :meth:`imap`."""
        return list(self.imap(fn, items, context=context, chunksize=chunksize,
                              on_progress=on_progress))

    def close(self) -> None:
        """Release the workers. Idempotent."""

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------------- local

#: the context of the current pool, set once per worker process by :func:`_init_worker`
_WORKER_CONTEXT: Any = None


def _init_worker(context: Any) -> None:
    """Process-pool initializer: keep ``context`` for every chunk this worker runs.

    The worker ignores SIGINT: a Ctrl-C in the terminal reaches the whole process group, and
    the parent, not each worker, decides what happens (it cancels the work and ends the pool).
    """
    global _WORKER_CONTEXT
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER_CONTEXT = context


def _run_chunk_in_worker(fn: Callable[[Any, T], R], chunk: Sequence[T]) -> list[R]:
    return [fn(_WORKER_CONTEXT, item) for item in chunk]


class LocalBackend(Backend):
    """Worker processes on this machine (``ProcessPoolExecutor`` with the "spawn" start method).

    ``workers``: processes (default ``os.cpu_count()``); ``start_method``: the multiprocessing
    start method ("spawn"; "forkserver" is as safe on POSIX). With one worker, or one item, the
    items run inline in this process, with no pool. The pool starts on the first
    :meth:`imap` that needs it and is kept for later calls with the same ``context`` object
    (identity); a call with another context starts a new pool, since the context is bound to
    the workers when they start (the pool's initializer), once per worker.

    "spawn" rather than "fork": the caller may run threads (a rich progress bar does), which
    a forked child would inherit in an undefined state; spawned workers import ``fn``'s module
    afresh, so ``fn`` must be importable (a module-level function), and a script that uses
    this backend must keep its work under ``if __name__ == "__main__":``.

    One :meth:`imap` at a time per backend: a call with another context ends the pool that an
    unfinished earlier generator still reads from.

    Raises ``ValueError`` for ``workers`` < 1; :meth:`imap` raises
    ``concurrent.futures.process.BrokenProcessPool`` when a worker process dies (the pool is
    then replaced on the next call).
    """

    name = "local"

    def __init__(self, workers: int | None = None, *, start_method: str = "spawn") -> None:
        self.workers: int = _check_workers(workers) or os.cpu_count() or 1
        self._mp = multiprocessing.get_context(start_method)
        self._pool: cf.ProcessPoolExecutor | None = None
        self._pool_context: Any = None
        self._closed = False

    # -- pool lifetime

    def _pool_for(self, context: Any) -> cf.ProcessPoolExecutor:
        if self._pool is not None and self._pool_context is context:
            return self._pool
        self._shutdown_pool()
        # with a start method other than "fork" the executor starts workers on demand, one per
        # submitted chunk while none is idle, so a map of 2 chunks starts 2 processes, not all
        self._pool = cf.ProcessPoolExecutor(
            max_workers=self.workers, mp_context=self._mp,
            initializer=_init_worker, initargs=(context,))
        self._pool_context = context
        return self._pool

    def _shutdown_pool(self) -> None:
        pool, self._pool, self._pool_context = self._pool, None, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _terminate_pool(self) -> None:
        """End the pool now: pending chunks cancelled, running workers terminated, never waits
        on a chunk still computing."""
        pool, self._pool, self._pool_context = self._pool, None, None
        if pool is None:
            return
        # Python ≥ 3.14 has ProcessPoolExecutor.terminate_workers(); before it, the executor's
        # process table is the only handle on its workers
        procs = list((getattr(pool, "_processes", None) or {}).values())
        if hasattr(pool, "terminate_workers"):
            pool.terminate_workers()   # terminates each worker, then shuts the executor down
        else:
            pool.shutdown(wait=False, cancel_futures=True)
            # a spawn-context executor starts workers on demand (Python 3.11 _adjust_process_count):
            # one started between the first look and the shutdown is in the table only now
            procs += [p for p in (getattr(pool, "_processes", None) or {}).values() if p not in procs]
            for proc in procs:
                if proc.is_alive():
                    proc.terminate()
        for proc in procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)

    def close(self) -> None:
        """Shut the pool down (waits for running chunks). Idempotent."""
        self._closed = True
        self._shutdown_pool()

    # -- work

    def imap(self, fn: Callable[[C, T], R], items: Iterable[T], *, context: C = None,
             chunksize: int | None = None, on_progress: Progress | None = None) -> Iterator[R]:
        """See :meth:`Backend.imap`. A failing item's exception is re-raised as is (pickled back
        from the worker, the worker's traceback chained as ``__cause__``)."""
        if self._closed:
            raise RuntimeError("this LocalBackend is closed")
        items = list(items)
        size = _check_chunksize(chunksize, len(items), self.workers)
        if self.workers == 1 or len(items) <= 1:
            if chunksize is None:   # inline, a chunk is only a progress step: no round trip to save
                size = max(1, math.ceil(len(items) / INLINE_PROGRESS_STEPS))
            return self._imap_inline(fn, items, context, size, on_progress)
        return self._imap_pool(fn, items, context, size, on_progress)

    @staticmethod
    def _imap_inline(fn, items, context, size, on_progress) -> Iterator[Any]:
        total, done = len(items), 0
        for chunk in _chunks(items, size):
            results = [fn(context, item) for item in chunk]
            done += len(chunk)
            if on_progress is not None:
                on_progress(done, total)
            yield from results

    def _imap_pool(self, fn, items, context, size, on_progress) -> Iterator[Any]:
        chunks = _chunks(items, size)
        total, done = len(items), 0
        pool = self._pool_for(context)
        futures: list[cf.Future] = []
        try:
            futures.extend(pool.submit(_run_chunk_in_worker, fn, chunk) for chunk in chunks)
            size_of = {f: len(chunk) for f, chunk in zip(futures, chunks)}
            pending = set(futures)
            for future in futures:
                while future in pending:
                    finished, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                    for f in finished:
                        if on_progress is not None and not f.cancelled() and f.exception() is None:
                            done += size_of[f]
                            on_progress(done, total)
                yield from future.result()
        except (KeyboardInterrupt, SystemExit, BrokenProcessPool):
            # Ctrl-C, or a worker died (killed, out of memory): end the pool; the next call
            # starts a fresh one
            self._terminate_pool()
            raise
        except BaseException:
            # an item failed, or the caller stopped early (GeneratorExit): drop the chunks not
            # started; those running finish on their own and the pool stays usable
            for f in futures:
                f.cancel()
            raise


# ------------------------------------------------------------------------------------ ray

#: per Ray worker process: (object id hex, context) of the last context fetched, so a worker
#: deserializes each context once, not once per task
_RAY_CONTEXT_CACHE: list[Any] = [None, None]
_RAY_CONTEXT_LOCK = threading.Lock()


def _ray_context(boxed_ref: list[Any]) -> Any:
    """The context behind ``boxed_ref`` (a one-element list holding the ObjectRef, so that Ray
    does not resolve it per task), fetched and unpickled once per worker process."""
    import ray

    ref = boxed_ref[0]
    key = ref.hex()
    with _RAY_CONTEXT_LOCK:
        if _RAY_CONTEXT_CACHE[0] != key:
            _RAY_CONTEXT_CACHE[1] = ray.get(ref)
            _RAY_CONTEXT_CACHE[0] = key
        return _RAY_CONTEXT_CACHE[1]


def _run_chunk_in_ray(fn: Callable[[Any, T], R], boxed_ref: list[Any], chunk: Sequence[T]) -> list[R]:
    context = _ray_context(boxed_ref)
    return [fn(context, item) for item in chunk]


def _import_ray():
    try:
        import ray
    except ImportError as err:
        raise BackendUnavailable(
            f"the ray backend needs Ray, which is not installed: {RAY_INSTALL_HINT}") from err
    return ray


#: Ray's token authentication (on by default for clusters started with `ray start` in Ray 2.5x;
#: docs.ray.io/en/latest/ray-security/token-auth.html): a driver joining by an explicit address
#: sends the token only with RAY_AUTH_MODE=token (measured with Ray 2.60.0: `--address auto`
#: found the local cluster and its token, `--address 127.0.0.1:PORT` got InvalidAuthToken)
_AUTH_HELP = ("if the cluster uses token authentication (Ray's default for `ray start`), set RAY_AUTH_MODE=token "
              "and give the cluster's token (~/.ray/auth_token on the head node, or RAY_AUTH_TOKEN); "
              "see https://docs.ray.io/en/latest/ray-security/token-auth.html")


def _connection_help(message: str, address: str | None) -> str:
    """Ray's connection error ``message`` with what to try next (token authentication)."""
    if address is None or os.environ.get("RAY_AUTH_MODE"):
        return message
    return f"{message.rstrip('.')}; {_AUTH_HELP}"


#: seconds a TCP connect to an explicit Ray address may take before sncc gives up (ray.init has
#: no timeout of its own: measured with Ray 2.60.0, `ray.init(address="127.0.0.1:1")` retried the
#: GCS connection for minutes)
CONNECT_TIMEOUT_S = 5.0


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of an explicit Ray address (``host:port``, ``ray://host:port``,
    ``[v6]:port``), or None for one Ray resolves itself (``auto``, ``local``, no port)."""
    rest = address.strip()
    if "://" in rest:
        rest = rest.split("://", 1)[1]
    rest = rest.split("/", 1)[0]
    if rest.startswith("["):
        host, _, tail = rest[1:].partition("]")
        port = tail[1:] if tail.startswith(":") else ""
    else:
        host, _, port = rest.rpartition(":")
    if not host or not port.isdigit():
        return None
    return host, int(port)


def check_reachable(address: str | None, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Raise ``ConnectionError`` when a TCP connect to the explicit Ray ``address`` (or, for None,
    to ``RAY_ADDRESS``) fails within ``timeout`` [s]: refused, unknown host, or no answer. Addresses
    Ray resolves itself (``auto``) are left to ``ray.init``, which fails fast for them."""
    import socket

    address = address if address is not None else os.environ.get("RAY_ADDRESS") or None
    hp = _host_port(address) if address else None
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=timeout):
            pass
    except socket.timeout:
        raise ConnectionError(f"cannot reach the Ray cluster at {address}: no answer within {timeout:g} s; "
                              "check the address and that `ray start --head` runs there") from None
    except OSError as err:
        raise ConnectionError(f"cannot reach the Ray cluster at {address}: {err.strerror or err}; "
                              "check the address and that `ray start --head` runs there") from None


class RayBackend(Backend):
    """Tasks on a Ray cluster, one task per chunk, results in input order.

    ``address``: ``None`` starts a local Ray instance with ``workers`` CPUs (default: all of
    this machine's); ``"auto"`` joins the cluster already running on this machine, or any
    address ``ray.init`` takes (``ray://host:10001``); ``workers`` then only sets the chunk
    size (default: the cluster's CPU count). If Ray is already initialized in this process,
    that instance is used as it is. :meth:`close` calls ``ray.shutdown()`` only if this backend
    started (or connected) Ray.

    The context is put in the object store once per :meth:`imap` call (``ray.put``) and
    unpickled once per Ray worker process, not per task. ``fn`` travels by reference, so every
    node of a cluster needs the same sncc (and ``fn``'s module) installed.

    Raises :class:`BackendUnavailable` when Ray is not installed; ``ConnectionError`` for an
    address ``ray.init`` cannot join (Ray's message, with the token-authentication hint when
    RAY_AUTH_MODE is unset), and at once, within :data:`CONNECT_TIMEOUT_S`, for an explicit
    ``host:port`` no TCP connection reaches (:func:`check_reachable`).
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        self.address = address
        self._ray = ray = _import_ray()
        self._workers = _check_workers(workers)
        self._started = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = dict(address=address, ignore_reinit_error=True,
                                          include_dashboard=False, log_to_driver=False)
            if address is None and self._workers is not None:
                kwargs["num_cpus"] = self._workers
            check_reachable(address)     # ray.init would retry an unreachable address for minutes
            try:
                ray.init(**kwargs)
            except ConnectionError as err:
                raise ConnectionError(_connection_help(str(err), address)) from err
            self._started = True
        self._remote = ray.remote(_run_chunk_in_ray)
        self._closed = False

    @property
    def workers(self) -> int:
        """Worker slots the chunk size is planned for: ``workers`` if given, else the
        cluster's CPUs (≥ 1)."""
        if self._workers is not None:
            return self._workers
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def close(self) -> None:
        """``ray.shutdown()`` if this backend started Ray. Idempotent."""
        if not self._closed and self._started and self._ray.is_initialized():
            self._ray.shutdown()
        self._closed = True

    def imap(self, fn: Callable[[C, T], R], items: Iterable[T], *, context: C = None,
             chunksize: int | None = None, on_progress: Progress | None = None) -> Iterator[R]:
        """See :meth:`Backend.imap`. A failing item's exception is re-raised as the original
        exception type with its message (Ray's ``RayTaskError`` chained as ``__cause__``)."""
        if self._closed:
            raise RuntimeError("this RayBackend is closed")
        items = list(items)
        size = _check_chunksize(chunksize, len(items), self.workers)
        return self._imap(fn, items, context, size, on_progress)

    def _imap(self, fn, items, context, size, on_progress) -> Iterator[Any]:
        ray = self._ray
        chunks = _chunks(items, size)
        total, done = len(items), 0
        refs: list[Any] = []
        pending: list[Any] = []
        finished: set[Any] = set()
        try:
            boxed = [ray.put(context)]
            for chunk in chunks:
                refs.append(self._remote.remote(fn, boxed, chunk))
                pending.append(refs[-1])
            size_of = {ref: len(chunk) for ref, chunk in zip(refs, chunks)}
            for ref in refs:
                while ref not in finished:
                    ready, pending = ray.wait(pending, num_returns=1)
                    for r in ready:
                        finished.add(r)
                        done += size_of[r]
                        if on_progress is not None:
                            on_progress(done, total)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as err:
                    cause = getattr(err, "cause", None)
                    if isinstance(cause, BaseException):
                        raise cause from err
                    raise
                yield from result
        except BaseException:
            for r in pending:
                ray.cancel(r, force=True)
            raise


# ------------------------------------------------------------------------------- factory

#: backend name → class
BACKENDS: dict[str, type[Backend]] = {"local": LocalBackend, "ray": RayBackend}


def get_backend(name: str = "local", *, workers: int | None = None,
                address: str | None = None) -> Backend:
    """The backend called ``name`` ("local" or "ray"), ready to use.

    ``workers``: worker processes (local) or CPUs of the local Ray instance (ray); default all
    of this machine's. ``address``: the Ray cluster to join ("auto", "ray://host:port"); ray only.

    Raises ``ValueError`` for an unknown name (the message lists the known ones), for
    ``address`` with the local backend, or for ``workers`` < 1; :class:`BackendUnavailable`
    (a ``RuntimeError``) for "ray" when Ray is not installed, whose message is the install line
    ``pip install 'sncc[ray]'``.
    """
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; known backends: {', '.join(sorted(BACKENDS))}")
    if name == "local":
        if address is not None:
            raise ValueError("address applies to the ray backend only (--backend ray --address ...)")
        return LocalBackend(workers)
    return RayBackend(address=address, workers=workers)

"""Module-level functions and contexts the backend tests send to worker processes.

They live in a module of their own (not in a test file) so that a spawned worker, or a Ray
worker, imports them by name without running a test module.
"""

from __future__ import annotations

import os
import random
import time

#: times a :class:`CountingContext` was unpickled in this process
UNPICKLED = 0


class CountingContext:
    """A context that counts its unpickling in the receiving process (``UNPICKLED``)."""

    def __init__(self, seed: int, payload: bytes = b""):
        self.seed = seed
        self.payload = payload

    def __getstate__(self):
        return {"seed": self.seed, "payload": self.payload}

    def __setstate__(self, state):
        global UNPICKLED
        UNPICKLED += 1
        self.__dict__.update(state)


def seeded_value(context: CountingContext, item: int) -> tuple[int, float, str]:
    """A value fixed by (seed, item): floats and strings whose bytes must match across backends."""
    rng = random.Random(context.seed * 1_000_003 + item)
    return item, rng.random() * 1e3, format(rng.getrandbits(64), "016x")


def where_and_how_often(context: CountingContext, item: int) -> tuple[int, int, int]:
    """(item, worker pid, times this worker unpickled a context so far)."""
    return item, os.getpid(), UNPICKLED


def unpickles_by_worker(rows: list[tuple[int, int, int]]) -> dict[int, set[int]]:
    """:func:`where_and_how_often`'s rows grouped: worker pid → the unpickle counts it reported."""
    per_pid: dict[int, set[int]] = {}
    for _item, pid, unpickled in rows:
        per_pid.setdefault(pid, set()).add(unpickled)
    return per_pid


def fail_on_13(context, item: int) -> int:
    """Raises ``ValueError`` with a recognisable message for item 13."""
    if item == 13:
        raise ValueError(f"candidate {item} is unlucky")
    return item


def die_on_7(context, item: int) -> int:
    """The worker process exits abruptly (as when killed or out of memory) on item 7."""
    if item == 7:
        os._exit(3)
    return item


def slow(context, item: int) -> int:
    """Sleeps ``context`` seconds (a float), returns ``item``."""
    time.sleep(context)
    return item

"""Benchmark of the search's execution backends (sncc/search/backend.py): wall time of one map of
N items of about 1 ms of CPU each (the search screen's cost per candidate, issue 12), inline
against the local process pool and, when Ray is installed, a local Ray instance.

Usage: ``python bench/bench_backend.py [--items 8712] [--workers 2] [--item-ms 1.0] [--no-ray]``.
8712 is aiconfigurator's aggregated space for DeepSeek-V3 on 64 × H200 (issue 12). Prints, per
backend, the first map (pool start or ``ray.init`` included), a second map on the warm workers,
and its speed-up over inline; the context (a few MB, like a compiled plan's facts) is shipped
once per worker.
"""

from __future__ import annotations

import argparse
import time

from sncc.search.backend import LocalBackend, RayBackend, BackendUnavailable


def _work(context: tuple[int, bytes], item: int) -> int:
    """``context[0]`` rounds of integer hashing (pure Python, about ``--item-ms`` each item);
    returns a checksum of the item and the context's size."""
    loops, payload = context
    acc = item
    for k in range(loops):
        acc = (acc * 1_103_515_245 + k) & 0xFFFF_FFFF
    return acc ^ len(payload)


def _calibrate(item_ms: float) -> int:
    """Loops of :func:`_work` that take ``item_ms`` milliseconds here."""
    probe = 50_000
    t = time.perf_counter()
    _work((probe, b""), 0)
    return max(1, int(item_ms / 1e3 / ((time.perf_counter() - t) / probe)))


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=8712)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--item-ms", type=float, default=1.0)
    ap.add_argument("--context-mb", type=float, default=4.0)
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args()
    context = (_calibrate(args.item_ms), b"\0" * int(args.context_mb * 2**20))
    items = list(range(args.items))

    with LocalBackend(workers=1) as inline:
        t_inline, expected = _timed(lambda: inline.map(_work, items, context=context))
    print(f"{args.items} items × {args.item_ms} ms, context {args.context_mb} MB, {args.workers} workers")
    print(f"  inline            {t_inline:7.2f} s")

    rows = [("local", lambda: LocalBackend(workers=args.workers))]
    if not args.no_ray:
        rows.append(("ray", lambda: RayBackend(workers=args.workers)))
    for name, make in rows:
        try:
            t_start, backend = _timed(make)
        except BackendUnavailable as err:
            print(f"  {name:<6} skipped: {err}")
            continue
        with backend:
            t_first, got = _timed(lambda: backend.map(_work, items, context=context))
            t_warm, got2 = _timed(lambda: backend.map(_work, items, context=context))
        same = "same results" if got == expected == got2 else "RESULTS DIFFER"
        print(f"  {name:<6} start {t_start:5.2f} s, first map {t_first:6.2f} s, warm map {t_warm:6.2f} s "
              f"({t_inline / t_warm:4.2f}× inline), {same}")


if __name__ == "__main__":
    main()

"""sncc.search.backend's Ray backend against a real local Ray instance (``ray.init``, 2 CPUs).

Skipped when Ray is absent, unless ``SNCC_REQUIRE_RAY=1`` (set by ``.ci/run``), which makes a
missing Ray a failure: CI must run this file, not skip it.
"""

from __future__ import annotations

import os
import pickle
import time

import pytest

import backend_workers as bw

if os.environ.get("SNCC_REQUIRE_RAY") == "1":
    import ray   # noqa: F401  (a missing Ray fails here, in CI)
else:
    ray = pytest.importorskip("ray")

from sncc.search.backend import LocalBackend, RayBackend, get_backend   # noqa: E402

ITEMS = list(range(300))


@pytest.fixture(scope="module")
def ray_backend():
    """A RayBackend that starts its own local Ray (2 CPUs) and, closed, shuts it down."""
    if ray.is_initialized():
        ray.shutdown()
    # the test helpers live in tests/search/; Ray's local workers inherit this environment
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(bw.__file__), saved) if p)
    try:
        backend = get_backend("ray", workers=2)
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved
    assert ray.is_initialized() and ray.cluster_resources().get("CPU") == 2
    yield backend
    backend.close()
    assert not ray.is_initialized(), "close() left running the Ray instance the backend started"


def test_same_bytes_as_the_local_backend(ray_backend):
    ctx = bw.CountingContext(seed=2026)
    with LocalBackend(workers=2) as local:
        expected = local.map(bw.seeded_value, ITEMS, context=ctx)
    got = ray_backend.map(bw.seeded_value, ITEMS, context=ctx, chunksize=9)
    assert pickle.dumps(got) == pickle.dumps(expected)
    assert [row[0] for row in got] == ITEMS


def test_context_unpickled_once_per_ray_worker(ray_backend):
    ctx = bw.CountingContext(seed=5, payload=b"y" * 100_000)
    rows = ray_backend.map(bw.where_and_how_often, ITEMS, context=ctx, chunksize=10)   # 30 tasks
    per_pid = bw.unpickles_by_worker(rows)
    assert os.getpid() not in per_pid
    # a worker's count is its total over this module's calls; within one call it never grows
    assert all(len(counts) == 1 for counts in per_pid.values()), per_pid


def test_progress_and_error_propagation(ray_backend):
    calls = []
    ray_backend.map(bw.seeded_value, ITEMS, context=bw.CountingContext(0), chunksize=50,
                    on_progress=lambda done, total: calls.append((done, total)))
    assert [d for d, _t in calls] == [50, 100, 150, 200, 250, 300]
    got = []
    with pytest.raises(ValueError, match="candidate 13 is unlucky"):
        for v in ray_backend.imap(bw.fail_on_13, ITEMS, chunksize=4):
            got.append(v)
    assert got == list(range(12))


def test_keyboard_interrupt_cancels_the_pending_tasks(ray_backend):
    t0 = time.monotonic()

    def stop(done, total):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        ray_backend.map(bw.slow, range(200), context=0.05, chunksize=2, on_progress=stop)
    assert time.monotonic() - t0 < 10, "200 × 50 ms items ran to the end instead of stopping"
    # the instance is still usable afterwards
    assert ray_backend.map(bw.fail_on_13, [1, 2, 3]) == [1, 2, 3]


def test_a_backend_that_did_not_start_ray_leaves_it_running(ray_backend):
    joined = RayBackend()   # Ray is up: this one uses the running instance as it is
    assert joined.workers == 2
    assert joined.map(bw.seeded_value, ITEMS[:20], context=bw.CountingContext(1)) == \
        ray_backend.map(bw.seeded_value, ITEMS[:20], context=bw.CountingContext(1))
    joined.close()
    assert ray.is_initialized()

"""`CaptureGrid` answers arithmetically (contains, next size >= n, largest <= n, the sizes up
to n as a lazy sequence): `max_num_seqs = 9007199254740991` once grew `check` past 24 GB,
`100000001` took 6 s and 1.5 GB. Counts also have an upper bound the engines accept (int32
batch metadata): a diagnostic, not a loop."""

from __future__ import annotations

import bisect
import tracemalloc

import pytest

from sncc.catalog import CaptureGrid
from tests_helpers import compile_plan

GRID = CaptureGrid(engine="vllm", fixed=(1, 2, 4), step=8, status="R", source=("test",))


def test_queries_match_the_materialised_grid():
    n = 300
    full = sorted({1, 2, 4} | set(range(8, n + 1, 8)))
    sizes = GRID.sizes_up_to(n)
    assert list(sizes) == full and len(sizes) == len(full) and sizes[-1] == full[-1] and sizes[3] == 8
    for k in range(0, n + 20):
        assert GRID.contains(k) == (k in full or (k > 0 and k % 8 == 0)), k
        assert GRID.next_at_least(k) == min(x for x in full + [304, 312, 320] if x >= k), k
        below = [x for x in full + [304, 312, 320] if x <= k]
        assert GRID.largest_at_most(k) == (below[-1] if below else None), k
        assert (k in sizes) == (k in full)
    assert bisect.bisect_left(sizes, 17) == full.index(24)


def test_huge_counts_cost_no_memory():
    tracemalloc.start()
    try:
        sizes = GRID.sizes_up_to(9007199254740991)
        assert len(sizes) == 9007199254740991 // 8 + 3
        assert sizes[-1] == 9007199254740984 and 9007199254740984 in sizes
        assert GRID.next_at_least(10**8 + 1) == 10**8 + 8
        assert GRID.largest_at_most(10**8 + 1) == 10**8
        GRID.sizes_up_to(10**7)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak


BASE = '''plan "m" {
  model "qwen3-32b" {}
  hardware { system = "hgx-h100"  nodes = 1 }
  engine "vllm" {}
  serve { devices = 8  tp = 8  SERVE }
  SPEC
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''


@pytest.mark.parametrize("serve,spec,key", [
    ("max_num_seqs = 9007199254740991", "", "max_num_seqs"),
    ("max_num_seqs = 100000001  max_num_batched_tokens = 100000001", "", None),
    ("", "speculative { method = ngram  draft_tokens = 4294967296  acceptance = 0.5 }", "draft_tokens"),
])
def test_huge_counts_are_diagnostics(serve, spec, key):
    tracemalloc.start()
    try:
        diags = compile_plan(BASE.replace("SERVE", serve).replace("SPEC", spec)).diagnostics
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200_000_000, peak
    assert "SN9001" not in {d.code.code for d in diags}
    if key:
        hit = [d for d in diags if d.code.code == "SN2009" and key in d.message]
        assert hit, [(d.code.code, d.message) for d in diags]


def test_grid_sizes_compare_equal_to_the_same_sizes():
    """The simulator compares its gears (a tuple) with the grid: equality is by value."""
    from sncc import catalog

    grid = catalog.capture_grid("vllm")
    sizes = grid.sizes_up_to(12)
    assert sizes == tuple(sizes) and sizes == list(sizes)
    assert tuple(sizes) == sizes
    assert sizes != tuple(sizes)[:-1] and sizes != "abc"

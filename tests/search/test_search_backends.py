"""The same search on every backend gives the same document (issue 12: Ray and local processes,
byte for byte for the same seed).  Runs when the backends module (sncc.search.backend) and, for
Ray, the `ray` extra are installed; the Ray run is a real local `ray.init()`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from expect import compile_text
from sncc.search.report import document
from sncc.search.run import search

SMALL = (Path(__file__).parent / "small_space.sn").read_text()
TINY = {"mode": "aggregated", "tp": [2, 4], "dp": [1], "max_num_seqs": [32, 64], "top": 2}


def _doc(backend) -> str:
    comp = compile_text(SMALL, "small.sn")
    d = document(search(comp.plan, comp.facts, overrides=TINY, backend=backend), "small")
    for s in d["stages"]:
        s["seconds"] = 0
    return json.dumps(d, sort_keys=True)


@pytest.mark.parametrize("name", ["local", "ray"])
def test_backends_rank_as_the_inline_search(name):
    import os

    from sncc.search import backend as backend_mod

    if name == "ray" and os.environ.get("SNCC_REQUIRE_RAY") != "1":   # .ci/run sets it: CI never skips
        pytest.importorskip("ray")
    inline = _doc(None)
    with backend_mod.get_backend(name, workers=2) as bk:
        assert _doc(bk) == inline

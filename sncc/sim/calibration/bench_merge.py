"""Merge the result files of several ``vllm bench serve`` clients into one measurement.

An aggregated plan with several API servers and no router (a release without a DP load balancer)
gets one benchmark client per server, each with its share of the workload (``bench.sh``), each
writing its own ``--save-result`` file.  :func:`merge` turns those files into the one result
dict the single-client path reads, with the keys of vLLM's ``vllm/benchmarks/serve.py`` result
(0.11.0 and 0.23.0 wheels: ``completed``, ``failed`` (0.23.0), ``duration`` [s],
``total_input_tokens``, ``total_output_tokens``, ``request_throughput`` [req/s],
``output_throughput`` / ``total_token_throughput`` [tok/s], ``mean_/median_/std_/p<N>_<metric>_ms``
for ``ttft``, ``tpot``, ``itl``, ``e2el``; ``max_concurrency``, ``request_rate``).

How each figure merges:

* counts and token totals: summed; ``duration``: the longest client (they run side by side);
* throughputs: summed (the clients run at once; exact while their durations agree, so the
  merge says so when they differ by more than :data:`DURATION_SPREAD`);
* ``max_concurrency`` and ``request_rate``: summed (the whole run's load, as the plan states it);
* means: weighted by the requests each mean is over (``completed``; ITL by output tokens after
  the first).  Exact for TTFT and E2EL; for TPOT exact when every request produced more than one
  token (vLLM averages TPOT over those only), so it is listed as approximate;
* median, std and percentiles: pooled from the per-request arrays (``ttfts``, ``itls``,
  ``output_lens``, ``errors``) when every file has them (``--save-detailed``), with numpy's
  default (linear) percentile, as vLLM computes them: per request ``e2el = ttft + sum(itl)`` and
  ``tpot = sum(itl) / (output_len - 1)`` (``lib/endpoint_request_func.py``: the latency is the
  last token's timestamp, the ITLs the gaps after the first).  Without the arrays they cannot be
  pooled: they are left out and named in the result's ``approximate`` list.

The merged dict carries ``sncc_merged`` (the files) and ``sncc_approximate`` (one line per figure
that is not exact).  Pure functions of parsed JSON; no I/O.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence

#: relative spread of the clients' durations above which summed throughputs are flagged approximate
DURATION_SPREAD = 0.05
_SUMMED = ("completed", "failed", "total_input_tokens", "total_output_tokens", "request_throughput",
           "request_goodput", "output_throughput", "total_token_throughput", "max_concurrency", "request_rate")
_METRICS = ("ttft", "tpot", "itl", "e2el")
_ARRAYS = ("ttfts", "itls", "output_lens", "errors")


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def percentile(xs: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0..100) of ``xs`` with linear interpolation between closest ranks
    (numpy's default ``method="linear"``, which vLLM's ``np.percentile`` uses); 0 for no values."""
    if not xs:
        return 0.0
    s = sorted(xs)
    k = (len(s) - 1) * p / 100.0
    lo = math.floor(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _std(xs: Sequence[float]) -> float:
    if not xs:
        return 0.0
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))     # population std, as np.std


def _samples(docs: Sequence[Dict[str, Any]]) -> Optional[Dict[str, List[float]]]:
    """Per-request samples [s] of every metric pooled over ``docs``, or None when a file lacks
    the per-request arrays or they disagree in length."""
    out: Dict[str, List[float]] = {m: [] for m in _METRICS}
    for d in docs:
        arr = [d.get(k) for k in _ARRAYS]
        if not all(isinstance(a, list) for a in arr) or len({len(a) for a in arr}) != 1:
            return None
        for ttft, itl, n, err in zip(*arr):
            if err or not _num(ttft) or not isinstance(itl, list) or not all(_num(x) for x in itl) or not _num(n):
                continue                      # a failed request: vLLM leaves it out of every metric
            out["ttft"].append(ttft)
            out["itl"].extend(itl)
            out["e2el"].append(ttft + sum(itl))
            if n > 1:
                out["tpot"].append(sum(itl) / (n - 1))
    return out


def _percentiles_of(docs: Sequence[Dict[str, Any]], metric: str) -> List[str]:
    """The percentile words (``99``, ``99.9``) the clients report for ``metric``."""
    pre, post = "p", f"_{metric}_ms"
    keys = [k[len(pre):-len(post)] for k in docs[0] if k.startswith(pre) and k.endswith(post)]
    return [w for w in keys if all(f"{pre}{w}{post}" in d for d in docs)]


def merge(docs: Sequence[Dict[str, Any]], names: Sequence[str]) -> Dict[str, Any]:
    """One ``--save-result`` dict from the result dicts ``docs`` of clients ``names`` (file names,
    for the notes), as the module docstring says.  ``docs`` has at least two dicts; values that
    are not finite numbers are left out of sums and means (the reader validates what it uses)."""
    merged: Dict[str, Any] = {}
    approx: List[str] = []
    for k in _SUMMED:
        vals = [d.get(k) for d in docs]
        if all(_num(v) for v in vals):
            merged[k] = sum(vals)
    durs = [d.get("duration") for d in docs]
    if all(_num(v) and v > 0 for v in durs):
        merged["duration"] = max(durs)
        spread = (max(durs) - min(durs)) / max(durs)
        if spread > DURATION_SPREAD:
            approx.append(f"request_throughput and output_throughput: the sum of the clients' throughputs, "
                          f"whose durations differ by {spread:.0%} ({min(durs):.1f}-{max(durs):.1f} s)")
    weights = [d.get("completed") if _num(d.get("completed")) else 0 for d in docs]
    samples = _samples(docs)
    for m in _METRICS:
        key = f"mean_{m}_ms"
        vals = [d.get(key) for d in docs]
        if samples is not None and samples[m]:
            xs = [x * 1000.0 for x in samples[m]]
            merged[key] = sum(xs) / len(xs)
            merged[f"median_{m}_ms"] = percentile(xs, 50)
            merged[f"std_{m}_ms"] = _std(xs)
            for w in _percentiles_of(docs, m):
                merged[f"p{w}_{m}_ms"] = percentile(xs, float(w))
            continue
        if all(_num(v) for v in vals) and sum(weights) > 0:
            if m == "itl":
                w = [max(0, (d.get("total_output_tokens") or 0) - (d.get("completed") or 0)) for d in docs]
                w = w if sum(w) > 0 else weights
            else:
                w = weights
            merged[key] = sum(v * x for v, x in zip(vals, w)) / sum(w)
            if m == "tpot":
                approx.append("mean_tpot_ms: the clients' means weighted by completed requests (exact when "
                              "every request produced more than one token)")
            elif m == "itl":
                approx.append("mean_itl_ms: the clients' means weighted by their output tokens after the first")
        if any(f"{s}_{m}_ms" in d for d in docs for s in ("median", "std")) or _percentiles_of(docs, m):
            approx.append(f"median, std and percentiles of {m}: not merged (the result files lack the "
                          "per-request arrays `vllm bench serve --save-detailed` writes)")
    merged["sncc_merged"] = list(names)
    merged["sncc_approximate"] = approx
    return merged

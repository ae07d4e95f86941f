"""Request-length sampling (deterministic per seed, ``random.Random`` only).

``lognormal``: sigma from a coefficient of variation ``cv`` (the LengthDist's
own, else the profile's ``workload.lognormal_cv_<input|output>``):
``sigma^2 = ln(1 + cv^2)``.  Draws are **clamped** at ``max`` (for outputs this
is exactly what the client's ``max_tokens`` does to a generation) and at
``min``; ``mu`` is solved by bisection so that the *clamped* mean equals the
requested mean:
``E[min(X,M)] = e^(mu+s^2/2) Phi((ln M - mu - s^2)/s) + M (1 - Phi((ln M - mu)/s))``.
``uniform``: integers in ``[max(min, 2*mean - max), max]``.  ``fixed``: ``mean``.

Degenerate distributions never raise: when no spread can keep the requested mean
(``mean >= max``, ``mean <= min``, or an empty uniform range) every draw is the one length
the bounds allow, ``clamp(round(mean), min, max)`` — e.g. a fixed-length benchmark written
``input { mean = 2k  max = 2k }`` with the default ``dist = lognormal``.  ``sncc check``
reports ``mean > max`` and ``mean < min`` as plan errors; the sampler only has to stay total.
"""
from __future__ import annotations

import math
import random
from typing import Any, List, Optional


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def clamped_lognormal_mu(mean: float, sigma: float, cap: Optional[float]) -> float:
    """mu such that E[min(LogNormal(mu, sigma), cap)] == mean.

    Raises ValueError when ``mean >= cap`` (no clamped lognormal has that mean;
    :func:`sample_lengths` samples the fixed length instead of calling this)."""
    if not cap or sigma <= 0:
        return math.log(mean) - sigma * sigma / 2.0
    if mean >= cap:
        raise ValueError(f"lognormal mean {mean} must be below its max {cap}")
    lc = math.log(cap)

    def m(mu: float) -> float:
        return (math.exp(mu + sigma * sigma / 2) * _phi((lc - mu - sigma * sigma) / sigma)
                + cap * (1.0 - _phi((lc - mu) / sigma)))

    lo, hi = math.log(mean) - 10 * sigma - 5, math.log(cap) + 5
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if m(mid) < mean:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def sample_lengths(dist: Any, n: int, rng: random.Random, default_cv: float) -> List[int]:
    """``n`` integer lengths [tokens] drawn from LengthDist ``dist``."""
    kind = dist.kind
    if kind not in ("fixed", "uniform", "lognormal"):
        raise ValueError(f"unknown length distribution kind {kind!r}")
    lo = max(1, int(dist.min or 1))
    cap = dist.max
    # the one length the bounds allow when there is no room for a spread (module docstring)
    pinned = max(lo, int(round(dist.mean)))
    if cap:
        pinned = min(pinned, int(cap))
    if kind == "fixed" or dist.mean <= lo or (cap and dist.mean >= cap):
        return [pinned] * n
    if kind == "uniform":
        hi = int(cap if cap else 2 * dist.mean - lo)
        a = max(lo, int(round(2 * dist.mean - hi)))
        if a >= hi:
            return [pinned] * n
        return [rng.randint(a, hi) for _ in range(n)]
    if kind == "lognormal":
        cv = dist.cv if dist.cv is not None else default_cv
        if cv <= 0:
            return [pinned] * n
        sigma = math.sqrt(math.log(1.0 + cv * cv))
        mu = clamped_lognormal_mu(float(dist.mean), sigma, cap)
        out = []
        top = cap if cap else float("inf")
        for _ in range(n):
            x = math.exp(rng.gauss(mu, sigma))
            x = min(top, max(lo, x))
            out.append(int(round(x)))
        return out
    raise ValueError(f"unknown length distribution kind {kind!r}")

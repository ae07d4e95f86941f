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


#: offset of the acceptance stream from the workload seed, so that drawing acceptances leaves the
#: length draws (and every earlier result) unchanged
ACCEPTANCE_SEED_OFFSET = 104_729


def request_tokens_per_step(mtp: Optional[tuple], n: int, logit_sd: float, seed: int) -> List[float]:
    """Per-request output tokens per decode step [tokens], ``n`` values.

    Speculative acceptance is a property of the text, so it differs from request to request
    (EAGLE-style drafts are accepted more on some prompts than on others).  Request ``i``'s
    per-draft acceptance is ``α_i = σ(logit(α) + s · z_i)`` (logit-normal: the plan's ``α`` is the
    median request's, ``s`` = ``logit_sd``, the profile's ``workload.acceptance_logit_sd``), and it
    gains :func:`sncc.facts.speculative.expected_tokens` (α_i, k) tokens per step.

    ``z_i`` are stratified standard normal quantiles, ``Φ⁻¹((j + 0.5) / n)`` with ``j`` a
    permutation of ``0 .. n-1`` drawn by ``random.Random(seed + ACCEPTANCE_SEED_OFFSET)``: any
    ``n`` requests hold the whole spread (a short run is not luckier or unluckier than a long one),
    the seed decides which request gets which quantile, and the values move smoothly with ``s``
    (the calibration fit differentiates through them).  With an odd ``n`` one request gets the median.

    ``mtp`` is ``(k drafts, α)`` or None (no speculative decoding: 1.0 each).  ``α`` of 0 or 1, or
    ``s <= 0``, gives every request the same E(α, k).  Raises ValueError from ``expected_tokens``
    for α outside [0, 1].
    """
    from statistics import NormalDist

    from sncc.facts.speculative import expected_tokens
    if not mtp:
        return [1.0] * n
    k, a = int(mtp[0]), float(mtp[1])
    if logit_sd <= 0 or a <= 0.0 or a >= 1.0 or k <= 0 or n <= 0:
        return [expected_tokens(a, k)] * n
    order = list(range(n))
    random.Random(seed + ACCEPTANCE_SEED_OFFSET).shuffle(order)
    inv = NormalDist().inv_cdf
    centre = math.log(a / (1.0 - a))
    return [expected_tokens(1.0 / (1.0 + math.exp(-(centre + logit_sd * inv((j + 0.5) / n)))), k) for j in order]


def mean_request_tokens_per_step(per_request: Optional[List[float]], default: float) -> float:
    """Tokens per decode step [tokens] that stand for the mean request of ``per_request`` (from
    :func:`request_tokens_per_step`): their harmonic mean, since the mean request decodes
    ``(output - 1) x mean(1 / tps_i)`` steps; ``default`` (the model's E(α, k)) when there are none."""
    if not per_request:
        return default
    return len(per_request) / sum(1.0 / t for t in per_request)

"""The speculative-decoding acceptance formula, in one place (checks and simulator read it).

Expected tokens a sequence gains per verification step with ``k`` drafts of per-token
acceptance ``α`` (each draft accepted given the previous one was)::

    E = 1 + α + α² + … + α^k = (1 − α^(k+1)) / (1 − α)        (E = k + 1 when α = 1)

Leviathan et al. 2023, "Fast Inference from Transformers via Speculative Decoding", eq. 1.
k = 1 gives 1 + α (CloudMatrix-Infer's MTP1 at 70 % acceptance: 1.7 tokens per step).
"""

from __future__ import annotations


def expected_tokens(acceptance: float, draft_tokens: int) -> float:
    """Expected tokens per verification step [tokens] (see the module docstring).

    Raises ValueError for ``acceptance`` outside [0, 1] or negative ``draft_tokens``.
    """
    a, k = float(acceptance), int(draft_tokens)
    if not 0.0 <= a <= 1.0 or k < 0:
        raise ValueError(f"acceptance {a} must be in [0, 1] and draft tokens {k} >= 0")
    if a >= 1.0:
        return float(k + 1)
    return (1.0 - a ** (k + 1)) / (1.0 - a)

"""Intervals from leave-one-out residuals, by metric family and regime, with a nearest-point note.

The shipped profile records, for every calibration point, its leave-one-out residual
``r = predicted / measured - 1`` per metric family (``ttft``, ``tpot``, ``throughput``) and the
point's :class:`PlanFeatures`.  For a new plan:

1. **Regime.** The residuals of the same family whose points share the plan's regime —
   aggregated or disaggregated, dense or MoE, Ascend or NVIDIA — are used; when fewer than
   :data:`MIN_POINTS` match, the least telling dimension is dropped (dense/MoE first, then
   aggregated/disaggregated, then the vendor), so the interval always rests on enough points.
   A family with fewer than :data:`MIN_POINTS` residuals in all (TTFT: one prefill point) takes
   every family's, by the same regime steps, and the note says so.
2. **Coverage.** Split-conformal prediction (Vovk, Gammerman & Shafer, *Algorithmic Learning in a
   Random World*, 2005; Lei et al., "Distribution-free predictive inference for regression", JASA
   2018): the score of a residual is its size in log space, ``s = |ln(1 + r)|``; with ``n`` scores
   the interval of the truth is ``[x e^-q, x e^q]`` with ``q`` the ``ceil((n + 1) 0.8)``-th
   smallest score (the largest when that rank exceeds ``n``).  Under exchangeability it covers
   at least 80 % of new points; symmetric because the model's residuals are biased per source
   family, with either sign, so a regime's few residuals do not tell the sign of the next one
   (the asymmetric 10th/90th-percentile rule covered 24 of 42 leave-one-out records, this one 35).
3. **Distance.** A plan far from every calibration point gets a wider interval: its distance to
   the nearest point (:func:`distance`) over the typical nearest-neighbour distance of the
   calibration points themselves (``typical``, stored with the profile) scales the residuals,
   ``r -> r x max(1, d / typical)``, and the note names the nearest point.

Policy constants (this tool's choices, written down): :data:`MIN_POINTS` = 6 residuals before a
regime stands on its own; the feature weights in :func:`distance` (one unit = a factor of two in a
size, or one differing category).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

#: residuals a regime needs before its own are used (fewer: a coarser regime)
MIN_POINTS = 6
#: the coverage of the shipped intervals
COVERAGE = 0.8
#: regime dimensions, dropped from the last when a regime has too few residuals
REGIME_DIMS = ("vendor", "disaggregated", "moe")


@dataclass(frozen=True)
class PlanFeatures:
    """What makes one deployment like another, for regimes and distances.

    ``vendor`` ``ascend`` / ``nvidia``; ``disaggregated``; ``moe``; ``active_params_b`` (billions
    of parameters per token); ``devices`` (all devices of the deployment); ``input_tokens`` and
    ``output_tokens`` (means); ``batch_per_device`` (decode sequences per device at full load);
    ``weight_bits`` (routed experts, or every linear of a dense model); ``speculative``."""

    vendor: str
    disaggregated: bool
    moe: bool
    active_params_b: float
    devices: int
    input_tokens: float
    output_tokens: float
    batch_per_device: float
    weight_bits: float
    speculative: bool

    def regime(self) -> Dict[str, Any]:
        """The regime: ``vendor``, ``disaggregated``, ``moe``."""
        return {"vendor": self.vendor, "disaggregated": self.disaggregated, "moe": self.moe}

    def to_dict(self) -> Dict[str, Any]:
        """JSON/TOML-ready dict."""
        return asdict(self)


def _log2(x: float) -> float:
    return math.log2(max(1e-9, float(x)))


def distance(a: PlanFeatures, b: PlanFeatures) -> float:
    """Distance between two deployments: Euclidean over log2 sizes (active parameters, devices,
    input, output, batch per device + 1), weight bits / 4, and 1 per differing category
    (aggregated/disaggregated, dense/MoE, speculative decoding) and 2 for another vendor."""
    d2 = sum((_log2(x) - _log2(y)) ** 2 for x, y in (
        (a.active_params_b, b.active_params_b), (a.devices, b.devices), (a.input_tokens, b.input_tokens),
        (a.output_tokens, b.output_tokens), (a.batch_per_device + 1, b.batch_per_device + 1)))
    d2 += ((a.weight_bits - b.weight_bits) / 4.0) ** 2
    d2 += float(a.disaggregated != b.disaggregated) + float(a.moe != b.moe) + 0.25 * float(a.speculative != b.speculative)
    d2 += 4.0 * float(a.vendor != b.vendor)
    return math.sqrt(d2)


def plan_features(spec: Any) -> PlanFeatures:
    """:class:`PlanFeatures` of a :class:`~sncc.sim.spec.SimSpec` (``spec.plan_features`` when set)."""
    if getattr(spec, "plan_features", None) is not None:
        return spec.plan_features
    from sncc.cost.inputs import weight_bytes
    from sncc.cost.model_shape import model_shape

    sh = model_shape(spec.model)
    active = sh.active_params_per_token() / 1e9
    roles = dict(spec.roles) if not isinstance(spec.roles, dict) else spec.roles
    dec = roles.get("decode") or roles.get("serve")
    devices = sum(r.instances * r.devices for r in roles.values())
    wl = spec.workload
    slots = dec.instances * dec.dp * dec.max_num_seqs
    load = wl.concurrency if wl.concurrency else slots
    batch = min(load, slots) / max(1, dec.instances * dec.devices)
    vendor = "ascend" if str(getattr(spec.chip, "vendor", "")).lower() in ("huawei", "ascend") else "nvidia"
    return PlanFeatures(
        vendor=vendor, disaggregated=spec.disaggregated,
        moe=bool(sh.n_experts), active_params_b=round(active, 3), devices=int(devices),
        input_tokens=float(wl.input.mean), output_tokens=float(wl.output.mean),
        batch_per_device=round(float(batch), 3), weight_bits=8.0 * weight_bytes(spec)["routed_experts" if sh.n_experts else "attention"],
        speculative=spec.features.mtp is not None)


def scenario_features(scn: Dict[str, Any]) -> PlanFeatures:
    """:class:`PlanFeatures` of a CloudMatrix-Infer scenario (DeepSeek-R1 INT8 on CloudMatrix384:
    decode EP320 with MTP, or a 16-NPU prefill instance; domain-facts §6.1)."""
    if scn["scenario"] == "cloudmatrix-decode":
        return PlanFeatures("ascend", True, True, 37.5, 320, float(scn["isl"]), float(scn["osl"]),
                            scn["batch_per_npu"] / 2.0, 8.0, True)
    return PlanFeatures("ascend", True, True, 37.5, 32, 4096.0, 1.0, 0.0, 8.0, False)


def quantile(xs: Sequence[float], q: float) -> float:
    """Empirical ``q`` quantile (0..1) of ``xs`` with linear interpolation (NaN for an empty list)."""
    s = sorted(xs)
    if not s:
        return float("nan")
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def conformal_score(residuals: Sequence[float], coverage: float = COVERAGE) -> float:
    """The split-conformal half-width ``q`` in log space (module docstring, step 2) of residuals
    ``r = predicted / measured - 1``: the ``ceil((n + 1) coverage)``-th smallest ``|ln(1 + r)|``,
    the largest when that rank exceeds ``n``; 0 for no residuals.  Raises ValueError for a
    residual <= -100 % (it bounds nothing)."""
    rs = list(residuals)
    if not rs:
        return 0.0
    if min(rs) <= -1.0:
        raise ValueError("a calibration residual <= -100% cannot bound a prediction")
    scores = sorted(abs(math.log1p(r)) for r in rs)
    k = math.ceil((len(scores) + 1) * coverage)
    return scores[min(k, len(scores)) - 1]


def residual_interval(value: float, residuals: Sequence[float], coverage: float = COVERAGE) -> Tuple[float, float]:
    """The ``coverage`` interval of the truth for prediction ``value`` given residuals
    ``r = predicted / measured - 1``: ``[value e^-q, value e^q]`` with ``q`` the split-conformal
    score (:func:`conformal_score`); ``(value, value)`` without residuals.  Raises ValueError for
    a residual <= -100 %."""
    q = conformal_score(residuals, coverage)
    a, b = value * math.exp(-q), value * math.exp(q)
    return (min(a, b), max(a, b))


@dataclass
class ResidualSet:
    """Residuals chosen for one plan and family: ``values``, the regime they match (``regime``: the
    dimensions kept), ``nearest`` (id of the nearest calibration point), ``distance`` to it,
    ``scale`` (the distance widening) and ``note`` (one sentence for the report)."""

    values: List[float]
    regime: Dict[str, Any]
    nearest: Optional[str]
    distance: float
    scale: float
    note: str


def select_residuals(records: Sequence[Dict[str, Any]], family: str, feats: PlanFeatures, *,
                     typical: float, exclude_group: Optional[str] = None) -> ResidualSet:
    """The residuals of ``family`` for a plan of features ``feats`` (module docstring, steps 1 and
    3) from the profile's leave-one-out ``records`` (dicts with ``id``, ``group``, ``family``,
    ``residual``, ``features``); ``exclude_group`` leaves one fold out (coverage of the records
    themselves)."""
    others = [r for r in records if r.get("group") != exclude_group]
    want = feats.regime()
    kept = dict(want)
    chosen: List[Dict[str, Any]] = []
    families = family
    # the family's own residuals first; a family with too few of them all told (TTFT: one prefill
    # point) borrows the other families' (an error of the same model, in the same log units)
    for pool, families in (([r for r in others if r["family"] == family], family), (others, "all families")):
        for n_dims in range(len(REGIME_DIMS), -1, -1):
            dims = REGIME_DIMS[:n_dims]
            kept = {k: want[k] for k in dims}
            chosen = [r for r in pool if all(r["features"][k] == v for k, v in kept.items())]
            if len(chosen) >= MIN_POINTS:
                break
        if len(chosen) >= MIN_POINTS:
            break
    nearest, dmin = None, float("inf")
    for r in records:
        if r.get("group") == exclude_group:
            continue
        d = distance(feats, PlanFeatures(**r["features"]))
        if d < dmin:
            nearest, dmin = r["id"], d
    scale = max(1.0, dmin / typical) if typical > 0 and math.isfinite(dmin) else 1.0
    values = [max(-0.95, v * scale) if v < 0 else v * scale for v in (r["residual"] for r in chosen)]
    where = ", ".join(f"{k} {'yes' if v is True else 'no' if v is False else v}" for k, v in kept.items()) or "all points"
    if families != family:
        where += f"; {families}: too few {family} residuals"
    note = (f"{len(values)} leave-one-out residuals ({where}); nearest calibration point {nearest} "
            f"at distance {dmin:.2f}")
    if scale > 1.0:
        note += f", {scale:.1f}x the typical distance {typical:.2f}: interval widened {scale:.1f}x"
    return ResidualSet(values, kept, nearest, dmin, scale, note)


def typical_distance(features: Sequence[PlanFeatures], groups: Sequence[str]) -> float:
    """The 90th percentile of the calibration points' distances to their nearest point of another
    group: a plan within it is as close to the calibration set as its own points are."""
    ds = []
    for i, (f, g) in enumerate(zip(features, groups)):
        ds.append(min((distance(f, h) for j, (h, k) in enumerate(zip(features, groups)) if k != g),
                      default=float("inf")))
    ds = [d for d in ds if math.isfinite(d)]
    return quantile(ds, 0.9) if ds else 0.0

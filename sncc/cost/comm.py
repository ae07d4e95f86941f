"""Collective communication costs: TP all-reduce (ring alpha-beta) and MoE EP
dispatch/combine with topology- and EP-size-dependent effective bandwidth.

The EP dispatch/combine formula follows the backend the role runs
(:attr:`sncc.facts.model.RoleFacts.all2all_backend`, :func:`ep_exchange_time`): all-to-all kernels
(DeepEP, pplx, FlashInfer, or the profile's own when the engine has no choice) move each token to
its ``top_k`` experts' devices; vLLM's ``allgather_reducescatter`` (its default from 0.11.0) and
``naive`` backends are ring collectives over the whole EP group.

Formulas: simulator-modelling.md §3.6 (GenZ ring all-reduce; EP dispatch/combine
per MoE layer).  EP efficiency on A3 comes from the measured DeepEP-Ascend
bottleneck bandwidths (domain-facts §1.2, sgl-kernel-npu README), stored in the
profile under ``comm.ep_normal`` / ``comm.ep_low_latency``.
"""
from __future__ import annotations

import bisect
import math
from typing import Any, Optional, Sequence

_LEVEL_ORDER = ("die-pair", "node", "supernode", "scale-out")


def link_for_group(links: Sequence[Any], group: int, devices_per_node: int,
                   domain_devices: Optional[int] = None) -> Optional[Any]:
    """The catalog Link of the smallest topology domain holding ``group`` devices.

    die-pair for 2 devices (if the system has one), node for <= devices_per_node,
    supernode when the system has a scale-up domain beyond the node, else scale-out.
    """
    by = {getattr(l, "level", None): l for l in links}
    if group <= 2 and "die-pair" in by:
        return by["die-pair"]
    if group <= devices_per_node and "node" in by:
        return by["node"]
    if "supernode" in by and (domain_devices is None or group <= domain_devices):
        return by["supernode"]
    for lv in ("scale-out", "supernode", "node"):
        if lv in by:
            return by[lv]
    return None


def link_bw_lat(link: Any, default_bw: float = 50e9) -> tuple:
    """(bandwidth [B/s per device per direction], latency [s]) of a Link (None-safe)."""
    if link is None:
        return default_bw, 5e-6
    lat = getattr(link, "latency", None)
    return float(getattr(link, "bandwidth", default_bw) or default_bw), float(lat if lat is not None else 2e-6)


def allreduce_time(msg_bytes: float, n: int, bw: float, hop_lat: float, alpha: float,
                   eta: float) -> float:
    """Ring all-reduce [s]: ``alpha + 2(n-1)*hop_lat + 2(n-1)/n * M/(BW*eta)``."""
    if n <= 1 or msg_bytes <= 0:
        return 0.0
    return alpha + 2 * (n - 1) * hop_lat + 2.0 * (n - 1) / n * msg_bytes / (bw * eta)


def allgather_time(msg_bytes: float, n: int, bw: float, hop_lat: float, alpha: float,
                   eta: float) -> float:
    """Ring all-gather of a ``msg_bytes`` result [s]: ``alpha + (n-1)*hop_lat + (n-1)/n * M/(BW*eta)``
    (half of :func:`allreduce_time`'s steps: no reduce-scatter phase)."""
    if n <= 1 or msg_bytes <= 0:
        return 0.0
    return alpha + (n - 1) * hop_lat + (n - 1) / n * msg_bytes / (bw * eta)


def _interp_log(xs: Sequence[float], ys: Sequence[float], x: float) -> float:
    """Piecewise-linear interpolation in log2(x); held constant outside the table."""
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    i = bisect.bisect_right(xs, x)
    x0, x1 = math.log2(xs[i - 1]), math.log2(xs[i])
    f = (math.log2(x) - x0) / (x1 - x0)
    return ys[i - 1] + f * (ys[i] - ys[i - 1])


def ep_bandwidths(profile: Any, mode: str, ep: int, link_bw: float, alpha: float = 0.0,
                  spans_nodes: bool = False) -> tuple:
    """Effective (dispatch, combine) bandwidth [B/s] per device for EP size ``ep``.

    ``mode`` is ``normal`` (prefill) or ``low_latency`` (decode).  Uses the profile table
    ``comm.ep_<mode>`` (ep list, dispatch/combine GB/s) when present, else
    ``comm.ep_link_efficiency`` x link bandwidth.  Beyond the table the last entry is held
    (AIC's rule: hold util at the boundary), and the result never exceeds the link bandwidth.

    A table that also gives the measured latencies (``dispatch_us``/``combine_us`` at
    ``tokens`` tokens per rank of a model of ``hidden`` and ``top_k``, with ``dispatch_bytes``
    and ``combine_bytes`` per element: DeepEP-Ascend's low-latency kernels, domain-facts §1.2)
    pins :func:`ep_layer_time` to them: the bandwidth is the measured point's bytes over its
    latency less the fixed part ``alpha`` (the profile's ``comm.ep_alpha_<mode>_s``), so the
    fitted split between the fixed and the per-token part keeps the measured latency.

    A table marked ``spans_nodes = true`` was measured with the EP group spread over nodes, on
    the scale-out NIC (DeepEP's internode tables, H800 + CX7 400 Gb/s): it is read only when
    ``spans_nodes`` (the group is larger than a node) and then as measured, not capped at
    ``link_bw``, since its logical bandwidths count the traffic to peers in the same node too
    (DeepEP's note); a group inside one node falls back to ``comm.ep_link_efficiency``."""
    key = f"comm.ep_{mode}"
    tab = profile.get(key) if profile.has(key) else None
    if tab is not None and tab.get("spans_nodes") and not spans_nodes:
        tab = None
    if tab is not None:
        if tab.get("spans_nodes"):
            link_bw = float("inf")
        xs = tab["ep"]
        if "dispatch_us" in tab:
            frac = (ep - 1) / ep if ep > 1 else 0.0
            per = tab["tokens"] * tab["top_k"] * tab["hidden"] * frac
            lat_d = _interp_log(xs, tab["dispatch_us"], ep) * 1e-6 - alpha
            lat_c = _interp_log(xs, tab["combine_us"], ep) * 1e-6 - alpha
            d = per * tab["dispatch_bytes"] / lat_d if lat_d > 0 else link_bw
            c = per * tab["combine_bytes"] / lat_c if lat_c > 0 else link_bw
            return min(d, link_bw), min(c, link_bw)
        d = _interp_log(xs, tab["dispatch_GBps"], ep) * 1e9
        c = _interp_log(xs, tab["combine_GBps"], ep) * 1e9
        return min(d, link_bw), min(c, link_bw)
    eff = profile.get("comm.ep_link_efficiency")
    return link_bw * eff, link_bw * eff


def ep_layer_time(tokens_per_device: float, hidden: int, top_k: int, ep: int,
                  dispatch_bytes: float, combine_bytes: float, bw_dispatch: float,
                  bw_combine: float, alpha: float) -> float:
    """Dispatch + combine time of one MoE layer [s].

    ``M = T_local * k * H * bytes * (EP-1)/EP`` for each direction (§3.6),
    ``t = 2*alpha + M_d/BW_d + M_c/BW_c``.
    """
    if ep <= 1:
        return 0.0
    frac = (ep - 1) / ep
    md = tokens_per_device * top_k * hidden * dispatch_bytes * frac
    mc = tokens_per_device * top_k * hidden * combine_bytes * frac
    return 2 * alpha + md / bw_dispatch + mc / bw_combine


#: backends that exchange the token slices with ring collectives over the EP group (vllm 0.11.0 wheel
#: ``vllm/distributed/device_communicators/all2all.py``): ``allgather_reducescatter``
#: (``AgRsAll2AllManager``: dispatch ``all_gatherv`` of every rank's tokens, combine
#: ``reduce_scatterv`` of the expert outputs) and ``naive`` (``NaiveAll2AllManager``: dispatch
#: multicasts every rank's tokens to all ranks, combine ``all_reduce``s the full outputs); the value
#: is the combine collective.  Any other backend (and None) is an all-to-all of the routed copies.
COLLECTIVE_BACKENDS = {"allgather_reducescatter": "reduce_scatter", "naive": "all_reduce"}


def ep_exchange_time(backend: Optional[str], tokens_group: float, tokens_per_device: float, hidden: int,
                     top_k: int, ep: int, dispatch_bytes: float, combine_bytes: float, *,
                     bw_dispatch: float, bw_combine: float, alpha_a2a: float, link_bw: float,
                     hop_lat: float, alpha_coll: float, eta_coll: float) -> float:
    """Dispatch + combine time of one MoE layer [s] over an EP group of ``ep`` devices, by ``backend``.

    * a collective backend (:data:`COLLECTIVE_BACKENDS`): every device gathers all ``tokens_group``
      tokens of the group (``M_d = tokens_group * hidden * dispatch_bytes``, a ring all-gather) and the
      combine reduce-scatters (or all-reduces, ``naive``) ``M_c = tokens_group * hidden * combine_bytes``
      over the EP link (``link_bw``, ``hop_lat``) at the collectives' ``alpha_coll`` and ``eta_coll``;
      balanced by construction (no expert-load imbalance); router logits are not counted;
    * otherwise :func:`ep_layer_time` of ``tokens_per_device`` (the busiest device's tokens) at the
      profile's all-to-all bandwidths ``bw_dispatch``/``bw_combine`` and fixed cost ``alpha_a2a``."""
    if ep <= 1:
        return 0.0
    combine = COLLECTIVE_BACKENDS.get(backend or "")
    if combine is None:
        return ep_layer_time(tokens_per_device, hidden, top_k, ep, dispatch_bytes, combine_bytes,
                             bw_dispatch, bw_combine, alpha_a2a)
    md = tokens_group * hidden * dispatch_bytes
    mc = tokens_group * hidden * combine_bytes
    t = allgather_time(md, ep, link_bw, hop_lat, alpha_coll, eta_coll)
    # a ring reduce-scatter has the all-gather's steps and bytes (allreduce_time = both phases)
    if combine == "reduce_scatter":
        return t + allgather_time(mc, ep, link_bw, hop_lat, alpha_coll, eta_coll)
    return t + allreduce_time(mc, ep, link_bw, hop_lat, alpha_coll, eta_coll)

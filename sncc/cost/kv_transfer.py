"""KV-cache transfer from a prefill to a decode instance (simulator-modelling.md §3.7).

``t_kv = t_setup + n_desc * t_desc + bytes/(BW * eta)`` with
``n_desc = ceil(S/block) * L`` (one descriptor per block per layer).  Exposed
time with layer-wise overlap: ``max(t_kv/L, t_kv - t_prefill*(L-1)/L)``.

Contention (§3.7 "Contention": transfers are flows on links): every transfer into one
decode instance shares that instance's ingress, ``decode devices x BW x eta`` [B/s], and
every transfer out of one prefill instance shares its egress, ``prefill devices x BW x
eta``; ``BW`` is the catalog link's per-device, per-direction rate and ``eta`` the profile's
``kv_transfer.link_efficiency``.  :class:`KvTransferModel` holds these rates; the engine
(:mod:`sncc.sim.engine.des`) keeps one FIFO channel per instance and side and finishes a transfer
at the later of its uncontended finish and the time its channels have moved every byte
queued before it plus its own (:func:`channel_finish`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass


def kv_transfer_time(tokens: float, kv_bytes_per_token: float, block_size: int, n_layers: int,
                     bw: float, eta: float, t_setup: float, t_desc: float,
                     senders: int = 1) -> float:
    """Transfer time of ``tokens`` tokens of KV [s]; ``senders`` ranks send in parallel
    (descriptors and bytes split over them)."""
    if tokens <= 0:
        return 0.0
    n_desc = math.ceil(tokens / block_size) * n_layers / max(1, senders)
    nbytes = tokens * kv_bytes_per_token / max(1, senders)
    return t_setup + n_desc * t_desc + nbytes / (bw * eta)


def kv_exposed_time(t_kv: float, t_last_prefill_step: float, n_layers: int, layerwise: bool) -> float:
    """Part of the transfer not hidden behind the prefill step [s]."""
    if not layerwise:
        return t_kv
    return max(t_kv / n_layers, t_kv - t_last_prefill_step * (n_layers - 1) / n_layers)


def kv_transfer_start(t_prefill_end: float, t_last_prefill_step: float, n_layers: int,
                      layerwise: bool) -> float:
    """When a request's first KV bytes can leave the prefill instance [s].

    Without layer-wise transfer: the end of its last prefill step.  With it: once the step's
    first layer is computed, ``t_end - t_step * (L-1)/L`` — the start the exposed-time formula
    :func:`kv_exposed_time` implies (``t_end + exposed = max(t_end + t_kv/L, start + t_kv)``)."""
    if not layerwise:
        return t_prefill_end
    return t_prefill_end - t_last_prefill_step * (n_layers - 1) / n_layers


def channel_finish(free_at: float, ready: float, nbytes: float, rate: float) -> float:
    """When a FIFO fluid channel of ``rate`` [B/s], busy until ``free_at`` [s], has moved
    ``nbytes`` [B] that became ready at ``ready`` [s]: ``max(ready, free_at) + nbytes/rate``.

    Work-conserving: a burst of transfers drains at the same time as under processor
    sharing (BLIS' ``BW_total / active transfers``); FIFO only orders who finishes first.
    Raises ZeroDivisionError for ``rate == 0``."""
    return (ready if ready > free_at else free_at) + nbytes / rate


@dataclass(frozen=True)
class KvTransferModel:
    """P->D KV transfer costs of one disaggregated deployment.

    Attributes:
        kv_bytes_per_token: all-layer KV bytes per token [B/token].
        block_size: KV block size [tokens]; n_layers: decoder layers.
        link_bw: per-device, per-direction link rate [B/s] (catalog Link of the P+D group).
        eta: ``kv_transfer.link_efficiency``; t_setup: ``kv_transfer.setup_s`` [s];
        t_desc: ``kv_transfer.per_descriptor_s`` [s]; layerwise: ``kv_transfer.layerwise``.
        senders: prefill ranks sending one request's KV in parallel (the prefill TP size).
        prefill_devices, decode_devices: devices per prefill / decode instance.
    """

    kv_bytes_per_token: float
    block_size: int
    n_layers: int
    link_bw: float
    eta: float
    t_setup: float
    t_desc: float
    layerwise: bool
    senders: int
    prefill_devices: int
    decode_devices: int

    def time(self, tokens: float) -> float:
        """Uncontended transfer time of ``tokens`` tokens [s] (:func:`kv_transfer_time`)."""
        return kv_transfer_time(tokens, self.kv_bytes_per_token, self.block_size, self.n_layers,
                                self.link_bw, self.eta, self.t_setup, self.t_desc, self.senders)

    def exposed(self, tokens: float, t_step: float) -> float:
        """Uncontended exposed time after a last prefill step of ``t_step`` [s]."""
        return kv_exposed_time(self.time(tokens), t_step, self.n_layers, self.layerwise)

    def nbytes(self, tokens: float) -> float:
        """KV bytes of ``tokens`` tokens over all layers [B]."""
        return tokens * self.kv_bytes_per_token

    def ready(self, t_prefill_end: float, t_step: float) -> float:
        """When the bytes can enter the shared channels [s]: transfer start + ``t_setup``
        (the per-request handshake comes before any byte moves)."""
        return kv_transfer_start(t_prefill_end, t_step, self.n_layers, self.layerwise) + self.t_setup

    @property
    def ingress_rate(self) -> float:
        """Shared ingress of one decode instance [B/s]: ``decode_devices * link_bw * eta``."""
        return self.decode_devices * self.link_bw * self.eta

    @property
    def egress_rate(self) -> float:
        """Shared egress of one prefill instance [B/s]: ``prefill_devices * link_bw * eta``."""
        return self.prefill_devices * self.link_bw * self.eta

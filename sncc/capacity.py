"""Per-device memory of one role: weights, KV cache, reserves, communication buffers.

sncc's one memory model: the KV-fit check (SN4004/SN4008), the simulator's KV pool
(:mod:`sncc.sim.from_plan` sizes every role's pool with :func:`role_memory`) and the TPOT lower
bound (SN7001) all read it, with one set of constants.  All sizes are bytes.

Model (simulator-modelling.md §3.9, domain-facts §3.6, §5.2)::

    weights_per_device + kv + reserve + comm_buffers <= hbm_bytes x memory_utilization

* weights: attention, dense FFN, shared experts, embedding and LM head are split over ``tp``
  (one copy per attention group); routed experts over the ``tp x ep`` devices, plus the
  redundant expert slots per device; layers over ``pp``.  Routed experts take the quantization's
  ``weight_bytes``; the other linear weights of a MoE model take its ``moe_dense_weight_bytes``
  (W4A8: INT4 experts, W8A8 elsewhere; quant.toml); embedding and LM head stay 2 bytes
  (msModelSlim keeps them BF16).
* KV per token per device: :func:`sncc.catalog.arch.kv_bytes_per_token_per_device` (+ the MTP
  layer's cache when MTP speculative decoding is on).
* reserve: engines.toml ``activation_reserve_bytes`` (3.5 GiB, AIC other_mem), or the engine's
  own row of ``data/memory.toml`` (Omni-Infer: fitted to seed 000, and said so).
* memory_utilization: the role's, else the plan's hardware value — what the build emits.
* communication buffers: Ascend, 2 x ``HCCL_BUFFSIZE`` MB per HCCL communicator (TP, EP and PP
  groups of size > 1); NVIDIA, NCCL's buffers (``data/memory.toml [nccl]``) when the device joins
  any group of size > 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

from sncc import catalog
from sncc.catalog.engine_defaults import engine_defaults

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

MB = 10**6


@lru_cache(maxsize=1)
def memory_constants() -> dict:
    """The ``data/memory.toml`` table (engine reserves, NCCL buffers), each with its source."""
    return tomllib.loads((files("sncc.catalog") / "data" / "memory.toml").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Reserve:
    """The runtime reserve of one engine per device: ``bytes``, whether it is ``fitted``, and
    ``note`` (where the number comes from, for diagnostics)."""

    bytes: int
    fitted: bool
    note: str


def engine_reserve(engine_kind: str | None, role_name: str | None = None) -> Reserve:
    """Runtime reserve per device [B] of ``role_name`` of ``engine_kind`` (``omni-infer``,
    ``vllm-ascend``, ``vllm``).

    ``data/memory.toml [reserve.<kind>]`` when the engine has a row whose ``roles`` list the role,
    else engines.toml ``activation_reserve_bytes`` (AIC other_mem 3.5 GiB)."""
    row = memory_constants().get("reserve", {}).get(engine_kind or "")
    if row and role_name not in row.get("roles", (role_name,)):
        row = None
    if row:
        fitted = "fitted" in row
        why = row.get("fitted") or row.get("source", "")
        return Reserve(int(row["bytes"]), fitted, ("fitted: " if fitted else "source: ") + why.split(":")[0].split(";")[0])
    ed = engine_defaults()
    return Reserve(int(ed["activation_reserve_bytes"]), False, "source: " + str(ed.get("activation_reserve_source", "")))


@dataclass(frozen=True)
class MemoryBreakdown:
    """Memory of one device of a role, in bytes.

    ``kv_per_seq`` is the KV of one sequence at ``context`` tokens; ``seqs`` the sequences the
    device must hold (``max_num_seqs`` of its attention group, or for a prefill role the prompts
    of one step).  ``reserve_note`` says where the reserve comes from (``fitted: ...`` when fitted);
    ``comm`` names what ``hccl`` holds (``HCCL`` or ``NCCL`` buffers, or ``""``)."""

    budget: int
    hbm: int
    utilization: float
    weights: int
    reserve: int
    hccl: int
    kv_per_token: float
    context: int
    seqs: int
    reserve_note: str = ""
    comm: str = "HCCL"

    @property
    def kv_per_seq(self) -> int:
        """KV bytes of one sequence at full context."""
        return int(self.kv_per_token * self.context)

    @property
    def kv_needed(self) -> int:
        """KV bytes for ``seqs`` sequences at full context."""
        return self.kv_per_seq * self.seqs

    @property
    def kv_budget(self) -> int:
        """Bytes left for the KV cache after weights, reserve and communication buffers."""
        return self.budget - self.weights - self.reserve - self.hccl

    @property
    def kv_tokens(self) -> int:
        """Tokens the KV budget holds per device (>= 0)."""
        return max(0, int(self.kv_budget // self.kv_per_token)) if self.kv_per_token > 0 else 0

    @property
    def seqs_that_fit(self) -> int:
        """How many full-context sequences the KV budget holds (>= 0)."""
        if self.kv_per_seq <= 0:
            return self.seqs
        return max(0, self.kv_budget // self.kv_per_seq)

    @property
    def context_that_fits(self) -> int:
        """Longest context (tokens) one sequence may reach with ``seqs`` sequences admitted."""
        if self.kv_per_token <= 0 or self.seqs <= 0:
            return self.context
        return max(0, int(self.kv_budget / (self.kv_per_token * self.seqs)))


def hccl_buffsize_mb(env: dict[str, str], moe_ep: bool = False) -> int:
    """The effective ``HCCL_BUFFSIZE`` in MB: the plan's env override, else what
    ``sncc build`` writes into ``env.sh`` — 1024 MB for MoE expert-parallel deployments
    (vllm-ascend recipes), else CANN's default 200 MB (``engines.toml``:
    ``hccl_buffsize_moe_ep_mb``, ``hccl_buffsize_default_mb``)."""
    raw = env.get("HCCL_BUFFSIZE")
    if raw is not None:
        try:
            return max(1, int(float(raw)))
        except (ValueError, OverflowError):
            pass
    key = "hccl_buffsize_moe_ep_mb" if moe_ep else "hccl_buffsize_default_mb"
    return int(engine_defaults()[key])


def plan_is_moe_ep(plan, arch) -> bool:
    """True when ``arch`` is MoE and some role spreads experts over more than one device."""
    return bool(arch is not None and arch.is_moe and any(r.tp * r.ep > 1 for _, r in plan.roles()))


def communicators(tp: int, ep: int, pp: int) -> int:
    """Number of HCCL communicators one device joins: its TP, EP and PP groups of size > 1
    (none for a single-device instance, which communicates with nobody)."""
    return int(tp > 1) + int(tp * ep > 1) + int(pp > 1)


def comm_buffer_bytes(vendor: str, tp: int, ep: int, pp: int, hccl_mb: int) -> tuple[int, str]:
    """(bytes, kind) of the communication buffers one device holds outside the KV cache.

    Ascend (``vendor == "huawei"``): ``2 x hccl_mb`` MB per HCCL communicator
    (:func:`communicators`; CANN allocates send and receive buffers of HCCL_BUFFSIZE each,
    domain-facts §7).  NVIDIA: ``data/memory.toml [nccl] bytes`` once when the device joins any
    group of size > 1.  Single-device instances hold none."""
    n = communicators(tp, ep, pp)
    if not n:
        return 0, ""
    if vendor == "huawei":
        return 2 * int(hccl_mb) * MB * n, "HCCL"
    return int(memory_constants()["nccl"]["bytes"]), "NCCL"


def weight_bytes_by_group(quant: str | None, is_moe: bool) -> tuple[float, float]:
    """(bytes per routed-expert weight, bytes per other linear weight) of ``quant``.

    Routed experts take ``weight_bytes``; for a MoE model the other linear layers take
    ``moe_dense_weight_bytes`` when the format sets it (W4A8 / W4A16 / INT4-MoE: low-bit experts
    only), else ``weight_bytes``.  A dense model takes ``weight_bytes`` everywhere.  Raises
    KeyError for an unknown ``quant``."""
    if not quant:
        return 2.0, 2.0
    q = catalog.quant(quant)
    dense = q.moe_dense_weight_bytes if (is_moe and q.moe_dense_weight_bytes) else q.weight_bytes
    return float(q.weight_bytes), float(dense)


def weights_per_device(arch, quant: str, tp: int, ep: int, pp: int, redundant_experts: int = 0,
                       mtp: bool = False, weight_bytes: float | None = None) -> int:
    """Weight bytes held by one device [B] (see the module docstring for the split).

    ``redundant_experts``: redundant routed-expert slots per device.  ``mtp`` adds the MTP
    module(s) (``param_breakdown(arch)["mtp"]``: one decoder layer plus eh_proj per
    ``num_nextn_predict_layers``) to the last pipeline stage: its routed experts spread over
    ``tp × ep``, the rest over ``tp``.  ``weight_bytes`` overrides the bytes of every linear
    weight (a test or a hand-built simulation).  Raises KeyError for an unknown ``quant``."""
    from sncc.catalog.arch import param_breakdown

    p = param_breakdown(arch)
    if weight_bytes is not None:
        wx = wd = float(weight_bytes)
    else:
        wx, wd = weight_bytes_by_group(quant, bool(p["routed_experts"]))
    emb_bytes = 2.0
    attn_group = p["attention"] + p["dense_ffn"] + p["shared_experts"]
    routed = p["routed_experts"]
    moe_layers = p["moe_layers"]
    per_expert_layer = p["routed_expert_one"]
    total = (attn_group * wd + (p["embedding"] + p["lm_head"]) * emb_bytes) / tp
    if routed:
        total += routed * wx / (tp * ep)
        total += redundant_experts * moe_layers * per_expert_layer * wx
    total /= pp
    if mtp and p["mtp"]:
        n_mtp = getattr(arch, "num_nextn_predict_layers", 0) or 0
        mtp_routed = n_mtp * (getattr(arch, "n_routed_experts", 0) or 0) * per_expert_layer if routed else 0.0
        total += (p["mtp"] - mtp_routed) * wd / tp + mtp_routed * wx / (tp * ep)
    return int(total)


def device_memory(arch, quant: str, kv_dtype: str, tp: int, ep: int, pp: int, *, hbm_bytes: int,
                  utilization: float, reserve_bytes: int, hccl_mb: int, context: int, seqs: int,
                  redundant_experts: int = 0, mtp: bool = False,
                  kv_bytes_per_token: float | None = None,
                  weight_bytes: float | None = None, vendor: str = "huawei",
                  reserve_note: str = "") -> MemoryBreakdown:
    """Memory of one device of a role — the arithmetic of the one memory model.

    ``kv_bytes_per_token`` overrides the all-layer KV bytes per token of the whole model (divided
    here like the catalog's: MLA replicated over TP, GQA split by KV heads); ``hccl_mb`` is
    HCCL_BUFFSIZE [MB] (:func:`hccl_buffsize_mb`, Ascend only); ``vendor`` picks HCCL or NCCL
    buffers (:func:`comm_buffer_bytes`).  Raises ValueError when ``tp`` does not split the KV heads
    and KeyError for an unknown KV dtype or quantization."""
    from sncc.catalog.arch import kv_bytes_per_token as _kv_all, kv_bytes_per_token_per_device

    w = weights_per_device(arch, quant, tp, ep, pp, redundant_experts if arch.is_moe else 0,
                           mtp=mtp, weight_bytes=weight_bytes)
    kv_tok = kv_bytes_per_token_per_device(arch, kv_dtype, tp, include_mtp=mtp)
    if kv_bytes_per_token is not None:
        kv_tok *= kv_bytes_per_token / _kv_all(arch, kv_dtype, include_mtp=mtp)
    kv_tok /= pp
    comm, kind = comm_buffer_bytes(vendor, tp, ep, pp, hccl_mb)
    budget = int(hbm_bytes * utilization)
    return MemoryBreakdown(budget, int(hbm_bytes), utilization, w, int(reserve_bytes), comm, kv_tok, context, seqs,
                           reserve_note, kind)


def redundant_experts_per_device(plan, arch, role) -> int:
    """Redundant routed-expert slots per device that the build deploys for ``role``.

    ``optimize { omni_placement { redundant_experts } }`` counts them per device; the build writes
    them (Omni-Infer placement, vllm-ascend EPLB) for a MoE model whose role spreads experts over
    more than one device (:mod:`sncc.lowering`: ``redundant_experts x tp x ep`` per instance), so
    the memory model and the simulator count them exactly there."""
    pl = plan.optimize.omni_placement if plan.optimize is not None else None
    if pl is None or not pl.redundant_experts or arch is None or not arch.is_moe or role.tp * role.ep <= 1:
        return 0
    return int(pl.redundant_experts)


def mtp_layers_on(plan, arch) -> bool:
    """True when the role runs MTP speculative decoding on a model with MTP layers: the MTP
    module's weights and its KV cache layer are then resident (vLLM treats it as an extra layer)."""
    sp = plan.speculative
    return bool(sp is not None and sp.method == "mtp" and arch is not None
                and (getattr(arch, "num_nextn_predict_layers", 0) or 0) > 0)


def role_memory(plan, resolved, role_name: str, role) -> MemoryBreakdown | None:
    """Memory breakdown of one device of ``role`` (None when the chip or model is unknown, the
    chip has no HBM figure, or ``tp`` does not split the KV heads).

    Decode and serve roles hold ``max_num_seqs`` sequences at ``max_model_len``; a prefill role
    holds the prompts of one step: ``max(max_num_batched_tokens, max input)`` tokens per attention
    group (vLLM applies ``max_num_batched_tokens`` per data-parallel rank).  ``kv_budget`` is the
    KV pool the simulator gives the role."""
    arch, chip = resolved.arch, resolved.chip
    if arch is None or chip is None or not getattr(chip, "hbm_bytes", None):
        return None
    util = role.memory_utilization or plan.hardware.memory_utilization
    if role_name == "prefill":
        context = max(role.max_num_batched_tokens, plan.workload.input.max)
        seqs = 1
    else:
        context = resolved.max_model_len
        seqs = role.max_num_seqs
    engine = getattr(getattr(plan, "engine", None), "kind", None)
    res = engine_reserve(engine, role_name)
    vendor = str(getattr(chip, "vendor", "")).lower()
    try:
        return device_memory(arch, resolved.quant or "bf16", resolved.kv_dtype, role.tp, role.ep, role.pp,
                             hbm_bytes=chip.hbm_bytes, utilization=util, reserve_bytes=res.bytes,
                             hccl_mb=hccl_buffsize_mb(plan.env, plan_is_moe_ep(plan, arch)),
                             context=context, seqs=seqs,
                             redundant_experts=redundant_experts_per_device(plan, arch, role),
                             mtp=mtp_layers_on(plan, arch), vendor=vendor, reserve_note=res.note)
    except (ValueError, KeyError):
        return None  # tp does not split the KV heads (SN3004) or the dtype is unknown: reported elsewhere

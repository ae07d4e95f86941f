"""Per-device memory of one role: weights, KV cache, reserves, communication buffers, and what
must fit outside the engine's budget.

sncc's one memory model: the KV-fit checks (SN4004/SN4008), the check of memory outside the
budget (SN4081) and the simulator's KV pool (:mod:`sncc.sim.from_plan` sizes every role's pool
with :func:`role_memory`) all read it, with one set of constants.  All sizes are bytes.

Model (simulator-modelling.md §3.9, domain-facts §3.6, §5.2)::

    weights_per_device + kv + reserve + comm_buffers <= hbm_bytes x memory_utilization
    outside items (runtime context, graph pool)     <= hbm_bytes x (1 - memory_utilization)

* weights (:func:`weights_per_device`): attention, dense FFN, shared experts, router, embedding
  and LM head split over ``tp`` (one copy per DP rank); routed experts and the instance's
  redundant expert slots over the ``tp x dp`` devices of a stage; layers over ``pp``.  Bytes per
  parameter come per weight group (:func:`bytes_per_param`): the checkpoint's own where the facts
  have them, else the quantization's (W4A8: INT4 experts, W8A8 elsewhere; quant.toml).
* KV per token per device: :func:`sncc.catalog.arch.kv_bytes_per_token_per_device` (+ the MTP
  layer's cache when MTP speculative decoding is on).
* reserve: engines.toml ``activation_reserve_bytes`` (3.5 GiB, AIC other_mem), or the engine's
  own row of ``data/memory.toml`` (Omni-Infer: fitted to seed 000, and said so).
* memory_utilization: the role's, else the plan's hardware value — what the build emits.
* communication buffers: Ascend, 2 x ``HCCL_BUFFSIZE`` MB per HCCL communicator (TP, EP and PP
  groups of size > 1); NVIDIA, NCCL's buffers (``data/memory.toml [nccl]``) when the device joins
  any group of size > 1.
* outside the budget (:func:`outside_budget`): the runtime context and, where the engine does
  not deduct it, the graph-capture pool (``data/memory.toml [outside]``, sourced per engine and
  vendor).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from sncc import catalog
from sncc.cache import package_toml
from sncc.catalog.engine_defaults import engine_defaults

MB = 10**6


@lru_cache(maxsize=1)
def memory_constants() -> dict:
    """The ``data/memory.toml`` table (engine reserves, NCCL buffers), each with its source."""
    return package_toml("sncc.catalog", "data/memory.toml")


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

    ``kv_per_seq`` is the KV of one sequence at ``context`` tokens plus ``state_per_seq``, the
    linear-attention state one running sequence holds on the device whatever its length (hybrid
    linear models, :func:`sncc.catalog.arch.linear_state_bytes_per_seq` over TP and PP; 0
    otherwise); ``seqs`` the sequences the
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
    outside: "OutsideBudget | None" = None
    state_per_seq: int = 0

    @property
    def outside_room(self) -> int:
        """Bytes of HBM the engine's budget leaves free: ``hbm × (1 − utilization)``."""
        return self.hbm - self.budget

    @property
    def outside_short(self) -> int:
        """Bytes by which the allocations outside the budget overflow :attr:`outside_room`
        (0 when they fit or nothing is known)."""
        return max(0, self.outside.bytes - self.outside_room) if self.outside is not None else 0

    @property
    def kv_per_seq(self) -> int:
        """KV bytes of one sequence at full context, its linear-attention state included."""
        return int(self.kv_per_token * self.context) + self.state_per_seq

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
        return max(0, int((self.kv_budget - self.state_per_seq * self.seqs) / (self.kv_per_token * self.seqs)))


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


def plan_is_moe_ep(facts) -> bool:
    """True when some role of the plan runs an EP dispatch (:attr:`sncc.facts.model.Facts.moe_ep`):
    ``sncc build`` then writes the MoE ``HCCL_BUFFSIZE`` default (:func:`hccl_buffsize_mb`)."""
    return bool(getattr(facts, "moe_ep", False))


def communicators(tp: int, ep_size: int, pp: int) -> int:
    """Number of HCCL communicators one device joins: its TP group, its EP group (``ep_size``, the
    MoE dispatch group: 1 without expert parallelism) and its PP group, each of size > 1 (none
    for a single-device instance, which communicates with nobody).  A TP-only MoE all-reduces its
    experts inside the TP group: no extra communicator."""
    return int(tp > 1) + int(ep_size > 1) + int(pp > 1)


def comm_buffer_bytes(vendor: str, tp: int, ep_size: int, pp: int, hccl_mb: int) -> tuple[int, str]:
    """(bytes, kind) of the communication buffers one device holds outside the KV cache.

    Ascend (``vendor`` ``ascend`` or ``huawei``): ``2 x hccl_mb`` MB per HCCL communicator
    (:func:`communicators`; CANN allocates send and receive buffers of HCCL_BUFFSIZE each,
    domain-facts §7).  NVIDIA: ``data/memory.toml [nccl] bytes`` once when the device joins any
    group of size > 1.  Single-device instances hold none.  Both are allocated when the
    communicators are created, before the engine profiles its memory, so they count inside
    ``gpu_memory_utilization`` (the worker's non-torch memory: ``vllm_ascend/worker/worker.py``
    ``determine_available_memory``, docs/research/rule-kinds.md K11)."""
    n = communicators(tp, ep_size, pp)
    if not n:
        return 0, ""
    if _is_ascend(vendor):
        return 2 * int(hccl_mb) * MB * n, "HCCL"
    return int(memory_constants()["nccl"]["bytes"]), "NCCL"


def _is_ascend(vendor: str | None) -> bool:
    return str(vendor or "").lower() in ("ascend", "huawei")


#: weight groups of :func:`sncc.catalog.arch.param_breakdown` that hold parameters
WEIGHT_GROUPS = ("embedding", "lm_head", "attention", "compressor_indexer", "dense_ffn", "shared_experts",
                 "routed_experts", "router", "mtp")


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


def bytes_per_param(quant: str | None, is_moe: bool, overrides=None, *, linear: float | None = None) -> dict:
    """Bytes per parameter of every weight group (:data:`WEIGHT_GROUPS`), the one table the
    memory model and the step cost model read.

    Defaults: routed experts and the other linear groups (attention, dense FFN, shared experts)
    from :func:`weight_bytes_by_group` of ``quant`` (``linear`` overrides both: a hand-built
    simulation); embedding, LM head and the MoE router gate 2 bytes (BF16: msModelSlim keeps
    embedding and head unquantized, vLLM builds the DeepSeek/Qwen MoE gate with
    ``quant_config=None``); the DeepSeek-V4 compressor/indexer part of attention at the
    attention width; the MTP module None (its routed experts at the expert width, the rest at
    the attention width).  ``overrides`` (the checkpoint's own bytes per group,
    ``Facts.weight_bytes_per_param`` from its ``quantization_config``) replace any group it
    names.  Raises KeyError for an unknown ``quant``."""
    if linear is not None:
        wx = wd = float(linear)
    else:
        wx, wd = weight_bytes_by_group(quant, is_moe)
    out = {"embedding": 2.0, "lm_head": 2.0, "attention": wd, "compressor_indexer": None, "dense_ffn": wd,
           "shared_experts": wd, "routed_experts": wx, "router": 2.0, "mtp": None}
    for k, v in (overrides or {}).items():
        if k in out and v is not None:
            out[k] = float(v)
    if out["compressor_indexer"] is None:
        out["compressor_indexer"] = out["attention"]
    return out


def weights_per_device(arch, quant: str | None, tp: int, dp: int, pp: int, redundant_experts: int = 0,
                       mtp: bool = False, weight_bytes=None) -> int:
    """Weight bytes held by one device [B].

    Split: attention (its DeepSeek-V4 compressor/indexer part included), dense FFN, shared
    experts, router gate, embedding and LM head over ``tp`` (one copy per DP rank); routed
    experts, plus ``redundant_experts`` extra expert slots of the instance (total over its EP
    group, :attr:`sncc.facts.model.RoleFacts.redundant_experts`), over the ``tp × dp`` devices of a
    pipeline stage (placed whole by expert parallelism, or tensor-sharded: the same bytes);
    layers over ``pp``.  ``mtp`` adds the MTP module(s) (``param_breakdown(arch)["mtp"]``: one
    decoder layer plus eh_proj per ``num_nextn_predict_layers``) to the last stage: its routed
    experts spread over ``tp × dp``, the rest over ``tp``.

    ``weight_bytes``: a number (bytes of every linear weight: a hand-built simulation) or a
    mapping of group name to bytes per parameter (the checkpoint's own,
    ``Facts.weight_bytes_per_param``); groups it leaves out take :func:`bytes_per_param`'s
    defaults.  Raises KeyError for an unknown ``quant``."""
    from sncc.catalog.arch import param_breakdown

    p = param_breakdown(arch)
    is_moe = bool(p["routed_experts"])
    if isinstance(weight_bytes, (int, float)) and not isinstance(weight_bytes, bool):
        b = bytes_per_param(None, is_moe, None, linear=float(weight_bytes))
    else:
        b = bytes_per_param(quant, is_moe, weight_bytes)
    ci = p.get("compressor_indexer", 0.0)
    replicated = ((p["attention"] - ci) * b["attention"] + ci * b["compressor_indexer"]
                  + p["dense_ffn"] * b["dense_ffn"] + p["shared_experts"] * b["shared_experts"]
                  + p["router"] * b["router"] + p["embedding"] * b["embedding"] + p["lm_head"] * b["lm_head"])
    total = replicated / tp
    per_expert_layer = p["routed_expert_one"]
    if is_moe:
        slots = p["routed_experts"] + redundant_experts * p["moe_layers"] * per_expert_layer
        total += slots * b["routed_experts"] / (tp * dp)
    total /= pp
    if mtp and p["mtp"]:
        n_mtp = getattr(arch, "num_nextn_predict_layers", 0) or 0
        mtp_routed = n_mtp * (getattr(arch, "n_routed_experts", 0) or 0) * per_expert_layer if is_moe else 0.0
        if b["mtp"] is not None:
            total += (p["mtp"] - mtp_routed) * b["mtp"] / tp + mtp_routed * b["mtp"] / (tp * dp)
        else:
            total += (p["mtp"] - mtp_routed) * b["attention"] / tp + mtp_routed * b["routed_experts"] / (tp * dp)
    return int(total)


def device_memory(arch, quant: str | None, kv_dtype: str, tp: int, dp: int, pp: int, *, hbm_bytes: int,
                  utilization: float, reserve_bytes: int, hccl_mb: int, context: int, seqs: int,
                  redundant_experts: int = 0, mtp: bool = False, expert_parallel: bool = True,
                  kv_bytes_per_token: float | None = None,
                  weight_bytes=None, vendor: str = "ascend",
                  reserve_note: str = "", outside: "OutsideBudget | None" = None,
                  ep_size: int | None = None, kv_token_gain: float = 1.0) -> MemoryBreakdown:
    """Memory of one device of a role — the arithmetic of the one memory model.

    ``redundant_experts`` is the instance's total of extra expert slots; ``expert_parallel`` says
    whether the role runs an EP dispatch (its EP group of ``tp × dp`` devices is then a
    communicator); ``ep_size`` is that group's size when the caller knows it
    (:attr:`sncc.facts.model.RoleFacts.ep_size`; default ``tp × dp`` with expert parallelism, else
    1); ``kv_bytes_per_token`` overrides the all-layer KV bytes per token of the whole
    model (divided here like the catalog's: MLA replicated over TP, GQA split by KV heads);
    ``hccl_mb`` is HCCL_BUFFSIZE [MB] (:func:`hccl_buffsize_mb`, Ascend only); ``vendor`` picks
    HCCL or NCCL buffers (:func:`comm_buffer_bytes`); ``weight_bytes`` see
    :func:`weights_per_device`; ``outside`` the memory the device needs beyond the engine's budget
    (:func:`outside_budget`); ``kv_token_gain`` (>= 1) the tokens the pool holds per token of a
    uniform layout (OmniAttn's full layers: :attr:`sncc.facts.model.OmniAttnLayout.full_layer_token_gain`),
    which divides the bytes per token.  A hybrid linear-attention model's per-sequence state
    (:func:`sncc.catalog.arch.linear_state_bytes_per_seq`, model dtype BF16) is sharded with its
    heads over ``tp`` and its layers over ``pp`` (``MemoryBreakdown.state_per_seq``).  Raises ValueError when ``tp`` does not split the KV heads and
    KeyError for an unknown KV dtype or quantization."""
    from sncc.catalog.arch import kv_bytes_per_token as _kv_all, kv_bytes_per_token_per_device, linear_state_bytes_per_seq

    moe = bool(getattr(arch, "is_moe", False))
    w = weights_per_device(arch, quant, tp, dp, pp, redundant_experts if moe else 0, mtp=mtp,
                           weight_bytes=weight_bytes)
    kv_tok = kv_bytes_per_token_per_device(arch, kv_dtype, tp, include_mtp=mtp)
    if kv_bytes_per_token is not None:
        kv_tok *= kv_bytes_per_token / _kv_all(arch, kv_dtype, include_mtp=mtp)
    kv_tok /= pp * max(1.0, kv_token_gain)
    if ep_size is None:
        ep_size = tp * dp if (moe and expert_parallel) else 1
    comm, kind = comm_buffer_bytes(vendor, tp, ep_size, pp, hccl_mb)
    budget = int(hbm_bytes * utilization)
    state = int(linear_state_bytes_per_seq(arch) / (tp * pp))
    return MemoryBreakdown(budget, int(hbm_bytes), utilization, w, int(reserve_bytes), comm, kv_tok, context, seqs,
                           reserve_note, kind, outside, state)


# ----------------------------------------------------------------------------- outside the budget
@dataclass(frozen=True)
class OutsideItem:
    """One allocation a device needs outside the engine's ``gpu_memory_utilization`` budget:
    ``name``, ``bytes`` and ``source`` (where the figure comes from)."""

    name: str
    bytes: int
    source: str


@dataclass(frozen=True)
class OutsideBudget:
    """What one device must hold in ``HBM × (1 − utilization)``: ``items`` (:class:`OutsideItem`)
    and ``notes`` (allocations counted inside the budget, or not counted, and why)."""

    items: tuple
    notes: tuple = ()

    @property
    def bytes(self) -> int:
        """Total bytes the items need."""
        return sum(i.bytes for i in self.items)


def _version_at_least(version: str | None, first: str | None) -> bool:
    if not version or not first:
        return False
    return catalog.parse_version(version) >= catalog.parse_version(first)


def outside_budget(engine_kind: str | None, engine_version: str | None, vendor: str | None,
                   graph_mode: bool) -> OutsideBudget:
    """Memory one device needs outside the engine's budget (``data/memory.toml [outside]``).

    * the runtime context: device memory in use before the engine allocates anything (the driver
      and runtime context), per vendor where a source measured it;
    * the graph-capture pool, for a role that runs captured graphs, on an engine that does not
      deduct it from the KV budget: vllm-ascend's ``NPUWorker.determine_available_memory``
      profiles weights, activations and non-torch memory only and captures ACL graphs after the
      KV cache is allocated (vllm-ascend#8260); vLLM deducts its CUDA-graph estimate from the
      version in ``graph_pool_in_budget_from`` on;
    * the communication buffers are not here: they are allocated before the memory profile and
      count inside (:func:`comm_buffer_bytes`).

    Each item says its source; figures no source gives are left out and a note says so."""
    c = memory_constants().get("outside", {})
    items, notes = [], []
    ctx = c.get("runtime_context", {}).get("ascend" if _is_ascend(vendor) else "nvidia")
    if ctx and ctx.get("bytes"):
        items.append(OutsideItem("runtime context", int(ctx["bytes"]), ctx["source"]))
    elif ctx:
        notes.append(f"runtime context: {ctx.get('note', 'no sourced figure; not counted')}")
    row = c.get("graph_pool", {}).get(engine_kind or "")
    if graph_mode and row:
        first = row.get("in_budget_from")
        if _version_at_least(engine_version, first) or (first and not engine_version and row.get("unversioned_in_budget")):
            notes.append(f"graph-capture pool: deducted from the KV budget by {engine_kind} >= {first} "
                         f"({row.get('in_budget_source', '')})")
        else:
            items.append(OutsideItem("graph-capture pool", int(row["bytes"]), row["source"]))
    return OutsideBudget(tuple(items), tuple(notes))


# ----------------------------------------------------------------------------- one role of a plan
def role_memory(plan, facts, role_name: str, role=None) -> MemoryBreakdown | None:
    """Memory breakdown of one device of role ``role_name`` (None when the chip or model is
    unknown, the chip has no HBM figure, ``tp × pp`` does not divide the role's declared ``devices``
    when ``tp × dp × pp`` misses them (SN3001 reports it; otherwise the DP ranks fill the declared
    devices), or ``tp`` does not split the KV heads).

    Everything comes from the facts (:class:`sncc.facts.model.RoleFacts`): parallelism, expert
    parallelism, redundant experts, the speculative setting in force (MTP weights and KV layer
    resident when MTP runs on a model with MTP layers), ``HCCL_BUFFSIZE`` (the role's env over the
    plan's, else the default ``sncc build`` writes), memory utilization, and the checkpoint's
    bytes per weight group (``Facts.weight_bytes_per_param`` when resolution found it).
    Decode and serve roles hold ``max_num_seqs`` sequences at ``max_model_len``; a prefill role
    holds the prompts of one step: ``max(max_num_batched_tokens, max input)`` tokens per DP rank.
    KV bytes per token are those of the dtype the engine runs (``Facts.kv_dtype_run``: the plan's
    ``kv_cache.dtype`` unless the engine ignores it, e.g. Omni-Infer release_v0.3.0's INT8), over
    OmniAttn's full-layer gain when it runs on the role (``RoleFacts.omni_attn``: its compressed
    layers keep a few blocks, so each token costs less of the pool).
    ``kv_budget`` is the KV pool the simulator gives the role."""
    arch, chip = facts.arch, facts.chip
    rf = facts.roles.get(role_name)
    if arch is None or chip is None or rf is None or not getattr(chip, "hbm_bytes", None):
        return None
    dp, ep_size = rf.dp, rf.ep_size
    if rf.devices_declared and rf.devices != rf.devices_declared:
        # the parallelism does not cover the declared devices (SN3001 reports it): size the
        # devices the role declares, its DP ranks filling them, when they divide evenly
        per = rf.tp * rf.pp
        if rf.devices_declared % per:
            return None
        dp = rf.devices_declared // per
        ep_size = rf.tp * dp if rf.expert_parallel else 1
    if role_name == "prefill":
        context = max(rf.max_num_batched_tokens, plan.workload.input.max)
        seqs = 1
    else:
        context = facts.max_model_len
        seqs = rf.max_num_seqs
    engine = getattr(getattr(plan, "engine", None), "kind", None)
    res = engine_reserve(engine, role_name)
    sp = rf.speculative
    mtp = bool(sp is not None and sp.method == "mtp" and (getattr(arch, "num_nextn_predict_layers", 0) or 0) > 0)
    raw = rf.env_value("HCCL_BUFFSIZE")
    hccl = hccl_buffsize_mb({"HCCL_BUFFSIZE": raw} if raw is not None else {}, plan_is_moe_ep(facts))
    out = outside_budget(engine, getattr(plan.engine, "version", None), facts.vendor, rf.graph_mode)
    try:
        # the KV dtype the engine runs (Facts.kv_dtype_run: Omni-Infer release_v0.3.0 ignores int8, SN4041)
        return device_memory(arch, facts.quant or "bf16", getattr(facts, "kv_dtype_run", facts.kv_dtype), rf.tp, dp, rf.pp,
                             hbm_bytes=chip.hbm_bytes, utilization=rf.memory_utilization, reserve_bytes=res.bytes,
                             hccl_mb=hccl, context=context, seqs=seqs, redundant_experts=rf.redundant_experts,
                             mtp=mtp, expert_parallel=rf.expert_parallel, ep_size=ep_size,
                             weight_bytes=getattr(facts, "weight_bytes_per_param", None) or None,
                             vendor=facts.vendor or str(getattr(chip, "vendor", "")), reserve_note=res.note,
                             outside=out,
                             kv_token_gain=rf.omni_attn.full_layer_token_gain if rf.omni_attn is not None else 1.0)
    except (ValueError, KeyError):
        return None  # tp does not split the KV heads (SN3004) or the dtype is unknown: reported elsewhere

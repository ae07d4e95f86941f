"""Markdown descriptions of catalog entries for hover, and the ids offered by
completion.  Every number shown comes from ``sncc/catalog/data/*.toml`` and is
printed with the entry's ``source`` URLs and status tag (domain-facts §0:
R read, R2 secondary, I inferred, A announced, M measured, C conflict).

Functions return None for an unknown id (hover then shows nothing); they
never raise for catalog lookups, but a malformed catalog file still raises
:class:`sncc.catalog.CatalogError`, which the server turns into an empty hover.
"""

from __future__ import annotations

from sncc import catalog


def _gib(n: int | None) -> str:
    if n is None:
        return "unknown"
    return f"{n / 2**30:g} GiB" if n % 2**30 == 0 else f"{n / 1e9:g} GB"


def _bw(b: float | None) -> str:
    if b is None:
        return "unknown"
    return f"{b / 1e12:g} TB/s" if b >= 1e12 else f"{b / 1e9:g} GB/s"


def _flops(f: float) -> str:
    return f"{f / 1e15:g} PFLOP/s" if f >= 1e15 else f"{f / 1e12:g} TFLOP/s"


def _params(p: float | None) -> str | None:
    if p is None:
        return None
    return f"{p / 1e9:g} B" if p >= 1e9 else f"{p / 1e6:g} M"


def _sources(status: str, source: tuple[str, ...]) -> str:
    return f"\n\n*source* (status {status}): " + " · ".join(f"<{s}>" if s.startswith("http") else s for s in source)


def chip_doc(chip_id: str) -> str | None:
    """Hover text of chip ``chip_id``: HBM, bandwidth, peak FLOP/s by dtype, formats, source."""
    try:
        c = catalog.chip(chip_id)
    except KeyError:
        return None
    lines = [f"**{c.name}** (`{c.id}`): {c.vendor} {c.generation}, device type `{c.device_type}`", ""]
    lines.append(f"* HBM: {_gib(c.hbm_bytes)} per device, {_bw(c.hbm_bandwidth)}")
    if c.peak_flops:
        lines.append("* dense peak: " + ", ".join(f"{k} {_flops(v)}" for k, v in c.peak_flops.items()))
    if c.vector_flops:
        lines.append(f"* vector: {_flops(c.vector_flops)}")
    if c.devices_per_node:
        lines.append(f"* devices per node: {c.devices_per_node}")
    lines.append("* weight formats: " + (", ".join(f"`{w}`" for w in c.weight_formats) or "none listed"))
    lines.append("* KV-cache dtypes: " + (", ".join(f"`{w}`" for w in c.kv_dtypes) or "none listed"))
    if c.notes:
        lines += ["", c.notes]
    return "\n".join(lines) + _sources(c.status, c.source)


def system_doc(system_id: str) -> str | None:
    """Hover text of system ``system_id``: chip, node size, scale-up domain, links, source."""
    try:
        s = catalog.system(system_id)
    except KeyError:
        return None
    lines = [f"**{s.name}** (`{s.id}`)" + (f", alias of `{s.alias_of}`" if s.alias_of else ""), ""]
    try:
        ch = catalog.chip(s.chip)
        lines.append(f"* chip: `{s.chip}` ({ch.name}: {_gib(ch.hbm_bytes)} HBM at {_bw(ch.hbm_bandwidth)}"
                     + (f", bf16 {_flops(ch.peak_flops['bf16'])}" if "bf16" in ch.peak_flops else "") + ")")
    except KeyError:
        lines.append(f"* chip: `{s.chip}`")
    lines.append(f"* devices per node: {s.devices_per_node}; max nodes: {s.max_nodes if s.max_nodes is not None else 'unbounded'}")
    lines.append(f"* scale-up domain: {s.scale_up_domain_devices} devices")
    for ln in s.links:
        lat = f", {ln.latency * 1e6:g} µs" if ln.latency is not None else ""
        lines.append(f"* link `{ln.level}`: {_bw(ln.bandwidth)} per device per direction{lat} (status {ln.status})")
    if s.notes:
        lines += ["", s.notes]
    return "\n".join(lines) + _sources(s.status, s.source)


def model_doc(model_id: str) -> str | None:
    """Hover text of model ``model_id`` (id, name or alias): layers, heads, experts, params, source."""
    try:
        m = catalog.model(model_id)
    except KeyError:
        return None
    lines = [f"**{m.name}** (`{m.id}`): architecture `{m.architecture}`", ""]
    lines.append(f"* layers: {m.num_hidden_layers}; hidden size: {m.hidden_size}; vocabulary: {m.vocab_size}")
    lines.append(f"* attention heads: {m.num_attention_heads}; KV heads: {m.num_key_value_heads}"
                 + (f"; KV LoRA rank {m.kv_lora_rank}" if m.kv_lora_rank else ""))
    if m.n_routed_experts:
        lines.append(f"* experts: {m.n_routed_experts} routed + {m.n_shared_experts} shared, "
                     f"{m.num_experts_per_tok} per token; first {m.first_k_dense_replace} layers dense")
    tp, ap = _params(m.total_params), _params(m.active_params)
    if tp:
        lines.append(f"* parameters: {tp}" + (f" total, {ap} active" if ap else ""))
    if m.max_position_embeddings:
        lines.append(f"* max positions: {m.max_position_embeddings} tokens")
    if m.checkpoint_dtype:
        lines.append(f"* checkpoint dtype: `{m.checkpoint_dtype}`")
    if m.aliases:
        lines.append("* aliases: " + ", ".join(f"`{a}`" for a in m.aliases))
    if m.notes:
        lines += ["", m.notes]
    return "\n".join(lines) + _sources(m.status, m.source)


def engine_doc(kind: str) -> str | None:
    """Hover text of an engine label: the catalog's releases of it (newest first, at most six)
    with the software each pins and its source; None for a label with no adapter."""
    from sncc.engines.registry import UnknownEngine, adapter_for

    try:
        adapter = adapter_for(kind)
    except UnknownEngine:
        return None
    rows = adapter.catalog_releases()
    if not rows:
        return f"**{adapter.label}**: no release pins in the catalog"
    lines = [f"**{adapter.label}**: releases in the catalog", ""]
    lines += [f"* `{version}`: {pairing} (status {status})" for version, pairing, status, _ in rows[:6]]
    return "\n".join(lines) + _sources(rows[0][2], rows[0][3])


def quant_doc(qid: str) -> str | None:
    """Hover text of a quantization format id (``w8a8``)."""
    try:
        q = catalog.quant(qid)
    except KeyError:
        return None
    lines = [f"**{q.name}** (`{q.id}`)", "",
             f"* weights: {q.weight_bits} bits ({q.weight_bytes:g} bytes per parameter); activations `{q.activation_dtype}`",
             f"* computes in `{q.compute_dtype}`" + (f"; vLLM `--quantization {q.vllm_quantization}`" if q.vllm_quantization else "")]
    if q.notes:
        lines += ["", q.notes]
    return "\n".join(lines) + _sources(q.status, q.source)


def ids(what: str) -> list[tuple[str, str]]:
    """``[(id, one-line detail)]`` of ``chip``, ``system``, ``model``, ``engine-version`` or ``cann`` entries."""
    if what == "chip":
        return [(k, c.name) for k, c in catalog.chips().items()]
    if what == "system":
        return [(k, s.name) for k, s in catalog.systems().items()]
    if what == "model":
        return [(k, m.name) for k, m in catalog.models().items()]
    if what == "engine-version":
        return [(r.version, f"vLLM {r.vllm}, CANN {r.cann}") for r in catalog.vllm_ascend_releases()]
    if what == "cann":
        return [(r.cann, "torch_npu " + ", ".join(r.torch_npu)) for r in catalog.cann_torch_npu()]
    return []

"""``vllm-ascend[.<role>].toml``: vLLM / vllm-ascend engine arguments of one role.

A disaggregated plan gets ``vllm-ascend.prefill.toml`` and
``vllm-ascend.decode.toml``; an aggregated plan ``vllm-ascend.toml`` (its
``serve`` role).  Used for engines ``vllm-ascend`` and ``vllm``.

Layout: the seed-001 sections ``[model] [parallel] [ascend] [scheduler]
[server]``, then ``[kv_transfer_config]`` (PD roles),
``[compilation_config]`` and ``[speculative_config]`` (when the plan sets
them).  The sections only group the keys.  Every key is a vLLM argument name,
except the two informational keys of ``[ascend]`` (:data:`INFORMATIONAL`:
``device`` and ``cann_version``, which say what the file was built for and are
marked so in the file): a scalar ``key = value`` is ``--key value`` on the
command line (underscores become dashes), a boolean is ``--key`` (true) or
``--no-key`` (false; vLLM's boolean arguments are ``BooleanOptionalAction``),
and a table is the JSON value of its argument (``[kv_transfer_config]`` →
``--kv-transfer-config '{...}'``, ``[model.hf_overrides]`` →
``--hf-overrides '{...}'``, ``[ascend.additional_config]`` → vllm-ascend's
``--additional-config '{...}'``).  ``[ascend]`` keeps the seed's name even for
``vllm`` on NVIDIA.

Decisions:

* ``data_parallel_size`` = the plan's ``ep`` (attention replicas); experts are
  spread over ``tp × ep`` devices, so ``enable_expert_parallel`` is true when
  the model is MoE and ``tp × ep > 1``.  ``data_parallel_size_local`` (DP ranks
  per node) is written when one instance spans several nodes.
* vLLM has no chunk-size argument: ``enable_chunked_prefill`` is true when the
  plan sets ``chunked_prefill``, and the chunk becomes
  ``long_prefill_token_threshold`` (the most prompt tokens of one request per
  step); ``max_num_batched_tokens`` stays the step budget.
* ``enable_chunked_prefill``: see :mod:`sncc.lowering` — on for a PD decode
  role unless the plan sets ``chunked_prefill = off`` there.
* ``graph { mode = torchair }`` on vllm-ascend v0.9.x-v0.11.x writes
  ``[ascend.additional_config.torchair_graph_config] enabled = true`` for roles
  that run graphs (eager roles get nothing: vllm-ascend refuses torchair with
  ``enforce_eager``); ``aclgraph`` (the default) needs no key.
* ``scheduler = ascend`` and ``optimize.superkernel_layers`` are written in the
  spelling of the plan's release, with the keys that release requires beside
  them (:mod:`sncc.lowering.ascend_options`, facts in ``engines.toml``
  ``[[vllm_ascend_options]]``): ``ascend_scheduler_config.enabled`` (v0.9.0rc1
  to v0.11.x; an empty ``ascend_scheduler_config`` before), and
  ``torchair_graph_config.enable_super_kernel`` for the roles that run TorchAir
  graphs, with ``torchair_graph_config.enable_multistream_moe`` (v0.9.1 branch)
  or ``multistream_overlap_shared_expert`` (v0.11.x).  A release without the
  option, or a plan breaking one of its preconditions, gets nothing (checks
  SN4013, SN4015, SN4017 say so).
* ``omni_placement.redundant_experts`` on vllm-ascend is EPLB:
  ``additional_config.init_redundancy_expert`` before v0.12,
  ``additional_config.eplb_config.num_redundant_experts`` from v0.12 (the
  v0.23/main key); both count the instance's total, the plan counts per device.
* ``model.rope_scaling`` → ``[model.hf_overrides]`` (see :mod:`sncc.lowering`).
* ``kv_cache_dtype``: vLLM accepts ``auto``/``fp8``; an ``int8`` KV cache is
  written as ``auto`` plus ``[ascend.additional_config] kv_cache_dtype = "int8"``
  (vllm-ascend C8, v0.9.1 to v0.11.x; later releases read C8 from the weights'
  ModelSlim quant config, so only ``auto`` is written).
* ``kv_transfer_config`` uses the plan's connector (default: the engine's, from the catalog; Mooncake on vllm-ascend, with ``use_ascend_direct`` on Ascend) with ``kv_role``
  ``kv_producer`` (prefill) / ``kv_consumer`` (decode) and both roles' sizes in
  ``kv_connector_extra_config``.
* The API key never appears: vLLM's ``--api-key`` is not written (the gateway
  authenticates clients; see settings.json).
* The first line is the taplo directive ``#:schema ./schemas/vllm-ascend.schema.json``
  (a copy of the schema is written beside the outputs).
"""

from __future__ import annotations

import tomlkit
from tomlkit.items import Item, Table

from sncc.emit._common import generated_by, num, one_line, schema_ref
from sncc.lowering import SERVER_PORT, Deployment, RoleDeployment, lower
from sncc.plan.model import Plan
from sncc.plan.resolve import Resolved

SCHEMA = "vllm-ascend"

#: ``[ascend]`` keys that are not vLLM arguments: they record what the file was built for
INFORMATIONAL = ("device", "cann_version")

#: speculative methods whose drafter is a separate checkpoint: vLLM raises "num_speculative_tokens
#: was provided but without speculative model" when ``speculative_config.model`` is missing
#: (vllm/config/speculative.py, SpeculativeConfig.__post_init__)
DRAFT_CHECKPOINT_METHODS = ("draft_model", "eagle", "eagle3")


def file_name(role: str) -> str:
    """Output file name of ``role``: ``vllm-ascend.prefill.toml``, ``vllm-ascend.decode.toml``, ``vllm-ascend.toml`` (serve)."""
    return "vllm-ascend.toml" if role == "serve" else f"vllm-ascend.{role}.toml"


def _add(t: Table, key: str, value, note: str = "") -> None:
    it: Item = tomlkit.item(value)
    if note:
        it.comment(one_line(note))
        it.trivia.comment_ws = "  "
    t.add(key, it)


def _comment(t: Table, text: str) -> None:
    t.add(tomlkit.comment(one_line(text)))


def build(plan: Plan, resolved: Resolved, role: str, dep: Deployment | None = None) -> tomlkit.TOMLDocument:
    """The TOML document of ``role`` (``prefill``, ``decode`` or ``serve``).

    Units: lengths and token budgets in tokens, ``gpu_memory_utilization`` a
    fraction of HBM, ``port`` a TCP port.  Raises ``KeyError`` if the plan has no
    such role.
    """
    dep = dep or lower(plan, resolved)
    r: RoleDeployment | None = dep.role(role)
    if r is None:
        raise KeyError(f"plan {plan.name!r} has no {role} role")
    ascend = dep.vendor == "ascend"
    doc = tomlkit.document()

    m = tomlkit.table()
    _add(m, "model", dep.model_path, "plan model.weights" if plan.model.weights else "plan model id (no weights directory given)")
    _add(m, "served_model_name", dep.served_name,
         "plan model.served_name" if plan.model.served_name else "the model id (clients send this name)")
    _add(m, "dtype", dep.dtype)
    if dep.vllm_quantization:
        _add(m, "quantization", dep.vllm_quantization, f"catalog quant {dep.quant} → vLLM --quantization")
    _add(m, "max_model_len", dep.max_model_len, dep.max_model_len_note)
    if dep.hf_overrides:
        _comment(m, "[model.hf_overrides] is --hf-overrides: " + dep.hf_overrides_note)
        m.add("hf_overrides", _table(dep.hf_overrides))
    doc.add("model", m)

    p = tomlkit.table()
    layout = f"one instance = tp × ep × pp = {r.tp} × {r.dp} × {r.pp} = {r.devices} devices"
    if r.nodes_per_instance and r.nodes_per_instance > 1 and dep.devices_per_node:
        layout += f" ({r.nodes_per_instance} nodes of {dep.devices_per_node})"
    _comment(p, layout + f"; {r.instances} instance{'s' if r.instances != 1 else ''} of this role")
    _add(p, "tensor_parallel_size", r.tp, f"plan {role}.tp")
    _add(p, "data_parallel_size", r.dp, f"plan {role}.ep (attention data-parallel replicas)")
    if r.dp_local is not None and r.dp_local < r.dp:
        _add(p, "data_parallel_size_local", r.dp_local, f"DP ranks per node: {dep.devices_per_node} devices / (tp × pp)")
        nodes = -(-r.dp // r.dp_local)
        _comment(p, f"multi-node launch (vLLM DP): start the same config on each of the {nodes} nodes of an instance; "
                    "node 0 serves the API and the others add --headless; all pass --data-parallel-address "
                    "<node 0 IP> and --data-parallel-rpc-port <port>")
        for node in range(nodes):
            _comment(p, f"  node {node}: --data-parallel-start-rank {node * r.dp_local}" + (" --headless" if node else ""))
    _add(p, "pipeline_parallel_size", r.pp, f"plan {role}.pp")
    _add(p, "enable_expert_parallel", r.expert_parallel, r.expert_parallel_note)
    doc.add("parallel", p)

    a = tomlkit.table()
    _add(a, "device", "npu" if ascend else "cuda", "informational, not a vLLM argument: the device this file is for")
    if ascend and dep.cann:
        _add(a, "cann_version", dep.cann, "informational, not a vLLM argument: plan hardware.cann")
    _add(a, "enforce_eager", not r.graph_mode, r.graph_mode_note)
    _add(a, "block_size", dep.block_size, "plan kv_cache.block_size")
    _add(a, "gpu_memory_utilization", num(r.memory_utilization), r.memory_utilization_note)
    kv_note = f"plan kv_cache.dtype resolves to {dep.kv_dtype}"
    if dep.kv_dtype == "int8" and ascend:
        kv_note += ("; int8 is set in additional_config" if dep.ascend_kv_cache_dtype
                    else "; int8 (C8) comes from the weights' ModelSlim quant config")
    _add(a, "kv_cache_dtype", dep.vllm_kv_cache_dtype, kv_note)
    ac = _additional_config(plan, resolved, dep, r) if ascend and plan.engine.kind == "vllm-ascend" else None
    if ac is None and ascend and dep.ascend_kv_cache_dtype:
        ac = tomlkit.table()
        _add(ac, "kv_cache_dtype", dep.ascend_kv_cache_dtype, "vllm-ascend C8 KV cache")
    if ac is not None:
        a.add("additional_config", ac)
    doc.add("ascend", a)

    s = tomlkit.table()
    _add(s, "max_num_seqs", r.max_num_seqs, f"per DP rank; × {r.dp} rank{'s' if r.dp != 1 else ''} × {r.instances} instance{'s' if r.instances != 1 else ''}"
         f" = {r.max_num_seqs * r.dp * r.instances} sequences")
    _add(s, "max_num_batched_tokens", r.max_num_batched_tokens, f"plan {role}.max_num_batched_tokens")
    _add(s, "enable_chunked_prefill", r.enable_chunked_prefill, r.chunked_prefill_note)
    if r.chunked_prefill is not None:
        _add(s, "long_prefill_token_threshold", r.chunked_prefill, "prompt tokens of one request per step (the chunk)")
    doc.add("scheduler", s)

    sv = tomlkit.table()
    _add(sv, "host", "0.0.0.0")
    _add(sv, "port", SERVER_PORT)
    doc.add("server", sv)

    connector = _connector(plan)
    if r.kv_role is not None and connector is not None:
        xfer = plan.kv_transfer
        kv = tomlkit.table()
        _add(kv, "kv_connector", connector.class_name,
             "plan kv_transfer.connector" if xfer is not None and xfer.connector else f"default connector of {plan.engine.kind}")
        _add(kv, "kv_role", r.kv_role, f"{role} role")
        extra = tomlkit.table(is_super_table=True)
        if ascend and connector.ascend_requires_direct:
            direct = xfer.use_ascend_direct if xfer is not None and xfer.use_ascend_direct is not None else True
            _add(extra, "use_ascend_direct", direct, "required by the Mooncake connector on Ascend (vllm-ascend#5635)")
        for other in dep.roles:
            if other.kv_role is None:
                continue
            t = tomlkit.table()
            over_dp = getattr(xfer, f"{other.name}_dp", None) if xfer is not None else None
            over_tp = getattr(xfer, f"{other.name}_tp", None) if xfer is not None else None
            _add(t, "dp_size", over_dp or other.dp, f"plan kv_transfer.{other.name}_dp" if over_dp else None)
            _add(t, "tp_size", over_tp or other.tp, f"plan kv_transfer.{other.name}_tp" if over_tp else None)
            extra.add(other.name, t)
        kv.add("kv_connector_extra_config", extra)
        doc.add("kv_transfer_config", kv)

    graph = plan.graph
    if r.graph_mode and graph is not None and (graph.cudagraph_mode or graph.capture_sizes):
        cc = tomlkit.table()
        if graph.cudagraph_mode:
            _add(cc, "cudagraph_mode", graph.cudagraph_mode.upper(), "plan graph.cudagraph_mode")
        if graph.capture_sizes:
            _add(cc, "cudagraph_capture_sizes", list(graph.capture_sizes), "plan graph.capture_sizes")
        doc.add("compilation_config", cc)

    if plan.speculative is not None:
        sp = tomlkit.table()
        _add(sp, "method", plan.speculative.method, "plan speculative.method")
        _add(sp, "num_speculative_tokens", plan.speculative.draft_tokens, "plan speculative.draft_tokens")
        if plan.speculative.model:
            _add(sp, "model", plan.speculative.model, "plan speculative.model (the draft checkpoint)")
        elif plan.speculative.method in DRAFT_CHECKPOINT_METHODS:
            _comment(sp, f"method {plan.speculative.method} needs the draft checkpoint: set speculative.model "
                         "(vLLM refuses to start without speculative_config.model)")
        doc.add("speculative_config", sp)
    return doc


def _table(d: dict) -> Table:
    """A TOML table of a nested dict (sub-dicts become sub-tables; plain keys first)."""
    t = tomlkit.table()
    for k, v in d.items():
        if not isinstance(v, dict):
            t.add(k, v)
    for k, v in d.items():
        if isinstance(v, dict):
            t.add(k, _table(v))
    return t


def _additional_config(plan: Plan, resolved: Resolved, dep: Deployment, r: RoleDeployment) -> Table | None:
    """vllm-ascend ``--additional-config`` of role ``r`` (None when empty): the C8 KV cache, EPLB
    redundant experts, TorchAir graph mode, then the release's spelling of ``scheduler = ascend``
    and ``optimize.superkernel_layers`` with the keys the release requires beside them
    (:func:`sncc.lowering.ascend_options.plan_options`; only options it marks written, for the
    roles it names).  Scalars first, then sub-tables (TOML order)."""
    from sncc.lowering import torchair_mode
    from sncc.lowering.ascend_options import leaves, plan_options

    ac = tomlkit.table()
    if dep.ascend_kv_cache_dtype:
        _add(ac, "kv_cache_dtype", dep.ascend_kv_cache_dtype, "vllm-ascend C8 KV cache")
    if r.redundant_experts and dep.vllm_legacy:
        _add(ac, "init_redundancy_expert", r.redundant_experts,
             r.redundant_experts_note + "; vllm-ascend v0.11 EPLB counts the instance's total")
    sub: list[tuple[str, Table]] = []
    if r.redundant_experts and not dep.vllm_legacy:
        e = tomlkit.table()
        _add(e, "num_redundant_experts", r.redundant_experts,
             r.redundant_experts_note + "; eplb_config counts the instance's total (key of v0.23/main)")
        sub.append(("eplb_config", e))
    if r.graph_mode and torchair_mode(plan):
        g = tomlkit.table()
        _add(g, "enabled", True, "plan graph.mode = torchair (vllm-ascend v0.9.x-v0.11.x; removed in v0.12.0rc1)")
        opt = plan.optimize
        if opt is not None and opt.graph_cache:
            _add(g, "use_cached_graph", True, "optimize.graph_cache (directory: TORCHAIR_CACHE_HOME in env.sh)")
        sub.append(("torchair_graph_config", g))
    for use in plan_options(plan, resolved):
        if not use.written or r.name not in use.roles or not use.spelling.additional_config:
            continue
        sp = use.spelling
        where = (f"plan {r.name}.scheduler = {use.value}" if use.option == "scheduler"
                 else f"plan optimize.{use.option} = {use.value}")
        own = f"{where}: {sp.name} ({sp.releases})" + (f"; {sp.notes}" if sp.notes else "")
        for path, value in leaves(sp.additional_config):
            _put(ac, sub, path, value, own)
        for path, value in leaves(sp.requires):
            _put(ac, sub, path, value, f"required with {sp.key} ({sp.releases})")
    for name, t in sub:
        ac.add(name, t)
    return ac if len(ac) else None


def _put(ac: Table, sub: list[tuple[str, Table]], path: tuple[str, ...], value, note: str) -> None:
    """Write ``path = value`` into the additional-config being built: a top-level scalar into ``ac``,
    anything deeper (or an empty table) into the sub-table ``path[0]`` of ``sub`` (created when
    missing).  A key already written is left as it is."""
    if len(path) == 1 and value != {}:
        if path[0] not in ac:
            _add(ac, path[0], value, note)
        return
    t = next((tb for name, tb in sub if name == path[0]), None)
    if t is None:
        t = tomlkit.table()
        sub.append((path[0], t))
    if len(path) == 1:  # an empty table: its presence is the setting
        _comment(t, note)
        return
    for k in path[1:-1]:
        if k not in t:
            t.add(k, tomlkit.table())
        t = t[k]
    if path[-1] not in t:
        if value == {}:
            t.add(path[-1], tomlkit.table())
        else:
            _add(t, path[-1], value, note)


def _connector(plan: Plan):
    """The catalog KV connector of a disaggregated plan (plan's choice, else the engine's default); None for `none`."""
    from sncc import catalog

    cid = plan.kv_transfer.connector if plan.kv_transfer is not None and plan.kv_transfer.connector else \
        catalog.default_kv_connector(plan.engine.kind)
    if cid is None or cid == "none":
        return None
    return catalog.kv_connector(cid)


def emit_role(plan: Plan, resolved: Resolved, role: str) -> str:
    """TOML text for ``role``: the ``#:schema`` directive, a provenance comment, then :func:`build`."""
    header = (
        f"#:schema {schema_ref(SCHEMA)}\n"
        f"# vLLM engine arguments, {role} role; {generated_by(plan.name)}.\n"
        "# Sections only group keys. Each key is a vLLM argument except those marked \"informational\"\n"
        "# ([ascend] device, cann_version): `key = value` is `--key value` (`_` becomes `-`), `key = true`\n"
        "# is `--key`, `key = false` is `--no-key`; a table is its argument's JSON value\n"
        "# ([kv_transfer_config] is `--kv-transfer-config '{...}'`, [ascend.additional_config] is\n"
        "# vllm-ascend's `--additional-config '{...}'`).\n\n"
    )
    return header + tomlkit.dumps(build(plan, resolved, role))


def emit_prefill(plan: Plan, resolved: Resolved) -> str:
    """``vllm-ascend.prefill.toml`` text (PD plan, prefill role, ``kv_role = "kv_producer"``)."""
    return emit_role(plan, resolved, "prefill")


def emit_decode(plan: Plan, resolved: Resolved) -> str:
    """``vllm-ascend.decode.toml`` text (PD plan, decode role, ``kv_role = "kv_consumer"``)."""
    return emit_role(plan, resolved, "decode")


def emit_serve(plan: Plan, resolved: Resolved) -> str:
    """``vllm-ascend.toml`` text (aggregated plan, its ``serve`` role)."""
    return emit_role(plan, resolved, "serve")

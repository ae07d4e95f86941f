"""Omni-Infer's part of lowering (pinned revision ``release_v0.3.0``, facts in ``data/pins.toml``).

Per role:

* ``model_extra_config.<role>.json`` (``MODEL_EXTRA_CFG_PATH``): both required sections,
  ``model_parallel_config`` (``dp_size`` = the role's DP) and ``operator_optimizition_config``
  (spelled so in model_config.py) with only the fields the plan decides: ``enable_pd_separated``,
  ``use_omni_placement`` + ``omni_placement_config_path``, ``use_super_kernel`` (graph roles,
  ``optimize.superkernel_layers > 0``), ``enable_prefill_micro_batch`` (prefill,
  ``optimize.micro_batch = 2``), ``decode_gear_list`` (``graph.decode_gears``),
  ``use_a3_high_performance_cann = false`` off Atlas A3 (the A2 test configs);
* ``omni_placement.<role>.yaml`` when the role has ``eplb`` settings (or the seeds'
  ``optimize.omni_placement``) and runs expert parallelism;
* ``--additional-config``: ``graph_model_compile_config`` (``level = 1`` for graph roles, as the
  server template; ``use_ge_graph_cached`` for ``optimize.graph_cache``; ``decode_gear_list``),
  ``enable_omni_attn`` on every role when ``optimize.omni_attn`` is set;
* environment: ``pd_run.sh``'s variables, ``MODEL_EXTRA_CFG_PATH``, ``TORCHAIR_CACHE_HOME``, the
  LLMDataDist set (``ROLE``, ``PREFILL_POD_NUM``, ``DECODE_POD_NUM``, the decode server lists; the
  rank tables are the caller's), and per rank ``VLLM_DP_*`` (``start_api_servers.py``).

Plan options the revision has no key for are reported by check SN4041 and written nowhere.
"""

from __future__ import annotations

from sncc.lowering.deployment import Arg, EnvVar, Required, ShellValue
from sncc.lowering.hosts import address_var


def _graph(ctx, name: str) -> bool:
    return ctx.roles[name].graph_mode


def placement_on(ctx, rs) -> bool:
    """True when role ``rs`` runs OmniPlacement: it has ``eplb`` settings in force (``eplb { }``
    or the seeds' ``optimize.omni_placement``) and spreads experts by expert parallelism."""
    return rs.eplb is not None and rs.expert_parallel


def extra_args(ctx, rs) -> list[Arg]:
    """``trust-remote-code`` (``start_api_servers.py`` passes it to every server) and the role's
    ``--additional-config`` (module docstring)."""
    plan = ctx.plan
    out = [] if ctx.resolved.trust_remote_code else [   # else role_args wrote it already
        Arg("trust-remote-code", True, "Omni-Infer's start_api_servers.py starts every server with it")]
    ac: dict = {}
    gcc: dict = {}
    graph = _graph(ctx, rs.name)
    if graph:
        gcc["level"] = 1
    opt = plan.optimize
    if opt is not None and opt.graph_cache and graph:
        gcc["use_ge_graph_cached"] = True
    g = plan.graph
    if graph and g is not None and g.decode_gears:
        gcc["decode_gear_list"] = list(g.decode_gears)
    if gcc:
        ac["graph_model_compile_config"] = gcc
    if opt is not None and opt.omni_attn is not None:
        ac[ctx.adapter.data["omni_attn"]["additional_config"]] = True
    if ac:
        out.append(Arg("additional-config", ac, "Omni-Infer graph compile settings and accelerators"))
    return out


def model_extra_config(ctx, rs) -> dict:
    """The ``model_extra_config.<role>.json`` object (module docstring)."""
    plan, facts = ctx.plan, ctx.adapter.data["model_extra_config"]
    ops: dict = {}
    if plan.disaggregated:
        ops["enable_pd_separated"] = True
    if placement_on(ctx, rs):
        ops["use_omni_placement"] = True
        ops["omni_placement_config_path"] = f"omni_placement.{rs.name}.yaml"
    opt = plan.optimize
    knobs = ctx.adapter.knobs
    # the roles each option is written for: the facts' (Facts.optimize_roles), which the checks and the simulator read
    where = ctx.resolved.optimize_roles
    if opt is not None and opt.superkernel_layers > 0 and rs.name in where.get("superkernel_layers", ()) \
            and _graph(ctx, rs.name):
        ops[knobs["optimize.superkernel_layers"]["key"]] = True
    if opt is not None and opt.micro_batch >= 2 and rs.name in where.get("micro_batch", ()):
        ops[knobs["optimize.micro_batch"]["key"]] = True
    g = plan.graph
    if g is not None and g.decode_gears and _graph(ctx, rs.name):
        ops["decode_gear_list"] = list(g.decode_gears)
    chip = ctx.resolved.chip
    if chip is not None and getattr(chip, "generation", "") == "atlas-a2":
        ops["use_a3_high_performance_cann"] = False
    return {facts["parallel"]: {"dp_size": rs.dp}, facts["operators"]: ops}


def placement_config(ctx, rs) -> dict:
    """The OmniPlacement YAML object of role ``rs``: ``max_moe_layer_num`` (the model's MoE
    layers), the role's ``eplb`` settings in OmniPlacement's keys (``enable_dynamic``,
    ``max_redundant_per_rank``: :mod:`sncc.engines.eplb`), ``max_redundant_per_expert = 1`` and
    ``enable_dump = false`` as Omni-Infer's test configs; no ``pattern_path``: OmniPlacement then
    starts from its base pattern for the rank count."""
    arch = ctx.resolved.arch
    moe_layers = int(getattr(arch, "n_moe_layers", 0) or 0) if arch is not None else 0
    low = ctx.adapter.eplb_lowering(ctx.plan, ctx.resolved, rs)
    keys = dict(low.placement)
    return {
        "max_moe_layer_num": moe_layers,
        "enable_dynamic": bool(keys.get("enable_dynamic", False)),
        "max_redundant_per_expert": 1,
        "max_redundant_per_rank": int(keys.get("max_redundant_per_rank", 0)),
        "enable_dump": False,
    }


def role_files(ctx, rs) -> dict:
    """``{file name: object}`` of role ``rs``: its model extra config and OmniPlacement YAML."""
    files = {f"model_extra_config.{rs.name}.json": model_extra_config(ctx, rs)}
    if placement_on(ctx, rs):
        files[f"omni_placement.{rs.name}.yaml"] = placement_config(ctx, rs)
    return files


def runtime_env(ctx) -> list[EnvVar]:
    """``pd_run.sh``'s variables for every server, and ``TORCHAIR_CACHE_HOME`` for ``graph_cache``."""
    data = ctx.adapter.data
    sec = "Omni-Infer (tools/scripts/pd_run.sh)"
    out = [EnvVar(k, str(v), "", sec) for k, v in data["launch"]["env"].items()]
    arch = ctx.resolved.arch
    if arch is not None and (getattr(arch, "model_type", "") or "") in ("deepseek_v3",):
        out.append(EnvVar(data["launch"]["env_source"]["dsv3_env"], "1", "DeepSeek-V3-family model", sec))
    if any(r.expert_parallel for r in ctx.roles.values()):
        out.append(EnvVar(data["launch"]["env_source"]["mc2_env"], "1", "MoE expert parallelism (server template)", sec))
    opt = ctx.plan.optimize
    if opt is not None and opt.graph_cache:
        knob = ctx.adapter.knobs["optimize.graph_cache"]
        out.append(EnvVar(knob["env"], opt.graph_cache, "optimize.graph_cache: the compiled-graph cache root", sec))
    return out


def _decode_ips(ctx, instance_nodes: tuple[int, ...]) -> ShellValue:
    return ShellValue(",".join("{" + address_var(k) + "}" for k in instance_nodes))


def role_env(ctx, rs, instance: int) -> list[EnvVar]:
    """Per-role variables: ``MODEL_EXTRA_CFG_PATH`` and, for P/D, the LLMDataDist set."""
    data = ctx.adapter.data
    decode_nodes = [s.nodes for s in ctx.slots if s.role == "decode"]
    sec = f"Omni-Infer {rs.name}"
    out = [EnvVar(data["model_extra_config"]["env"], ShellValue("{SNCC_OUT}/model_extra_config." + rs.name + ".json"),
                  "this role's model extra config", sec)]
    if ctx.plan.disaggregated and decode_nodes:
        own = decode_nodes[instance] if rs.name == "decode" and instance < len(decode_nodes) else decode_nodes[0]
        pre = ctx.roles.get("prefill")
        dec = ctx.roles.get("decode")
        out += [EnvVar("ROLE", rs.name, "LLMDataDist role", sec),
                EnvVar("PREFILL_POD_NUM", str(pre.instances if pre else 0), "prefill instances", sec),
                EnvVar("DECODE_POD_NUM", str(dec.instances if dec else 0), "decode instances", sec),
                EnvVar("LOCAL_DECODE_SERVER_IP_LIST", _decode_ips(ctx, own), "nodes of the decode instance", sec),
                EnvVar("GLOBAL_DECODE_SERVER_IP_LIST",
                       ShellValue(";".join(_decode_ips(ctx, n).template for n in decode_nodes)),
                       "nodes of every decode instance, ';' between instances", sec)]
    return out


def required(ctx) -> list[Required]:
    """Rank-table variables every P/D server needs (the tables hold the NPUs' own addresses)."""
    if not ctx.plan.disaggregated:
        return []
    ld = ctx.adapter.data["llmdatadist"]
    tool = ld["ranktable_tool"]
    return [Required(ld["local_rank_table_env"], f"set {ld['local_rank_table_env']} to this node's local rank table "
                                                 f"(Omni-Infer {tool} --mode gen)"),
            Required(ld["global_rank_table_env"], f"set {ld['global_rank_table_env']} to the merged global rank table "
                                                  f"(Omni-Infer {tool} --mode merge-all)")]


def rank_env(ctx, rs, dp_rank: int, master: ShellValue, rpc: int) -> list[EnvVar]:
    """``VLLM_DP_*`` of one rank, as ``start_api_servers.py`` sets them."""
    names = ctx.adapter.data["launch"]["dp_env"]
    sec = "data parallelism (start_api_servers.py)"
    vals = [str(rs.dp), str(dp_rank), str(dp_rank), master, str(rpc)]
    return [EnvVar(n, v, "", sec) for n, v in zip(names, vals)]


def proxy_policy(ctx_or_plan) -> tuple[str, str]:
    """(the global proxy's lb-sdk value, why): the plan's ``omni_proxy.policy`` when the script
    knows it (``round_robin`` is nginx's default), else the script's default."""
    from sncc.engines.registry import adapter_for

    plan = getattr(ctx_or_plan, "plan", ctx_or_plan)
    f = adapter_for("omni-infer").data["proxy"]["global"]
    px = plan.optimize.omni_proxy if plan.optimize is not None else None
    if px is None:
        return f["default_policy"], "global_proxy.sh's default"
    if px.policy in f["policies"] or px.policy == "round_robin":
        return px.policy, "plan omni_proxy.policy"
    return f["default_policy"], f"`{px.policy}` is not a policy of global_proxy.sh: its default"


def inventory(ctx, dep) -> dict:
    """The Ansible inventory of the server playbook (groups P, D, C with its host variables):
    ``ansible_host`` and ``host_ip`` are the node addresses (``lookup('env', 'NODE_<k>_IP')``
    unless the plan gives them), ``node_port`` the instance's DP RPC port, ``api_port`` its first
    API port on the host, ``kv_rank`` the prefill instance, ``ascend_rt_visible_devices`` the slice."""
    def host(k: int) -> str:
        n = dep.nodes[k]
        return n.address or "{{ lookup('env', '" + (n.address_env or n.address_var) + "') }}"

    groups: dict = {"P": {"hosts": {}}, "D": {"hosts": {}}, "C": {"hosts": {}}}
    for r in dep.roles:
        g = "P" if r.name == "prefill" else "D"
        for inst in r.instances:
            for j, k in enumerate(inst.nodes):
                procs = [p for p in inst.processes if p.node == k]
                hv = {"ansible_host": host(k), "node_rank": j}
                if r.name == "prefill":
                    hv["kv_rank"] = inst.index
                hv.update({"node_port": inst.dp_rpc_port or ctx.ports.dp_rpc,
                           "api_port": min(p.api_port for p in procs if p.api_port is not None),
                           "host_ip": host(inst.dp_master_node),
                           "ascend_rt_visible_devices": ",".join(str(d) for p in procs for d in p.devices)})
                groups[g]["hosts"][f"{g.lower()}{inst.index}" + (f"_{j}" if len(inst.nodes) > 1 else "")] = hv
    if dep.proxy is not None:
        groups["C"]["hosts"]["c0"] = {"ansible_host": host(dep.proxy.node), "node_rank": 0,
                                      "node_port": dep.proxy.port, "role": "C"}
    return {"all": {"vars": {"base_api_port": ctx.ports.api, "proxy_port": ctx.ports.proxy,
                             "PREFILL_LB_SDK": dep.proxy.policy if dep.proxy is not None else "",
                             "DECODE_LB_SDK": dep.proxy.policy if dep.proxy is not None else ""},
                    "children": {k: v for k, v in groups.items() if v["hosts"]}}}

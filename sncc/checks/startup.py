"""Start-up time against the readiness bound (SN6020).

Model (docs/research/rule-kinds.md K9; constants in ``engine_rules.toml [startup]`` and
``[[startup_warmup]]``)::

    start-up ≥ checkpoint bytes one node reads / storage bandwidth + warm-up terms

* bytes per device: each weight group of :func:`sncc.catalog.arch.param_breakdown` at its bytes per
  parameter (:attr:`Facts.weight_bytes_per_param`); attention, dense FFN, shared experts, embedding
  and LM head split over ``tp`` (each DP replica reads its own copy), routed experts over the EP
  group (or tensor-sharded over ``tp × dp``), layers over ``pp``;
* a node reads the shards of every device it hosts;
* storage bandwidth: ``hardware.storage_bandwidth``, else the conservative default;
* the bound: ``engine.ready_timeout``, else the role env's ``VLLM_ENGINE_READY_TIMEOUT_S``, else
  vLLM's 600 s default.

An error when the plan states both the bandwidth and the bound (its own figures say start-up
cannot finish), a warning otherwise: the default bandwidth is a conservative guess.
"""

from __future__ import annotations

from sncc.checks._rules import rows, sources, table
from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag
from sncc.units import format_bytes_gib as gib


def bytes_per_device(arch, wb: dict[str, float], rf) -> float:
    """Checkpoint bytes one device of role facts ``rf`` loads (module docstring)."""
    from sncc.catalog.arch import param_breakdown

    p = param_breakdown(arch)
    dense = sum(p[g] * wb.get(g, 2.0) for g in ("attention", "dense_ffn", "shared_experts", "embedding", "lm_head", "router"))
    experts = p["routed_experts"] * wb.get("routed_experts", 2.0)
    share = rf.ep_size if rf.expert_parallel else rf.tp * rf.dp
    slots = (rf.routed_slots / rf.routed_experts) if rf.routed_experts else 1.0
    per = dense / rf.tp + experts * slots / max(1, share)
    return per / rf.pp + (p["mtp"] * wb.get("mtp", 2.0) / rf.tp if rf.speculative is not None and rf.speculative.method == "mtp" else 0.0)


def _timeout(plan, r):
    """(seconds, span, how) of the readiness bound in force."""
    st = table("startup")
    eng = plan.engine
    if eng.ready_timeout is not None:
        return float(eng.ready_timeout), eng.span_of("ready_timeout"), "engine.ready_timeout", True
    var = st.get("ready_timeout_env", "VLLM_ENGINE_READY_TIMEOUT_S")
    for rf in r.roles.values():
        v = rf.env_value(var)
        if v is not None:
            try:
                return float(v), rf.env_span(var), var, True
            except ValueError:
                break
    return float(st.get("ready_timeout_s", 600.0)), eng.name_span, f"{var} default", False


def check_startup_within_timeout(plan, r):
    """Weight load (+ warm-up) of the busiest node ≤ the readiness bound (SN6020)."""
    a = r.arch
    st = table("startup")
    if a is None or not st or not r.weight_bytes_per_param or not r.roles:
        return
    per_node = r.devices_per_node
    hw = plan.hardware
    bw_written = hw.storage_bandwidth is not None
    bw = float(hw.storage_bandwidth) if bw_written else float(st["storage_bandwidth"])
    loads = []
    for name, rf in r.roles.items():
        devs = rf.instances * rf.devices
        on_node = min(devs, per_node) if per_node else devs
        loads.append((name, on_node * bytes_per_device(a, r.weight_bytes_per_param, rf), on_node))
    used = sum(rf.instances * rf.devices for rf in r.roles.values())
    if per_node and used <= per_node and len(loads) > 1:
        name, node_bytes, devs = "all roles", sum(b for _, b, _ in loads), used
    else:
        name, node_bytes, devs = max(loads, key=lambda x: x[1])
    load_s = node_bytes / bw
    warm, warm_notes = 0.0, []
    vendor = r.vendor or ""
    for row in rows("startup_warmup"):
        if vendor not in row.get("vendors", ()) or (row.get("quant") and r.quant not in row["quant"]):
            continue
        if row.get("expert_parallel") and not r.moe_ep:
            continue
        warm += float(row["seconds"])
        warm_notes.append(f"+ {row['seconds']:.0f} s {row['name']} ({sources(row)})")
    total = load_s + warm
    bound, span, how, bound_written = _timeout(plan, r)
    if total <= bound:
        return
    sure = bw_written and bound_written
    bw_how = "hardware.storage_bandwidth" if bw_written else f"default {bw / 1e9:g} GB/s: {st.get('storage_bandwidth_source', '')}"
    related = [Related(hw.span_of("storage_bandwidth"), f"{bw / 1e9:g} GB/s")] if bw_written else []
    yield diag(codes.READY_TIMEOUT_SHORT,
               f"start-up needs about {total / 60:.0f} min ({node_bytes / 1e9:.0f} GB of weights on one node of `{name}` at "
               f"{bw / 1e9:g} GB/s = {load_s:.0f} s" + (f", + {warm:.0f} s warm-up" if warm else "") + f"), more than the "
               f"{bound:.0f} s readiness bound ({how})",
               span, related=related, severity=None if sure else "warning",
               notes=[f"{devs} devices on the node, {gib(node_bytes / max(1, devs))} of weights each ({r.weight_bytes_note or 'catalog quantization'})",
                      f"bandwidth: {bw_how}"] + warm_notes
                     + ["the API server stops waiting for engine cores after VLLM_ENGINE_READY_TIMEOUT_S: \"Timed out waiting for "
                        "engines to send initial message\" (vllm#35547)"],
               help=f"raise the bound above {total * 1.5 / 60:.0f} min (`engine {{ ready_timeout = {max(10, int(total * 1.5 / 60 + 1))}min }}`, "
                    "and VLLM_ENGINE_READY_TIMEOUT_S in `env`), or state the measured `hardware { storage_bandwidth }`",
               path=("engine", "ready_timeout"))

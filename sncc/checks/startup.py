"""Start-up time against the readiness bound (SN6020).

Model (docs/research/rule-kinds.md K9; constants in ``engine_rules.toml [startup]`` and
``[[startup_warmup]]``)::

    start-up ≥ checkpoint bytes one node reads / storage bandwidth + warm-up terms

* bytes of one node (:func:`bytes_per_node`): each weight group of
  :func:`sncc.catalog.arch.param_breakdown` at its bytes per parameter
  (:attr:`Facts.weight_bytes_per_param`); the non-expert weights once per node (TP ranks read
  their slices, data-parallel replicas the same files, which the page cache serves once), the
  routed experts of the node's share of the EP group, layers over ``pp``.  Several instances of
  one role on a node read the same files, so they count once;
* storage bandwidth: ``hardware.storage_bandwidth``, else the conservative default;
* the bound: ``engine.ready_timeout``, else the role env's ``VLLM_ENGINE_READY_TIMEOUT_S``, else
  vLLM's 600 s default; on a release whose vLLM reads no such variable (its manifest; before
  0.14.1) the 600 s wait is fixed, and a written ``ready_timeout`` cannot raise it.

An error when the plan states both the bandwidth and the bound (its own figures say start-up
cannot finish), a warning when it states one of them (the other at its default); nothing when it
states neither: the conservative default bandwidth alone is a guess, not a finding.
"""

from __future__ import annotations

from sncc.checks._rules import default_pin_help, engine_release, release_related, rows, sources, table, vllm_label
from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag
from sncc.units import format_count


def bytes_per_node(arch, wb: dict[str, float], rf, devices_on_node: int) -> float:
    """Distinct checkpoint bytes one node reads for the ``devices_on_node`` devices of role facts
    ``rf`` it hosts (module docstring): the non-expert weights once per node for each TP slice
    present (data-parallel replicas read the same files, which the page cache serves once), the
    routed experts of the node's share of the EP group (or of the tensor shards), layers over ``pp``."""
    from sncc.catalog.arch import param_breakdown

    p = param_breakdown(arch)
    dense = sum(p[g] * wb.get(g, 2.0) for g in ("attention", "dense_ffn", "shared_experts", "embedding", "lm_head", "router"))
    if rf.speculative is not None and rf.speculative.method == "mtp":
        dense += p["mtp"] * wb.get("mtp", 2.0)
    experts = p["routed_experts"] * wb.get("routed_experts", 2.0)
    per_stage = rf.devices // max(1, rf.pp)
    stages_here = max(1, -(-devices_on_node // max(1, per_stage)))
    frac_stage = min(1.0, stages_here / max(1, rf.pp))
    tp_frac = min(1.0, devices_on_node / max(1, rf.tp))
    share = rf.ep_size if rf.expert_parallel else rf.tp * rf.dp
    ex_frac = min(1.0, devices_on_node / share) if share > 1 else 1.0
    return frac_stage * (dense * tp_frac + experts * ex_frac)


def _timeout(plan, r):
    """(seconds, span, how) of the readiness bound in force."""
    st = table("startup")
    eng = plan.engine
    var = st.get("ready_timeout_env", "VLLM_ENGINE_READY_TIMEOUT_S")
    fixed = _release_fixes_the_wait(plan, r, var, st.get("ready_timeout_env_since"))
    if fixed is not None:
        # the release's vLLM reads no variable: what the plan writes cannot move its wait
        span = eng.span_of("ready_timeout") if eng.ready_timeout is not None else eng.name_span
        return (float(st.get("ready_timeout_s", 600.0)), span,   # naming sncc's default pin when it is the release judged
                f"fixed in {vllm_label(plan, r, fixed)}, which reads no {var}; `ready_timeout` cannot raise it", eng.ready_timeout is not None)
    if eng.ready_timeout is not None:
        return float(eng.ready_timeout), eng.span_of("ready_timeout"), "engine.ready_timeout", True
    for rf in r.roles.values():
        v = rf.env_value(var)
        if v is not None:
            try:
                return float(v), rf.env_span(var), var, True
            except ValueError:
                break
    return float(st.get("ready_timeout_s", 600.0)), eng.name_span, f"{var} default", False


def _release_fixes_the_wait(plan, r, var: str, since: str | None) -> str | None:
    """The vLLM version the plan's engine release (:func:`sncc.checks._rules.engine_release`: written,
    else sncc's default pin) runs when that vLLM reads no ``var`` (the wait is
    hard-coded: vllm/v1/engine/core_client.py before 0.14.1, engine_rules.toml [startup]): its
    manifest says when there is one, else the first release reading it (``since``); None when the
    release reads it or nothing says."""
    from sncc import catalog
    from sncc.engines.manifest import ManifestError, load
    from sncc.engines.registry import plan_adapter

    adapter = plan_adapter(plan)
    if adapter is None:
        return None
    vllm = adapter.vllm_version(engine_release(plan, r))
    try:
        return None if var in load("vllm", vllm).env_vars else vllm
    except ManifestError:
        pass
    try:
        return vllm if since and catalog.parse_version(vllm) < catalog.parse_version(since) else None
    except ValueError:
        return None


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
        loads.append((name, bytes_per_node(a, r.weight_bytes_per_param, rf, min(on_node, rf.devices)), on_node))
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
        if row.get("expert_parallel") and not any(rf.expert_parallel and rf.ep_size >= int(row.get("min_ep_size", 2))
                                                  for rf in r.roles.values()):
            continue
        warm += float(row["seconds"])
        warm_notes.append(f"+ {row['seconds']:.0f} s {row['name']} ({sources(row)})")
    total = load_s + warm
    bound, span, how, bound_written = _timeout(plan, r)
    if total <= bound or not (bw_written or bound_written):
        return   # neither figure stated: the conservative default bandwidth alone does not judge a plan
    sure = bw_written and bound_written
    bw_how = "hardware.storage_bandwidth" if bw_written else f"default {bw / 1e9:g} GB/s: {st.get('storage_bandwidth_source', '')}"
    related = [Related(hw.span_of("storage_bandwidth"), f"{bw / 1e9:g} GB/s")] if bw_written else []
    pin_help = None
    if how.startswith("fixed"):   # the release is why the wait is fixed: point at it
        related += release_related(plan, r)
        pin_help = default_pin_help(plan, r, "`ready_timeout`")
    yield diag(codes.READY_TIMEOUT_SHORT,
               f"start-up needs about {total / 60:.0f} min ({node_bytes / 1e9:.0f} GB of weights on one node of `{name}` at "
               f"{bw / 1e9:g} GB/s = {load_s:.0f} s" + (f", + {warm:.0f} s warm-up" if warm else "") + f"), more than the "
               f"{bound:.0f} s readiness bound ({how})",
               span, related=related, severity=None if sure else "warning",
               notes=[f"{format_count(devs, 'device')} on the node; weight bytes per group: {r.weight_bytes_note or 'catalog quantization'}",
                      f"bandwidth: {bw_how}"] + warm_notes
                     + ["the API server stops waiting for engine cores after VLLM_ENGINE_READY_TIMEOUT_S: \"Timed out waiting for "
                        "engines to send initial message\" (vllm#35547)"],
               help=(f"a vLLM release that reads {st.get('ready_timeout_env', 'VLLM_ENGINE_READY_TIMEOUT_S')} "
                     f"({st.get('ready_timeout_env_since', '?')} or later), "
                     f"with the bound above {total * 1.5 / 60:.0f} min, or faster storage"
                     + (f" ({pin_help})" if pin_help else "")) if how.startswith("fixed") else
                    f"raise the bound above {total * 1.5 / 60:.0f} min (`engine {{ ready_timeout = {max(10, int(total * 1.5 / 60 + 1))}min }}`, "
                    "and VLLM_ENGINE_READY_TIMEOUT_S in `env`), or state the measured `hardware { storage_bandwidth }`",
               path=("engine", "ready_timeout"))

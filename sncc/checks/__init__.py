"""Constraint passes over a typed plan.

``CHECKS`` is the pipeline: a plain tuple of functions, each
``check(plan, resolved) -> Iterable[Diagnostic]``, pure and independent, in the
order their diagnostics are most useful.  A check that lacks a fact it needs
(an unknown chip, say) yields nothing: resolution already reported the cause.
A new check goes in the module of its family and into this tuple.
"""

from __future__ import annotations

from sncc.checks import (context, divisibility, engine_options, gateway, graph, hosts, lengths, memory,
                         parallelism, pd_transfer, quantization, release_support, runtime_env, scheduler, slo,
                         software, software_set, speculative, startup, timeouts, versions, workload, features)



def check_trace(plan, resolved):
    """SN2015 for an unreadable or malformed workload trace (:func:`sncc.workload.trace.check_trace`;
    imported only for plans that name a trace)."""
    wl = getattr(plan, "workload", None)
    if wl is None or not wl.trace:
        return ()
    from sncc.workload.trace import check_trace as _check
    return _check(plan, resolved)


CHECKS = (
    parallelism.check_plan_size,
    parallelism.check_roles,
    parallelism.check_parallel_keys,
    parallelism.check_parallel_sizes,
    parallelism.check_device_count,
    parallelism.check_heads_divisible,
    parallelism.check_experts_spread,
    parallelism.check_redundant_needs_eplb,
    divisibility.check_vocab_divisible,
    divisibility.check_moe_tp_shards,
    divisibility.check_spec_tokens_vs_tp,
    quantization.check_quant_matches_checkpoint,
    quantization.check_loaded_checkpoint_format,
    quantization.check_quant_supported,
    quantization.check_quant_engine,
    quantization.check_kv_dtype_supported,
    versions.check_quant_release,
    software.check_cann_supports_chip,
    software.check_engine_vendor,
    software.check_engine_release,
    versions.check_software_versions,
    software_set.check_software_set,
    release_support.check_values_in_release,
    release_support.check_model_in_release,
    versions.check_removed_options,
    graph.check_graph_mode,
    graph.check_capture_grid,
    graph.check_decode_gears,
    runtime_env.check_device_mask,
    runtime_env.check_hccl_buffsize_range,
    runtime_env.check_hccl_buffer,
    runtime_env.check_hccl_connect_timeout,
    pd_transfer.check_kv_connector,
    pd_transfer.check_kv_connector_without_peer,
    pd_transfer.check_kv_connector_tp,
    pd_transfer.check_connector_layout,
    pd_transfer.check_pd_speculative_tokens,
    pd_transfer.check_kv_connector_settings,
    scheduler.check_chunk_within_budget,
    scheduler.check_budget_covers_context,
    scheduler.check_seqs_within_budget,
    scheduler.check_prefix_cache_hit,
    versions.check_engine_pinned,
    features.check_superkernel_layers,
    features.check_options_apply,
    features.check_eplb_effective,
    features.check_pinned_options,
    engine_options.check_vllm_ascend_options,
    engine_options.check_env_read,
    engine_options.check_engine_choices,
    engine_options.check_switches_in_release,
    features.check_mtp_layers,
    workload.check_length_distributions,
    workload.check_requests_fit_context,
    workload.check_bench_reproduces_workload,
    context.check_context_within_model,
    context.check_max_tokens_within_model,
    lengths.check_engine_default_length,
    lengths.check_draft_window,
    lengths.check_draft_rope,
    memory.check_kv_fits,
    memory.check_memory_outside_budget,
    hosts.check_hosts,
    gateway.check_model_id,
    gateway.check_timeout,
    timeouts.check_proxy_timeouts,
    timeouts.check_gateway_timeout_set,
    startup.check_startup_within_timeout,
    slo.check_slo_targets_plausible,
    slo.check_tpot_reachable,
    speculative.check_draft_model,
    speculative.check_speculative_gain,
    speculative.check_lookup_window_method,
    speculative.check_lookup_window_per_role,
    check_trace,
)


def run_checks(plan, resolved) -> list:
    """Run every check in :data:`CHECKS` and return all diagnostics."""
    from sncc.plan.model import run_unpoisoned

    out = []
    for check in CHECKS:
        out.extend(run_unpoisoned(check, plan, resolved))  # no cascade from a rejected value
    return out

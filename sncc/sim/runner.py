"""``simulate(spec) -> SimResult``: prepare the cost models and run the DES."""
from __future__ import annotations

import random
from typing import Any

from . import cost_comm as cc
from .cost_kv_transfer import kv_exposed_time, kv_transfer_time
from .engine import Simulation
from .memory import blocks_for, kv_budget_bytes_per_device, weight_bytes_per_device
from .metrics import SimResult, build_result
from .model_shape import kv_bytes_per_token as _kv_formula, model_shape
from .profile import load_profile
from .step_model import StepModel
from .workload import sample_lengths


def resolve_quant(spec: Any) -> tuple:
    """(weight bytes per parameter, compute dtype) from overrides or the catalog."""
    wb, cd = spec.quant_weight_bytes, spec.quant_compute_dtype
    if wb is None or cd is None:
        from sncc import catalog
        q = catalog.quant(spec.quant)
        wb = q.weight_bytes if wb is None else wb
        cd = q.compute_dtype if cd is None else cd
    return float(wb), str(cd)


def resolve_kv_bytes_per_token(spec: Any) -> float:
    """All-layer KV bytes per token [B]: spec override, catalog arch helper, or formula."""
    if spec.kv_bytes_per_token:
        return float(spec.kv_bytes_per_token)
    try:
        from sncc.catalog import arch
        return float(arch.kv_bytes_per_token(spec.model, spec.kv_dtype))
    except (ImportError, AttributeError):
        from sncc import catalog
        return _kv_formula(model_shape(spec.model), float(catalog.kv_dtype_bytes(spec.kv_dtype)))


class _Context:
    """Everything the engine needs, precomputed once per run."""


def prepare(spec: Any) -> Any:
    """Build the simulation context (cost models, KV pools, sampled lengths)."""
    prof = load_profile(spec.profile)
    shape = model_shape(spec.model)
    wb, cdt = resolve_quant(spec)
    kv_tok = resolve_kv_bytes_per_token(spec)
    c = _Context()
    c.profile = prof
    c.shape = shape
    c.kv_tok = kv_tok
    wl = spec.workload
    rng = random.Random(spec.workload.seed)
    c.prompts = sample_lengths(wl.input, wl.requests, rng, prof.get("workload.lognormal_cv_input"))
    c.outputs = sample_lengths(wl.output, wl.requests, rng, prof.get("workload.lognormal_cv_output"))
    max_tokens = wl.max_tokens or wl.output.max or getattr(spec.model, "max_output_tokens", None) or max(c.outputs)
    c.outputs = [min(o, max_tokens) for o in c.outputs]
    hit = spec.features.prefix_cache_hit_rate or 0.0
    c.cached = [int(p * hit) for p in c.prompts]
    if hit > 0:  # at least one token is always computed
        c.cached = [min(ca, p - 1) for ca, p in zip(c.cached, c.prompts)]
    mtp_on = spec.features.mtp is not None
    info = {"kv_bytes_per_token": kv_tok, "weight_bytes_per_param": wb, "compute_dtype": cdt}

    def pool_blocks(name: str, role: Any) -> int:
        w = weight_bytes_per_device(shape, role, wb, spec.features.redundant_experts if name != "prefill" else 0,
                                    mtp_on, prof.get("memory.embedding_bytes_per_param"))
        budget = role.kv_budget_bytes_per_device
        if budget is None:
            budget = kv_budget_bytes_per_device(spec.chip, prof, name, w)
        share = 1.0 if shape.is_mla else max(1.0, shape.n_kv_heads / role.tp) / shape.n_kv_heads
        per_block = role.block_size * kv_tok * share
        info[f"{name}.weights_bytes_per_device"] = w
        info[f"{name}.kv_budget_bytes_per_device"] = budget
        return int(budget // per_block)

    if spec.disaggregated:
        c.prefill, c.decode = spec.role("prefill"), spec.role("decode")
        c.prefill_model = StepModel(spec, "prefill", c.prefill, prof, shape, kv_tok, wb, cdt)
        c.decode_model = StepModel(spec, "decode", c.decode, prof, shape, kv_tok, wb, cdt)
        c.decode_blocks = pool_blocks("decode", c.decode)
        blk = c.decode.block_size
        roles = [c.prefill, c.decode]
        total_dev = sum(r.instances * r.devices for r in roles)
        link = cc.link_for_group(spec.links, c.prefill.devices + c.decode.devices, spec.devices_per_node)
        bw, _ = cc.link_bw_lat(link)
        eta = prof.get("kv_transfer.link_efficiency")
        setup = prof.get("kv_transfer.setup_s")
        tdesc = prof.get("kv_transfer.per_descriptor_s")
        layerwise = bool(prof.get("kv_transfer.layerwise"))
        senders = c.prefill.tp
        L = shape.n_layers

        def kv_exposed(tokens: int, t_step: float) -> float:
            t = kv_transfer_time(tokens, kv_tok, blk, L, bw, eta, setup, tdesc, senders)
            return kv_exposed_time(t, t_step, L, layerwise)
        c.kv_exposed = kv_exposed
    else:
        c.serve = spec.role("serve")
        c.serve_model = StepModel(spec, "serve", c.serve, prof, shape, kv_tok, wb, cdt)
        c.serve_blocks = pool_blocks("serve", c.serve)
        blk = c.serve.block_size
        total_dev = c.serve.instances * c.serve.devices

    prompts, outputs = c.prompts, c.outputs
    if spec.kv_admission == "reserve-max-tokens":
        c.reserve_blocks = lambda i: blocks_for(prompts[i] + max_tokens, blk)
    elif spec.kv_admission == "on-demand":
        # no preemption model: a request holds at most its final length
        c.reserve_blocks = lambda i: blocks_for(prompts[i] + outputs[i], blk)
    else:
        raise ValueError(f"unknown kv_admission {spec.kv_admission!r}")
    c.total_devices = total_dev
    c.info = info
    return c


def simulate(spec: Any) -> SimResult:
    """Run the discrete-event simulation of ``spec`` and return its metrics."""
    c = prepare(spec)
    sim = Simulation(spec, c)
    raw = sim.run()
    info = dict(c.info)
    info["issued"] = raw["issued"]
    return build_result(raw["reqs"], c.total_devices, spec.slos, c.profile.used_fitted, info,
                        raw["t_first_block"])

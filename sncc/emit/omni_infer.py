"""``omni-infer.json``: the Omni-Infer launch configuration of a plan (engine ``omni-infer``).

Shape: the seed-000 snippet (``model``, ``prefill_nodes``, ``decode_nodes``,
``tp_size``, ``batch_size_per_die``, ``max_input_len``, ``max_output_len``,
``omni_placement``, ``omni_attn``, ``omni_proxy``) plus ``$schema`` and a few
keys the launch needs, in this fixed order::

    $schema, model, model_path, quantization, prefill_nodes, decode_nodes, tp_size,
    batch_size_per_die, max_input_len, max_output_len, max_model_len,
    hf_overrides (only with model.rope_scaling), kv_cache_dtype, block_size, prefill, decode (or serve), omni_placement,
    omni_attn, omni_proxy, speculative (only when the plan has one)

Decisions:

* ``prefill_nodes`` / ``decode_nodes`` are **instance** counts (seed 000's
  "7P1D": 7 prefill instances, 1 decode instance), not machine counts.
* ``tp_size`` is the **prefill** role's tensor-parallel size, which is what seed
  000's ``"tp_size": 8`` means (Omni-Infer's decode runs TP 1,
  ``DECODE_TENSOR_PARALLEL_SIZE=1``).  Each role's own sizes are in its
  ``prefill`` / ``decode`` object.
* **ep**: the plan's ``ep`` is vLLM's data-parallel size of attention, which
  Omni-Infer calls ``model_parallel_config.dp_size`` in its model extra config
  (``MODEL_EXTRA_CFG_PATH``); each role object carries a
  ``model_parallel_config: {"dp_size": ep}`` that can be pasted into that role's
  extra-config file, next to ``tensor_parallel_size`` (vLLM's name) and
  ``enable_expert_parallel`` (true for a MoE model with tp × ep > 1).
* ``batch_size_per_die`` is the **decode** role's ``max_num_seqs``: the
  sequences one decode data-parallel rank batches per step (with decode TP 1,
  as in every Omni-Infer recipe, one rank is one die).  Seed 000 wrote 3168
  there, which is the *client* concurrency of its benchmark, not a per-die
  batch; the total decode batch is ``max_num_seqs × dp_size × instances``
  (48 × 64 × 1 = 3072 for the seed deployment).  For an aggregated plan the
  ``serve`` role's value is used.
* ``max_input_len`` / ``max_output_len`` are the workload's maximum input and
  output lengths in tokens; ``max_model_len`` is the resolved context length.
* ``enable_chunked_prefill`` of a PD ``decode`` role is true unless the plan
  sets ``chunked_prefill = off`` there (decode never prefills; vLLM rejects
  chunked prefill off with ``max_num_batched_tokens < max_model_len``; see
  :mod:`sncc.lowering`).
* ``hf_overrides`` is vLLM's ``--hf-overrides`` for ``model.rope_scaling``:
  Omni-Infer runs on vLLM v0.9, so the YaRN object is ``rope_scaling``.
* ``speculative.model`` is the draft checkpoint (``speculative_config.model``).
* A disabled accelerator is written ``{"enable": false}`` so the three blocks
  are always present.  ``omni_placement.dynamic_adjust_interval`` (steps) is
  written only when the plan sets ``adjust_interval`` (absent = static
  placement).
* An aggregated plan (one ``serve`` role) gets ``prefill_nodes = 0``,
  ``decode_nodes = serve.instances`` and a ``serve`` object; Omni-Infer is built
  for PD disaggregation, so the checks are expected to warn about it.
"""

from __future__ import annotations

from typing import Any

from sncc.emit._common import dump_json, num, schema_ref
from sncc.lowering import Deployment, RoleDeployment, lower
from sncc.plan.model import Plan
from sncc.plan.resolve import Resolved

SCHEMA = "omni-infer"


def _role(r: RoleDeployment) -> dict[str, Any]:
    d: dict[str, Any] = {
        "instances": r.instances,
        "devices": r.devices,
        "tensor_parallel_size": r.tp,
        "pipeline_parallel_size": r.pp,
        "model_parallel_config": {"dp_size": r.dp},
        "enable_expert_parallel": r.expert_parallel,
        "max_num_seqs": r.max_num_seqs,
        "max_num_batched_tokens": r.max_num_batched_tokens,
        "enable_chunked_prefill": r.enable_chunked_prefill,
    }
    if r.chunked_prefill is not None:
        d["chunked_prefill_size"] = r.chunked_prefill
    d["gpu_memory_utilization"] = num(r.memory_utilization)
    d["enforce_eager"] = not r.graph_mode
    if r.kv_role is not None:
        d["kv_role"] = r.kv_role
    return d


def build(plan: Plan, resolved: Resolved, dep: Deployment | None = None) -> dict[str, Any]:
    """The omni-infer.json document as a dict (keys in output order); see the module docstring.

    Units: lengths and budgets in tokens, counts in instances/devices/sequences,
    ``compress_ratio`` and ``gpu_memory_utilization`` fractions,
    ``dynamic_adjust_interval`` engine steps.
    """
    dep = dep or lower(plan, resolved)
    pre, dec, srv = dep.role("prefill"), dep.role("decode"), dep.role("serve")
    doc: dict[str, Any] = {"$schema": schema_ref(SCHEMA), "model": dep.served_name}
    if plan.model.weights:
        doc["model_path"] = plan.model.weights
    if dep.quant:
        doc["quantization"] = dep.quant
    if srv is not None and pre is None and dec is None:
        doc["prefill_nodes"] = 0
        doc["decode_nodes"] = srv.instances
        doc["tp_size"] = srv.tp
        doc["batch_size_per_die"] = srv.max_num_seqs
    else:
        doc["prefill_nodes"] = pre.instances if pre else 0
        doc["decode_nodes"] = dec.instances if dec else 0
        doc["tp_size"] = (pre or dec).tp
        doc["batch_size_per_die"] = (dec or pre).max_num_seqs
    doc["max_input_len"] = dep.max_input_len
    doc["max_output_len"] = dep.max_output_len
    doc["max_model_len"] = dep.max_model_len
    if dep.hf_overrides:
        doc["hf_overrides"] = dep.hf_overrides
    doc["kv_cache_dtype"] = dep.kv_dtype
    doc["block_size"] = dep.block_size
    for r in dep.roles:
        doc[r.name] = _role(r)

    opt = plan.optimize
    pl = opt.omni_placement if opt is not None else None
    if pl is not None:
        placement: dict[str, Any] = {"enable": True, "redundant_experts": pl.redundant_experts}
        if pl.adjust_interval is not None:
            placement["dynamic_adjust_interval"] = pl.adjust_interval
    else:
        placement = {"enable": False}
    doc["omni_placement"] = placement
    at = opt.omni_attn if opt is not None else None
    doc["omni_attn"] = ({"enable": True, "compress_ratio": num(at.compress_ratio), "search_mode": at.search}
                        if at is not None else {"enable": False})
    px = opt.omni_proxy if opt is not None else None
    doc["omni_proxy"] = ({"enable": True, "scheduling_policy": px.policy, "apc_aware": px.apc_aware}
                         if px is not None else {"enable": False})
    if plan.speculative is not None:
        doc["speculative"] = {"method": plan.speculative.method,
                              "num_speculative_tokens": plan.speculative.draft_tokens}
        if plan.speculative.model:
            doc["speculative"]["model"] = plan.speculative.model
    return doc


def emit(plan: Plan, resolved: Resolved) -> str:
    """``omni-infer.json`` text (deterministic, UTF-8, trailing newline)."""
    return dump_json(build(plan, resolved))

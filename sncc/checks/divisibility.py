"""Divisibility rules the engines assert at start-up (SN3021–SN3023): the padded vocabulary over
TP, the speculative query length against TP under sequence parallelism, and tensor-sharded
experts into whole shards and whole FP8 blocks.

Facts: ``engine_rules.toml`` ``[vocab_padding]``, ``[[sequence_parallel]]``,
``[[sequence_parallel_budget]]``, ``[fp8_weight_block]`` (docs/research/rule-kinds.md K6, K7, F1).
"""

from __future__ import annotations

import math

from sncc.checks._rules import cmp_version, default_pin_help, engine_release, release_label, release_related, rows, sources, table
from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag


def check_vocab_divisible(plan, r):
    """``pad(vocab, 64) % tp == 0`` (SN3021; vllm#31474, gpustack#3777)."""
    a = r.arch
    row = table("vocab_padding")
    if a is None or not row or plan.engine.kind not in row.get("engines", ()):
        return
    m = int(row["multiple"])
    padded = -(-a.vocab_size // m) * m
    for name, role in plan.roles():
        tp = role.tp
        if tp <= 1 or padded % tp == 0 or a.num_attention_heads % tp:
            continue   # heads that do not divide are SN3004, whose valid tp values respect the vocabulary too
        ok = [d for d in range(2, 65) if padded % d == 0 and a.num_attention_heads % d == 0]
        # pipeline stages keep the devices of a rank at a smaller tp (each stage still splits the
        # vocabulary over its tp, so the refused tp itself never becomes valid)
        keep = max((d for d in ok if d < tp and tp % d == 0), default=None)
        yield diag(codes.VOCAB_NOT_DIVISIBLE,
                   f"`{name}`: the vocabulary of `{r.served_name}`, {a.vocab_size} padded to {padded} (a multiple of {m}), "
                   f"does not divide by tp = {tp}",
                   role.span_of("tp"), notes=[f"VocabParallelEmbedding asserts `{padded} is not divisible by {tp}`; "
                                              "source: " + sources(row)],
                   help="use a tp that divides both the heads and the padded vocabulary: " + ", ".join(map(str, ok[:8]))
                        + (f" (or keep the {tp} devices per rank as tp = {keep} × pp = {tp // keep})" if keep else ""),
                   path=(name, "tp"))


def _sp_on(plan, rf) -> tuple[bool, str, object]:
    """(sequence parallelism on, the variable that turns it on, its span) for one role."""
    for row in rows("sequence_parallel"):
        if plan.engine.kind not in row.get("engines", ()):
            continue
        for var in row.get("env", ()):
            v = rf.env_value(var)
            if v is not None and v.strip().lower() not in ("0", "false", "off", ""):
                return True, var, rf.env_span(var)
    return False, "", None


def check_spec_tokens_vs_tp(plan, r):
    """Under sequence parallelism (vllm-ascend FlashComm1): ``max(1 + k, tp)`` divisible by both,
    and on releases before the fixes ``max_num_seqs × (1 + k)`` and ``max_num_batched_tokens``
    multiples of TP (SN3022; vllm#29036, vllm-ascend#7832, #6000).  The release is the one the build
    writes for (:func:`sncc.checks._rules.engine_release`: written, else sncc's default pin)."""
    eng = plan.engine
    release = engine_release(plan, r)
    for name, role in plan.roles():
        rf = r.roles.get(name)
        if rf is None or rf.tp <= 1:
            continue
        on, var, span = _sp_on(plan, rf)
        if not on:
            continue
        tp, k = rf.tp, rf.draft_tokens
        rel = [Related(span, f"{var} turns sequence parallelism (FlashComm1) on")]
        if k and rf.graph_mode:
            q = 1 + k
            mult = max(q, tp)
            if mult % q or mult % tp:
                good = [kk for kk in range(1, 8) if max(kk + 1, tp) % (kk + 1) == 0 and max(kk + 1, tp) % tp == 0]
                sp = rf.speculative
                yield diag(codes.SPEC_TOKENS_VS_TP,
                           f"`{name}`: with sequence parallelism, captured sizes must be multiples of tp = {tp} and of "
                           f"1 + {k} draft tokens = {q}, and max({q}, {tp}) = {mult} is not a multiple of both",
                           sp.span_of("draft_tokens") if sp is not None else role.span_of("tp"), related=rel,
                           notes=["vLLM adjust_cudagraph_sizes_for_spec_decode: \"Can't determine cudagraph shapes that are "
                                  "both a multiple of (1+k) and tp required by sequence parallelism\" (vllm#29036)"],
                           help=f"use draft_tokens = {', '.join(map(str, good[:4]))} with tp = {tp}, or turn {var} off",
                           path=(name, "speculative", "draft_tokens"))
                continue
        for row in rows("sequence_parallel_budget"):
            if eng.kind not in row.get("engines", ()) or not release:
                continue
            c = cmp_version(release, row["fixed_in"])
            if c is None or c >= 0:
                continue
            bad = None
            if row["quantity"] == "max_num_seqs_tokens" and rf.graph_mode and rf.max_num_seqs * (1 + k) % tp:
                step = tp // math.gcd(tp, 1 + k)   # max_num_seqs multiples of this make max_num_seqs × (1 + k) one of tp
                bad = ("max_num_seqs", f"fails at init under FlashComm1 when max_num_seqs × (1 + k) = {rf.max_num_seqs * (1 + k)} "
                       f"is not a multiple of tp = {tp}", f"max_num_seqs = {-(-rf.max_num_seqs // step) * step}")
            elif row["quantity"] == "max_num_batched_tokens" and rf.max_num_batched_tokens % tp:
                bad = ("max_num_batched_tokens", f"asserts under FlashComm1 that max_num_batched_tokens {rf.max_num_batched_tokens} "
                       f"is a multiple of tp = {tp}", f"max_num_batched_tokens = {rf.max_num_batched_tokens // tp * tp or tp}")
            if bad is not None:
                key, what, fix = bad
                pin_help = default_pin_help(plan, r, f"`{key} = {getattr(rf, key)}` under FlashComm1")
                yield diag(codes.SPEC_TOKENS_VS_TP, f"`{name}`: {release_label(plan, r)} {what}",
                           role.span_of(key), related=rel + release_related(plan, r),
                           notes=[row.get("notes", ""), "source: " + sources(row)],
                           help=f"use {fix}, or {eng.kind} {row['fixed_in']} or later" + (f" ({pin_help})" if pin_help else ""),
                           path=(name, key))


def _fp8_block(r) -> tuple[int | None, str]:
    """(block_n of a block-quantized FP8 checkpoint, where it was read) or (None, "")."""
    if r.quant != "fp8":
        return None, ""
    raw = getattr(r.checkpoint, "raw", None)
    qc = raw.get("quantization_config") if isinstance(raw, dict) else None
    if isinstance(qc, dict):
        blk = qc.get("weight_block_size")
        if isinstance(blk, list) and blk and isinstance(blk[0], int) and blk[0] > 0:
            return blk[0], "config.json quantization_config.weight_block_size"
        return None, ""
    row = table("fp8_weight_block")
    if row and getattr(r.arch, "checkpoint_dtype", None) == "fp8":
        return int(row["block_n"]), "the catalog's FP8 block checkpoint (weight_block_size [128, 128])"
    return None, ""


def check_moe_tp_shards(plan, r):
    """Tensor-sharded experts (no expert parallelism) split into whole shards and, for an FP8 block
    checkpoint, whole weight blocks (SN3023; vLLM FusedMoE and fp8.py; MiniMax-M2 recipe)."""
    a = r.arch
    if a is None or not a.is_moe or not a.moe_intermediate_size:
        return
    inter = a.moe_intermediate_size
    block, bsrc = _fp8_block(r)
    for name, role in plan.roles():
        rf = r.roles.get(name)
        if rf is None or rf.expert_parallel:
            continue
        moe_tp = rf.tp * rf.dp
        if moe_tp <= 1:
            continue
        problem = None
        if inter % moe_tp:
            problem = f"the experts' intermediate width {inter} does not divide by tp × dp = {moe_tp}"
        elif block and (inter // moe_tp) % block:
            problem = (f"each rank's slice of the experts' intermediate width, {inter} / {moe_tp} = {inter // moe_tp}, "
                       f"is not a multiple of the FP8 weight block {block}")
        if problem is None:
            continue
        ok = [t for t in (1, 2, 4, 8, 16, 32) if inter % t == 0 and (not block or (inter // t) % block == 0)]
        yield diag(codes.MOE_TP_SHARD,
                   f"`{name}`: the routed experts are tensor-sharded (no expert parallelism) and {problem}",
                   role.span_of("tp"), related=[Related(role.span_of("expert_parallel"), "expert parallelism off")]
                   if not role.is_default("expert_parallel") else [],
                   notes=[rf.notes.get("expert_parallel", "")] + ([f"block from {bsrc}"] if block else []),
                   help=f"use tp × dp in {', '.join(map(str, ok))}, or expert parallelism (`expert_parallel = true`), "
                        "which keeps each expert whole on one rank",
                   path=(name, "tp"))

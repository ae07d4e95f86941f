"""Memory fit per device of each role: the KV cache (SN4004 error, SN4008 warning) and what must
fit outside the engine's budget (SN4081 warning).

The arithmetic is in :mod:`sncc.capacity`, the memory model the simulator sizes its KV pools with.
It is an error when the weights, reserves and HCCL buffers leave no room for even one sequence at
full context (the engine fails at start-up, as vLLM does when ``max_model_len`` exceeds the KV
capacity); a warning when ``max_num_seqs`` sequences at full context do not fit (the engine
starts but must queue or preempt long requests); a warning when ``HBM × (1 − utilization)``
cannot hold the runtime context and the graph-capture pool the engine allocates outside its
budget (graph capture fails at start-up).
"""

from __future__ import annotations

from sncc.capacity import engine_reserve, role_memory
from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag
from sncc.units import format_bytes_gib as gib
from sncc.units import format_tokens
from sncc.units import format_count


def _util_span(plan, role):
    return role.span_of("memory_utilization") if role.memory_utilization else plan.hardware.span_of("memory_utilization")


def _util_text(plan, role, u: float) -> str:
    """The utilization ``u`` a role runs with, for a message: as the file wrote it (``99%``,
    ``0.990``) when it is the role's or the hardware's written value, else ``u``."""
    node = role if role.memory_utilization is not None else plan.hardware
    text = node.value_text("memory_utilization")
    return text if text is not None and node.memory_utilization == u else f"{u:g}"


def _util_assumed(plan, role) -> bool:
    """True when the role runs with the default ``hardware.memory_utilization`` because the value
    the file wrote there was rejected (SN2003, SN2009): a diagnostic that prints the utilization
    says it assumes the default.  (A role's own rejected value poisons its facts instead:
    :func:`sncc.facts.derive_roles`.)"""
    hw = plan.hardware
    return (not role.written("memory_utilization") and hw.written("memory_utilization")
            and hw.is_default("memory_utilization"))


def _assumed_words(u: float) -> str:
    return f"{u:g} is sncc's default, assumed because the memory_utilization written is invalid"


def check_kv_fits(plan, r):
    """Weights + KV + reserve + HCCL buffers ≤ HBM × utilization, per role."""
    for name, role in plan.roles():
        mem = role_memory(plan, r, name, role)
        if mem is None:
            continue
        util_span = _util_span(plan, role)
        state = (f" (linear-attention state {gib(mem.state_per_seq)} included)" if mem.state_per_seq else "")
        # a prefill device holds one batch of max_num_batched_tokens (or the workload's longest input),
        # the others max_model_len per sequence (sncc.capacity.role_memory): name the one sized
        rf = r.roles.get(name)
        if name == "prefill":
            of = ("max_num_batched_tokens" if rf is not None and mem.context == rf.max_num_batched_tokens
                  else "the workload's longest input")
            sized = f"one prefill batch of {format_tokens(mem.context)} tokens ({of})"
            per = f"for {format_tokens(mem.context)} tokens ({of})"
        else:
            sized = "one full-context sequence"
            per = f"per sequence at {format_tokens(mem.context)} tokens"
        parts = (f"weights {gib(mem.weights)} + KV {gib(mem.kv_per_seq)} {per}{state}"
                 f" + reserve {gib(mem.reserve)}" + (f" + {mem.comm} buffers {gib(mem.hccl)}" if mem.hccl else ""))
        assumed = _util_assumed(plan, role)
        util = _util_text(plan, role, mem.utilization)
        have = f"{gib(mem.budget)} ({gib(mem.hbm)} × {util}" + (
            f"; {_assumed_words(mem.utilization)})" if assumed else ")")
        related = [Related(r.max_model_len_span, r.max_model_len_note)] if r.max_model_len_span and name != "prefill" else []
        if util_span:
            related.append(Related(util_span, f"memory utilization {mem.utilization:g} assumed (sncc's default): the "
                                              "value written here is invalid" if assumed
                                   else f"memory utilization {util}"))
        one = mem.weights + mem.reserve + mem.hccl + mem.kv_per_seq
        # a reserve fitted to a published run (memory.toml `fitted`) never makes an error on its own:
        # the error needs the sourced default reserve too; otherwise the fit shows in the warning below
        sourced = engine_reserve(None).bytes
        fitted_only = (mem.reserve_note.startswith("fitted")
                       and mem.weights + min(mem.reserve, sourced) + mem.hccl + mem.kv_per_seq <= mem.budget)
        if one > mem.budget and not fitted_only:
            fits_ctx = mem.context_that_fits if mem.seqs == 1 else max(0, int(mem.kv_budget / mem.kv_per_token)) if mem.kv_per_token else 0
            if mem.kv_budget <= 0:
                help_ = (f"the weights alone need {gib(mem.weights)} per device: spread them over more devices "
                         f"(raise tp or ep), quantize further, or use a chip with more memory")
            else:
                help_ = f"at most {format_tokens(fits_ctx)} tokens of context fit per device; shorten max_model_len or spread the model over more devices"
            yield diag(codes.KV_DOES_NOT_FIT,
                       f"`{name}` device needs {gib(one)} for {sized} but has {have}",
                       role.span_of("devices"), related=related, notes=[parts], help=help_, path=(name,))
            continue
        # SN4008: max_num_seqs full-context sequences overflow the KV pool, or one sequence does
        # not fit with the fitted reserve (the error above, downgraded); a fitted reserve alone,
        # with every sequence fitting, is no warning
        if (one > mem.budget and fitted_only) or (mem.seqs > 1 and mem.kv_needed > mem.kv_budget):
            fit = mem.seqs_that_fit
            yield diag(codes.KV_OVERCOMMITTED,
                       f"`{name}`: {format_count(mem.seqs, 'sequence')} at {format_tokens(mem.context)} tokens need {gib(mem.kv_needed)} of KV cache per device; {gib(mem.kv_budget)} is left",
                       role.span_of("max_num_seqs"), related=related,
                       notes=[parts + f"; budget {have}"] + ([f"reserve {mem.reserve_note}"] if mem.reserve_note.startswith("fitted") else []),
                       help=f"at full context {format_count(fit, 'sequence')} {'fits' if fit == 1 else 'fit'} per attention group (max_num_seqs ≤ {fit}), "
                            f"or {format_tokens(mem.context_that_fits)} tokens of context with {format_count(mem.seqs, 'sequence')}",
                       path=(name, "max_num_seqs"))


def check_memory_outside_budget(plan, r):
    """``HBM × (1 − utilization)`` holds what the engine allocates outside its budget (SN4081):
    the items of :func:`sncc.capacity.outside_budget`, each with its source; once per plan for
    roles that share a utilization and graph mode."""
    seen = set()
    for name, role in plan.roles():
        mem = role_memory(plan, r, name, role)
        if mem is None or mem.outside is None or not mem.outside_short:
            continue
        key = (mem.utilization, tuple(i.name for i in mem.outside.items))
        if key in seen:
            continue
        seen.add(key)
        items = " + ".join(f"{i.name} {gib(i.bytes)}" for i in mem.outside.items)
        if len(mem.outside.items) > 1:   # one item is its own total: no "0.36 GiB = 0.36 GiB"
            items += f" = {gib(mem.outside.bytes)}"
        span = _util_span(plan, role) or role.span_of("devices")
        fit = max(0.0, 1.0 - mem.outside.bytes / mem.hbm)
        notes = [f"{i.name}: {i.source}" for i in mem.outside.items] + list(mem.outside.notes)
        if _util_assumed(plan, role):
            notes.insert(0, f"memory_utilization {_assumed_words(mem.utilization)}")
        yield diag(codes.MEMORY_OUTSIDE_BUDGET,
                   f"`{name}`: memory_utilization {_util_text(plan, role, mem.utilization)} leaves {gib(mem.outside_room)} of "
                   f"{gib(mem.hbm)} outside the engine's budget, but the device needs {items} there",
                   span, notes=notes,
                   help=f"lower memory_utilization to {int(fit * 100) / 100:g} or less, or capture fewer graph sizes",
                   path=(name, "memory_utilization"))

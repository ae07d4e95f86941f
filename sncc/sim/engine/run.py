"""``simulate(spec) -> SimResult``: prepare the cost models and run the DES."""
from __future__ import annotations

import random
from dataclasses import replace
from typing import Any, Optional

from sncc.cost import comm as cc
from sncc.cost.kv_transfer import KvTransferModel
from sncc.cost.inputs import resolve_kv_bytes_per_token, resolve_quant
from sncc.cost.model_shape import model_shape
from sncc.cost.profile import load_profile
from sncc.cost.step import StepModel
from sncc.sim.engine.des import Simulation, Unadmittable
from sncc.sim.engine.memory import blocks_for, role_memory
from sncc.sim.engine.metrics import SimResult, _window, build_result
from sncc.sim.workload import request_tokens_per_step, sample_lengths


def conversation_prompts(messages: list, outputs: list, turns: int, hit: float, cap, rng) -> tuple:
    """(prompts, cached prefix lengths) of multi-turn conversations [tokens].

    Request ``i`` is turn ``i % turns`` of conversation ``i // turns``.  A follow-up's prompt is
    the previous turn's prompt + output plus its own new message ``messages[i]``, capped at
    ``cap`` (the workload's input max); its reusable prefix is the previous context
    (at most prompt - 1), served from the cache with probability ``hit``."""
    prompts, cached = [], []
    prev = 0
    for i, (m, o) in enumerate(zip(messages, outputs)):
        if i % turns == 0:
            p, ca = m, 0
        else:
            p = prev + m
            if cap:
                p = min(p, int(cap))
            ca = min(prev, p - 1) if (hit > 0 and rng.random() < hit) else 0
        prompts.append(p)
        cached.append(ca)
        prev = p + o
    return prompts, cached


class _Context:
    """Everything the engine needs, precomputed once per run."""


def stepping_groups(role: Any) -> Any:
    """``role`` as the groups of devices that step together.

    DP ranks in lockstep (``role.dp_lockstep``, a MoE model) stay one instance of ``dp`` ranks
    whose slowest rank sets each step.  Independent DP ranks (a dense model: each rank is an
    engine of its own, :func:`sncc.facts.roles.dp_lockstep`) become ``instances x dp`` instances of
    one rank each, so ``dp = N`` simulates as ``instances = N`` does.  Per-device memory, per-rank
    budgets and the graph gears are unchanged."""
    dp = int(getattr(role, "dp", 1) or 1)
    if dp <= 1 or getattr(role, "dp_lockstep", True):
        return role
    return replace(role, instances=role.instances * dp, devices=role.devices // dp, dp=1)


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
    n = wl.requests
    if wl.trace:
        rows = wl.trace
        c.prompts = [rows[i % len(rows)][0] for i in range(n)]
        c.outputs = [rows[i % len(rows)][1] for i in range(n)]
    else:
        c.prompts = sample_lengths(wl.input, n, rng, prof.get("workload.lognormal_cv_input"))
        c.outputs = sample_lengths(wl.output, n, rng, prof.get("workload.lognormal_cv_output"))
    max_tokens = wl.max_tokens or wl.output.max or getattr(spec.model, "max_output_tokens", None) or max(c.outputs)
    c.outputs = [min(o, max_tokens) for o in c.outputs]
    hit = spec.features.prefix_cache_hit_rate or 0.0
    follow_ups = capped = 0
    if wl.turns > 1:
        messages = c.prompts
        c.prompts, c.cached = conversation_prompts(c.prompts, c.outputs, wl.turns, hit,
                                                   wl.input.max, random.Random(wl.seed + 7919))
        cap = wl.input.max
        follow_ups = sum(1 for i in range(len(messages)) if i % wl.turns)
        if cap:   # a follow-up is capped when previous prompt + output + its message exceeds it
            capped = sum(1 for i in range(1, len(messages))
                         if i % wl.turns and c.prompts[i - 1] + c.outputs[i - 1] + messages[i] > cap)
    else:
        c.cached = [int(p * hit) for p in c.prompts]
        if hit > 0:  # at least one token is always computed
            c.cached = [min(ca, p - 1) for ca, p in zip(c.cached, c.prompts)]
    f = spec.features
    # the MTP module's weights and KV layer are resident when MTP drafts (not for EAGLE heads or
    # a separate draft model); a plan's roles carry their memory from sncc.capacity already
    mtp_on = f.mtp is not None and f.draft_kind == "mtp" and f.draft_cost is None
    info = {"kv_bytes_per_token": kv_tok, "weight_bytes_per_param": wb, "compute_dtype": cdt}
    if wl.turns > 1:
        info["follow_ups"] = follow_ups
        info["follow_ups_capped"] = capped
        info["follow_up_cap_tokens"] = wl.input.max
    c.max_tokens = max_tokens
    c.pool_memory = {}

    def pool_blocks(name: str, role: Any) -> int:
        mem = role_memory(spec, name, role, mtp=mtp_on, quant=spec.quant, weight_bytes=spec.quant_weight_bytes)
        budget = role.kv_budget_bytes_per_device
        if budget is None:
            budget = max(0.0, float(mem.kv_budget))
        per_block = role.block_size * mem.kv_per_token
        # a hybrid linear-attention model keeps one state block per running sequence in the
        # same pool (vLLM: "Each decode sequence requires one Mamba cache block"): the token
        # pool is what is left after the role's max_num_seqs states (sncc.capacity)
        info[f"{name}.weights_bytes_per_device"] = mem.weights
        info[f"{name}.hccl_bytes_per_device"] = mem.hccl
        info[f"{name}.reserve_bytes_per_device"] = mem.reserve
        info[f"{name}.kv_budget_bytes_per_device"] = budget
        c.pool_memory[name] = (mem, budget)
        tokens_pool = max(0.0, budget - mem.state_per_seq * role.max_num_seqs)
        info[f"{name}.linear_state_bytes_per_device"] = mem.state_per_seq * role.max_num_seqs
        return int(tokens_pool // per_block)

    if spec.disaggregated:
        c.prefill, c.decode = stepping_groups(spec.role("prefill")), stepping_groups(spec.role("decode"))
        c.prefill_model = StepModel(spec, "prefill", c.prefill, prof, shape, kv_tok)
        c.decode_model = StepModel(spec, "decode", c.decode, prof, shape, kv_tok)
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
        # the engine shares each decode instance's ingress and each prefill instance's egress
        # among concurrent transfers (cost_kv_transfer docstring); kv_exposed is the
        # uncontended figure (analytic screen, scenarios)
        c.kv = KvTransferModel(kv_bytes_per_token=kv_tok, block_size=blk, n_layers=shape.n_layers,
                               link_bw=bw, eta=eta, t_setup=setup, t_desc=tdesc, layerwise=layerwise,
                               senders=c.prefill.tp, prefill_devices=c.prefill.devices,
                               decode_devices=c.decode.devices)
        c.kv_exposed = c.kv.exposed
    else:
        c.serve = stepping_groups(spec.role("serve"))
        c.serve_model = StepModel(spec, "serve", c.serve, prof, shape, kv_tok)
        c.serve_blocks = pool_blocks("serve", c.serve)
        blk = c.serve.block_size
        total_dev = c.serve.instances * c.serve.devices

    # each request's own speculative acceptance (sncc.sim.workload.request_tokens_per_step)
    decoder = c.decode_model if spec.disaggregated else c.serve_model
    c.tokens_per_step = request_tokens_per_step(decoder.mtp, len(c.prompts),
                                                float(prof.get("workload.acceptance_logit_sd")), wl.seed)
    prompts = c.prompts
    if spec.kv_admission == "reserve-max-tokens":
        c.reserve_blocks = lambda i: blocks_for(prompts[i] + max_tokens, blk)
    elif spec.kv_admission == "on-demand":
        # admit on the prompt (+ the first generated token); the engine grows each sequence's
        # blocks as it decodes and preempts when a rank's pool runs out (engine docstring)
        c.reserve_blocks = None
    else:
        raise ValueError(f"unknown kv_admission {spec.kv_admission!r}")
    c.block_size = blk
    c.total_devices = total_dev
    c.info = info
    return c


def profile_match(spec: Any, prof: Any) -> tuple:
    """(note or None, extra residual) of running ``spec``'s chip with profile ``prof``.

    Rule (profile ``[calibration]`` keys ``chips``, ``generations``,
    ``other_generation_residual``, ``serving_uncertainty``):

    * the chip is one the profile was made for (``chips``): no note, no widening;
    * same generation (``generations``, e.g. H100 with the H200 profile): a note only —
      efficiencies carry over within a generation, bandwidths and peaks come from chips.toml;
    * another generation (A2 or 950 with the A3 profile, Blackwell with the H200 one): a note
      and every residual family gets ``-m`` and ``+m`` added, ``m =
      other_generation_residual``, so SLO intervals widen and close verdicts turn UNCERTAIN;
    * a profile fitted to no end-to-end serving figure records ``serving_uncertainty`` ``u``
      (the H200 profile: its residuals are kernel-level only): on any chip, a note and ``-u``/``+u``
      on every family.  With another generation too, the extra residual is
      ``1 - (1 - m)(1 - u)``: the lower side of the composed error ``(1 + r1)(1 + r2) - 1``,
      which stays above -100 % (a residual <= -100 % bounds nothing).

    A profile without ``generations`` (a custom file) gives no generation note."""
    chip = spec.chip
    cid, gen = getattr(chip, "id", None), getattr(chip, "generation", None)
    note, m = None, 0.0
    chips = list(prof.get("calibration.chips")) if prof.has("calibration.chips") else []
    if prof.has("calibration.generations") and cid is not None and cid not in chips:
        gens = list(prof.get("calibration.generations"))
        on = prof.get("calibration.fitted_on") if prof.has("calibration.fitted_on") else "?"
        if gen in gens:
            note = (f"no profile for {cid}; using {prof.id} (made for {', '.join(chips) or gen}, same generation "
                    f"{gen}; calibrated on: {on})")
        else:
            m = float(prof.get("calibration.other_generation_residual"))
            note = (f"no profile for {cid} (generation {gen}); using {prof.id} (generation {', '.join(gens)}; "
                    f"calibrated on: {on}); SLO intervals widened by ±{100 * m:.0f} %")
    if prof.has("calibration.derived_residual"):
        d = float(prof.get("calibration.derived_residual"))
        derived = (f"profile {prof.id} is derived from {prof.get_raw('derived_from', '?')} (its efficiencies, this "
                   f"chip's catalog facts; no serving figure of this generation fitted); SLO intervals widened by "
                   f"±{100 * d:.0f} % (calibration.derived_residual)")
        note = f"{note}; {derived}" if note else derived
        m = 1.0 - (1.0 - m) * (1.0 - d)
    if prof.has("calibration.serving_uncertainty"):
        u = float(prof.get("calibration.serving_uncertainty"))
        both = 1.0 - (1.0 - m) * (1.0 - u)
        serving = (f"profile {prof.id} is fitted to no end-to-end serving figure (its residuals are "
                   f"kernel-level); SLO intervals widened by ±{100 * u:.0f} % (calibration.serving_uncertainty)")
        if m > 0:
            serving += f"; ±{100 * both:.0f} % with the other generation's"
        note = f"{note}; {serving}" if note else serving
        m = both
    return note, m


def widen_residuals(residuals: dict, m: float) -> dict:
    """``residuals`` of the ttft, tpot and throughput families composed with a further relative
    error of ``±m``: each residual ``r`` becomes ``(1 + r)(1 + m) - 1`` and ``(1 + r)(1 - m) - 1``
    (the mixture), so the quantile intervals built on them widen by the factor ``1 ± m``."""
    if m <= 0:
        return residuals
    out = {k: list(v) for k, v in residuals.items()}
    for fam in ("ttft", "tpot", "throughput"):
        rs = out.get(fam) or [0.0]
        out[fam] = [round((1 + r) * (1 + m) - 1, 4) for r in rs] + [round((1 + r) * (1 - m) - 1, 4) for r in rs]
    return out


def profile_residuals(prof: Any) -> dict:
    """The profile's calibration residuals per family (``ttft``/``tpot``/``throughput``),
    ``{}`` when it records none (a profile without leave-one-out records: the H200 kernel
    profile, a ``sncc calibrate`` output).

    A ``prefill_throughput`` residual ``r`` (prefill tokens/s predicted/measured - 1) also
    bounds TTFT, which is prefill time: it joins the ``ttft`` family as the equivalent time
    residual ``1/(1 + r) - 1``."""
    if not prof.has("calibration.residuals"):
        return {}
    out = {k: [float(x) for x in v] for k, v in prof.entry("calibration.residuals")["value"].items()}
    pre = [r for r in out.get("prefill_throughput", []) if r > -1.0]
    if pre:
        out["ttft"] = out.get("ttft", []) + [round(1.0 / (1.0 + r) - 1.0, 3) for r in pre]
    return out


def plan_residuals(spec: Any, prof: Any) -> tuple:
    """(residuals by family, note) for the intervals of ``spec``'s predictions.

    From the profile's leave-one-out records (``calibration.loo``, written by
    ``bench/calibration.py``): per family, the residuals of the plan's regime, widened with its
    distance to the nearest calibration point (:func:`sncc.sim.calibration.intervals.select_residuals`);
    the note names the regime and the nearest point.  A profile without records (the H200
    kernel profile, a ``sncc calibrate`` output) gives its ``calibration.residuals``
    (:func:`profile_residuals`) and no note."""
    if not prof.has("calibration.loo"):
        return profile_residuals(prof), None
    from sncc.sim.calibration.intervals import plan_features, select_residuals

    records = prof.entry("calibration.loo")["value"]
    typical = float(prof.get("calibration.typical_distance")) if prof.has("calibration.typical_distance") else 0.0
    feats = plan_features(spec)
    out, note = {}, None
    for fam in ("ttft", "tpot", "throughput"):
        sel = select_residuals(records, fam, feats, typical=typical)
        out[fam] = sel.values
        if fam == "tpot":
            note = sel.note
    return out, note


def step_breakdowns(spec: Any, c: Any, res: SimResult) -> dict:
    """Decode and prefill step components [s] at the run's mean operating point."""
    out = {}
    n = max(1, len(c.prompts))
    mp = sum(c.prompts) / n
    mo = sum(c.outputs) / n
    if spec.disaggregated:
        dm, role, pm = c.decode_model, c.decode, c.prefill_model
    else:
        dm, role, pm = c.serve_model, c.serve, c.serve_model
    run = None
    if res.series:
        sat = res.saturated
        a, b = (sat["start_s"], sat["end_s"]) if sat else (float("-inf"), float("inf"))
        run = [r for t, r in zip(res.series["t_s"], res.series["running"]) if a <= t <= b] or res.series["running"]
    if run:
        tot = sum(run) / len(run) / max(1, role.instances)
        B = max(1, int(round(tot / max(1, role.dp))))
        out["decode_step"] = {"batch_per_group": B, **dm.breakdown(0.0, B, B * (mp + mo / 2), int(tot))}
    out["prefill_step"] = {"tokens": mp, **pm.breakdown(mp, 0, 0.0, 0)}
    return out


def kv_contention(spec: Any, c: Any, raw: dict, res: SimResult) -> dict:
    """Shared-link contention of the P->D KV transfers (disaggregated runs), for ``binds``.

    Over the same requests as ``binds["time_shares"]`` (the steady window, else the run):
    ``transfer_mean_s`` (mean KV arrival - prefill end, the ``kv_transfer`` time share, which
    includes the wait), ``contention_mean_s`` (mean wait for the shared ingress/egress
    channels beyond the uncontended transfer), ``contention_share`` (their ratio),
    ``contention_max_s``, ``transfers`` and ``delayed`` (those of them that waited: one window
    for every figure of the line the report prints; ``run_transfers`` / ``run_delayed`` over the run);
    ``ingress_Bps`` / ``egress_Bps``: channel rates of one decode / prefill instance [B/s]."""
    R = raw["reqs"]
    done = [i for i in range(len(R.t_done)) if R.t_done[i] >= 0]
    _, win, _, _, _ = _window(R, done, raw["t_first_block"], bool(spec.workload.concurrency))
    idx = win or done
    n = max(1, len(idx))
    xfer = sum(R.t_kv[i] - R.t_pdone[i] for i in idx) / n
    wait = sum(R.kv_wait[i] for i in idx) / n
    return {"window": "steady" if win else "run", "transfer_mean_s": xfer, "contention_mean_s": wait,
            "contention_share": wait / xfer if xfer > 0 else 0.0,
            "contention_max_s": max((R.kv_wait[i] for i in idx), default=0.0),
            "transfers": len(idx), "delayed": sum(1 for i in idx if R.kv_wait[i] > 0),
            "run_transfers": raw["kv_transfers"], "run_delayed": raw["kv_waited"],
            "ingress_Bps": c.kv.ingress_rate, "egress_Bps": c.kv.egress_rate}


def _gib(b: float) -> str:
    return f"{b / 2**30:.2f} GiB"


def pool_sizing_note(c: Any, role: str) -> str:
    """How ``role``'s KV pool per device was sized, as one sentence (for
    :class:`~sncc.sim.engine.des.Unadmittable`): sncc's one memory model (:mod:`sncc.capacity`, the
    pool ``sncc check`` computes too) — HBM x memory utilization - weights - communication buffers
    - runtime reserve (with its source, or "fitted" and to what) — and what to change."""
    mem, budget = c.pool_memory[role]
    tokens = int(budget // mem.kv_per_token) if mem.kv_per_token > 0 else 0
    comm = f" - {mem.comm} buffers {_gib(mem.hccl)}" if mem.hccl else ""
    why = f" ({mem.reserve_note})" if mem.reserve_note else ""
    return (f"KV pool per device (sncc's one memory model, the budget `sncc check` uses too): HBM {_gib(mem.hbm)} "
            f"x memory utilization {mem.utilization:g} - weights {_gib(mem.weights)}{comm} - runtime reserve "
            f"{_gib(mem.reserve)}{why} = {_gib(budget)} (about {tokens:,} tokens per DP rank).  Shorten the longest "
            "requests (input/output max), give each DP rank more memory (more devices per rank, a smaller "
            "quantization, a higher memory_utilization), or lower max_tokens.")


def simulate_spec(spec: Any, *, series: bool = True, progress: Any = None) -> SimResult:
    """Run the discrete-event simulation of ``spec`` and return its metrics.

    ``series=False`` skips the time series (goodput search, calibration).  ``progress``, when
    given, is called as ``progress(completed, requests)`` every 65,536 engine events.

    Raises :class:`~sncc.sim.engine.Unadmittable` (a ValueError) when a request can never
    fit one DP rank's KV pool; its message ends with :func:`pool_sizing_note`.
    ``info["notes"]`` lists what the reader must know about the run: follow-up prompts
    capped at the input max (multi-turn), and a run that ended with fewer completed
    requests than requested (its figures and verdicts cover the completed ones only)."""
    c = prepare(spec)
    sim = Simulation(spec, c)
    sim.progress = progress
    if not series:
        sim.ts_dt = float("inf")
    try:
        raw = sim.run()
    except Unadmittable as e:
        e.notes.append(pool_sizing_note(c, e.role))
        raise
    info = dict(c.info)
    info["issued"] = raw["issued"]
    notes = []
    if info.get("follow_ups_capped"):
        notes.append(f"{info['follow_ups_capped']} of {info['follow_ups']} follow-up prompts were capped at the "
                     f"workload's input max ({info['follow_up_cap_tokens']} tokens): the conversation context "
                     "grew past it, so those turns are shorter than the conversation")
    if raw["completed"] < spec.workload.requests:
        notes.append(f"only {raw['completed']} of {spec.workload.requests} requests completed "
                     f"({raw['issued']} issued): the run ended with requests unserved; every figure and SLO "
                     "verdict covers the completed requests only")
    if notes:
        info["notes"] = notes
    info["preemptions"] = raw["preemptions"]
    info["profile"] = c.profile.id
    note, widen = profile_match(spec, c.profile)
    if note:
        info["profile_note"] = note
    residuals, interval_note = plan_residuals(spec, c.profile)
    info["interval_basis"] = ("leave-one-out residuals" if c.profile.has("calibration.loo")
                              else "the profile's in-sample residuals: it has no leave-one-out records")
    if interval_note:
        info["interval_note"] = interval_note
    if getattr(spec, "notes", ()):
        info["not_applied"] = list(spec.notes)
    res = build_result(raw["reqs"], c.total_devices, spec.slos, c.profile.used_fitted, info,
                       raw["t_first_block"], closed=bool(spec.workload.concurrency),
                       disaggregated=spec.disaggregated,
                       residuals=widen_residuals(residuals, widen),
                       series=raw["series"],
                       # open loop: completions cannot outrun the offered rate (60 x rate x turns)
                       offered_qpm=60.0 * spec.workload.rate * max(1, spec.workload.turns)
                       if spec.workload.rate else None)
    res.binds.update(step_breakdowns(spec, c, res))
    if spec.disaggregated:
        res.binds["kv_transfer"] = kv_contention(spec, c, raw, res)
    return res

"""``vllm bench serve`` against the deployment's entry point, with the plan's workload.

Mapping (vLLM 0.11.0 ``vllm/benchmarks/serve.py`` and ``datasets.py``):

* lengths: the ``random`` dataset draws input and output lengths uniformly from
  ``[len × (1 − r), len × (1 + r)]``, one ``r`` for both; sncc sets ``len`` to the plan's mean
  and ``r`` to the widest symmetric range inside both lengths' ``[min, max]`` (the narrower of
  the two; a ``dist = fixed`` length takes the other's), so a lognormal plan is run as a uniform
  of the same mean; the script's header names each length's distribution as the plan gives it
  and what is sent instead;
* what the random dataset cannot send (multi-turn conversations, think time, prefix-cache hits:
  :func:`sncc.facts.workload.bench_gaps`, warning SN5084) is said in the header too;
* ``--ignore-eos`` so outputs have the drawn length, ``--num-prompts`` = ``workload.requests`` (a trace's row count when not written);
* ``--max-concurrency`` = ``workload.concurrency`` (closed loop) or ``--request-rate`` and
  ``--burstiness`` (open loop), all three when the plan gives both (requests start at the rate
  and wait at the client while ``concurrency`` are in flight); neither: ``--max-concurrency min(requests, 64)``, the simulator's
  default client count;
* ``--percentile-metrics ttft,tpot,itl,e2el`` and ``--metric-percentiles`` the percentiles the
  SLOs name (99 when none); ``--goodput`` the per-request TTFT / TPOT / e2e targets in ms;
* ``--save-result`` as ``bench-result.json`` with ``--metadata`` naming the plan (its name, its
  file's name, the engine and pinned version), which vLLM copies into the result JSON.

Several API servers without a router (an aggregated plan on a release without a DP load
balancer, :mod:`.proxy`): one client per server, each with its share of the workload, as the
simulator's dispatch spreads it (``sim/engine/des.py`` ``_arrive_serve``: every request to the
least-loaded instance, so each server carries an equal share): ``--num-prompts`` and
``--max-concurrency`` split into whole shares that differ by at most one (the first servers take
the remainder), ``--request-rate`` divided evenly (thinning a Poisson stream by an even split
gives Poisson streams of rate ``rate / k``); a server whose share would be 0 gets no client.
Each client writes ``bench-result-<i>.json`` with ``--metadata sncc_bench_client=<i>/<k>``;
``sncc calibrate`` merges the files (``sim/calibration/bench_merge.py``).
"""

from __future__ import annotations

from sncc.lowering.context import LowerCtx
from sncc.lowering.deployment import Arg, BenchClient, BenchSpec, Endpoint, ProxySpec, RoleDeployment
from sncc.lowering.hosts import address_var
from sncc.lowering.proxy import endpoints

RESULT_FILE = "bench-result.json"
#: a split benchmark's client ``i`` writes this file
CLIENT_RESULT_FILE = "bench-result-{i}.json"
#: the flags whose value is a client's share of the workload
_SHARED_COUNTS = ("num-prompts", "max-concurrency")
#: clients when the plan gives neither concurrency nor rate (the simulator's default, workload docs)
DEFAULT_CLIENTS = 64
_GOODPUT = {"ttft": "ttft", "tpot": "tpot", "e2e": "e2el"}


def _range_ratio(dist) -> float:
    if dist.dist == "fixed" or dist.mean <= 0:
        return 0.0
    r = min((dist.mean - dist.min) / dist.mean, (dist.max - dist.mean) / dist.mean, 0.99)
    return max(0.0, int(r * 100) / 100)


def _length_notes(wl, ratio: float) -> list[str]:
    """One note naming each length the benchmark draws otherwise than the plan: the plan's own
    distribution (``lognormal``, ``uniform``, ``fixed``) and range beside what the random dataset
    sends (uniform over ``[mean × (1 − ratio), mean × (1 + ratio)]``); none when both match."""
    parts = []
    for which, d in (("input", wl.input), ("output", wl.output)):
        lo, hi = int(d.mean * (1 - ratio)), int(d.mean * (1 + ratio))
        if (d.dist == "fixed" and ratio == 0) or (d.dist == "uniform" and lo <= d.min + 1 and hi >= d.max - 1):
            continue
        plan_range = f"{d.mean}" if d.dist == "fixed" else f"{d.min}-{d.max}, mean {d.mean}"
        parts.append(f"{which} {d.dist} ({plan_range}) runs as uniform {lo}-{hi}")
    if not parts:
        return []
    return [f"the plan's lengths as vllm bench serve's random dataset draws them (range ratio {ratio:g}, one for both): "
            + "; ".join(parts) + " tokens"]


def bench_spec(ctx: LowerCtx, roles: tuple[RoleDeployment, ...], proxy: ProxySpec | None,
               plan_file: str | None) -> BenchSpec | None:
    """The benchmark of the deployment, or None when it has no API server."""
    plan, wl = ctx.plan, ctx.plan.workload
    if proxy is not None:
        targets = [Endpoint("proxy", proxy.node, address_var(proxy.node), proxy.port)]
    else:
        targets = [e for n in ("serve", "decode") for e in endpoints(roles, n)]
        if not targets:
            return None
        if plan.disaggregated:
            targets = targets[:1]        # a P/D plan without a proxy: the decode server (the engine's own path)
    notes = []
    rin, rout = _range_ratio(wl.input), _range_ratio(wl.output)
    # one --random-range-ratio for both lengths: the narrower of the two, so that neither leaves its
    # plan's [min, max] (a fixed length, ratio 0, takes the other's)
    ratio = min(rin, rout) if rin and rout else (rin or rout)
    notes += _length_notes(wl, ratio)
    if wl.trace:
        notes.append(f"the plan's trace `{wl.trace}` is not replayed: the random dataset uses the plan's mean lengths")
    from sncc.facts.workload import bench_gaps

    notes += [f"not reproduced (SN5084): {what}" for _, what in bench_gaps(plan)]
    flags = [Arg("backend", "vllm"), Arg("endpoint", "/v1/completions"),
             Arg("model", ctx.resolved.served_name or plan.model.id, "the served model name"),
             Arg("tokenizer", ctx.resolved.model_ref or plan.model.weights or plan.model.id, "the tokenizer of the weights"),
             *([Arg("trust-remote-code", True, "the tokenizer is the checkpoint's own code (catalog)")]
               if ctx.resolved.trust_remote_code else []),
             Arg("dataset-name", "random"),
             Arg("random-input-len", wl.input.mean, "plan workload.input.mean"),
             Arg("random-output-len", wl.output.mean, "plan workload.output.mean"),
             Arg("random-range-ratio", ratio,
                 f"input ±{rin:.0%}, output ±{rout:.0%} within the plan's min and max "
                 "(one ratio for both: the narrower)"),
             Arg("ignore-eos", True), Arg("num-prompts", ctx.resolved.requests, ctx.resolved.requests_note or "plan workload.requests")]
    if wl.rate is not None:
        flags += [Arg("request-rate", wl.rate, "plan workload.rate (requests/s)"),
                  Arg("burstiness", wl.burstiness, "plan workload.burstiness")]
        if wl.concurrency is not None:
            # vllm 0.11.0 wheel vllm/benchmarks/serve.py --max-concurrency: "While the --request-rate argument
            # controls the rate at which requests are initiated, this argument will control how many are
            # actually allowed to execute at a time"
            flags.append(Arg("max-concurrency", wl.concurrency,
                             "plan workload.concurrency: requests in flight at most; the others wait at the client"))
    else:
        c = wl.concurrency if wl.concurrency is not None else min(ctx.resolved.requests, DEFAULT_CLIENTS)
        flags.append(Arg("max-concurrency", c, "plan workload.concurrency" if wl.concurrency is not None
                         else f"neither concurrency nor rate: min(requests, {DEFAULT_CLIENTS}) clients"))
    pcts = sorted({int(s.stat[1:]) for s in plan.slo if s.stat.startswith("p")}) or [99]
    flags += [Arg("percentile-metrics", "ttft,tpot,itl,e2el"),
              Arg("metric-percentiles", ",".join(map(str, pcts)), "the percentiles the plan's SLOs name")]
    good = []
    for s in plan.slo:
        if s.metric in _GOODPUT and s.op in ("<", "<="):
            good.append(f"{_GOODPUT[s.metric]}:{s.target * 1000:g}")
    if good:
        flags.append(Arg("goodput", list(dict.fromkeys(good)), "per-request SLO targets in ms"))
    from sncc.emit._common import one_line

    # one line: a KEY=VALUE word of vllm bench serve (the plan builder already refuses control characters)
    meta = [f"sncc_plan={one_line(plan.name)}", f"sncc_engine={ctx.adapter.kind}", f"sncc_engine_version={ctx.pin.version}"]
    if plan_file and plan_file not in ("-", "<stdin>"):
        import os

        # the file name only: the outputs must not depend on how the path was spelled (build --check)
        meta.append(f"sncc_plan_file={os.path.basename(plan_file)}")
    if len(targets) == 1:
        flags += [Arg("save-result", True), Arg("result-filename", RESULT_FILE), Arg("metadata", meta)]
        return BenchSpec(clients=(BenchClient(tuple(flags), targets[0], RESULT_FILE),), notes=tuple(notes))
    clients = split_clients(flags, targets, meta)
    if len(clients) < len(targets):
        notes.append(f"{len(targets)} API servers and a workload of {len(clients)} concurrent client"
                     f"{'s' if len(clients) > 1 else ''}: servers {len(clients)}-{len(targets) - 1} get no benchmark client")
    notes.append(f"no router in front of the {len(targets)} API servers on {ctx.adapter.kind} {ctx.pin.version}: "
                 f"{len(clients)} clients run side by side, one per server, each with its share of the workload; "
                 "give sncc calibrate the list of their result files (it merges them)")
    return BenchSpec(clients=clients, notes=tuple(notes))


def shares(total: int, k: int) -> list[int]:
    """``total`` split into ``k`` whole shares that differ by at most one, the larger first."""
    return [total // k + (1 if i < total % k else 0) for i in range(k)]


def split_clients(flags: list[Arg], targets: list[Endpoint], meta: list[str]) -> tuple[BenchClient, ...]:
    """One client per target with its share of the whole-run ``flags`` (module docstring): as many
    clients as the smallest whole count allows (``--num-prompts``, ``--max-concurrency``)."""
    values = {a.name: a.value for a in flags}
    k = min([len(targets)] + [int(values[n]) for n in _SHARED_COUNTS if values.get(n) is not None])
    k = max(1, k)
    split = {n: shares(int(values[n]), k) for n in _SHARED_COUNTS if values.get(n) is not None}
    out = []
    for i, t in enumerate(targets[:k]):
        mine = []
        for a in flags:
            if a.name in split:
                a = Arg(a.name, split[a.name][i], f"client {i} of {k}: its share of {values[a.name]}")
            elif a.name == "request-rate":
                a = Arg(a.name, values[a.name] / k, f"client {i} of {k}: 1/{k} of {values[a.name]:g} requests/s")
            mine.append(a)
        name = CLIENT_RESULT_FILE.format(i=i)
        mine += [Arg("save-result", True), Arg("result-filename", name),
                 Arg("metadata", meta + [f"sncc_bench_client={i}/{k}"])]
        share = ", ".join(f"{n} {split[n][i]}" for n in split)
        out.append(BenchClient(tuple(mine), t, name, share))
    return tuple(out)

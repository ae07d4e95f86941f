"""Discrete-event simulation of a serving deployment, stepped per engine iteration.

Events are engine steps, KV arrivals and request arrivals — never tokens.  A
decode step costs O(log n) for the sequences that finish in it (a heap of
finish-step indices) plus O(DP ranks) for the lockstep maximum.  A decode instance's identical
steps are one event up to its next finish, first token or on-demand overflow; it is not cut by
other instances' steps, only by what reaches it (disaggregated: a KV arrival, a reservation on
it; aggregated: a request routed to it), at the first step boundary from then: stepping one step
per event gives the same result (tests/sim/test_decode_run_ahead.py), with 3-7x the events on
3 instances.

Disaggregated plans (``prefill`` + ``decode`` roles)::

    client -> proxy queue --(decode KV reservation + prefill instance ready)-->
    prefill steps (chunked, <= max_num_batched_tokens per DP rank) -> KV transfer ->
    decode instance (continuous batching over its DP ranks, lockstep steps)

  An instance here is a group of devices that steps together: a MoE role's DP ranks
  (``RoleSpec.dp_lockstep``); a dense role's DP ranks are independent engines and arrive as
  ``instances x dp`` one-rank instances (:func:`sncc.sim.engine.run.stepping_groups`).

* The proxy dispatches FCFS only when a decode DP rank can admit the request
  (joint P/D scheduling, Omni-Infer ``pd_score_balance``): with
  ``kv_admission="reserve-max-tokens"`` the rank must hold prompt + max_tokens
  blocks; the reservation lasts until the request finishes.
* ``prefill_dispatch="pull"``: a request is handed to a prefill instance when
  that instance forms its next batch (the proxy keeps the queue); ``"push"``:
  immediately to the least-loaded instance's own queue.
* TTFT is measured from dispatch to a prefill instance to the end of the first
  decode step (the engine's view); time in the proxy queue is ``queue_s``; the client's TTFT
  (what SLOs are judged on) is both, from the request's arrival.
* KV transfers contend (:mod:`sncc.cost.kv_transfer`): each decode instance has one
  ingress channel, each prefill instance one egress channel, both FIFO fluid queues of
  bytes.  When a prefill step ends, each finishing request's transfer is queued on its
  prefill instance's egress and its decode instance's ingress from the moment its bytes can
  move (after the first layer with layer-wise transfer, plus the handshake); its KV arrives
  at the latest of its uncontended arrival (``now + exposed``) and the two channels'
  finishes.  The excess over the uncontended arrival is ``kv_wait`` (O(1) per transfer).
  The KV of the whole prompt moves, prefix-cache hits on the prefill instance included.

Aggregated plans (``serve`` role): each instance runs mixed steps (all running
decodes + prefill chunks of waiting requests under the token budget).

Speculative decoding: request ``i`` gains ``ctx.tokens_per_step[i]`` tokens per decode step (its
own acceptance, :func:`sncc.sim.workload.request_tokens_per_step`), so it finishes after
``ceil((output - 1) / tokens_per_step[i])`` steps; the ranks' context and block growth use the
running set's time-averaged rate, the harmonic mean over requests (``_per_request_tps``).

KV admission ``on-demand`` (vLLM's block manager): a DP rank admits a request when its free
blocks, after the blocks its running sequences have grown into, hold the prompt + 1 token;
otherwise the request waits (the proxy, or the instance's waiting queue, holds it: the
instance refuses it).  Before every decode step each rank's growth
``tokens_per_step * sum(steps run) / block_size`` is charged against its free blocks; while
it overflows, the most recently started sequence is preempted (vLLM V1 recompute
preemption, LIFO): its blocks are freed and it goes back to the FRONT of the waiting
queue with its generated tokens appended to its prompt, to be prefilled again (and, when
disaggregated, transferred again).  Its first-token time is kept.  ``reserve-max-tokens``
never preempts: admission reserved the final length.

A request whose final KV need (``reserve-max-tokens``: prompt + ``max_tokens``; ``on-demand``:
prompt + output) exceeds one DP rank's whole pool could never be served; :meth:`Simulation.run`
raises :class:`Unadmittable` before the first event instead of stopping with the queue head
stuck.  Open-loop inter-arrival gaps follow vLLM's ``--burstiness`` (Gamma, shape
``burstiness``, mean ``1/rate``: :meth:`Simulation._gap_sampler`).
"""
from __future__ import annotations

import heapq
import math
import random
from typing import Any, Dict, List, Optional

from sncc.cost.kv_transfer import channel_finish
from sncc.sim.engine.events import Event
from sncc.sim.workload import mean_request_tokens_per_step

#: event kinds bound once (the loop pushes hundreds of thousands of events)
ARRIVAL, STEP_DONE, KV_ARRIVED, DECODE_DONE, FOLLOW_UP = Event


def step_budget(role: Any) -> tuple:
    """(token budget of one step of the instance, largest chunk of one request) [tokens].

    vLLM and vllm-ascend apply ``max_num_batched_tokens`` per data-parallel rank (each DP engine
    core schedules its own step), so an instance of ``dp`` DP ranks schedules up to ``dp x
    max_num_batched_tokens`` tokens per lockstep step, and one request (on one rank) at most its
    rank's budget, or its chunk size when chunked prefill is on."""
    per_rank = role.max_num_batched_tokens
    chunk = min(role.chunk_size or per_rank, per_rank)
    return per_rank * max(1, role.dp), chunk


def _unadmittable(head: str, fields: dict, notes: list) -> "Unadmittable":
    """Rebuild an :class:`Unadmittable` from its pickled parts (``__reduce__``)."""
    exc = Unadmittable(head, **fields)
    exc.notes.extend(notes)
    return exc


class Unadmittable(ValueError):
    """Requests that no KV pool of the deployment can ever hold: the run cannot complete.

    Raised by :meth:`Simulation.run` before the first event when a request's final KV need
    exceeds the whole pool of one DP rank (``reserve-max-tokens``: prompt + ``max_tokens``;
    ``on-demand``: prompt + output, the length its blocks grow to), and during the run when
    a preempted request's recompute prompt (prompt + tokens generated so far) no longer fits.
    Without it the queue head would wait forever and the run would end with requests
    unserved.

    Attributes: ``count`` (requests that cannot fit), ``requests`` (requests of the run),
    ``first`` (index of the first such request), ``prompt_tokens`` and ``extra_tokens``
    (its prompt and the output tokens its blocks must also hold) [tokens], ``pool_blocks``
    and ``block_size`` (one DP rank's pool [blocks], [tokens per block]), ``role``
    (``decode`` or ``serve``).  ``notes`` is a list of sentences callers append to explain
    how the pool was sized (:func:`sncc.sim.engine.run.simulate_spec` adds the memory budget,
    ``sncc simulate`` the budget ``sncc check`` used); ``str(exc)`` is the head message
    followed by the notes.
    """

    def __init__(self, head: str, *, count: int, requests: int, first: int, prompt_tokens: int,
                 extra_tokens: int, pool_blocks: int, block_size: int, role: str):
        super().__init__(head)
        self.head = head
        self.count, self.requests, self.first = count, requests, first
        self.prompt_tokens, self.extra_tokens = prompt_tokens, extra_tokens
        self.pool_blocks, self.block_size, self.role = pool_blocks, block_size, role
        self.notes: List[str] = []

    def __reduce__(self):
        # keyword-only arguments: rebuild through a helper so the error crosses a process pool
        return (_unadmittable, (self.head, dict(count=self.count, requests=self.requests, first=self.first,
                                                prompt_tokens=self.prompt_tokens, extra_tokens=self.extra_tokens,
                                                pool_blocks=self.pool_blocks, block_size=self.block_size,
                                                role=self.role), list(self.notes)))

    @property
    def pool_tokens(self) -> int:
        """KV pool of one DP rank [tokens]."""
        return self.pool_blocks * self.block_size

    def __str__(self) -> str:
        return " ".join([self.head, *self.notes])


#: bounds of one run (:meth:`Simulation.run`), so a plan whose steps are tiny for its workload stops
#: with :class:`StepBoundExceeded` (diagnostic SN5080) instead of running for minutes:
#:
#: * engine events at most ``MIN_EVENT_BOUND + EVENTS_PER_OUTPUT_TOKEN x output tokens +
#:   EVENTS_PER_REQUEST x requests``: a decode step yields at least one token for each of its
#:   sequences and identical steps are run ahead in one event (:meth:`Simulation._run_ahead`), so a
#:   run needs at most one event per output token (batch 1, never run ahead) plus a few per request
#:   (arrival, prefill, KV arrival);
#: * prefill chunks at most ``MIN_EVENT_BOUND + EVENTS_PER_REQUEST x requests + prompt tokens /
#:   MIN_MEAN_CHUNK_TOKENS``: chunks of fewer than 128 tokens on average (a ``chunked_prefill`` of a
#:   few tokens) are far below what any engine uses (vLLM's smallest default budget is 2,048).
MIN_EVENT_BOUND = 200_000
EVENTS_PER_OUTPUT_TOKEN = 2
EVENTS_PER_REQUEST = 8
MIN_MEAN_CHUNK_TOKENS = 128


class StepBoundExceeded(ValueError):
    """The run needed more engine events or prefill chunks than its bounds (module constants).

    Attributes: ``events`` (the count that reached its bound), ``what`` (``engine events`` or
    ``prefill chunks``), ``completed`` and ``requests`` (requests done and requested),
    ``simulated_s`` (simulated time reached [s])."""

    def __init__(self, events: int, completed: int, requests: int, simulated_s: float, what: str = "engine events"):
        self.events, self.completed, self.requests, self.simulated_s = events, completed, requests, simulated_s
        self.what = what
        why = (f"prefill chunks average fewer than {MIN_MEAN_CHUNK_TOKENS} tokens" if what == "prefill chunks"
               else "its engine steps are too small for its workload")
        super().__init__(
            f"the simulation stopped after {events:,} {what} ({completed} of {requests} requests completed, "
            f"{simulated_s:,.1f} s simulated): {why}")


class _Reqs:
    """Struct-of-arrays request table (times in seconds, lengths in tokens)."""

    __slots__ = ("prompt", "out", "t_arr", "t_disp", "t_first", "t_done", "blocks", "rank", "inst",
                 "done_prompt", "cached", "t_pdone", "t_kv", "kv_wait", "gen", "fin", "prank", "tps")

    def __init__(self, prompts: List[int], outs: List[int]):
        n = len(prompts)
        self.prompt = list(prompts)
        self.out = outs
        self.t_arr = [0.0] * n
        self.t_disp = [0.0] * n
        self.t_first = [0.0] * n
        self.t_done = [-1.0] * n
        self.blocks = [0] * n
        self.rank = [-1] * n
        self.inst = [-1] * n
        self.done_prompt = [0] * n
        self.cached = [0] * n
        self.t_pdone = [0.0] * n    # prefill finished (disaggregated) [s]
        self.t_kv = [0.0] * n       # KV arrived at the decode instance (disaggregated) [s]
        self.kv_wait = [0.0] * n    # part of t_kv - t_pdone spent waiting for shared links [s]
        self.gen = [0] * n          # tokens generated before a preemption (on-demand) [tokens]
        self.fin = [-1] * n         # decode step at which the live heap entry finishes
        self.prank = [-1] * n       # DP rank of its prefill instance that prefills it (disaggregated)
        self.tps = [1.0] * n        # its output tokens per decode step (speculative acceptance) [tokens]


class _DecodeInst:
    """One decode instance: DP ranks with KV pools, running sets, a finish heap."""

    __slots__ = ("free_blocks", "nseq", "sum_prompt", "sum_start", "pending", "new_this", "heap",
                 "step", "busy", "total", "running", "cap", "order", "span", "t0", "t_done", "gen", "B", "r",
                 "marks")

    def __init__(self, ranks: int, blocks: int):
        self.cap = blocks * ranks
        self.free_blocks = [blocks] * ranks
        self.nseq = [0] * ranks
        self.sum_prompt = [0] * ranks
        self.sum_start = [0] * ranks
        self.pending: List[int] = []
        self.new_this: List[int] = []
        self.heap: List[tuple] = []
        self.running = [0] * ranks
        self.step = 0
        self.busy = False
        self.total = 0
        self.order: List[List[int]] = [[] for _ in range(ranks)]   # start order (on-demand)
        self.span = 1           # decode steps the pending DECODE_DONE event covers (run-ahead)
        self.t0 = self.t_done = 0.0     # start and end [s] of that run-ahead span
        self.gen = 0            # generation of its DECODE_DONE event: a cut span's old event is stale
        self.B = self.r = 0     # largest rank's batch and that rank, fixed for the span
        # the span's groups of equal steps: (first step offset, start [s] from t0, step time [s])
        self.marks: List[tuple] = []


class Simulation:
    """One simulation run; construct with the prepared context then call :meth:`run`."""

    def __init__(self, spec: Any, ctx: Any):
        self.spec = spec
        self.c = ctx
        self.rng = random.Random(spec.workload.seed)
        self.ev: List[tuple] = []
        self.seq = 0
        self.now = 0.0
        #: time series sampled at most every ``ts_dt`` simulated seconds:
        #: (t [s], requests waiting for dispatch, running decode sequences, KV pool use fraction)
        self.series: List[tuple] = []
        self.ts_dt = 1.0
        self._ts_next = 0.0
        self.preemptions = 0
        #: prefill chunks scheduled (each costs like an event; counted against the event bound)
        self.work = 0
        self.on_demand = ctx.reserve_blocks is None
        self.blk = ctx.block_size
        #: optional ``progress(completed, requests)`` called every 65,536 events
        self.progress = None

    # ------------------------------------------------------------------ events
    @staticmethod
    def _handler_table(by_kind: Dict[Event, Any]) -> List[Any]:
        """Handlers indexed by :class:`Event` value (None for kinds this mode never pushes)."""
        table: List[Any] = [None] * len(Event)
        for kind, fn in by_kind.items():
            table[kind] = fn
        return table

    def _push(self, t: float, kind: Event, a: int = 0) -> None:
        self.seq += 1
        heapq.heappush(self.ev, (t, self.seq, kind, a))

    def run(self) -> Dict[str, Any]:
        """Run to completion; returns raw per-request arrays and counters.

        Raises :class:`Unadmittable` when a request can never fit one DP rank's KV pool,
        :class:`StepBoundExceeded` past the event bound, and ValueError for ``burstiness <= 0``."""
        spec, c = self.spec, self.c
        wl = spec.workload
        n = wl.requests
        self.R = _Reqs(c.prompts, c.outputs)
        self.R.cached = list(c.cached)
        self.R.done_prompt = list(c.cached)
        self.issued = 0
        self.completed = 0
        self.t_first_block = None
        self.d_freed = 0                    # decode sequences that freed their KV blocks so far
        self._refused, self._refused_at = -1, -1   # the last request _reserve refused, at d_freed
        if spec.disaggregated:
            self._init_disagg()
            arrive = self._arrive_disagg
        else:
            self._init_serve()
            arrive = self._arrive_serve
        self._arrive = arrive
        self.n = n
        self.turns = max(1, wl.turns)
        self.next_conv = 0
        self.arrivals = None
        if wl.trace and wl.trace[0][2] is not None:
            rows = wl.trace
            last = rows[-1][2]
            wrap = last + last / len(rows)          # a cycled trace repeats after its span
            n_conv = -(-n // self.turns)
            self.arrivals = [rows[(k * self.turns) % len(rows)][2] + ((k * self.turns) // len(rows)) * wrap
                             for k in range(n_conv)]
        if wl.rate:
            self._gap = self._gap_sampler(float(wl.rate), float(wl.burstiness or 1.0))
        self._check_admissible()
        self.handlers[FOLLOW_UP] = self._issue
        # a rate with a concurrency cap (benchmark clients' --request-rate with --max-concurrency):
        # conversations are generated at the rate and wait at the client for one of the slots
        self.capped = bool(wl.concurrency and wl.rate and self.arrivals is None)
        self.generated = self.in_flight = self.pending = 0
        if self.capped:
            self._push(0.0, ARRIVAL, 0)
        elif wl.concurrency and self.arrivals is None:
            for _ in range(min(wl.concurrency, -(-n // self.turns))):
                self._next_conversation()
        else:
            self._push(self.arrivals[0] if self.arrivals else 0.0, ARRIVAL, 0)
        handlers = self.handlers
        ev = self.ev
        pop = heapq.heappop
        progress = self.progress
        n_req = len(self.R.prompt)
        bound = MIN_EVENT_BOUND + EVENTS_PER_OUTPUT_TOKEN * sum(self.R.out) + EVENTS_PER_REQUEST * n_req
        chunk_bound = MIN_EVENT_BOUND + EVENTS_PER_REQUEST * n_req + sum(self.R.prompt) // MIN_MEAN_CHUNK_TOKENS
        events = 0
        while ev:
            t, _, kind, a = pop(ev)
            self.now = t
            handlers[kind](a)
            events += 1
            if events >= bound:
                raise StepBoundExceeded(events, self.completed, n, self.now)
            if self.work >= chunk_bound:
                raise StepBoundExceeded(self.work, self.completed, n, self.now, "prefill chunks")
            if progress is not None and not events & 0x3FFF:    # every 16,384 events: a cheap callback
                progress(self.completed, n)
        return {"reqs": self.R, "issued": self.issued, "completed": self.completed,
                "preemptions": self.preemptions,
                "kv_transfers": getattr(self, "kv_transfers", 0), "kv_waited": getattr(self, "kv_waited", 0),
                "t_first_block": self.t_first_block, "series": self.series}

    def _gap_sampler(self, rate: float, burstiness: float):
        """Inter-arrival sampler [s] of an open loop at ``rate`` [req/s].

        vLLM's ``benchmark_serving --burstiness`` semantics: gaps are Gamma distributed with
        shape ``burstiness`` and scale ``1 / (rate * burstiness)``, so the mean gap stays
        ``1/rate`` and the coefficient of variation is ``1/sqrt(burstiness)``: 1 is Poisson
        (exponential gaps), below 1 burstier, above 1 more uniform.  Raises ValueError for
        ``burstiness <= 0``."""
        if burstiness <= 0:
            raise ValueError(f"burstiness must be > 0, got {burstiness}")
        rng = self.rng
        if burstiness == 1.0:
            return lambda: rng.expovariate(rate)
        shape, scale = burstiness, 1.0 / (rate * burstiness)
        return lambda: rng.gammavariate(shape, scale)

    # ------------------------------------------------------------ admissibility
    def _pool(self) -> tuple:
        """(role, blocks of one DP rank's KV pool) of the role that admits requests."""
        if self.spec.disaggregated:
            return "decode", self.c.decode_blocks
        return "serve", self.c.serve_blocks

    def _final_tokens(self, i: int) -> tuple:
        """(prompt, output tokens the request's blocks must also hold) of request ``i``:
        ``reserve-max-tokens`` reserves ``max_tokens``; on-demand blocks grow to the output."""
        R = self.R
        if self.on_demand:
            return R.prompt[i], max(1, R.out[i] - R.gen[i])
        mt = getattr(self.c, "max_tokens", None)
        if mt is None:          # a hand-built context: the reservation in tokens
            return R.prompt[i], self.c.reserve_blocks(i) * self.blk - R.prompt[i]
        return R.prompt[i], int(mt)

    def _unadmittable(self, bad: List[int], during: bool = False) -> Unadmittable:
        role, pool = self._pool()
        i = bad[0]
        p, extra = self._final_tokens(i)
        what = ("reserved output tokens (max_tokens; kv_admission reserve-max-tokens)" if not self.on_demand
                else "output tokens (on-demand blocks grow with the output)")
        if during:
            head = (f"request {i} can never be served: after a preemption its recompute prompt of {p} tokens "
                    f"(prompt + {self.R.gen[i]} tokens generated before it) + {extra} {what} = {p + extra} tokens "
                    f"needs {-(-(p + extra) // self.blk)} KV blocks")
        else:
            head = (f"{len(bad)} of {self.n} requests can never be served: the first, request {i}, needs "
                    f"{p} prompt + {extra} {what} = {p + extra} tokens = {-(-(p + extra) // self.blk)} KV blocks")
        head += (f", more than the whole KV pool of one {role} DP rank: {pool} blocks x {self.blk} tokens = "
                 f"{pool * self.blk} tokens.")
        return Unadmittable(head, count=len(bad), requests=self.n, first=i, prompt_tokens=p, extra_tokens=extra,
                            pool_blocks=pool, block_size=self.blk, role=role)

    def _check_admissible(self) -> None:
        """Raise :class:`Unadmittable` when some request's final KV need exceeds one DP
        rank's whole pool (O(requests), before the first event)."""
        _, pool = self._pool()
        blk = self.blk
        bad = []
        for i in range(self.n):
            p, extra = self._final_tokens(i)
            if -(-(p + extra) // blk) > pool:
                bad.append(i)
        if bad:
            raise self._unadmittable(bad)

    def _sample(self, waiting: int) -> None:
        """Append one time-series point (called after decode/serve steps)."""
        self._ts_next = self.now + self.ts_dt
        running = 0
        used = 0
        total = 0
        for d in self.d:
            running += sum(d.running)
            used += sum(d.free_blocks)
            total += d.cap
        self.series.append((self.now, waiting, running, 1.0 - used / total if total else 0.0))

    def _issue(self, i: int) -> None:
        """Request ``i`` arrives now."""
        self.issued += 1
        self.R.t_arr[i] = self.now
        self._arrive(i)

    def _next_conversation(self) -> bool:
        """Issue the first turn of the next conversation; False when none is left."""
        i = self.next_conv * self.turns
        if i >= self.n:
            return False
        self.next_conv += 1
        self._issue(i)
        return True

    def _open_arrival(self, _a: int) -> None:
        if self.capped:
            self._capped_arrival()
            return
        if not self._next_conversation():
            return
        if self.next_conv * self.turns < self.n:
            if self.arrivals is not None:
                self._push(self.arrivals[self.next_conv], ARRIVAL, 0)
            else:
                self._push(self.now + self._gap(), ARRIVAL, 0)

    def _capped_arrival(self) -> None:
        """A conversation generated at the client's rate: sent when one of the ``concurrency``
        slots is free, else queued at the client (sglang ``bench_serving`` / ``vllm bench serve``
        with ``--request-rate`` and ``--max-concurrency``: the request waits for the semaphore,
        and its TTFT starts when it is sent)."""
        self.generated += 1
        if self.generated < -(-self.n // self.turns):
            self._push(self.now + self._gap(), ARRIVAL, 0)
        if self.in_flight < self.spec.workload.concurrency:
            self.in_flight += 1
            self._next_conversation()
        else:
            self.pending += 1

    def _complete(self, i: int) -> None:
        self.R.t_done[i] = self.now
        self.completed += 1
        t = self.turns
        if t > 1 and i % t < t - 1 and i + 1 < self.n:
            think = self.spec.workload.think_time
            if think > 0:
                self._push(self.now + think, FOLLOW_UP, i + 1)
            else:
                self._issue(i + 1)
            return
        if self.capped:
            if self.pending:
                self.pending -= 1
                self._next_conversation()
            else:
                self.in_flight -= 1
        elif self.spec.workload.concurrency and self.arrivals is None:
            self._next_conversation()

    # ================================================================ KV blocks
    def _need(self, i: int) -> int:
        """Blocks to admit request i (reserve-max-tokens: final length; on-demand: prompt + 1)."""
        if self.on_demand:
            return -(-(self.R.prompt[i] + 1) // self.blk)
        return self.c.reserve_blocks(i)

    def _grown(self, d: "_DecodeInst", r: int) -> float:
        """Blocks rank r's running sequences have grown into since they started (on-demand)."""
        if not self.on_demand or not d.running[r]:
            return 0.0
        return self.tps * (d.running[r] * self._step_now(d) - d.sum_start[r]) / self.blk

    def _step_now(self, d: "_DecodeInst") -> int:
        """The step group ``d`` is in now: its span's first step plus the steps that have ended
        since the span started, read from the span's groups of equal steps (``d.marks``, written by
        :meth:`_run_ahead`), so a reservation on a busy instance sees the blocks its sequences have
        grown into by this step, as stepping one at a time does."""
        if not (d.busy and d.span > 1 and d.marks):
            return d.step
        el = self.now - d.t0
        j = 0
        for j0, t_start, t in d.marks:
            if el < t_start:
                break
            j = j0 + (int((el - t_start) / t) if t > 0 else 0)
        return d.step + min(d.span - 1, j)

    def _preempt_overflow(self, d: "_DecodeInst", requeue) -> None:
        """On-demand: preempt the latest-started sequences of each overflowing rank."""
        R = self.R
        step = d.step
        for r in range(len(d.running)):
            if not d.running[r]:
                continue
            order = d.order[r]
            while d.running[r] and d.free_blocks[r] - self._grown(d, r) < 0:
                i = order.pop()
                if R.fin[i] < 0 or R.rank[i] != r:
                    continue            # finished or already preempted
                done = int(R.tps[i] * (step - self._start_of[i]))
                d.running[r] -= 1
                d.nseq[r] -= 1
                d.free_blocks[r] += R.blocks[i]
                self.d_freed += 1
                d.sum_prompt[r] -= R.prompt[i]
                d.sum_start[r] -= self._start_of[i]
                R.fin[i] = -1           # its heap entry is now stale
                R.gen[i] += done
                R.prompt[i] += done     # recompute: prompt + generated so far
                R.cached[i] = 0
                R.done_prompt[i] = 0
                R.rank[i] = -1
                R.prank[i] = -1
                self.preemptions += 1
                requeue(i)
        d.total = sum(d.running)

    def _per_request_tps(self, model: Any) -> None:
        """Each request's tokens per decode step (``ctx.tokens_per_step``, from
        :func:`sncc.sim.workload.request_tokens_per_step`; a hand-built context without it: the
        model's mean for all).  Finish steps and preempted progress use the request's own value;
        the ranks' context and block growth use ``self.tps``, the harmonic mean: a request stays
        running for a time proportional to ``1 / tps_i``, so the running set's time-averaged tokens
        per step is ``n / sum(1 / tps_i)`` (:func:`sncc.sim.workload.mean_request_tokens_per_step`)."""
        own = getattr(self.c, "tokens_per_step", None)
        n = len(self.R.prompt)
        if own is None or len(own) != n:
            self.tps = model.tokens_per_decode_step
            self.R.tps = [self.tps] * n
        else:
            self.R.tps = list(own)
            self.tps = mean_request_tokens_per_step(own, model.tokens_per_decode_step)

    # ================================================================ disaggregated
    def _init_disagg(self) -> None:
        c = self.c
        pr, de = c.prefill, c.decode
        self.handlers = self._handler_table({ARRIVAL: self._open_arrival, STEP_DONE: self._prefill_done,
                                              KV_ARRIVED: self._kv_arrive, DECODE_DONE: self._decode_done})
        self.proxy: List[int] = []
        self.proxy_head = 0
        self.p_idle = list(range(pr.instances))
        self.p_active: List[List[int]] = [[] for _ in range(pr.instances)]   # requests being prefilled
        self.p_queue: List[List[int]] = [[] for _ in range(pr.instances)]    # push mode local queues
        self.p_load = [0] * pr.instances
        self.p_step_info: List[List[int]] = [[] for _ in range(pr.instances)]
        self.p_step_time = [0.0] * pr.instances
        self.d = [_DecodeInst(de.dp, c.decode_blocks) for _ in range(de.instances)]
        self.d_maxseq = de.max_num_seqs
        self._per_request_tps(c.decode_model)
        self.push_mode = self.spec.prefill_dispatch == "push"
        self._start_of = [0] * len(self.R.prompt)
        kv = c.kv
        self.kv_in_rate, self.kv_out_rate = kv.ingress_rate, kv.egress_rate
        self.kv_in_free = [0.0] * de.instances      # ingress channel busy until [s]
        self.kv_out_free = [0.0] * pr.instances     # egress channel busy until [s]
        self.kv_transfers = 0
        self.kv_waited = 0                          # transfers delayed by a shared channel

    def _arrive_disagg(self, i: int) -> None:
        self.proxy.append(i)
        self._dispatch()

    def _reserve(self, i: int) -> bool:
        """Reserve decode KV for request i on the DP rank with most free blocks.

        A request refused once stays refused until a decode sequence frees its blocks and slot
        (``d_freed`` counts those): between frees the ranks' free blocks only shrink (on-demand
        growth) and their sequence counts only rise, so the repeated attempts of a blocked proxy
        head on every later event are answered without the scan."""
        if i == self._refused and self.d_freed == self._refused_at:
            return False
        R = self.R
        need = self._need(i)
        best = None
        bfree = -1
        od = self.on_demand
        for di, d in enumerate(self.d):
            fb = d.free_blocks
            ns = d.nseq
            m = max(fb)
            if m < need or m <= bfree:
                continue
            # rank with most free blocks among those below max_num_seqs
            for r in range(len(fb)):
                f = fb[r] - self._grown(d, r) if od else fb[r]
                if f > bfree and f >= need and ns[r] < self.d_maxseq:
                    bfree = f
                    best = (di, r)
        if best is None:
            if need > self._pool()[1]:
                raise self._unadmittable([i], during=True)
            self._refused, self._refused_at = i, self.d_freed
            return False
        di, r = best
        d = self.d[di]
        d.free_blocks[r] -= need
        d.nseq[r] += 1          # counts reserved (in flight + running) sequences
        R.blocks[i] = need
        R.rank[i] = r
        R.inst[i] = di
        if od:
            self._cut_span(di)  # its on-demand overflow bound read the free blocks just taken
        return True

    def _blocked(self) -> None:
        if self.t_first_block is None:
            self.t_first_block = self.now

    def _dispatch(self) -> None:
        proxy = self.proxy
        if self.push_mode:
            while self.proxy_head < len(proxy):
                i = proxy[self.proxy_head]
                if not self._reserve(i):
                    self._blocked()
                    break
                self.proxy_head += 1
                if not self.R.gen[i]:
                    self.R.t_disp[i] = self.now
                k = min(range(len(self.p_load)), key=self.p_load.__getitem__)
                self.p_queue[k].append(i)
                self.p_load[k] += self.R.prompt[i]
            while self.p_idle:
                k = self.p_idle.pop()
                if not self._start_prefill(k):
                    break
        else:
            while self.p_idle and self.proxy_head < len(proxy):
                if proxy[self.proxy_head] == self._refused and self.d_freed == self._refused_at:
                    break               # the head is still refused: an idle instance would stay idle
                k = self.p_idle.pop()
                if not self._start_prefill(k):
                    break
        if self.proxy_head > 4096:
            del proxy[: self.proxy_head]
            self.proxy_head = 0

    def _start_prefill(self, k: int) -> bool:
        """Form and start a prefill step on idle instance k; False (and idle) if nothing to do."""
        c, R = self.c, self.R
        budget, chunk = step_budget(c.prefill)
        active = self.p_active[k]
        # pull new requests (pull mode: from the proxy, with decode reservation)
        if self.push_mode:
            q = self.p_queue[k]
            rem = budget - sum(min(chunk, R.prompt[i] - R.done_prompt[i]) for i in active)
            while q and rem > 0:
                i = q.pop(0)
                active.append(i)
                rem -= min(chunk, R.prompt[i] - R.done_prompt[i])
        else:
            rem = budget - sum(min(chunk, R.prompt[i] - R.done_prompt[i]) for i in active)
            proxy = self.proxy
            while rem > 0 and self.proxy_head < len(proxy):
                i = proxy[self.proxy_head]
                if not self._reserve(i):
                    self._blocked()
                    break
                self.proxy_head += 1
                if not R.gen[i]:
                    R.t_disp[i] = self.now
                active.append(i)
                rem -= min(chunk, R.prompt[i] - R.done_prompt[i])
        if not active:
            self.p_idle.append(k)
            return False
        chunks = []
        dp = max(1, c.prefill.dp)
        left = [budget // dp] * dp       # each DP rank schedules its own max_num_batched_tokens
        finishing = []
        prank = R.prank
        for i in active:
            r = prank[i]
            if r < 0:
                r = prank[i] = left.index(max(left))    # a new prompt goes to the least loaded rank
            if left[r] <= 0:
                continue
            todo = R.prompt[i] - R.done_prompt[i]
            l = min(todo, chunk, left[r])
            chunks.append((l, R.done_prompt[i], r))
            left[r] -= l
            R.done_prompt[i] += l
            if R.done_prompt[i] >= R.prompt[i]:
                finishing.append(i)
        t = c.prefill_model.prefill_step(chunks)
        self.work += len(chunks)
        self.p_step_info[k] = finishing
        self.p_step_time[k] = t
        if finishing:
            fs = set(finishing)
            self.p_active[k] = [i for i in active if i not in fs]
        self._push(self.now + t, STEP_DONE, k)
        return True

    def _prefill_done(self, k: int) -> None:
        c, R = self.c, self.R
        t_step = self.p_step_time[k]
        now = self.now
        kv = c.kv
        ready = kv.ready(now, t_step)       # when this step's KV bytes can enter the channels
        in_free, in_rate = self.kv_in_free, self.kv_in_rate
        for i in self.p_step_info[k]:
            if self.push_mode:
                self.p_load[k] -= R.prompt[i]
            R.t_pdone[i] = now
            # the whole prompt's KV moves: a prefix hit on the prefill instance saves its
            # compute, but the decode instance holds no copy of that prefix (no decode-side
            # prefix cache is modelled)
            tok = R.prompt[i]
            t = now + kv.exposed(tok, t_step)
            wait = 0.0
            if tok > 0:
                nb = kv.nbytes(tok)
                f = self.kv_out_free[k] = channel_finish(self.kv_out_free[k], ready, nb, self.kv_out_rate)
                di = R.inst[i]
                g = in_free[di] = channel_finish(in_free[di], ready, nb, in_rate)
                if g > f:
                    f = g
                if f > t:
                    wait = f - t
                    t = f
                    self.kv_waited += 1
                self.kv_transfers += 1
            R.kv_wait[i] = wait
            self._push(t, KV_ARRIVED, i)
        self.p_step_info[k] = []
        if self.p_active[k]:
            self._start_prefill(k)      # continue its unfinished chunked prompts (pulls more too)
        else:
            self.p_idle.append(k)
        self._dispatch()

    def _kv_arrive(self, i: int) -> None:
        self.R.t_kv[i] = self.now
        di = self.R.inst[i]
        d = self.d[di]
        d.pending.append(i)
        if d.busy:
            self._cut_span(di)  # the sequence joins at the first step boundary from now
        else:
            self._start_decode(di)

    def _start_decode(self, di: int) -> None:
        """Start decode instance ``di``'s next run-ahead span (its pending sequences join first);
        a request preempted on the way goes back to the front of the proxy queue and is placed
        at once, not at the next event that happens to dispatch."""
        pre = self.preemptions
        self._start_decode_span(di)
        if self.preemptions != pre:
            self._dispatch()

    def _start_decode_span(self, di: int) -> None:
        d = self.d[di]
        R = self.R
        step = d.step
        if d.pending:
            od = self.on_demand
            for i in d.pending:
                r = R.rank[i]
                d.running[r] += 1
                d.sum_prompt[r] += R.prompt[i]
                d.sum_start[r] += step
                self._start_of[i] = step
                fin = step + int(math.ceil((R.out[i] - 1 - R.gen[i]) / R.tps[i] - 1e-9))
                R.fin[i] = fin
                heapq.heappush(d.heap, (fin, i))
                if od:
                    d.order[r].append(i)
            new = d.pending
            d.pending = []
            d.total = len(d.heap)
            if self.on_demand:
                self._preempt_overflow(d, self._requeue_disagg)
                new = [i for i in new if R.fin[i] >= 0]
            d.new_this = [i for i in new if not R.gen[i]]
        elif self.on_demand:
            self._preempt_overflow(d, self._requeue_disagg)
        if self.on_demand and not d.total:
            d.busy = False
            return
        if not d.heap or not d.total:
            d.busy = False
            return
        # the largest DP rank sets the lockstep step time
        run = d.running
        B = max(run)
        r = run.index(B)
        d.span, t = self._run_ahead(d, B, r, self.c.decode_model, horizon=float("inf"))
        d.B, d.r = B, r
        d.t0, d.t_done = self.now, self.now + t
        d.busy = True
        d.gen += 1
        self._push(d.t_done, DECODE_DONE, di | (d.gen << 16))

    def _cut_span(self, di: int, model: Any = None) -> None:
        """End busy decode instance ``di``'s run-ahead span at the first step boundary at or after
        now, where something outside its own steps changed it (a KV arrival, a reservation; an
        aggregated instance: a request routed to it, ``model`` its serve model): the
        span is recomputed from its start with that horizon, so its steps are the ones stepping one
        at a time gives, and its DECODE_DONE event is replaced (the old one goes stale)."""
        d = self.d[di]
        if not d.busy or d.span <= 1 or d.t_done <= self.now:
            return
        j, t = self._run_ahead(d, d.B, d.r, model or self.c.decode_model, horizon=self.now, t0=d.t0,
                               k_cap=d.span)
        if j >= d.span:
            return
        d.span, d.t_done = j, d.t0 + t
        d.gen += 1
        self._push(d.t_done, DECODE_DONE if self.spec.disaggregated else STEP_DONE, di | (d.gen << 16))

    def _run_ahead(self, d: "_DecodeInst", B: int, r: int, model: Any, horizon: Optional[float] = None,
                   t0: Optional[float] = None, k_cap: Optional[int] = None) -> tuple:
        """(steps, seconds) of the decode-only steps group ``d`` runs before anything but its own
        steps can change: the first step always, then as many more as pass before its next
        sequence finishes, before a first token must be stamped, before an on-demand rank's
        growing blocks would overflow (a preemption), and no later than the first step boundary
        after ``horizon`` [s] (default: the next event of the simulation; decode and serve
        instances pass infinity, run to their own bounds and are cut by :meth:`_cut_span`),
        counted from ``t0`` (default: now); ``k_cap`` replaces the step bound (a cut span keeps its own).  Identical
        steps are costed once per 128-token context bucket
        (:meth:`sncc.cost.step.StepModel.decode_step`), so a long decode at low concurrency costs a
        handful of events instead of one per token; the result is the same as stepping one at a time."""
        step = d.step
        tps = self.tps
        k_max = 1 if (d.new_this or not d.heap) else max(1, d.heap[0][0] - step + 1)
        if k_cap is not None:
            k_max = k_cap
        elif self.on_demand and k_max > 1:
            blk = self.blk
            for rr, n in enumerate(d.running):
                if n:
                    k_max = min(k_max, int((d.free_blocks[rr] * blk / tps + d.sum_start[rr]) / n) - step + 1)
            k_max = max(1, k_max)
        if horizon is None:
            horizon = self.ev[0][0] if self.ev else float("inf")
        limit = horizon - (self.now if t0 is None else t0)
        total_seqs = d.total
        sp, ss = d.sum_prompt[r], d.sum_start[r]
        j, t_sum = 0, 0.0
        marks = d.marks = []
        while j < k_max:
            ctx = sp + tps * (B * (step + j) - ss)
            t = model.decode_step(B, ctx, total_seqs)
            per = ctx / B
            edge = ((int(per) >> 7) + 1) << 7
            n = min(k_max - j, max(1, int(math.ceil((edge - per) / tps))))
            marks.append((j, t_sum, t))
            if t > 0 and t_sum + n * t >= limit:
                n = max(1, int(math.ceil((limit - t_sum) / t)))
                j += n
                t_sum += n * t
                break
            j += n
            t_sum += n * t
        return j, t_sum

    def _pop_finished(self, d, step: int) -> list[int]:
        """Remove the sequences of decode/serve group ``d`` that finish at or before
        ``step`` from its heap and rank counters; returns their request indices.
        Heap entries of preempted sequences (``fin`` changed) are skipped."""
        R = self.R
        h = d.heap
        done: list[int] = []
        while h and h[0][0] <= step:
            f, i = heapq.heappop(h)
            if f != R.fin[i]:
                continue                # stale entry of a preempted sequence
            R.fin[i] = -1
            r = R.rank[i]
            d.running[r] -= 1
            d.nseq[r] -= 1
            d.free_blocks[r] += R.blocks[i]
            self.d_freed += 1
            d.sum_prompt[r] -= R.prompt[i]
            d.sum_start[r] -= self._start_of[i]
            done.append(i)
        return done

    def _decode_done(self, a: int) -> None:
        di = a & 0xFFFF
        d = self.d[di]
        if a >> 16 != d.gen:
            return                      # the event of a span cut short (:meth:`_cut_span`)
        R = self.R
        now = self.now
        for i in d.new_this:
            R.t_first[i] = now
        d.new_this = []
        step = d.step + d.span - 1      # the last step of the run-ahead span
        d.span = 1
        for i in self._pop_finished(d, step):
            self._complete(i)
        d.step = step + 1
        d.busy = False
        if now >= self._ts_next:
            self._sample(len(self.proxy) - self.proxy_head)
        self._dispatch()
        if not d.busy:
            self._start_decode(di)

    # ================================================================ aggregated
    def _init_serve(self) -> None:
        c = self.c
        s = c.serve
        self.handlers = self._handler_table({ARRIVAL: self._open_arrival, STEP_DONE: self._serve_done})
        self.s_wait: List[List[int]] = [[] for _ in range(s.instances)]
        self.s_pref: List[List[int]] = [[] for _ in range(s.instances)]
        self.s_load = [0] * s.instances
        self.d = [_DecodeInst(s.dp, c.serve_blocks) for _ in range(s.instances)]
        self.d_maxseq = s.max_num_seqs
        self._per_request_tps(c.serve_model)
        self.s_step_fin: List[List[int]] = [[] for _ in range(s.instances)]
        self._start_of = [0] * len(self.R.prompt)

    def _requeue_disagg(self, i: int) -> None:
        """A preempted request goes back to the front of the proxy queue."""
        self.proxy.insert(self.proxy_head, i)

    def _requeue_serve(self, k: int, i: int) -> None:
        """A preempted request goes back to the front of instance k's waiting queue."""
        self.s_wait[k].insert(0, i)

    def _arrive_serve(self, i: int) -> None:
        k = min(range(len(self.s_load)), key=self.s_load.__getitem__)
        self.s_wait[k].append(i)
        self.s_load[k] += 1
        self.R.inst[i] = k
        if self.d[k].busy:
            self._cut_span(k, self.c.serve_model)   # admitted at the first step boundary from now
        else:
            self._start_serve(k)

    def _serve_reserve(self, k: int, i: int) -> bool:
        R = self.R
        d = self.d[k]
        need = self._need(i)
        best, bfree = -1, -1
        od = self.on_demand
        for r in range(len(d.free_blocks)):
            fb = d.free_blocks[r] - self._grown(d, r) if od else d.free_blocks[r]
            if fb >= need and fb > bfree and d.nseq[r] < self.d_maxseq:
                best, bfree = r, fb
        if best < 0:
            if need > self._pool()[1]:
                raise self._unadmittable([i], during=True)
            return False
        d.free_blocks[best] -= need
        d.nseq[best] += 1
        R.blocks[i] = need
        R.rank[i] = best
        return True

    def _start_serve(self, k: int) -> None:
        c, R = self.c, self.R
        d = self.d[k]
        step = d.step
        tps = self.tps
        budget, chunk = step_budget(c.serve)
        q = 1 + c.serve_model.draft
        pre = self.preemptions
        if self.on_demand and d.heap:
            self._preempt_overflow(d, lambda i, k=k: self._requeue_serve(k, i))
        B_total = sum(d.running)
        left = budget - B_total * q
        pref = self.s_pref[k]
        wait = self.s_wait[k]
        while wait and left > 0 and pre == self.preemptions:   # vLLM admits none in a preempting step
            i = wait[0]
            if not self._serve_reserve(k, i):
                self._blocked()
                break
            wait.pop(0)
            if not R.gen[i]:
                R.t_disp[i] = self.now
            pref.append(i)
            left -= min(chunk, R.prompt[i] - R.done_prompt[i])
        per_rank = budget // max(1, c.serve.dp)
        lefts = [per_rank - n * q for n in d.running]   # each DP rank's own token budget
        chunks = []
        fin = []
        for i in pref:
            r = R.rank[i]
            l = min(R.prompt[i] - R.done_prompt[i], chunk, lefts[r])
            if l <= 0:
                continue
            chunks.append((l, R.done_prompt[i], r))
            lefts[r] -= l
            R.done_prompt[i] += l
            if R.done_prompt[i] >= R.prompt[i]:
                fin.append(i)
        if fin:
            fs = set(fin)
            self.s_pref[k] = [i for i in pref if i not in fs]
        self.s_step_fin[k] = fin
        if not chunks and not B_total:
            d.busy = False
            return
        run = d.running
        if not chunks and not self.s_pref[k] and pre == self.preemptions:
            # decode only, nothing admissible until a sequence finishes: run ahead
            B = max(run)
            r = run.index(B)
            d.span, t = self._run_ahead(d, B, r, c.serve_model, horizon=float("inf"))
            d.B, d.r = B, r
            d.t0, d.t_done = self.now, self.now + t
            d.busy = True
            d.gen += 1
            self._push(d.t_done, STEP_DONE, k | (d.gen << 16))
            return
        if B_total:
            B = max(run)
            r = run.index(B)
            ctx = d.sum_prompt[r] + tps * (B * step - d.sum_start[r])
        else:
            B, ctx = 0, 0.0
        t = c.serve_model.mixed_step(chunks, B, ctx, B_total)
        self.work += len(chunks)
        d.span = 1
        d.busy = True
        d.gen += 1
        self._push(self.now + t, STEP_DONE, k | (d.gen << 16))

    def _serve_done(self, a: int) -> None:
        k = a & 0xFFFF
        R = self.R
        d = self.d[k]
        if a >> 16 != d.gen:
            return                      # the event of a span cut short (:meth:`_cut_span`)
        now = self.now
        step = d.step + d.span - 1      # the last step of the run-ahead span
        d.span = 1
        for i in self._pop_finished(d, step):
            self.s_load[k] -= 1
            self._complete(i)
        nxt = step + 1
        for i in self.s_step_fin[k]:
            if not R.gen[i]:
                R.t_first[i] = now
            if R.out[i] <= 1:
                r = R.rank[i]
                d.nseq[r] -= 1
                d.free_blocks[r] += R.blocks[i]
                self.d_freed += 1
                self.s_load[k] -= 1
                self._complete(i)
                continue
            r = R.rank[i]
            d.running[r] += 1
            d.sum_prompt[r] += R.prompt[i]
            d.sum_start[r] += nxt
            self._start_of[i] = nxt
            f = nxt + int(math.ceil((R.out[i] - 1 - R.gen[i]) / R.tps[i] - 1e-9)) - 1
            R.fin[i] = f
            heapq.heappush(d.heap, (f, i))
            if self.on_demand:
                d.order[r].append(i)
        self.s_step_fin[k] = []
        if now >= self._ts_next:
            self._sample(sum(len(w) for w in self.s_wait))
        d.step = nxt
        d.busy = False
        self._start_serve(k)

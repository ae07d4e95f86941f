"""The search space: a table of dimensions, and the role layouts it spans.

Each :class:`Dimension` is one entry of :data:`DIMENSIONS`: its name (the ``search { }`` key and the
CLI flag), the roles it applies to, its default generator (what an engineer would try) and how a
value is applied to a candidate role (the :class:`~sncc.plan.model.Role` fields it sets).  A new
search dimension is one entry here (and one field of :class:`~sncc.plan.model.Search`).

Role layouts are built by construction rules that never produce a plan the checks would refuse
for its parallelism: ``tp`` divides the attention heads (vLLM refuses a tensor-parallel size that
does not divide ``num_attention_heads``; SN3004 for the KV heads), the expert-parallel group
``tp × dp`` divides the routed experts (SN3005), a layout fits the device budget, and one device
holds the role's weights (:func:`sncc.capacity.weights_per_device`, the one memory model).
The real checks still run on every candidate that is ranked (:mod:`sncc.search.run`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from sncc.units import format_bytes_gib, format_count

#: the decode batch grid per DP rank an engineer tries (aiconfigurator's ``default`` sweep steps
#: its decode batch through 1, 2, 4, 8, then multiples of 8 to 256 and 384, 512; that grid, as
#: the issue 12 space, 96 values there with its finer steps)
DEFAULT_BATCH_GRID = (1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 384, 512)
#: data-parallel sizes are powers of two up to the budget (attention replicas per instance)
_POW2 = (1, 2, 4, 8, 16, 32, 64, 128, 256)


@dataclass(frozen=True)
class Layout:
    """One role's layout: the settings priced together (everything but instances and batch).

    ``role``: ``prefill``, ``decode`` or ``serve``; ``tp × dp × pp`` devices per instance;
    ``expert_parallel``: routed experts placed by expert parallelism (MoE only);
    ``max_num_batched_tokens`` / ``chunk`` [tokens per DP rank]; ``speculative``: the plan's
    speculative setting in force (False = turned off in this role)."""

    role: str
    tp: int
    dp: int
    pp: int
    expert_parallel: bool
    max_num_batched_tokens: int
    chunk: Optional[int]
    speculative: bool

    @property
    def devices(self) -> int:
        """Devices per instance: tp × dp × pp."""
        return self.tp * self.dp * self.pp

    def label(self) -> str:
        """``tp1 dp8 ep`` style text."""
        ep = " ep" if self.expert_parallel else ""
        pp = f" pp{self.pp}" if self.pp > 1 else ""
        mtp = " spec" if self.speculative else ""
        return f"tp{self.tp} dp{self.dp}{pp}{ep}{mtp}"

    def key(self) -> tuple:
        """Total order of layouts (deterministic sorting)."""
        return (self.role, self.tp, self.dp, self.pp, self.expert_parallel, self.max_num_batched_tokens,
                self.chunk or 0, self.speculative)


@dataclass
class SpaceContext:
    """What the default generators read: the base plan, its facts and the device budget."""

    plan: Any
    facts: Any
    budget: int
    fixed: bool
    devices_per_node: int


@dataclass(frozen=True)
class Dimension:
    """One search dimension: ``name`` (the ``search { }`` key), ``roles`` it applies to,
    ``default(ctx, role)`` the values to try when the block gives none, ``apply(update, value)``
    sets the :class:`~sncc.plan.model.Role` fields of a candidate role (``update``: field → value)."""

    name: str
    roles: tuple
    default: Callable[[SpaceContext, str], list]
    apply: Callable[[dict, Any], None]
    doc: str = ""


def base_role(p: Any, role: str):
    """The base plan's role a candidate's ``role`` takes its settings from: its own block of that
    name, else the nearest (serve from decode, prefill and decode from serve), or None."""
    own = getattr(p, role, None)
    if own is not None:
        return own
    if role == "serve":
        return p.decode or p.prefill
    return p.serve or (p.decode if role == "prefill" else p.prefill)


def _default_tp(ctx: SpaceContext, role: str) -> list:
    heads = int(getattr(ctx.facts.arch, "num_attention_heads", 0) or 0)
    cap = min(ctx.budget, ctx.devices_per_node)
    return [t for t in _POW2 if t <= cap and (heads == 0 or heads % t == 0)]


def _default_dp(ctx: SpaceContext, role: str) -> list:
    return [d for d in _POW2 if d <= ctx.budget]


def _default_ep(ctx: SpaceContext, role: str) -> list:
    return [True] if ctx.facts.is_moe else [False]


def budget_role(p: Any, role: str):
    """The base plan's role a candidate's ``role`` takes its token budget and prefill chunk from:
    :func:`base_role`, except that a ``serve`` role of a disaggregated plan takes the ``prefill``
    role's (a serve role prefills prompts; a P/D decode role's budget never had to hold one)."""
    if role == "serve" and getattr(p, "serve", None) is None and getattr(p, "prefill", None) is not None:
        return p.prefill
    return base_role(p, role)


def _budget_value(field_name: str) -> Callable[[SpaceContext, str], list]:
    def gen(ctx: SpaceContext, role: str) -> list:
        return [getattr(budget_role(ctx.plan, role), field_name)]
    return gen


def _default_seqs(ctx: SpaceContext, role: str) -> list:
    return list(DEFAULT_BATCH_GRID)


def _default_instances(ctx: SpaceContext, role: str) -> list:
    return list(range(1, ctx.budget + 1))


def _default_spec(ctx: SpaceContext, role: str) -> list:
    return [ctx.plan.speculative is not None]


def _set(*names: str) -> Callable[[dict, Any], None]:
    def apply(update: dict, value: Any) -> None:
        for n in names:
            update[n] = value
    return apply


def _apply_spec(update: dict, value: bool) -> None:
    from sncc.plan.model import Speculative

    if not value:
        update["speculative"] = Speculative.model_validate({"method": "none"})


_ALL = ("prefill", "decode", "serve")
_DECODING = ("decode", "serve")

#: the search dimensions (module docstring); order = the order candidates are enumerated in
DIMENSIONS: tuple = (
    Dimension("tp", _ALL, _default_tp, _set("tp"), "tensor-parallel size of attention"),
    Dimension("dp", _ALL, _default_dp, _set("dp"), "data-parallel attention replicas per instance"),
    Dimension("pp", _ALL, lambda ctx, role: [1], _set("pp"), "pipeline stages"),
    Dimension("expert_parallel", _ALL, _default_ep, _set("expert_parallel"), "expert parallelism on/off"),
    Dimension("max_num_batched_tokens", _ALL, _budget_value("max_num_batched_tokens"), _set("max_num_batched_tokens"),
              "token budget per step and DP rank"),
    Dimension("chunked_prefill", ("prefill", "serve"), _budget_value("chunked_prefill"), _set("chunked_prefill"),
              "chunked-prefill chunk size"),
    Dimension("speculative", _DECODING, _default_spec, _apply_spec, "speculative decoding on/off"),
    Dimension("max_num_seqs", _DECODING, _default_seqs, _set("max_num_seqs"), "batch size per DP rank"),
    Dimension("instances", _ALL, _default_instances, _set("instances"), "instances of the role"),
)
DIMENSION_BY_NAME = {d.name: d for d in DIMENSIONS}


@dataclass
class Space:
    """The resolved space: modes, layouts per role, batch grid and instance counts per role,
    the budget, and the values dropped by construction (``dropped``: (dimension, value, why))."""

    modes: tuple
    layouts: dict
    batches: tuple
    instances: dict
    budget: int
    fixed: bool
    top: int
    dropped: list = field(default_factory=list)
    #: the values the command line or the ``search { }`` block asked for (key → tuple), the
    #: defaults left out: what :meth:`excludes` holds a candidate to
    requested: dict = field(default_factory=dict)
    #: role → (chunks, token budgets) for a role whose parallel layouts all passed a construction
    #: rule but whose every ``chunked_prefill`` value is larger than every ``max_num_batched_tokens``
    #: value: what emptied it (SN8101 names those values, not the layouts)
    token_emptied: dict = field(default_factory=dict)
    #: role → ((tp, dp, pp, kind, rule, weights), ...) for a role no tp × dp × pp listed passed the
    #: parallel and memory rules: the rule each one broke (``kind``: heads, kv_heads, budget, experts,
    #: hbm; ``rule`` its text; ``weights`` per device [B] for hbm; dp and pp None: the tp alone broke
    #: it, at every dp and pp); what SN8101 names (:func:`refused_layouts_text`)
    layout_refused: dict = field(default_factory=dict)

    def excludes(self, cand: Any) -> Optional[str]:
        """Why candidate ``cand`` lies outside the requested space, every reason joined by ``; ``
        (a mode not searched, more devices than the budget or not exactly it with ``fixed``, a
        value the flags or the block do not list), or None when it lies inside.  The base plan's own layout is the one
        candidate not built from the space, so it is the one this can refuse."""
        why = []
        if cand.mode not in self.modes:
            why.append(f"{cand.mode}, but the search is {' and '.join(self.modes)} only")
        if cand.devices > self.budget or (self.fixed and cand.devices != self.budget):
            why.append(f"{format_count(cand.devices, 'device')}, but the budget is {'exactly' if self.fixed else 'at most'} "
                       f"{self.budget}")
        for rc in cand.roles:
            lay, role = rc.layout, rc.layout.role
            got = {"tp": lay.tp, "dp": lay.dp, "pp": lay.pp, "max_num_batched_tokens": lay.max_num_batched_tokens,
                   f"{role}_instances": rc.instances, "speculative": lay.speculative}
            if role in ("prefill", "serve") and lay.chunk is not None:
                got["chunked_prefill"] = lay.chunk
            if role in _DECODING and rc.max_num_seqs is not None:
                got["max_num_seqs"] = rc.max_num_seqs
            if self.requested.get("moe") and lay.tp * lay.dp > 1:
                got["expert_parallel"] = lay.expert_parallel
            for key, value in got.items():
                want = self.requested.get(key)
                if want is not None and value not in want:
                    shown = {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value
                    who = "" if key.startswith(role) else f"{role} "
                    why.append(f"{who}`{key} = {shown}`, not among the values searched")
        return "; ".join(why) or None

    @property
    def size(self) -> int:
        """Role points: layouts × batch sizes for decoding roles, layouts for prefill."""
        n = 0
        for role, ls in self.layouts.items():
            n += len(ls) * (len(self.batches) if role in _DECODING else 1)
        return n


def values(search: Any, ctx: SpaceContext, dim: Dimension, role: str, overrides: dict) -> list:
    """The values of ``dim`` for ``role``: the CLI's (``overrides``), else the block's, else the default."""
    key = f"{role}_instances" if dim.name == "instances" else dim.name
    if key in overrides and overrides[key] is not None:
        return list(overrides[key])
    raw = getattr(search, key, None) if search is not None else None
    if dim.name == "expert_parallel":
        raw = {"auto": None, "on": [True], "off": [False], "both": [True, False]}.get(raw or "auto")
    if dim.name == "speculative":
        raw = {"plan": None, "off": [False], "both": [True, False]}.get(raw or "plan")
    if raw is None:
        return dim.default(ctx, role)
    return list(raw)


def budget_of(plan: Any, facts: Any, overrides: dict) -> int:
    """The device budget: ``--devices``, else ``search.devices``, else the plan's hardware."""
    s = plan.search
    if overrides.get("devices"):
        return int(overrides["devices"])
    if s is not None and s.devices:
        return int(s.devices)
    return int(facts.devices_available or 0)


def build_space(plan: Any, facts: Any, overrides: Optional[dict] = None) -> Space:
    """Resolve the plan's ``search { }`` block (and CLI ``overrides``: a dimension name or
    ``<role>_instances`` → list, ``devices``, ``fixed``, ``mode``, ``top``) into a :class:`Space`.

    Values that can never form a valid layout are dropped and listed in ``Space.dropped``."""
    from sncc.capacity import weights_per_device

    overrides = overrides or {}
    s = plan.search
    budget = budget_of(plan, facts, overrides)
    fixed = bool(overrides.get("fixed") if overrides.get("fixed") is not None else (s.fixed if s else False))
    dpn = int(getattr(facts.system, "devices_per_node", 0) or getattr(facts, "devices_per_node", 0) or 8)
    ctx = SpaceContext(plan, facts, budget, fixed, dpn)
    mode = overrides.get("mode") or (s.mode if s else "both")
    modes = {"both": ("aggregated", "disaggregated"), "aggregated": ("aggregated",),
             "disaggregated": ("disaggregated",)}[mode]
    arch = facts.arch
    heads = int(getattr(arch, "num_attention_heads", 0) or 0)
    kv_heads = int(getattr(arch, "num_key_value_heads", 0) or 0)
    routed = int(getattr(arch, "n_routed_experts", 0) or 0) if facts.is_moe else 0
    hbm = float(getattr(facts.chip, "hbm_bytes", 0) or 0)
    util = float(plan.hardware.memory_utilization)
    dropped: list = []
    roles = ("serve",) * ("aggregated" in modes) + ("prefill", "decode") * ("disaggregated" in modes)
    layouts: dict = {}
    instances: dict = {}
    token_emptied: dict = {}
    layout_refused: dict = {}
    for role in roles:
        vals = {d.name: values(s, ctx, d, role, overrides) for d in DIMENSIONS if role in d.roles}
        vals.setdefault("chunked_prefill", [None])
        vals.setdefault("speculative", [plan.speculative is not None])
        out = []
        parallel = 0                  # tp × dp × pp × ep layouts that pass the parallel and memory rules
        refused: list = []            # (tp, dp, pp, rule) of each tp × dp × pp no layout came from
        for tp in vals["tp"]:
            if heads and heads % tp:
                dropped.append(("tp", tp, f"does not divide the {heads} attention heads"))
                refused.append((tp, None, None, "heads", f"does not divide the {heads} attention heads", 0.0))
                continue
            if kv_heads and kv_heads > 1 and kv_heads % tp and tp % kv_heads:
                dropped.append(("tp", tp, f"does not split the {kv_heads} KV heads"))
                refused.append((tp, None, None, "kv_heads", f"does not split the {kv_heads} KV heads", 0.0))
                continue
            for dp in vals["dp"]:
                for pp in vals["pp"]:
                    n = tp * dp * pp
                    if n > budget:
                        refused.append((tp, dp, pp, "budget", f"more than the budget of {format_count(budget, 'device')}", 0.0))
                        continue
                    why = None                # (kind, text, weights per device [B]) of the rule it broke
                    passed = parallel
                    for ep in vals["expert_parallel"]:
                        ep = bool(ep) and routed > 0 and tp * dp > 1
                        if ep and routed % (tp * dp):
                            why = why or ("experts", f"the expert-parallel group of tp × dp = {tp * dp} devices does "
                                                     f"not divide the {routed} routed experts", 0.0)
                            continue
                        try:
                            weights = float(weights_per_device(arch, facts.quant or "bf16", tp, dp, pp,
                                                               weight_bytes=facts.weight_bytes_per_param or None))
                        except (TypeError, ValueError, KeyError):
                            weights = 0.0
                        if hbm and weights >= hbm * util:
                            why = ("hbm", f"the weights at {facts.quant or 'bf16'}, {format_bytes_gib(weights)} "
                                          f"per device, exceed one device's HBM budget "
                                          f"({format_bytes_gib(hbm * util)}: {format_bytes_gib(hbm)} × "
                                          f"memory_utilization {util:g})", weights)
                            continue
                        parallel += 1
                        for mbt in vals["max_num_batched_tokens"]:
                            for chunk in vals["chunked_prefill"]:
                                if chunk is not None and chunk > mbt:
                                    dropped.append(("chunked_prefill", chunk, f"larger than max_num_batched_tokens {mbt}"))
                                    continue
                                for spec in vals["speculative"]:
                                    out.append(Layout(role, tp, dp, pp, ep, int(mbt), chunk, bool(spec)))
                    if parallel == passed and why is not None:
                        refused.append((tp, dp, pp) + why)
        layouts[role] = sorted(set(out), key=Layout.key)
        if not parallel:
            layout_refused[role] = tuple(refused)
        if parallel and not out:
            token_emptied[role] = (tuple(sorted({c for c in vals["chunked_prefill"] if c is not None})),
                                   tuple(sorted(set(int(t) for t in vals["max_num_batched_tokens"]))))
        instances[role] = tuple(sorted(set(int(i) for i in values(s, ctx, DIMENSION_BY_NAME["instances"], role, overrides))))
    seqs_role = "serve" if "serve" in roles else "decode"
    batches = tuple(sorted(set(int(b) for b in values(s, ctx, DIMENSION_BY_NAME["max_num_seqs"], seqs_role, overrides))))
    for name in ("tp", "dp", "pp"):
        for value in (overrides.get(name) or (getattr(s, name) if s is not None else None) or []):
            if value > budget:
                dropped.append((name, value, f"larger than the device budget {budget}"))
    dropped += _instances_never_fitting(modes, layouts, instances, budget, s, overrides)
    top = int(overrides.get("top") or (s.top if s else 10))
    return Space(modes, layouts, batches, instances, budget, fixed, top, sorted(set(dropped), key=str),
                 _requested(s, overrides, routed > 0), token_emptied, layout_refused)


def _instances_never_fitting(modes: tuple, layouts: dict, instances: dict, budget: int, search: Any,
                             overrides: dict) -> list:
    """``(key, value, why)`` of each instance count the flags or the ``search { }`` block list
    (``<role>_instances``, not the defaults) that no candidate of its mode can take: that many
    instances of the role's smallest layout, with the fewest instances of the mode's other role
    at its smallest layout, need more devices than the budget.  When every count listed for a
    role is such a value, ``why`` says that its mode has no candidate left (with ``mode = both``
    the other mode is still searched, so that is a warning, SN8102, not SN8101)."""
    need = {"aggregated": ("serve",), "disaggregated": ("prefill", "decode")}
    out = []
    for mode in modes:
        roles = need[mode]
        if any(not layouts.get(r) or not instances.get(r) for r in roles):
            continue                            # SN8101 says why the mode has no layout
        least = {r: min(lay.devices for lay in layouts[r]) for r in roles}
        for role in roles:
            key = f"{role}_instances"
            given = overrides.get(key)
            if given is None and search is not None:
                given = getattr(search, key, None)
            if not given:
                continue
            others = [(min(instances[o]), o) for o in roles if o != role]
            rest = sum(n * least[o] for n, o in others)
            bad = sorted({int(v) for v in given if int(v) * least[role] + rest > budget})
            every = set(bad) >= {int(v) for v in given}
            for v in bad:
                parts = [f"{v} `{role}` × {format_count(least[role], 'device')}"] + [
                    f"{n} `{o}` × {format_count(least[o], 'device')}" for n, o in others]
                why = (f"needs {' + '.join(parts)} = {v * least[role] + rest} devices at the fewest, more than the budget of "
                       f"{budget}")
                if every:
                    why += f"; no {mode} candidate is left"
                out.append((key, v, why))
    return out


#: the list keys :meth:`Space.excludes` compares (the ``search { }`` keys, ``*_instances`` included)
_REQUESTABLE = ("tp", "dp", "pp", "max_num_batched_tokens", "chunked_prefill", "max_num_seqs",
                "prefill_instances", "decode_instances", "serve_instances", "expert_parallel", "speculative")


def _requested(search: Any, overrides: dict, moe: bool) -> dict:
    """The values the flags (``overrides``) or the ``search { }`` block list, key → tuple; the
    enums' ``auto`` / ``plan`` (the plan's own setting) request nothing.  ``moe`` is kept under
    ``"moe"``: expert parallelism is compared only for a model with routed experts."""
    out: dict = {"moe": moe}
    for key in _REQUESTABLE:
        raw = overrides.get(key)
        if raw is None and search is not None:
            raw = getattr(search, key, None)
            if key == "expert_parallel":
                raw = {"on": [True], "off": [False], "both": [True, False]}.get(raw)
            elif key == "speculative":
                raw = {"off": [False], "both": [True, False]}.get(raw)
        if raw is not None:
            out[key] = tuple(raw)
    return out


def space_diagnostics(plan: Any, facts: Any, space: Optional[Space], overrides: Optional[dict] = None) -> list:
    """SN81xx diagnostics of the search block (located at its values; the block itself, or the
    plan's name for a search given on the command line only):

    * SN8103 a budget larger than the plan's hardware, SN8104 ``speculative = both`` without the
      plan's ``speculative`` block (before the space is built: ``space`` None);
    * SN8101 a space without a layout for a role its modes need, SN8102 each value dropped.

    A value the command line gave (``overrides``) is reported at the search block's name (or
    the plan's) with ``(from --flag)`` in the message, not at a value of the block it overrides;
    a dropped default the plan's role wrote (``chunked_prefill``) at that role's value."""
    from sncc.diagnostics import codes
    from sncc.diagnostics.model import diag

    overrides = overrides or {}
    s = plan.search

    def head():
        """The search block's name, else the plan's: where a value not written in the plan is reported."""
        if s is not None and (s.name_span or s.block_span) is not None:
            return s.name_span or s.block_span
        return plan.name_span or plan.block_span

    def flagged(key: str) -> bool:
        return overrides.get(key) is not None

    def at(key: str):
        if flagged(key) or s is None:
            return head()
        return s.span_of(key)

    def src(key: str) -> str:
        """`` (from --tp)`` for a value the command line gave, else nothing."""
        return f" (from --{key.replace('_', '-')})" if flagged(key) else ""

    def role_value(key: str, value: Any):
        """(span, text) of a plan role's own ``key = value`` (a default the block did not list), or None."""
        if s is not None and s.key_span(key) is not None:
            return None
        for name, role in plan.roles():
            if getattr(role, key, None) == value and role.key_span(key) is not None:
                return role.span_of(key), f" (the plan's `{name}` value)"
        return None

    out = []
    if space is None:
        budget = budget_of(plan, facts, overrides)
        have = facts.devices_available
        if have and budget > have:
            out.append(diag(codes.SEARCH_BUDGET_EXCEEDS_HARDWARE,
                            f"the search's budget of {format_count(budget, 'device')}{src('devices')} is larger than the plan's {have}",
                            at("devices"),
                            help=f"set `devices = {have}` or enlarge `hardware`"))
        if budget < 1:
            out.append(diag(codes.SEARCH_EMPTY_SPACE, "the search has no device budget", at("devices"),
                            help="give `search { devices = N }` or the plan's hardware size"))
        spec = overrides.get("speculative") or (s.speculative if s is not None else "plan")
        if spec == "both" and plan.speculative is None:
            out.append(diag(codes.SEARCH_SPECULATIVE_WITHOUT_BLOCK,
                            "`speculative = both` needs the plan's `speculative { }` block", at("speculative"),
                            help="add `speculative { method = mtp  draft_tokens = 1  acceptance = 0.8 }` with the measured acceptance"))
        return out
    need = {"aggregated": ("serve",), "disaggregated": ("prefill", "decode")}
    empty = [role for mode in space.modes for role in need[mode] if not space.layouts.get(role)]
    by_tokens = [role for role in empty if role in space.token_emptied]
    if by_tokens:
        groups: dict = {}
        for role in by_tokens:                     # one error per distinct (chunks, budgets) pair
            groups.setdefault(space.token_emptied[role], []).append(role)
        for roles_ in groups.values():
            out.append(_token_rule_empty(plan, space, roles_, head, flagged, src, role_value))
        empty = [role for role in empty if role not in by_tokens]
    if empty:
        given = [f"{k} from --{k}" for k in ("tp", "dp", "pp") if flagged(k)] + (["budget from --devices"]
                                                                             if flagged("devices") else [])
        why = refused_layouts_text(space, empty)
        out.append(diag(codes.SEARCH_EMPTY_SPACE,
                        f"no {' / '.join(f'`{r}`' for r in empty)} layout fits: every tp × dp × pp listed"
                        f"{' (' + ', '.join(given) + ')' if given else ''} breaks a "
                        + (f"construction rule: {why}" if why else
                           f"construction rule or the budget of {format_count(space.budget, 'device')}"), at("tp"),
                        help="list sizes that divide the attention heads and fit the budget and HBM"))
    over = None
    if not any(d.code is codes.SEARCH_EMPTY_SPACE for d in out):
        over = _instances_over_budget(space, flagged)
        if over is not None:
            out.append(diag(codes.SEARCH_EMPTY_SPACE, over[0], head(), help=over[1]))
    for what, value, why in space.dropped:
        if over is not None and what.endswith("_instances"):
            continue                # the SN8101 above already names the instance counts that emptied every mode
        where, whence = at(what), src(what)
        own = None if flagged(what) else role_value(what, value)
        if own is not None:
            where, whence = own
        out.append(diag(codes.SEARCH_VALUE_DROPPED, f"`{what} = {value}`{whence} is skipped: it {why}"
                        if not why.startswith("larger") else f"`{what} = {value}`{whence} is skipped: {why}", where))
    return out


#: layouts a rule of :func:`refused_layouts_text` names before "and N more"
REFUSED_LAYOUTS_SHOWN = 6
#: the order of rules that refused the same smallest tp: the model's, then the budget, then the memory
_RULE_ORDER = ("heads", "kv_heads", "experts", "budget", "hbm")


def refused_layouts_text(space: Space, roles: list) -> str:
    """Which rule of :func:`build_space` refused each tp × dp × pp listed for ``roles``, grouped by
    rule (``tp = 1: the weights at fp8, … per device, exceed one device's HBM budget …; tp = 2, 4, 8: more than the
    budget of 1 device``); roles refused alike share one text, others are named (`` `prefill`: …``).
    "" when the space recorded no refusal for them (:attr:`Space.layout_refused`)."""
    by_refusal: dict = {}
    for role in roles:
        got = space.layout_refused.get(role)
        if got:
            by_refusal.setdefault(got, []).append(role)
    if not by_refusal:
        return ""
    plain = all(dp in (None, 1) and pp in (None, 1) for got in by_refusal for _, dp, pp, *_ in got)

    def name(tp: int, dp: Optional[int], pp: Optional[int]) -> str:
        if dp is None or plain:
            return str(tp)
        return f"tp{tp} dp{dp}" + (f" pp{pp}" if pp and pp > 1 else "")

    texts = []
    for got, rs in by_refusal.items():
        groups: dict = {}
        for entry in got:
            groups.setdefault(entry[3], []).append(entry)
        parts = []
        # by the smallest tp each rule refused, then the rule order
        for kind in sorted(groups, key=lambda k: (min(e[0] for e in groups[k]),
                                                  _RULE_ORDER.index(k) if k in _RULE_ORDER else len(_RULE_ORDER))):
            entries = groups[kind]
            names = list(dict.fromkeys(name(tp, dp, pp) for tp, dp, pp, *_ in entries))
            shown = ", ".join(names[:REFUSED_LAYOUTS_SHOWN]) + (
                f" and {len(names) - REFUSED_LAYOUTS_SHOWN} more" if len(names) > REFUSED_LAYOUTS_SHOWN else "")
            least = min(entries, key=lambda e: e[5]) if kind == "hbm" else entries[0]
            rule = least[4]
            if kind == "hbm" and len(entries) > 1:      # the lightest of them named: the others hold more
                rule = rule.replace(" per device,", f" per device at the least ({name(*least[:3])}),", 1)
            parts.append(f"{'tp = ' if plain or all(e[1] is None for e in entries) else ''}{shown}: {rule}")
        text = "; ".join(parts)
        texts.append(text if len(by_refusal) == 1 else f"{' / '.join(f'`{r}`' for r in rs)}: {text}")
    return "; ".join(texts)


def _values_text(values: tuple) -> str:
    return ", ".join(str(v) for v in values)


def _token_rule_empty(plan: Any, space: Space, roles: list, head, flagged, src, role_value):
    """SN8101 for roles emptied by the token rule of :func:`build_space`: a chunk
    (``chunked_prefill``) larger than the step's token budget (``max_num_batched_tokens``) is
    never a layout, and no listed chunk fits under any listed budget.  Says which values (and
    which flag, key or plan role gave them), located at the flag's search block, else the search
    block's key, else the plan role's value."""
    from sncc.diagnostics import codes
    from sncc.diagnostics.model import diag

    s = plan.search
    chunks, mbts = space.token_emptied[roles[0]]

    def whence(key: str, values: tuple) -> str:
        if flagged(key):
            return src(key).strip(" ()")
        if s is not None and s.key_span(key) is not None:
            return f"the search block's `{key}`"
        own = role_value(key, values[0]) if len(values) == 1 else None
        return own[1].strip(" ()") if own is not None else f"the plan's `{key}`"

    where = None
    for key, values in (("max_num_batched_tokens", mbts), ("chunked_prefill", chunks)):
        if flagged(key):
            where = head()
            break
        if s is not None and s.key_span(key) is not None:
            where = s.span_of(key)
            break
    if where is None:
        own = role_value("chunked_prefill", chunks[0]) if len(chunks) == 1 else None
        where = own[0] if own is not None else head()
    names = " / ".join(f"`{r}`" for r in roles)
    msg = (f"no {names} candidate is left: every `chunked_prefill` searched ({_values_text(chunks)}, "
           f"{whence('chunked_prefill', chunks)}) is larger than every `max_num_batched_tokens` searched "
           f"({_values_text(mbts)}, {whence('max_num_batched_tokens', mbts)}), and a prefill chunk cannot exceed "
           "the step's token budget")
    help_ = (f"list a `max_num_batched_tokens` of at least {min(chunks)} (`--max-num-batched-tokens {min(chunks)}`), "
             f"or a `chunked_prefill` of at most {max(mbts)} (`--chunked-prefill {max(mbts)}`)")
    return diag(codes.SEARCH_EMPTY_SPACE, msg, where, help=help_)


def _instances_over_budget(space: Space, flagged):
    """(message, help) when no instance count searched fits the device budget in any mode the
    search needs: the fewest instances of each role times its smallest layout exceed the budget
    (a mode with such a role has no whole plan to combine); None otherwise."""
    need = {"aggregated": ("serve",), "disaggregated": ("prefill", "decode")}
    parts, worst = [], []
    for mode in space.modes:
        roles = need[mode]
        if any(not space.layouts.get(r) or not space.instances.get(r) for r in roles):
            return None
        least = {r: (min(space.instances[r]), min(lay.devices for lay in space.layouts[r])) for r in roles}
        total = sum(n * d for n, d in least.values())
        if total <= space.budget:
            return None
        parts.append(" + ".join(f"{n} `{r}` × {format_count(d, 'device')}" for r, (n, d) in least.items())
                     + f" = {total}")
        worst += [r for r in roles]
    keys = [f"{r}_instances" for r in worst]
    given = [f"--{k.replace('_', '-')}" for k in keys if flagged(k)]
    msg = (f"no candidate is left: the fewest instances searched need more than the budget of "
           f"{format_count(space.budget, 'device')} ({'; '.join(parts)})"
           + (f"; instance counts from {', '.join(given)}" if given else ""))
    return msg, "list smaller instance counts (" + ", ".join(f"`{k}`" for k in keys) + ") or enlarge the budget (--devices)"


def closest_misses(ranked: list) -> list[str]:
    """For every SLO that no event-simulated row of ``ranked`` (:class:`~sncc.search.run.Row`)
    meets, ``"<slo>: best predicted <value> (<layout>)"``: the prediction nearest the target (the
    lowest for ``<``/``<=``, the highest for ``>``/``>=``) in the SLO's display unit
    (:mod:`sncc.sim.report.units`), e.g. ``tpot.mean < 25 ms: best predicted 29.3 ms (P 3×tp8 dp2
    ep + D 1×tp8 dp16 ep b24)``.  Empty when nothing was simulated."""
    return [f"{name}: {text}" for _, name, text in _misses(ranked)]


def _misses(ranked: list) -> list[tuple[int, str, str]]:
    """(index in the plan's ``slo``, SLO name, ``"best predicted <value> (<layout>)"``) of each SLO
    no event-simulated row meets (:func:`closest_misses`)."""
    from sncc.sim.report.units import fmt, to_unit, unit_of

    best: dict = {}
    met: set = set()
    order: list = []
    for r in ranked:
        if r.source != "simulate":
            continue
        verdicts = dict(r.slo)
        for name, metric, op, value in r.metrics.get("slo_predicted", ()):
            if name not in order:
                order.append(name)
            if verdicts.get(name) in ("met", "uncertain"):
                met.add(name)
            if value is None:
                continue
            lower = op in ("<", "<=")
            cur = best.get(name)
            if cur is None or (value < cur[0] if lower else value > cur[0]):
                best[name] = (value, metric, r.candidate.label())
    out = []
    for i, name in enumerate(order):   # slo_predicted follows the plan's `slo` order
        if name in met or name not in best:
            continue
        value, metric, label = best[name]
        out.append((i, name, f"best predicted {fmt(to_unit(metric, value), unit_of(metric))} ({label})"))
    return out


def no_plan_meets_slo(plan: Any, ranked: list | None = None):
    """SN8105 (a warning): no ranked candidate is predicted to meet every SLO with its whole
    interval.  Located at the plan's ``search`` block (path ``["search"]``); without one (a space
    from flags), at the first SLO none meets, else at the plan's name.  With the ranked rows, the
    message names each SLO none of them meets and its closest prediction (:func:`closest_misses`),
    and each such SLO's comparison is a related location."""
    from sncc.diagnostics import codes
    from sncc.diagnostics.model import Related, diag

    misses = _misses(ranked or [])
    targets = list(getattr(plan, "slo", None) or [])
    related = [Related(targets[i].span, f"met by no candidate; {text}")
               for i, _, text in misses if i < len(targets) and targets[i].span is not None]
    s = plan.search
    span = (s.name_span or s.block_span) if s is not None else None
    path: tuple = ("search",) if span is not None else ()
    if span is None and related:
        first = targets[misses[0][0]]
        span, path, related = first.span, ("slo", first.metric), related[1:]
    msg = "no candidate is predicted to meet every SLO with its whole interval"
    if misses:
        msg += "; met by none: " + "; ".join(f"{name}: {text}" for _, name, text in misses)
    return diag(codes.SEARCH_NO_PLAN_MEETS_SLO, msg,
                span or plan.name_span or plan.block_span, related=related, path=path,
                help="loosen the SLO, enlarge the budget (--devices) or widen the space")

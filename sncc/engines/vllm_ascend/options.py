"""vllm-ascend spelling of three plan options, release by release.

``serve/prefill/decode { scheduler = ascend }``, ``optimize { superkernel_layers = N }`` and
``optimize { micro_batch = 2 }`` are vllm-ascend ``--additional-config`` keys or env.sh variables
whose name, the keys they need beside them and the plan shapes they accept change between
releases.  :func:`plan_options` says, for one plan, what each option it sets becomes: the
release's spelling (or why there is none), the roles whose config gets it, and the release's
preconditions the plan breaks.  Lowering writes exactly what it returns as written
(:attr:`OptionUse.written`) into the role's ``--additional-config`` and the env files; check
SN4015 / SN4017 (:mod:`sncc.checks.engine_options`) reports the rest, so what is checked is what
is built.

Facts (no versions in this module): ``data/options.toml [[vllm_ascend_options]]`` (spelling, required
keys, preconditions with their effect) and the release ranges of the ``software.toml
[[features]]`` rows they name (read in the release tags' own ``ascend_config.py``, ``envs.py``,
``platform.py``).

Version compared: ``engine.version``, else ``software.vllm`` (vllm-ascend numbers its releases
after the vLLM they run, domain-facts §2.1).  With neither, the plan is taken as the TorchAir
line (the ``torchair_graph`` feature's range, the line of the adapter's default pin): an option is written only when every row overlapping that line spells it
the same way; preconditions limited to part of a line are then not enforced.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from sncc import catalog
from sncc.catalog import CatalogError, Feature

#: plan options with vllm-ascend spellings, in the order they are written
OPTIONS = ("scheduler", "superkernel_layers", "micro_batch")

#: precondition rules (engines.toml ``preconditions[].rule``) → what the plan must have, in words
RULES = {
    "torchair_graph": "TorchAir graph mode (`graph { mode = torchair }`) on the roles that run graphs",
    "tp1": "tensor_parallel_size = 1",
    "moe_w8a8": "an MoE model with W8A8 weights",
    "mla": "a DeepSeek-family model with multi-head latent attention (MLA)",
    "deepseek_type": "a model whose model_type contains `deepseek`",
    "no_speculative": "no speculative decoding",
}
#: precondition effects: the engine raises at start-up, or accepts the key and does nothing
EFFECTS = ("refused", "ignored")

#: feature whose release range an unversioned vllm-ascend plan is taken to be in
UNVERSIONED_LINE = "torchair_graph"


@dataclass(frozen=True)
class Precondition:
    """One rule a release applies to an option (``rule`` in :data:`RULES`, ``effect`` in :data:`EFFECTS`);
    ``feature``: the rule holds only in that feature's releases (None: in every release of the row)."""

    rule: str
    effect: str
    feature: Feature | None = None


@dataclass(frozen=True)
class Spelling:
    """One ``data/options.toml [[vllm_ascend_options]]`` row: how ``option`` is written in the releases
    of ``feature`` (``[min_version, removed_in)``).  ``additional_config`` / ``requires`` are nested
    dicts of ``--additional-config`` keys (the option's own keys / the keys the release demands
    beside them); ``env`` maps env.sh variable names to values."""

    option: str
    name: str
    feature: Feature
    additional_config: dict
    requires: dict
    env: dict
    preconditions: tuple[Precondition, ...]
    status: str
    source: tuple[str, ...]
    notes: str = ""

    @property
    def key(self) -> str:
        """The option's own key, dotted (``torchair_graph_config.enable_super_kernel``) or the env name."""
        if self.env:
            return next(iter(self.env))
        path = leaves(self.additional_config)[0][0]
        return ".".join(path)

    @property
    def releases(self) -> str:
        """The releases of this spelling: ``"vllm-ascend v0.11.0rc1 to before v0.12.0rc1"``."""
        return "vllm-ascend " + _span(self.feature)

    def same_output(self, other: Spelling) -> bool:
        """True when both rows write the same keys and values."""
        return (self.additional_config, self.requires, self.env) == (other.additional_config, other.requires, other.env)


@dataclass(frozen=True)
class Unmet:
    """A precondition the plan breaks: ``role`` is the role name for per-role rules (``tp1``, and
    ``torchair_graph`` is reported once with None when no role runs TorchAir graphs), None otherwise;
    ``message`` says what the release needs and what the plan has."""

    rule: str
    effect: str
    role: str | None
    message: str


@dataclass(frozen=True)
class OptionUse:
    """What one option the plan sets becomes on its vllm-ascend release.

    ``spelling`` is None when the release has no spelling for it (``absent`` says why: removed,
    not yet added, ambiguous without a release).  ``roles`` are the roles whose
    ``--additional-config`` gets it (for an env option: every role).
    ``version`` is the version compared (None: unversioned plan).
    """

    option: str
    value: int | str
    spelling: Spelling | None
    version: str | None
    roles: tuple[str, ...] = ()
    unmet: tuple[Unmet, ...] = ()
    absent: str = ""

    @property
    def written(self) -> bool:
        """True when the build writes the option: a spelling, at least one role, no broken precondition."""
        return self.spelling is not None and bool(self.roles) and not self.unmet


def leaves(d: dict, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    """(path, value) of every leaf of nested dict ``d``: ``{"a": {"b": 1}}`` → ``[(("a", "b"), 1)]``;
    an empty dict is a leaf (``{"a": {}}`` → ``[(("a",), {})]``)."""
    out: list[tuple[tuple[str, ...], object]] = []
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out += leaves(v, prefix + (k,))
        else:
            out.append((prefix + (k,), v))
    return out


def _span(f: Feature) -> str:
    """``"v0.9.1rc2 to before v0.9.2rc1"`` (open ends: ``"before v0.9.0rc1"``, ``"v0.11.0rc1 and later"``)."""
    if f.min_version and f.removed_in:
        return f"{f.min_version} to before {f.removed_in}"
    if f.removed_in:
        return f"before {f.removed_in}"
    return f"{f.min_version} and later" if f.min_version else "all releases"


@lru_cache(maxsize=1)
def spellings() -> tuple[Spelling, ...]:
    """Every ``data/options.toml [[vllm_ascend_options]]`` row, validated.

    Raises :class:`~sncc.catalog.CatalogError` for an unknown option, feature id, rule or effect,
    or a row without ``additional_config`` or ``env``.
    """
    out = []
    for i, d in enumerate(_rows()):
        where = f"vllm_ascend/data/options.toml [[vllm_ascend_options]] #{i + 1}"
        try:
            option = d["option"]
            if option not in OPTIONS:
                raise CatalogError(f"{where}: unknown option {option!r}")
            feature = catalog.feature(d["feature"])
            pre = []
            for p in d.get("preconditions", ()):
                if p["rule"] not in RULES or p["effect"] not in EFFECTS:
                    raise CatalogError(f"{where}: bad precondition {p!r}")
                pre.append(Precondition(p["rule"], p["effect"], catalog.feature(p["feature"]) if p.get("feature") else None))
            if not d.get("additional_config") and not d.get("env"):
                raise CatalogError(f"{where}: needs additional_config or env")
            out.append(Spelling(
                option=option, name=d["name"], feature=feature, additional_config=dict(d.get("additional_config", {})),
                requires=dict(d.get("requires", {})), env={k: str(v) for k, v in d.get("env", {}).items()},
                preconditions=tuple(pre), status=d["status"], source=tuple(d["source"]), notes=d.get("notes", "")))
        except KeyError as e:
            raise CatalogError(f"{where}: {e}") from e
    return tuple(out)


def _rows() -> list:
    from sncc.cache import package_toml

    return list(package_toml("sncc.engines.vllm_ascend", "data/options.toml").get("vllm_ascend_options", ()))


def _overlaps(a: Feature, b: Feature) -> bool:
    """True when the release ranges ``[min_version, removed_in)`` of ``a`` and ``b`` intersect."""
    pv = catalog.parse_version
    a_after_b = bool(a.min_version and b.removed_in and pv(a.min_version) >= pv(b.removed_in))
    b_after_a = bool(b.min_version and a.removed_in and pv(b.min_version) >= pv(a.removed_in))
    return not (a_after_b or b_after_a)


def plan_version(plan) -> str | None:
    """The vllm-ascend version the options are looked up for: the release the build uses
    (``engine.version``, else sncc's default pin: :func:`sncc.facts.engine_release_of`, as the
    checks judge it); None when the one written is not a version."""
    from sncc.facts import engine_release_of

    v, _ = engine_release_of(plan)
    if v is None:
        return None
    try:
        catalog.parse_version(v)
    except ValueError:
        return None
    return v


def _pick(option: str, version: str | None) -> tuple[Spelling | None, str]:
    """(the release's spelling of ``option``, why there is none)."""
    rows = [s for s in spellings() if s.option == option]
    if not rows:
        return None, "sncc has no vllm-ascend spelling for it"
    if version is not None:
        for s in rows:
            if s.feature.available(version):
                return s, ""
        pv = catalog.parse_version
        v = pv(version)
        removed = [s.feature.removed_in for s in rows if s.feature.removed_in and v >= pv(s.feature.removed_in)]
        later = [s.feature.min_version for s in rows if s.feature.min_version and v < pv(s.feature.min_version)]
        key = rows[-1].key
        if removed and not later:
            return None, f"`{key}` was removed in {max(removed, key=pv)}"
        if later and not removed:
            return None, f"`{key}` first appears in {min(later, key=pv)}"
        return None, f"`{key}` exists only in releases " + " and ".join(_span(s.feature) for s in rows)
    try:
        line = catalog.feature(UNVERSIONED_LINE)
    except KeyError:
        line = None
    cands = [s for s in rows if line is None or _overlaps(s.feature, line)]
    if cands and all(c.same_output(cands[0]) for c in cands):
        return cands[0], ""
    if not cands:
        return None, "no vllm-ascend release of the TorchAir line has it"
    keys = [[".".join(p) for p, _ in leaves(c.additional_config) + leaves(c.requires)] + list(c.env) for c in cands]
    common = set.intersection(*(set(k) for k in keys))
    return None, "the keys differ between releases (" + "; ".join(
        f"{c.releases}: " + ", ".join(k for k in ks if k not in common) for c, ks in zip(cands, keys)) + ")"


def _role_runs_torchair(plan, resolved, name: str) -> bool:
    """True when role ``name`` runs TorchAir graphs: graph mode (the facts layer's
    ``RoleFacts.graph_mode``) and :func:`torchair_mode`."""
    rf = getattr(resolved, "roles", {}).get(name)
    return rf is not None and rf.graph_mode and torchair_mode(plan)


#: first vllm-ascend release without torchair_graph_config, the Ascend scheduler and
#: additional_config.kv_cache_dtype (software.toml [[features]] torchair_graph, removed_in)
V012 = "v0.12.0rc1"


def release_before(plan, version: str = V012) -> bool:
    """True when the plan's vllm-ascend (``engine.version``, else ``software.vllm``, else the
    adapter's default pin) is older than ``version``; an unparsable version counts as the default pin."""
    from sncc.engines.registry import adapter_for

    v = plan.engine.version or (plan.software.vllm if plan.software is not None and plan.software.vllm else None)
    if v is None:
        v = adapter_for("vllm-ascend").default_version
    try:
        return catalog.parse_version(v) < catalog.parse_version(version)
    except ValueError:
        return catalog.parse_version(adapter_for("vllm-ascend").default_version) < catalog.parse_version(version)


def torchair_mode(plan) -> bool:
    """True when a vllm-ascend plan runs TorchAir graphs: ``graph { mode = torchair }`` on a
    release that still has ``additional_config.torchair_graph_config`` (v0.9.x-v0.11.x;
    removed in v0.12.0rc1, software.toml [[features]] torchair_graph)."""
    g = plan.graph
    return g is not None and g.mode == "torchair" and release_before(plan)


def _plan_rule_ok(rule: str, plan, resolved) -> tuple[bool, str]:
    """(rule holds, what the plan has) for the plan-wide rules."""
    arch = getattr(resolved, "arch", None)
    if rule == "moe_w8a8":
        moe = bool(getattr(arch, "is_moe", False))
        quant = getattr(resolved, "quant", None)
        return moe and quant == "w8a8", f"the plan runs {'an MoE' if moe else 'a dense'} model with `{quant or 'unknown'}` weights"
    if rule == "mla":
        return bool(getattr(arch, "is_mla", False)), f"`{getattr(arch, 'id', plan.model.id)}` has {getattr(arch, 'architecture', 'unknown').upper()} attention"
    if rule == "deepseek_type":
        mt = getattr(arch, "model_type", None) or ""
        return "deepseek" in mt, f"its model_type is `{mt or 'unknown'}`"
    if rule == "no_speculative":
        on = [(n, rf.speculative) for n, rf in getattr(resolved, "roles", {}).items() if rf.speculative is not None]
        if not on:
            return True, ""
        n, sp = on[0]
        return False, f"`{n}` runs `speculative {{ method = {sp.method} }}`"
    raise ValueError(rule)


def _use(option: str, value, roles: list[tuple[str, object]], plan, resolved, version: str | None) -> OptionUse:
    spelling, absent = _pick(option, version)
    if spelling is None:
        return OptionUse(option, value, None, version, absent=absent)
    if spelling.env:
        targets = [n for n, _ in plan.roles()]
    else:
        targets = [n for n, _ in roles]
    unmet: list[Unmet] = []
    label = f"vllm-ascend {version}" if version else "vllm-ascend"
    # the TorchAir rule first: it narrows the roles the other per-role rules look at
    for p in sorted(spelling.preconditions, key=lambda p: p.rule != "torchair_graph"):
        if p.feature is not None and (version is None or not p.feature.available(version)):
            continue  # a rule of part of the line: enforced only when the release is known to be in it
        if p.rule == "torchair_graph":
            keep = [n for n, _ in roles if _role_runs_torchair(plan, resolved, n)]
            if not keep:
                unmet.append(Unmet(p.rule, p.effect, None, f"{label} accepts `{spelling.key}` only with {RULES[p.rule]}, "
                                                             "and no role of the plan runs TorchAir graphs"))
            targets = [n for n in targets if n in keep]
        elif p.rule == "tp1":
            for n, role in roles:
                if n in targets and role.tp != 1:
                    unmet.append(Unmet(p.rule, p.effect, n, f"{label} accepts `{spelling.key}` only with "
                                                           f"{RULES[p.rule]}, and `{n}` has tp = {role.tp}"))
        else:
            ok, has = _plan_rule_ok(p.rule, plan, resolved)
            if not ok:
                verb = "accepts" if p.effect == "refused" else "applies"
                unmet.append(Unmet(p.rule, p.effect, None, f"{label} {verb} `{spelling.key}` only with {RULES[p.rule]}; {has}"))
    return OptionUse(option, value, spelling, version, tuple(targets), tuple(unmet))


def plan_options(plan, resolved) -> tuple[OptionUse, ...]:
    """One :class:`OptionUse` per option ``plan`` sets, in :data:`OPTIONS` order (the plan's engine
    is vllm-ascend: the adapter calls this).  Pure; raises :class:`~sncc.catalog.CatalogError`
    only for a bad catalog."""
    version = plan_version(plan)
    out = []
    sched = [(n, role) for n, role in plan.roles() if role.scheduler == "ascend"]
    if sched:
        out.append(_use("scheduler", "ascend", sched, plan, resolved, version))
    opt = plan.optimize
    if opt is not None and opt.superkernel_layers > 0:
        out.append(_use("superkernel_layers", opt.superkernel_layers, list(plan.roles()), plan, resolved, version))
    if opt is not None and opt.micro_batch >= 2:
        out.append(_use("micro_batch", opt.micro_batch, list(plan.roles()), plan, resolved, version))
    return tuple(out)

"""Candidates: whole plans derived from ONE compilation.

A :class:`Candidate` names a mode and one :class:`RoleChoice` per role.  :func:`candidate_plan`
turns it into a typed :class:`~sncc.plan.model.Plan` by ``model_copy(update=...)`` of the base plan
(new role blocks built from the dimension table's updates, everything else shared), and
:func:`candidate_facts` re-derives only the role facts, reusing the base compilation's catalog and
checkpoint facts (nothing is re-parsed, no config.json is read again).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional

from sncc.search.space import DIMENSION_BY_NAME, Layout, base_role

#: fields of the base plan's role a candidate role keeps (settings the search does not vary)
_KEPT = ("memory_utilization", "graph_mode", "prefix_caching", "scheduler", "eplb", "env")


#: role fields every candidate sets from the space (or leaves at their defaults): an error of the
#: base plan located at one of them belongs to the layout the search replaces
_REPLACED = ("instances", "devices", "tp", "dp", "ep", "expert_parallel", "pp", "max_num_seqs")
#: role fields a candidate takes from the space's values, which default to the base role's own
#: (:func:`sncc.search.space.budget_role`): replaced only when the flags or the search block list them
_REPLACED_WHEN_LISTED = ("max_num_batched_tokens", "chunked_prefill", "speculative")
#: code groups no candidate can change: SN1xxx syntax, SN2xxx structure, keys, values and units
#: (a rejected value is the file's to fix), SN9xxx internal
_NEVER_LAYOUT = ("SN1", "SN2", "SN9")


def replaced_fields(plan: Any, overrides: Optional[dict] = None) -> tuple:
    """The role fields of ``plan`` that every candidate of its search replaces: the layout
    (:data:`_REPLACED`), and the token budget, chunk and speculative setting when the command
    line (``overrides``) or the ``search { }`` block lists their values."""
    overrides = overrides or {}
    s = plan.search
    listed = tuple(f for f in _REPLACED_WHEN_LISTED
                   if overrides.get(f) is not None
                   or (s is not None and getattr(s, f, None) not in (None, "plan")))
    return _REPLACED + listed


def _overlaps(a: Any, b: Any) -> bool:
    if a is None or b is None or a.file != b.file:
        return False
    if a.start == a.end or b.start == b.end:          # a point inside (or at the start of) a range
        return b.start <= a.start <= b.end if a.start == a.end else a.start <= b.start <= a.end
    return a.start < b.end and b.start < a.end


def layout_errors(plan: Any, diags: list, overrides: Optional[dict] = None) -> list:
    """The errors of ``diags`` that belong to the base plan's own layout, which the search
    replaces (the candidates are rebuilt from the space, :func:`role_block`): an error located at,
    or pointing with a related span at, a role field of :func:`replaced_fields` (``tp = 1`` under a
    TPOT floor, SN7001), or at a role whose problem is its layout (``path`` the role alone: a
    device the weights and KV do not fit, SN4001).  Errors of the syntax, structure and value
    groups (SN1xxx, SN2xxx) and internal ones (SN9xxx) never are.  When every error of the plan is
    one of these, the search runs, and reports the plan's own layout as failing with them."""
    fields = replaced_fields(plan, overrides)
    spans = []
    for name, role in plan.roles():
        for f in fields:
            if role.written(f):
                spans += [sp for sp in (role.key_span(f), role.value_span(f)) if sp is not None]
    roles = {name for name, _ in plan.roles()}
    out = []
    for d in diags:
        if not d.is_error or d.code.code.startswith(_NEVER_LAYOUT):
            continue
        path = tuple(d.path)
        at_role = bool(path) and path[0] in roles and (len(path) == 1 or path[1] in fields)
        located = [d.span] + [r.span for r in d.related]
        if at_role or any(_overlaps(sp, fs) for sp in located for fs in spans):
            out.append(d)
    return out


@dataclass(frozen=True)
class RoleChoice:
    """One role of a candidate: its :class:`~sncc.search.space.Layout`, ``instances`` and
    ``max_num_seqs`` per DP rank (decoding roles; None keeps the base plan's)."""

    layout: Layout
    instances: int
    max_num_seqs: Optional[int] = None

    @property
    def devices(self) -> int:
        """Devices of the role: instances × devices per instance."""
        return self.instances * self.layout.devices

    def label(self) -> str:
        """``8 × tp1 dp8 ep b32`` style text."""
        b = f" b{self.max_num_seqs}" if self.max_num_seqs is not None else ""
        return f"{self.instances}×{self.layout.label()}{b}"


@dataclass(frozen=True)
class Candidate:
    """A whole plan: ``mode`` (``aggregated`` / ``disaggregated``) and its role choices in
    prefill, decode, serve order."""

    mode: str
    roles: tuple

    @property
    def devices(self) -> int:
        """Devices of the whole plan."""
        return sum(r.devices for r in self.roles)

    def role(self, name: str) -> Optional[RoleChoice]:
        """The choice of role ``name`` or None."""
        return next((r for r in self.roles if r.layout.role == name), None)

    def label(self) -> str:
        """``P 3×tp8 dp1 + D 5×tp1 dp8 ep b64`` or ``8×tp1 dp8 ep b32``."""
        if self.mode == "aggregated":
            return self.roles[0].label()
        return " + ".join(("P " if r.layout.role == "prefill" else "D ") + r.label() for r in self.roles)

    def key(self) -> tuple:
        """Total order (ties in a ranking are broken by it: deterministic output)."""
        return (self.mode, tuple((r.layout.key(), r.instances, r.max_num_seqs or 0) for r in self.roles))


def role_block(plan: Any, choice: RoleChoice, moe: bool = True):
    """The :class:`~sncc.plan.model.Role` of ``choice``: the dimension table's updates over the
    kept settings of the base plan's role of that name (or its nearest role).  ``moe``: the model
    has routed experts (``expert_parallel`` is written only then: SN3006 on a dense model)."""
    from sncc.plan.model import Role

    base = base_role(plan, choice.layout.role)
    data: dict = {}
    if base is not None:
        for f in _KEPT:
            if not base.is_default(f):
                data[f] = getattr(base, f)
    lay = choice.layout
    values = {"tp": lay.tp, "dp": lay.dp, "pp": lay.pp, "max_num_batched_tokens": lay.max_num_batched_tokens,
              "chunked_prefill": lay.chunk, "speculative": lay.speculative, "instances": choice.instances}
    if plan.speculative is None:
        values.pop("speculative")
    if moe and lay.tp * lay.dp > 1:
        values["expert_parallel"] = lay.expert_parallel
    if choice.max_num_seqs is not None:
        values["max_num_seqs"] = choice.max_num_seqs
    for name, value in values.items():
        if name == "chunked_prefill" and value is None:
            continue
        DIMENSION_BY_NAME[name].apply(data, value)
    data["devices"] = lay.devices
    return Role.model_validate(data)


def candidate_plan(plan: Any, cand: Candidate, moe: bool = True, facts: Any = None):
    """The typed plan of ``cand``: ``plan.model_copy`` with its roles replaced and no ``search``
    block (a written candidate is a deployable plan).  Aggregated candidates drop ``kv_transfer``.
    With the base compilation's ``facts``, the environment the candidate's layout needs
    (:func:`candidate_env`) is added to the plan's ``env``."""
    update: dict = {"prefill": None, "decode": None, "serve": None, "search": None}
    for r in cand.roles:
        update[r.layout.role] = role_block(plan, r, moe)
    if cand.mode == "aggregated":
        update["kv_transfer"] = None
    out = plan.model_copy(update=update)
    added = candidate_env(out, facts) if facts is not None else {}
    if added:
        out = out.model_copy(update={"env": {**plan.env, **added}})   # the base's keys kept (and their spans)
    return out


def candidate_env(plan: Any, facts: Any) -> dict:
    """The environment variables candidate ``plan`` (roles already replaced) needs and neither its
    ``env`` nor each of its P/D roles' ``env`` sets (they go in the plan's ``env``): what the check
    of its connector asks for when prefill and decode share one host
    (:func:`sncc.checks.pd_transfer.same_host_env`, SN4009: Mooncake on Ascend needs
    ``HCCL_INTRA_ROCE_ENABLE=1``).  A value the base plan sets itself is kept as it
    is (the check then says what is wrong with it).  ``facts``: the base compilation's (the chip and
    system a candidate shares)."""
    from sncc.checks.pd_transfer import same_host_env

    need = same_host_env(plan, facts)
    roles = [role for name, role in plan.roles() if name in ("prefill", "decode")]
    return {k: v for k, v in need.items() if k not in plan.env and not all(k in role.env for role in roles)}


def candidate_facts(plan: Any, base_facts: Any):
    """Facts of a candidate ``plan`` derived from the base compilation's ``base_facts``: the
    catalog, checkpoint, lengths and weight bytes are shared; role facts, and what depends on the
    roles (all-to-all backend, OmniAttn layout), are derived again (:func:`sncc.facts.derive_roles`)."""
    from sncc.facts import derive_roles

    f = dataclasses.replace(base_facts, roles={}, diagnostics=list(base_facts.diagnostics))
    derive_roles(plan, f)
    return f

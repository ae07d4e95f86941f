"""Prefill/decode KV-transfer checks (SN3008, SN3009, SN3024, SN3026, SN3027, SN4009): a disaggregated
plan has a connector its engine release offers, the prefill and decode TP suit
the connector, the connector of the release supports the P/D layout and the model's
attention (``engine_rules.toml [[pd_connectors]]``) and the two sides' speculative
settings (``[[pd_speculative]]``), the connector's settings match
the deployment, and an aggregated plan names no P/D transfer connector (it has no peer).

Connector facts: ``software.toml [[kv_connectors]]`` (misconfig BR-18, BR-31, BR-32).
"""

from __future__ import annotations

from sncc import catalog
from sncc.checks._rules import engine_release
from sncc.diagnostics import codes
from sncc.diagnostics.model import Edit, Fix, Related, diag


def effective_connector(plan) -> str | None:
    """The connector id a disaggregated plan uses: ``kv_transfer.connector``, else the engine's default."""
    kt = plan.kv_transfer
    if kt is not None and kt.connector is not None:
        return kt.connector
    return catalog.default_kv_connector(plan.engine.kind)


def _kt_span(plan, field: str):
    kt = plan.kv_transfer
    if kt is None:
        return plan.decode.name_span if plan.decode is not None else plan.name_span
    return kt.span_of(field)


def _pd_connector(plan):
    """(connector id, catalog row) of a disaggregated plan; (id, None) when the plan is not
    disaggregated or the connector is not catalogued (SN3008 reports that)."""
    if not plan.disaggregated or plan.prefill is None or plan.decode is None:
        return None, None
    cid = effective_connector(plan)
    try:
        return cid, (catalog.kv_connector(cid) if cid else None)
    except KeyError:
        return cid, None


def check_kv_connector(plan, r):
    """A disaggregated plan names a connector its engine release has, and a connector any plan
    names in ``kv_transfer`` is one the engine offers (``software.toml [[kv_connectors]]
    engines``, what ``sncc catalog connectors`` lists) and its release still has (SN3008)."""
    pd = plan.disaggregated and plan.prefill is not None and plan.decode is not None
    kt = plan.kv_transfer
    if not pd and (kt is None or kt.connector in (None, "none")):
        return
    cid = effective_connector(plan)
    eng = plan.engine
    if cid in (None, "none"):
        default = catalog.default_kv_connector(eng.kind)
        yield diag(codes.KV_CONNECTOR_UNAVAILABLE, "prefill and decode run without a KV-transfer connector",
                   _kt_span(plan, "connector"),
                   help=f"every prefill and decode worker needs a kv_transfer_config: `connector = {default}`" if default
                   else "name a connector in `kv_transfer`", path=("kv_transfer", "connector"))
        return
    try:
        conn = catalog.kv_connector(cid)
    except KeyError:
        return
    if not catalog.connector_runs_on(conn, eng.kind):
        offer = r.kv_connector_offer
        yield diag(codes.KV_CONNECTOR_UNAVAILABLE, f"`{eng.kind}` has no `{cid}` connector ({conn.class_name})",
                   _kt_span(plan, "connector"), related=[Related(eng.name_span, "engine chosen here")],
                   help=offer.help() if offer is not None else "connectors of " + eng.kind + ": " + ", ".join(
                       f"`{c.id}`" for c in catalog.kv_connectors().values() if catalog.connector_runs_on(c, eng.kind)),
                   path=("kv_transfer", "connector"))
        return
    gone = _removed(conn, plan, r)
    if gone:
        from sncc.checks._rules import default_pin_help

        release = r.engine_release_label(eng.kind) if getattr(r, "engine_version", None) else f"{eng.kind} {engine_release(plan, r)}"
        default = catalog.default_kv_connector(eng.kind)
        if not pd:
            offer = r.kv_connector_offer
            alone = list(offer.built) if offer is not None else []
            help_ = "remove the `kv_transfer` block" + (
                "; for KV offload on this server name " + " or ".join(f"`{c}`" for c in alone) if alone else "")
        elif default not in (None, cid):
            help_ = f"use `connector = {default}`"
        else:
            help_ = f"use a release before {gone}"
        pin_help = default_pin_help(plan, r, f"the `{cid}` connector (one before {gone})")
        yield diag(codes.KV_CONNECTOR_UNAVAILABLE,
                   f"the `{cid}` connector ({conn.class_name}) is not in {release}: it was removed in {eng.kind} {gone}",
                   _kt_span(plan, "connector"),
                   related=[Related(getattr(r, "engine_version_span", None) or eng.span_of("version"), release)],
                   help=help_ + (f"; or {pin_help}" if pin_help else ""),
                   notes=[conn.notes] if conn.notes else [], path=("kv_transfer", "connector"))


def _removed(conn, plan, r) -> str | None:
    """The release of the plan's engine that removed ``conn`` when the release judged
    (:func:`sncc.checks._rules.engine_release`: :attr:`sncc.facts.Facts.engine_version`, the one the
    build uses) is at or after it, else None.  Connector removals live in ``software.toml
    [[kv_connectors]] removed_in`` only (not in ``engine_rules.toml [[release_support]]``), so a
    removed connector draws this one message (SN3008)."""
    kind = plan.engine.kind
    gone = conn.removed_in.get(kind)
    version = engine_release(plan, r)
    if not gone or not version:
        return None
    try:
        return gone if catalog.parse_version(version) >= catalog.parse_version(gone) else None
    except ValueError:
        return None


def check_kv_connector_without_peer(plan, r):
    """An aggregated plan (one ``serve`` role) that names a P/D transfer connector its engine offers
    (SN3026, a warning): the connector moves KV from a prefill instance to a decode instance, and a
    ``serve`` role has neither, so sncc writes no ``kv_transfer_config`` for it.  A connector that
    works on one server (``aggregated = true`` in ``software.toml [[kv_connectors]]``: LMCache's KV
    offload) is written instead; one the engine does not offer is SN3008's."""
    kt = plan.kv_transfer
    if plan.disaggregated or plan.serve is None or kt is None or kt.connector in (None, "none"):
        return
    try:
        conn = catalog.kv_connector(kt.connector)
    except KeyError:
        return
    eng = plan.engine
    if conn.aggregated or not catalog.connector_runs_on(conn, eng.kind) or _removed(conn, plan, r):
        return
    offer = r.kv_connector_offer
    alone = [c for c in (offer.built if offer is not None else ())]
    help_ = "remove the `kv_transfer` block, or split `serve` into `prefill` and `decode` roles to disaggregate"
    if alone:
        help_ += "; for KV offload on this server name " + " or ".join(f"`{c}`" for c in alone)
    yield diag(codes.KV_CONNECTOR_WITHOUT_PEER,
               f"the `{kt.connector}` connector ({conn.class_name}) moves KV from a prefill to a decode instance, "
               "and this plan has one `serve` role and no prefill/decode peer: sncc writes no kv_transfer_config for it",
               kt.span_of("connector"), related=[Related(plan.serve.name_span, "the aggregated role")],
               help=help_, notes=["https://docs.vllm.ai/en/latest/features/disagg_prefill.html: the KV connector "
                                  "transfers KV between the prefill (kv_producer) and decode (kv_consumer) instances"],
               path=("kv_transfer", "connector"))


def check_kv_connector_tp(plan, r):
    """Prefill and decode TP suit the connector's heterogeneous-TP support (SN3009)."""
    cid, conn = _pd_connector(plan)
    if conn is None or _connector_rows(plan, cid, r):
        return   # the release's support matrix (SN3024) decides
    p, d = plan.prefill, plan.decode
    problem = None
    if conn.heterogeneous_tp == "equal" and p.tp != d.tp:
        problem = f"the `{cid}` connector needs equal TP on both sides: prefill tp = {p.tp}, decode tp = {d.tp}"
        help_ = f"set both to tp = {max(p.tp, d.tp)}, or use a connector that supports different TP"
    elif conn.heterogeneous_tp == "prefill-multiple" and not (r.arch is not None and r.arch.is_mla):
        if p.tp < d.tp or p.tp % d.tp:
            problem = (f"with the `{cid}` connector prefill TP must be ≥ decode TP and divisible by it: "
                       f"prefill tp = {p.tp}, decode tp = {d.tp}")
            help_ = f"use decode tp = {p.tp} or a divisor of it"
    if problem:
        yield diag(codes.KV_CONNECTOR_TP_MISMATCH, problem, d.span_of("tp"),
                   related=[Related(p.span_of("tp"), f"prefill tp = {p.tp}")], help=help_,
                   notes=[conn.notes] if conn.notes else [], path=("decode", "tp"))


def check_kv_connector_settings(plan, r):
    """Mooncake on Ascend: CANN newer than the connector's floor, ``use_ascend_direct``,
    declared P/D sizes equal the real ones, same-host environment (SN4009; misconfig BR-18)."""
    cid, conn = _pd_connector(plan)
    if conn is None:
        return
    kt = plan.kv_transfer
    ascend = r.chip is not None and r.chip.vendor == "huawei"
    hw = plan.hardware
    if ascend and conn.ascend_min_cann_exclusive and hw.cann:
        try:
            old = catalog.parse_version(hw.cann) <= catalog.parse_version(conn.ascend_min_cann_exclusive)
        except ValueError:
            old = False
        if old:
            yield diag(codes.KV_CONNECTOR_MISCONFIGURED,
                       f"the `{cid}` connector on Ascend needs CANN newer than {conn.ascend_min_cann_exclusive}, not {hw.cann}",
                       hw.span_of("cann"), related=[Related(_kt_span(plan, "connector"), f"connector `{cid}`")],
                       help="upgrade CANN (and the engine release paired with it)", path=("hardware", "cann"))
    if ascend and conn.ascend_requires_direct and kt is not None and kt.use_ascend_direct is False:
        span = kt.span_of("use_ascend_direct")
        yield diag(codes.KV_CONNECTOR_MISCONFIGURED,
                   f"the `{cid}` connector on Ascend needs `use_ascend_direct = true`; decode cannot reach the prefill targets without it",
                   span, help="set `use_ascend_direct = true` (kv_connector_extra_config)",
                   fixes=[Fix("set true", (Edit(span, "true"),), "safe")], path=("kv_transfer", "use_ascend_direct"))
    if kt is not None:
        for side, role in (("prefill", plan.prefill), ("decode", plan.decode)):
            rf = r.roles.get(side)
            if rf is None:
                continue
            dpk = "ep" if not role.is_default("ep") else "dp"
            for fld, actual, what in ((f"{side}_tp", role.tp, "tp"), (f"{side}_dp", rf.dp, dpk)):
                declared = getattr(kt, fld)
                if declared is not None and declared != actual:
                    span = kt.span_of(fld)
                    yield diag(codes.KV_CONNECTOR_MISCONFIGURED,
                               f"`{fld} = {declared}` but the {side} instances run {what} = {actual}",
                               span, related=[Related(role.span_of(what), f"{side}.{what} = {actual}")],
                               help=f"set `{fld} = {actual}` or remove it (sncc fills it from the role)",
                               fixes=[Fix(f"set {actual}", (Edit(span, str(actual)),), "safe")],
                               path=("kv_transfer", fld))
    for k, want in same_host_env(plan, r).items():
        # what each side's servers get: the plan's `env` with the role's over it (role facts' env);
        # one refusal per place that sets (or lacks) the value
        seen: set = set()
        for side in ("prefill", "decode"):
            rf = r.roles.get(side)
            if rf is not None:
                ev = rf.env.get(k)
                got, origin, span = (ev.value, ev.origin, ev.span) if ev is not None else (None, "plan", None)
            else:
                got, origin, span = plan.env.get(k), "plan", plan.env_span(k)
            if got == want or (origin, got) in seen:
                continue
            seen.add((origin, got))
            if origin == "plan":
                yield diag(codes.KV_CONNECTOR_MISCONFIGURED,
                           f"prefill and decode share one host: the `{cid}` connector needs `{k}={want}`"
                           + (f", not `{got}`" if got is not None else ""),
                           span or plan.env_span(k) or _kt_span(plan, "connector"),
                           help=f"add `{k} = {want}` to `env`" if got is None else f"set `{k} = {want}` in `env`",
                           path=("env", k))
            else:
                yield diag(codes.KV_CONNECTOR_MISCONFIGURED,
                           f"prefill and decode share one host: the `{cid}` connector needs `{k}={want}`, "
                           f"not `{got}` (the `{origin}` role's `env`)",
                           span or _kt_span(plan, "connector"),
                           help=f"set `{k} = {want}` in the `{origin}` role's `env` (it overrides the plan's)",
                           path=(origin, "env", k))


def same_host_env(plan, r) -> dict:
    """The environment (name → value) the connector of disaggregated ``plan`` needs because its
    prefill and decode instances fit on one host (``software.toml [[kv_connectors]]
    same_host_env``: Mooncake on Ascend, ``HCCL_INTRA_ROCE_ENABLE=1``, vllm-ascend#4866), else ``{}``.
    What SN4009 holds every prefill and decode server to, and what ``sncc search`` sets in the
    one-host candidates it builds."""
    cid, conn = _pd_connector(plan)
    if conn is None or not conn.same_host_env or r.chip is None or r.chip.vendor != "huawei":
        return {}
    per_node = r.system.devices_per_node if r.system is not None else getattr(r.chip, "devices_per_node", None)
    used = sum(role.instances * role.devices for _, role in plan.roles())
    if per_node and used <= per_node:
        return {k: str(v) for k, v in conn.same_host_env.items()}
    return {}


def _connector_rows(plan, cid, r, table: str = "pd_connectors"):
    """The ``[[table]]`` rows of connector ``cid`` for the plan's engine and release (the
    facts' :attr:`~sncc.facts.Facts.engine_version`)."""
    from sncc.checks._rules import in_range, plan_versions, rows

    eng = plan.engine
    vs = plan_versions(plan, r)
    out = []
    for row in rows(table):
        if row["connector"] != cid or eng.kind not in row.get("engines", ()):
            continue
        if row.get("min_version") or row.get("max_version"):
            v = vs.get(row.get("versions_of", "engine"))
            if v is None or not in_range(v, row.get("min_version"), row.get("max_version")):
                continue
        out.append(row)
    return out


def check_connector_layout(plan, r):
    """The connector of this engine release transfers between these P and D layouts (SN3024):
    its heterogeneous-TP rule and its support for hybrid linear-attention models
    (``engine_rules.toml [[pd_connectors]]``; vllm#42895, #43765, Mooncake ≤ 0.18 NotImplementedError)."""
    from sncc.checks._rules import sources

    cid, _ = _pd_connector(plan)
    if cid is None or r.arch is None:
        return
    p, d = r.roles.get("prefill"), r.roles.get("decode")
    if p is None or d is None:
        return
    hybrid = bool(getattr(r.arch, "is_hybrid_linear", False))
    mla = r.arch.is_mla or r.arch.is_dsv4
    for row in _connector_rows(plan, cid, r):
        problem = None
        rule = row.get("hetero_tp", "")
        if p.tp != d.tp:
            if rule == "none":
                problem = f"the `{cid}` connector of this release needs equal TP on prefill and decode (prefill tp = {p.tp}, decode tp = {d.tp})"
            elif rule == "either-divides" and max(p.tp, d.tp) % min(p.tp, d.tp):
                problem = f"the `{cid}` connector needs one TP to divide the other (prefill tp = {p.tp}, decode tp = {d.tp})"
            elif rule == "decode-multiple" and (d.tp < p.tp or d.tp % p.tp):
                problem = (f"the `{cid}` connector of this release needs decode TP ≥ prefill TP and divisible by it "
                           f"(prefill tp = {p.tp}, decode tp = {d.tp}): \"Decode TP cannot be smaller than prefill TP\"")
            elif rule == "prefill-multiple-non-mla" and not mla and (p.tp < d.tp or p.tp % d.tp):
                problem = f"with the `{cid}` connector a non-MLA model needs prefill TP ≥ decode TP and divisible by it (prefill tp = {p.tp}, decode tp = {d.tp})"
        if problem is None and hybrid:
            h = row.get("hybrid", "")
            if h == "no":
                problem = f"the `{cid}` connector of this release cannot transfer the hybrid linear-attention KV cache of `{r.served_name}`"
            elif h == "equal-tp" and p.tp != d.tp:
                problem = (f"`{r.served_name}` is a hybrid linear-attention model: its physical KV block size follows the "
                           f"TP-sharded state, so prefill tp = {p.tp} and decode tp = {d.tp} get different block sizes, "
                           f"which the `{cid}` handshake refuses")
            elif h == "prefill-multiple" and (p.tp < d.tp or p.tp % d.tp):
                problem = (f"for a hybrid linear-attention model the `{cid}` connector needs prefill TP ≥ decode TP and divisible "
                           f"by it (prefill tp = {p.tp}, decode tp = {d.tp})")
        if problem is None:
            continue
        yield diag(codes.PD_CONNECTOR_LAYOUT, problem, plan.decode.span_of("tp"),
                   related=[Related(plan.prefill.span_of("tp"), f"prefill tp = {p.tp}"), Related(_kt_span(plan, "connector"), f"connector `{cid}`")],
                   notes=[n for n in (row.get("notes", ""), "source: " + sources(row)) if n],
                   help="give prefill and decode the same TP (change dp to keep the device count), or a connector and "
                        "release that support this layout", path=("decode", "tp"))
        return


def _draft_site(role, rf, name: str):
    """(tokens drafted, span, path) of role ``name``'s speculative setting: the draft count where
    it was written when the role drafts, else where speculation was turned off (or the role)."""
    sp = rf.speculative
    if sp is not None:
        return sp.draft_tokens, sp.span_of("draft_tokens"), (name, "speculative", "draft_tokens")
    own = role.speculative
    if own is not None:
        return 0, own.span_of("method"), (name, "speculative", "method")
    return 0, role.name_span, (name,)


def check_pd_speculative_tokens(plan, r):
    """The connector can transfer between the two sides' speculative settings (SN3027,
    ``engine_rules.toml [[pd_speculative]]``): the decode side pulls prefill blocks and layers
    chosen with its own ``num_speculative_tokens`` (vllm-ascend mooncake_connector.py), so a hybrid
    linear-attention model drafts the same count on both sides and a drafting decode needs a
    drafting prefill (vllm-ascend#16160)."""
    from sncc.checks._rules import sources

    cid, _ = _pd_connector(plan)
    if cid is None or r.arch is None:
        return
    p, d = r.roles.get("prefill"), r.roles.get("decode")
    if p is None or d is None:
        return
    hybrid = bool(getattr(r.arch, "is_hybrid_linear", False))
    pk, pspan, ppath = _draft_site(plan.prefill, p, "prefill")
    dk, dspan, _ = _draft_site(plan.decode, d, "decode")
    for row in _connector_rows(plan, cid, r, "pd_speculative"):
        if row.get("models") != ("hybrid" if hybrid else "other"):
            continue
        rule = row.get("rule")
        if rule == "equal" and pk != dk:
            problem = (f"`{r.served_name}` is a hybrid linear-attention model: the decode reads its Mamba state from "
                       f"the prefill block `num_speculative_tokens + 1` from the end, counted with its own setting, "
                       f"but prefill drafts {pk} and decode {dk}, so decode continues from another block's state")
            help_ = f"draft the same number of tokens on prefill and decode (`draft_tokens = {dk}` in both)"
        elif rule == "prefill-drafts" and dk > 0 and pk == 0:
            problem = (f"decode drafts {dk} and pulls the draft layer's KV from prefill, but prefill does not "
                       f"speculate and fills no draft layer")
            help_ = "let prefill draft too: `speculative { draft_tokens = 1 }` in `prefill` (vllm-ascend's documented value)"
        else:
            continue
        yield diag(codes.PD_SPECULATIVE_TOKENS, problem, pspan,
                   related=[Related(dspan, f"decode drafts {dk}"), Related(_kt_span(plan, "connector"), f"connector `{cid}`")],
                   notes=[n for n in (row.get("notes", ""), "source: " + sources(row)) if n],
                   help=help_, path=ppath)
        return

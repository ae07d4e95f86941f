"""Release support for every enum value sncc writes (SN4020): speculative methods, cudagraph
modes, KV connectors and the checkpoint's quantization method must exist in the pinned release,
and some values are refused for some model families.

Facts: ``engine_rules.toml [[release_support]]`` (first / last / missing-through release of each
value, from docs/research/release-support.yaml: vLLM wheels 0.9.0 … 0.23.0 sampled, every
vllm-ascend tag) and ``[[release_exceptions]]``.  These rows are the data the engine adapters'
manifests (``sncc/engines/*/data/*.json``) will carry; until they land the check reads them here.
A release at or before ``missing_through`` (or after ``last``) is an error; one between
``missing_through`` and ``first`` is a warning, since the sampled releases skip it.
"""

from __future__ import annotations

from sncc import catalog
from sncc.checks._rules import cmp_version, in_range, plan_versions, rows, sources, table
from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag


def _plan_values(plan, r):
    """``[(setting, value, span, path)]`` of the enum values the plan makes sncc write."""
    out = []
    seen = set()
    for name, rf in r.roles.items():
        sp = rf.speculative
        if sp is not None and (sp.method, sp.span_of("method")) not in seen:
            seen.add((sp.method, sp.span_of("method")))
            out.append(("speculative.method", sp.method, sp.span_of("method"), ("speculative", "method")))
    g = plan.graph
    graphs = any(rf.graph_mode for rf in r.roles.values())
    if g is not None and g.cudagraph_mode is not None and graphs:
        out.append(("graph.cudagraph_mode", g.cudagraph_mode, g.span_of("cudagraph_mode"), ("graph", "cudagraph_mode")))
    if plan.disaggregated and plan.prefill is not None and plan.decode is not None:
        from sncc.checks.pd_transfer import effective_connector

        cid = effective_connector(plan)
        if cid and cid != "none":
            kt = plan.kv_transfer
            span = kt.span_of("connector") if kt is not None else plan.decode.name_span
            out.append(("kv_transfer.connector", cid, span, ("kv_transfer", "connector")))
    if r.quant:       # the `--quantization` method the engine adapter writes for the weight format
        from sncc.engines.registry import plan_adapter

        adapter = plan_adapter(plan)
        qa = adapter.quantization(r.quant) if adapter is not None else None
        if qa is not None and qa.method and not qa.refused:
            out.append(("quantization", qa.method, r.quant_span or plan.model.name_span, ("model", "quant")))
    ck = r.checkpoint
    qc = ck.raw.get("quantization_config") if ck is not None and isinstance(ck.raw, dict) else None
    chip_runs = r.chip is None or r.quant is None or r.quant in (r.chip.weight_formats or ())
    if isinstance(qc, dict) and isinstance(qc.get("quant_method"), str) and chip_runs:   # else SN4002 says the chip cannot
        out.append(("checkpoint.quant_method", qc["quant_method"].strip().lower(), plan.model.span_of("weights"),
                    ("model", "weights")))
    return out


def _applies(row, setting, value, engine, model_type) -> bool:
    if row["setting"] != setting or engine not in row.get("engines", ()):
        return False
    values = row["value"] if isinstance(row["value"], list) else [row["value"]]
    if "*" not in values and value not in values:
        return False
    mts = row.get("model_types") or ()
    return not mts or (model_type in mts)


def _exception_holds(row, r) -> bool:
    """The narrowing conditions of a ``[[release_exceptions]]`` row beyond setting and model type:
    ``mla`` (the model's attention is, or is not, MLA) and ``with_speculative`` (a role that
    captures graphs runs one of these speculative methods)."""
    if "mla" in row:
        arch = r.arch
        if arch is None or bool(arch.is_mla) != bool(row["mla"]):
            return False
    methods = row.get("with_speculative")
    if methods:
        return any(rf.graph_mode and rf.speculative is not None and rf.speculative.method in methods
                   for rf in r.roles.values())
    return True


def check_values_in_release(plan, r):
    """Every enum value of the plan exists in the engine release; model-family refusals (SN4020)."""
    versions = plan_versions(plan, r)
    if not versions:
        return
    eng = plan.engine
    version = versions["engine"]
    release = r.engine_release_label(eng.kind) if getattr(r, "engine_version", None) else f"{eng.kind} {version}"
    model_type = getattr(r.arch, "model_type", None) if r.arch is not None else None
    rel = [Related(getattr(r, "engine_version_span", None) or eng.span_of("version"), release)]
    bases = table("release_support_basis")
    for setting, value, span, path in _plan_values(plan, r):
        for row in rows("release_support"):
            if not _applies(row, setting, value, eng.kind, model_type):
                continue
            basis = row.get("versions_of", bases["default"])
            v = versions.get(basis)
            if v is None:
                continue
            shown = bases["labels"].get(basis)      # a basis other than the release itself is named
            label = release + (f" ({shown} {v})" if shown and v != versions.get("engine") else "")
            first, miss, last = row.get("first"), row.get("missing_through"), row.get("last")
            what = f"`{setting.split('.')[-1]} = {value}`" + (f" (`{row['engine_value']}`)" if row.get("engine_value") not in (None, value) else "")
            if (miss is not None and (cmp_version(v, miss) or 0) <= 0) or (last is not None and (cmp_version(v, last) or 0) > 0):
                gone = last is not None and (cmp_version(v, last) or 0) > 0
                yield diag(codes.VALUE_NOT_IN_RELEASE,
                           f"{what} is not in {label}: " + (f"last seen in {last}" if gone else f"it first appears in {first}"),
                           span, related=rel, notes=[row.get("notes", ""), "source: " + sources(row)],
                           help=(f"use a release up to {last}" if gone else f"use a release from {first} on") + ", or another value",
                           path=path)
            elif first is not None and (cmp_version(v, first) or 0) < 0:
                yield diag(codes.VALUE_NOT_IN_RELEASE,
                           f"{what} is not verified in {label}: it is absent at {miss} and present from {first}",
                           span, related=rel, severity="warning", notes=["source: " + sources(row)],
                           help=f"check the release's code, or use {first} or later", path=path)
        for row in rows("release_exceptions"):
            if not _applies(row, setting, value, eng.kind, model_type) or not _exception_holds(row, r):
                continue
            if not in_range(version, row.get("min_version"), row.get("max_version")):
                continue
            yield diag(codes.VALUE_NOT_IN_RELEASE,
                       f"{what_of(setting, value)} is refused for `{r.served_name}` ({model_type}) by {release}: {row['message']}",
                       span, related=rel, notes=[row.get("notes", ""), "source: " + sources(row)], help=row.get("fix"), path=path)


def what_of(setting: str, value: str) -> str:
    """```key = value``` for a message."""
    return f"`{setting.split('.')[-1]} = {value}`"


def check_model_in_release(plan, r):
    """The engine release loads the model's architecture (SN4023): a release before the first one
    ``engine_rules.toml [[model_support]]`` lists for the ``model_type`` (on the chip's device type,
    when a row narrows to it) has no model class for it.  The release is the one the plan is built
    for (:attr:`sncc.facts.Facts.engine_version`: written, else sncc's default pin); an architecture
    without a row draws nothing."""
    from sncc.checks._rules import default_pin_help

    versions = plan_versions(plan, r)
    model_type = getattr(r.arch, "model_type", None) if r.arch is not None else None
    if not versions or not model_type:
        return
    eng = plan.engine
    version = versions["engine"]
    device_type = getattr(r.chip, "device_type", None) if r.chip is not None else None
    fit = [row for row in rows("model_support") if row["engine"] == eng.kind and model_type in row["model_types"]
           and (not row.get("device_types") or device_type in row["device_types"])]
    late = [row for row in fit if (cmp_version(version, row["first"]) or 0) < 0]
    if not late:
        return
    row = max(late, key=lambda x: catalog.parse_version(x["first"]))   # the latest first release binds
    on = f" on {r.chip.name}" if row.get("device_types") and r.chip is not None else ""
    release = r.engine_release_label(eng.kind) if getattr(r, "engine_version", None) else f"{eng.kind} {version}"
    pin_help = default_pin_help(plan, r, row["family"])
    yield diag(codes.MODEL_NOT_IN_RELEASE,
               f"{release} cannot load `{r.served_name}` ({row['family']}, `{model_type}`): "
               f"{eng.kind} supports it{on} from {row['first']}",
               plan.model.span_of("id") or plan.model.name_span,
               related=[Related(getattr(r, "engine_version_span", None) or eng.span_of("version"), release)],
               help=f"use {eng.kind} {row['first']} or later" + (f" ({pin_help})" if pin_help else ""),
               notes=["source: " + sources(row)], path=("model", "id"))   # the span: the model's name

"""Catalog and checkpoint resolution: the model's architecture (catalog or the weights'
config.json), the chip and system, the effective quantization and KV dtype,
``max_model_len``, the served model name and the device count.

Resolution problems (unknown ids, an unreadable config.json) become
diagnostics; the corresponding attribute is then None and checks that need it
skip themselves.
"""

from __future__ import annotations

from sncc import catalog
from sncc.diagnostics import codes
from sncc.diagnostics.model import Diagnostic, Related, diag
from sncc.facts.model import Facts
from sncc.plan.model import Plan
from sncc.source import Span
from sncc.units import format_count


def unknown_entry(kind: str, value: str, span: Span | None, ids: list[str]) -> Diagnostic:
    """SN2008 for catalog ``kind`` id ``value`` (not among ``ids``), with the closest known id as
    help (all of them when none is close).  Also used by ``sncc import`` for ``--system`` / ``--model``."""
    import difflib  # only for an unknown id

    close = difflib.get_close_matches(value.lower(), ids, n=3, cutoff=0.6)
    help_ = f"did you mean `{close[0]}`?" if close else "known: " + ", ".join(f"`{i}`" for i in sorted(ids))
    return diag(codes.UNKNOWN_CATALOG_ENTRY, f"unknown {kind} `{value}`", span, help=help_)


def _check_system_size(hw, r: Facts) -> None:
    """SN2009 when ``hardware`` gives more nodes (or devices) than its system has
    (``systems.toml max_nodes``: the Atlas 900 A3 SuperPoD has 48 nodes); sets
    :attr:`Facts.devices_in_error` so that no device-count check repeats it."""
    sysm = r.system
    if sysm is None or sysm.max_nodes is None:
        return
    per = sysm.devices_per_node
    source = "; ".join(sysm.source[:1])
    if hw.nodes is not None and hw.nodes > sysm.max_nodes:
        key, value, have = "nodes", hw.nodes, format_count(sysm.max_nodes, "node")
    elif hw.devices is not None and sysm.max_devices is not None and hw.devices > sysm.max_devices:
        key, value, have = "devices", hw.devices, format_count(sysm.max_devices, "device")
    else:
        return
    r.devices_in_error = True
    r.diagnostics.append(diag(
        codes.OUT_OF_RANGE, f"`{key} = {value}` is more than system `{sysm.id}` has: {have} "
                            f"({sysm.max_nodes} x {format_count(per, 'device')})",
        hw.span_of(key), help=f"give at most `{key} = {sysm.max_nodes if key == 'nodes' else sysm.max_devices}`, "
                              "or split the roles into plans of one system each",
        notes=[f"systems.toml [systems.{sysm.id}] max_nodes = {sysm.max_nodes}" + (f" (source: {source})" if source else "")],
        path=("hardware", key)))


def resolve_catalog(plan: Plan, base_dir: str | None = None) -> Facts:
    """Resolve ``plan`` against the catalog and its checkpoint into a :class:`Facts` without
    role facts (never raises for bad input).

    A relative ``weights`` path is read relative to ``base_dir`` (the plan
    file's folder) when given.
    """
    r = Facts()
    resolve_hardware(plan.hardware, r)
    mdl = plan.model
    resolve_model(mdl, r, base_dir)
    # --- quantization and KV dtype ----------------------------------------
    from sncc.plan.model import watch_reads

    quant_written, rejected = watch_reads(lambda: mdl.quant)
    if rejected:    # `quant` was written but rejected: what stands in for it is judged by no check
        r.poisoned_from.update({name: rejected for name in ("quant", "quant_origin", "model_ref")})
    if quant_written is not None:
        r.quant, r.quant_span, r.quant_origin = mdl.quant, mdl.span_of("quant"), "plan"
    elif r.checkpoint is not None:
        r.quant, r.quant_span, r.quant_origin = r.checkpoint.quant, mdl.span_of("weights"), "checkpoint"
    elif r.arch is not None:
        r.quant, r.quant_span, r.quant_origin = getattr(r.arch, "checkpoint_dtype", "bf16") or "bf16", mdl.span_of("id"), "catalog"
    kv = plan.kv_cache.dtype
    r.kv_dtype = "bf16" if kv == "auto" else kv
    # --- lengths and names -------------------------------------------------
    wl = plan.workload
    if mdl.max_model_len == "auto":
        from sncc.facts.lengths import engine_default_max_model_len

        raw = getattr(r.checkpoint, "raw", None)
        n, how = engine_default_max_model_len(r.arch, raw, mdl.rope_scaling)
        r.max_model_len_span, r.max_model_len_origin = mdl.span_of("max_model_len"), "engine-default"
        if n:
            r.max_model_len, r.max_model_len_note = n, f"max_model_len = auto: the engine's default, {how}"
        else:   # the model is unknown (reported) or has no positions: fall back to the workload
            r.max_model_len = wl.input.max + wl.output.max
            r.max_model_len_note = f"max_model_len = auto, but {how}: taken as max input + max output"
    elif mdl.max_model_len is not None:
        r.max_model_len, r.max_model_len_span = mdl.max_model_len, mdl.span_of("max_model_len")
        r.max_model_len_note, r.max_model_len_origin = "`max_model_len` set here", "plan"
    else:
        r.max_model_len = wl.input.max + wl.output.max
        r.max_model_len_span = wl.input.span_of("max")
        r.max_model_len_note = f"max_model_len = max input {wl.input.max} + max output {wl.output.max} (workload)"
    gw = plan.gateway
    r.max_tokens = gw.max_tokens if gw is not None and gw.max_tokens is not None else wl.output.max
    r.served_name = mdl.served_name or mdl.id
    r.model_ref, r.model_ref_note = model_ref(mdl.weights, mdl.id, r.quant)
    r.model_ref_dtype = catalog_repo_dtype(mdl.weights, mdl.id)
    if mdl.trust_remote_code is not None:
        r.trust_remote_code = mdl.trust_remote_code
    else:   # the catalog entry decides even when config.json gave the shape (the tokenizer is what needs it)
        try:
            r.trust_remote_code = bool(getattr(catalog.model(mdl.id), "trust_remote_code", False))
        except KeyError:
            r.trust_remote_code = False
    return r


def resolve_hardware(hw, r: Facts, require: bool = True) -> None:
    """Set ``r``'s system, chip, vendor and device count from ``hardware`` (a
    :class:`~sncc.plan.model.Hardware`), appending SN2008 for an unknown system or chip and the
    diagnostics of sizes the system cannot hold; ``require``: a hardware naming neither a
    system nor a chip is SN2002 (not in a definitions file, whose importer may name them)."""
    # --- system and chip ---------------------------------------------------
    if hw.system is not None:
        try:
            r.system = catalog.system(hw.system)
        except KeyError:
            r.diagnostics.append(unknown_entry("system", hw.system, hw.span_of("system"), list(catalog.systems())))
    if hw.chip is not None:
        try:
            r.chip = catalog.chip(hw.chip)
        except KeyError:
            r.diagnostics.append(unknown_entry("chip", hw.chip, hw.span_of("chip"), list(catalog.chips())))
    elif r.system is not None:
        r.chip = catalog.chip(r.system.chip)
    elif hw.system is None and require:
        r.diagnostics.append(diag(codes.MISSING_KEY, "`hardware` names neither a `system` nor a `chip`",
                                  hw.name_span, help='add `system = "atlas-900-a3-superpod"` (or `chip = "ascend-910b2"`)'))
    if r.system is not None and r.chip is not None and hw.chip is not None and r.chip.id != r.system.chip:
        r.diagnostics.append(diag(codes.INVALID_VALUE, f"chip `{r.chip.id}` is not the chip of system `{r.system.id}` (`{r.system.chip}`)",
                                  hw.span_of("chip"), related=[Related(hw.span_of("system"), "system given here")],
                                  help="remove `chip`, or name a system built from it"))
    per_node = r.system.devices_per_node if r.system is not None else getattr(r.chip, "devices_per_node", None)
    r.devices_per_node = per_node
    if r.chip is not None:
        r.vendor = "nvidia" if getattr(r.chip, "vendor", "") == "nvidia" else "ascend"
    if hw.devices is not None:
        r.devices_available, r.devices_span = hw.devices, hw.span_of("devices")
        if hw.nodes is not None and per_node and hw.devices > hw.nodes * per_node:
            what = f"system `{r.system.id}`" if r.system is not None else f"chip `{r.chip.id}`"
            r.diagnostics.append(diag(codes.INVALID_VALUE,
                                      f"`devices = {hw.devices}` is more than `nodes = {hw.nodes}` of {what} "
                                      f"hold ({hw.nodes} x {per_node} devices per node = {hw.nodes * per_node})",
                                      hw.span_of("devices"), related=[Related(hw.span_of("nodes"), "nodes given here")],
                                      help=f"give `nodes = {-(-hw.devices // per_node)}`, or at most "
                                           f"`devices = {hw.nodes * per_node}`", path=("hardware", "devices")))
            r.devices_in_error = True
    elif hw.nodes is not None and per_node:
        r.devices_available, r.devices_span = hw.nodes * per_node, hw.span_of("nodes")
    _check_system_size(hw, r)


def resolve_model(mdl, r: Facts, base_dir: str | None = None) -> None:
    """Set ``r.arch`` (and ``r.checkpoint``) of ``model`` (a :class:`~sncc.plan.model.Model`):
    the config.json of its ``weights`` folder (relative to ``base_dir``), else the catalog entry
    of its id (SN2008 when there is none)."""
    import os

    # --- model architecture ------------------------------------------------
    if mdl.weights:
        try:
            wdir = mdl.weights if base_dir is None or os.path.isabs(mdl.weights) else os.path.join(base_dir, mdl.weights)
            if os.path.isdir(wdir):   # the config.json reader is imported only when there is a folder to read
                from sncc.catalog import hf_config
                if wdir != mdl.weights:
                    full = os.path.abspath(wdir)
                    r.diagnostics.append(diag(
                        codes.WEIGHTS_PATH_RELATIVE,
                        f"`weights` is relative: sncc reads `{full}` (from the plan's folder), but the servers "
                        f"load `{mdl.weights}` from the build folder the launch scripts `cd` to (\"$SNCC_OUT\"), "
                        "where it names no checkpoint",
                        mdl.span_of("weights"),
                        help=f"write the absolute path the serving nodes mount the checkpoint at, e.g. `weights = \"{full}\"`",
                        path=("model", "weights")))
                r.checkpoint = hf_config.read_weights_dir(wdir)
                if r.checkpoint is None:
                    r.diagnostics.append(diag(codes.CHECKPOINT_CONFIG_ABSENT,
                                              f"`{mdl.weights}` holds no config.json: the shape of `{mdl.id}` comes from the catalog",
                                              mdl.span_of("weights"),
                                              help="point `weights` at the checkpoint's top folder (the one with config.json)"))
        except catalog.CatalogError as e:
            r.diagnostics.append(diag(codes.CHECKPOINT_UNREADABLE, str(e), mdl.span_of("weights"),
                                      help="fix or remove the file; sncc falls back to the catalog entry"))
    if r.checkpoint is not None:
        r.arch, r.arch_source = r.checkpoint.arch, f"{mdl.weights}/config.json"
        _compare_with_catalog(r, mdl)
    else:
        try:
            r.arch, r.arch_source = catalog.model(mdl.id), "catalog"
        except KeyError:
            ids = list(catalog.models())
            d = unknown_entry("model", mdl.id, mdl.span_of("id"), ids)
            d = diag(d.code, d.message, d.span,
                     help=(d.help.rstrip("?") + "? Or " if d.help and d.help.startswith("did you mean") else (d.help + "; or " if d.help else ""))
                     + "point `weights` at a directory holding the model's config.json")
            r.diagnostics.append(d)


def _compare_with_catalog(r: Facts, mdl) -> None:
    """SN2017 when the checkpoint's ``model_type`` differs from the catalog entry of the model id."""
    try:
        entry = catalog.model(mdl.id)
    except KeyError:
        return
    got, want = getattr(r.checkpoint.arch, "model_type", None), entry.model_type
    if got and want and got != want:
        r.diagnostics.append(diag(codes.CHECKPOINT_MISMATCH,
                                  f"`{mdl.weights}/config.json` is model_type `{got}`, but `{mdl.id}` is `{want}` "
                                  f"({entry.name}); sizes come from the config.json",
                                  mdl.span_of("weights"), related=[Related(mdl.span_of("id"), f"model `{mdl.id}`")],
                                  help=f"point `weights` at a {entry.name} checkpoint, or name the model the weights hold"))


def _catalog_repo(model_id: str):
    """(catalog entry, its repository for ``model_id``, whether that is the entry's first one,
    whether the name chose it) or None.  An alias naming one variant (``kimi-k2-thinking``,
    ``glm-4.7``) loads the repository whose name it is (``moonshotai/Kimi-K2-Thinking``,
    ``zai-org/GLM-4.7``); the entry's own id, or an alias no repository is named after
    (``qwen3-235b``), loads the entry's first ``org/name`` alias."""
    try:
        arch = catalog.model(model_id)
    except KeyError:
        return None
    repos = [a for a in getattr(arch, "aliases", ()) or () if "/" in a]
    if not repos:
        return arch, None, False, False
    key = model_id.strip().lower()
    for i, repo in enumerate(repos):
        if repo.split("/", 1)[1].lower() == key:
            return arch, repo, i == 0, True
    return arch, repos[0], True, key == arch.id.lower()


def catalog_repo_dtype(weights: str | None, model_id: str) -> str | None:
    """The checkpoint dtype (``fp8``, ``bf16``) of the repository the servers load when sncc
    chose it: no ``weights``, ``model_id`` a catalog id, and the repository the entry's first
    ``org/name`` alias (``models.toml`` ``checkpoint_dtype`` describes that one).  None when the
    plan names the weights or a repository itself, or another variant's repository is loaded."""
    if weights or "/" in model_id:
        return None
    found = _catalog_repo(model_id)
    if found is None or not found[2]:
        return None
    return getattr(found[0], "checkpoint_dtype", None)


def model_ref(weights: str | None, model_id: str, quant: str | None = None) -> tuple[str, str]:
    """(what the engine loads, how it was chosen) for a plan's ``model "ID" { weights = ... }``.

    ``weights`` when given; else ``model_id`` when it is a Hugging Face repository id (``org/name``);
    else the catalog model's repository (:func:`_catalog_repo`; ``sncc/catalog/data/models.toml``):
    a catalog id such as ``qwen3-32b`` is no repository, and ``vllm serve qwen3-32b`` fails to
    start; else ``model_id`` as written.  The plan's ``quant`` against the repository's checkpoint
    is SN4022's (:func:`catalog_repo_dtype`)."""
    if weights:
        return weights, "plan model.weights"
    if "/" in model_id:
        return model_id, "the model name as written (a Hugging Face repository id)"
    found = _catalog_repo(model_id)
    if found is None:
        return model_id, "the model name as written"
    arch, repo, _, named = found
    if repo is None:
        return model_id, "the model name as written (the catalog lists no repository for it)"
    note = f"the Hugging Face repository of catalog model `{arch.id}` (no `weights` in the plan)"
    if not named:
        note += (f"; no repository is named `{model_id}`: if that is another release than `{repo}`, "
                 "set `weights` to its checkpoint")
    ckpt = catalog_repo_dtype(None, model_id)
    if quant and ckpt and quant != ckpt:
        note += f"; it holds the {ckpt} checkpoint, not {quant}"
    return repo, note


def resolve_definitions(nodes: dict) -> list[Diagnostic]:
    """The catalog diagnostics of a definitions file's typed blocks (``{name: node}``,
    :func:`sncc.plan.build.build_definitions`): an unknown system, chip or model (SN2008) and what
    else :func:`resolve_hardware` and :func:`resolve_model` find from those blocks alone, as a plan
    importing the file gets them.  A relative ``weights`` path is read relative to the file that
    writes it.  Nothing is demanded: the importing plan may supply a missing system or model."""
    import os

    r = Facts()
    hw = nodes.get("hardware")
    if hw is not None:
        resolve_hardware(hw, r, require=False)
    mdl = nodes.get("model")
    if mdl is not None:
        where = mdl.span_of("weights")
        base = os.path.dirname(where.file) if where is not None and where.file not in ("<stdin>", "-") else None
        resolve_model(mdl, r, base or ".")
    return r.diagnostics

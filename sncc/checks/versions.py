"""Release-dependent checks (SN4002 per release, SN4012, SN4013): the weight
format per (chip, engine release), the torch / torch_npu / vLLM pairing, and
engine options that a release removed.

Facts: ``software.toml`` ``[[vllm_ascend]]``, ``[[omni_infer]]``,
``[[features]]`` (``quant`` lists, ``ascend_scheduler``) and
``[[quant_routing]]``; misconfig BR-12, BR-16, BR-36 and the
``additional_config`` keys removed in vllm-ascend v0.12.0rc1.
"""

from __future__ import annotations

from sncc import catalog
from sncc.checks._rules import default_pin_help, engine_release
from sncc.diagnostics import codes
from sncc.diagnostics.model import Edit, Fix, Related, diag


def _release(v: str) -> tuple[int, ...]:
    """The numeric release part of a version (``2.7.1.post1`` → (2, 7, 1))."""
    return catalog.parse_version(v)[:3]


def check_quant_release(plan, r):
    """The engine release runs the checkpoint's weight format on this chip (SN4002); an unversioned
    engine is judged as its default pin (:attr:`sncc.facts.Facts.engine_version`)."""
    eng = plan.engine
    version = engine_release(plan, r)
    if r.quant is None or r.chip is None or not version:
        return
    on_chip = r.quant in (r.chip.weight_formats or ())  # else check_quant_supported reports the chip
    try:
        gates = [f for f in catalog.quant_features(eng.kind, r.quant)
                 if not f.device_types or r.chip.device_type in f.device_types]
        ok = not on_chip or not gates or any(f.available(version, r.chip.device_type) for f in gates)
        routing = [q for q in catalog.quant_routing() if q.engine == eng.kind and q.quant == r.quant
                   and catalog.version_in(version, q.min_version, q.fixed_in)]
    except ValueError:
        return
    label = r.engine_release_label(eng.kind) if getattr(r, "engine_version", None) else f"{eng.kind} {version}"
    rel = [Related(getattr(r, "engine_version_span", None) or eng.span_of("version"), label)]
    pin_help = default_pin_help(plan, r, f"`{r.quant}` on {r.chip.name}")
    if not ok:
        first = min((f.min_version for f in gates if f.min_version), key=catalog.parse_version, default=None)
        yield diag(codes.QUANT_UNSUPPORTED, f"{label} cannot run `{r.quant}` weights on {r.chip.name}",
                   r.quant_span or plan.model.name_span, related=rel,
                   help=(f"use {eng.kind} {first} or later" if first else "use another weight format")
                   + (f" ({pin_help})" if pin_help and first else ""),
                   notes=[g.notes for g in gates if g.notes][:1], path=("model", "quant"))
    for q in routing:
        yield diag(codes.QUANT_UNSUPPORTED,
                   f"{label} routes a serialized `{r.quant}` checkpoint to online quantization and fails to load it",
                   r.quant_span or plan.model.name_span, related=rel,
                   help=(f"use {eng.kind} {q.fixed_in} or later" if q.fixed_in else "no fixed release is known: use another checkpoint format")
                   + " (or a build with the loader fix)", notes=[q.notes] if q.notes else [], path=("model", "quant"))


def _paired(plan, r=None):
    """(engine label, vllm, torch, torch_npu) the engine release (written, else the default pin) pins,
    or None (the adapter's :meth:`~sncc.engines.base.EngineAdapter.paired_software`)."""
    from sncc.engines.registry import plan_adapter

    adapter = plan_adapter(plan)
    if adapter is None:
        return None
    pair = adapter.paired_software(engine_release(plan, r))
    if pair is not None and getattr(r, "engine_version_default", False):
        pair = (pair[0] + " (sncc's default pin)",) + tuple(pair[1:])
    return pair


def check_software_versions(plan, r):
    """``software`` versions pair with the engine release: same torch base for torch,
    torch_npu and the release pin, the paired vLLM (SN4012; misconfig BR-16)."""
    sw = plan.software
    if sw is None:
        return
    try:
        if sw.torch and sw.torch_npu and _release(sw.torch) != _release(sw.torch_npu):
            yield diag(codes.SOFTWARE_MISMATCH, f"torch {sw.torch} and torch_npu {sw.torch_npu} are different torch releases",
                       sw.span_of("torch_npu"), related=[Related(sw.span_of("torch"), f"torch {sw.torch}")],
                       help="torch_npu is built for one torch release: install the pair of the same version",
                       path=("software", "torch_npu"))
        pair = _paired(plan, r)
        if pair is None:
            return
        label, vllm, torch, torch_npu = pair
        rel = [Related(plan.engine.span_of("version"), label)]
        if sw.vllm and vllm and _release(sw.vllm) != _release(vllm):
            yield diag(codes.SOFTWARE_MISMATCH, f"{label} pairs with vLLM {vllm}, not {sw.vllm}", sw.span_of("vllm"), related=rel,
                       help=f"install vLLM {vllm} first, then the engine (it reinstalls its pinned torch / torch_npu)",
                       fixes=[Fix(f"use {vllm}", (Edit(sw.span_of("vllm"), f'"{vllm.lstrip("v")}"'),), "unsafe")],
                       path=("software", "vllm"))
        for key, want in (("torch", torch), ("torch_npu", torch_npu)):
            got = getattr(sw, key)
            if got and want and _release(got) != _release(want):
                yield diag(codes.SOFTWARE_MISMATCH, f"{label} pins {key} {want}, not {got}", sw.span_of(key), related=rel,
                           help=f"install {key} {want}; vLLM, torch, torch_npu and CANN are one compatibility set",
                           fixes=[Fix(f"use {want}", (Edit(sw.span_of(key), f'"{want}"'),), "unsafe")], path=("software", key))
    except ValueError:
        return


def check_removed_options(plan, r):
    """Engine options outside their release range (SN4013): the Ascend scheduler
    (``ascend_scheduler_config``) exists only before vllm-ascend v0.12.0rc1."""
    from sncc.engines.registry import plan_adapter

    eng = plan.engine
    adapter = plan_adapter(plan)
    for name, role in plan.roles():
        if role.scheduler != "ascend":
            continue
        if adapter is not None and not adapter.supports_component("ascend_scheduler"):
            yield diag(codes.OPTION_REMOVED, f"`scheduler = ascend` is a vllm-ascend option, not one of `{eng.kind}`",
                       role.span_of("scheduler"), help="remove it", path=(name, "scheduler"))
            continue
        version = engine_release(plan, r)
        if not version:
            continue
        try:
            f = catalog.feature("ascend_scheduler")
            ok = f.available(version)
        except (KeyError, ValueError):
            continue
        if not ok:
            label = r.engine_release_label("vllm-ascend") if getattr(r, "engine_version", None) else f"vllm-ascend {version}"
            yield diag(codes.OPTION_REMOVED, f"{label} has no Ascend scheduler (removed in {f.removed_in})",
                       role.span_of("scheduler"), related=[Related(eng.span_of("version"), label)],
                       help="remove `scheduler = ascend`; use vLLM's scheduler with chunked prefill", notes=[f.notes],
                       path=(name, "scheduler"))


def check_engine_pinned(plan, r):
    """An unversioned engine is built for sncc's default pin, which an info says (SN4046, at the
    engine block).  The engine release is one sncc pins its launch files to (SN4040, info); a release newer than
    any sncc knows (:meth:`~sncc.engines.base.EngineAdapter.newest_known_release`) is a warning:
    sncc's rules stop at its newest known release; none where the release matrix already calls the
    release unknown (SN2008, :func:`sncc.checks.software.release_unknown`)."""
    from sncc.engines.registry import plan_adapter

    eng = plan.engine
    adapter = plan_adapter(plan)
    if adapter is None:
        return
    if not eng.version:
        if getattr(r, "engine_version_default", False):
            yield diag(codes.ENGINE_VERSION_DEFAULT,
                       f"no engine release named: sncc checks and builds this plan for {adapter.label} {r.engine_version}, its default pin",
                       r.engine_version_span or eng.name_span,
                       help=f"write `version = \"{r.engine_version}\"` (or the release the servers run) in `engine \"{eng.kind}\"` "
                            "to keep the release fixed when sncc's default moves",
                       path=("engine",))
        return
    choice = adapter.choose(eng.version)
    if choice.exact:
        return
    newest = adapter.newest_known_release()
    try:
        future = catalog.parse_version(eng.version.split("@")[0]) > catalog.parse_version(newest.split("@")[0])
    except ValueError:
        future = False
    if future:
        from sncc.checks.software import release_unknown

        if release_unknown(plan, r):
            return   # the release matrix has no such release: SN2008 says so at the same value
        # a release newer than every table sncc has: no rule has read it, so every check is a guess
        yield diag(codes.ENGINE_VERSION_NOT_PINNED,
                   f"{adapter.label} {eng.version} is newer than any release sncc knows: its rules stop at "
                   f"{newest}, and the launch files follow {choice.pin.version} unverified",
                   eng.span_of("version"), severity="warning",
                   help=f"use {adapter.label} {adapter.pins[-1].version}, the newest pin, or check the release's "
                        "own arguments and changes before deploying",
                   notes=["the pins and their sources: sncc/engines/" + adapter.package.rsplit(".", 1)[-1] + "/data/pins.toml"],
                   path=("engine", "version"))
        return
    yield diag(codes.ENGINE_VERSION_NOT_PINNED,
               f"sncc writes launch files for {adapter.label} " + ", ".join(p.version for p in adapter.pins)
               + f"; {eng.version} is not one of them, so they follow {choice.pin.version} unverified",
               eng.span_of("version"),
               help=f"use {adapter.label} {choice.pin.version}" + (
                   f" or {adapter.pins[-1].version}" if adapter.pins[-1] is not choice.pin else ""),
               notes=["the pins and their sources: sncc/engines/" + adapter.package.rsplit(".", 1)[-1] + "/data/pins.toml"],
               path=("engine", "version"))

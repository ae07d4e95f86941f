"""Quantization checks (SN4001–SN4003): the plan's weight format matches the
checkpoint's, and the chip runs the weight format and the KV-cache dtype."""

from __future__ import annotations

from sncc import catalog
from sncc.diagnostics import codes
from sncc.diagnostics.model import Edit, Fix, Related, diag


def check_quant_matches_checkpoint(plan, r):
    """``model.quant`` equals the checkpoint's quantization when the weights say (SN4001)."""
    ck = r.checkpoint
    mdl = plan.model
    if ck is None or mdl.quant is None or ck.quant == mdl.quant:
        return
    if {ck.quant, mdl.quant} <= {"bf16", "fp16"}:
        return  # an unquantized checkpoint served in the other 16-bit dtype is a `--dtype` cast (BR-14)
    yield diag(codes.QUANT_MISMATCH,
               f"`quant = {mdl.quant}` but the checkpoint is `{ck.quant}`",
               mdl.span_of("quant"), related=[Related(mdl.span_of("weights"), f"read from {ck.quant_source_file}")],
               help=f"set `quant = {ck.quant}`, or point `weights` at a {mdl.quant} checkpoint",
               fixes=[Fix(f"set quant = {ck.quant}", (Edit(mdl.span_of("quant"), ck.quant),), "unsafe")],
               path=("model", "quant"))


def check_loaded_checkpoint_format(plan, r):
    """Without ``weights`` the servers load the catalog repository (``r.model_ref``); its
    checkpoint dtype (``r.model_ref_dtype``, models.toml) must be the plan's ``quant`` (SN4022,
    a warning: the operator may swap the path in at launch)."""
    mdl = plan.model
    have = r.model_ref_dtype
    if have is None or mdl.quant is None or mdl.quant == have:
        return
    try:
        want, ckpt = catalog.quant(mdl.quant), catalog.quant(have)
    except KeyError:
        return          # an unknown format is reported by resolution
    # a 16-bit checkpoint (quant.toml weight_bytes 2) serves the other 16-bit dtype (a `--dtype`
    # cast) and any format the engine quantizes to as it loads (quantizes_at_load)
    if ckpt.weight_bytes == 2 and (want.weight_bytes == 2 or want.quantizes_at_load):
        return
    yield diag(codes.LOADED_CHECKPOINT_FORMAT,
               f"no `weights`: the servers load `{r.model_ref}`, whose checkpoint is {have}, not `{mdl.quant}`",
               mdl.span_of("quant"), related=[Related(mdl.span_of("id"), f"catalog model `{mdl.id}`: repository `{r.model_ref}`")],
               help=f"set `weights` to the {mdl.quant} checkpoint the servers should load (for W8A8/W4A8 on Ascend, "
                    "msModelSlim's output)",
               path=("model", "weights"))


def _chip_label(r) -> str:
    return f"`{r.chip.id}` ({r.chip.name})"


def check_quant_supported(plan, r):
    """The chip runs the weight format (SN4002): FP8/MXFP8/MXFP4 only on Ascend
    950, INT8 formats on A2/A3, no BF16 on 910A (chips.toml ``weight_formats``)."""
    if r.chip is None or r.quant is None:
        return
    formats = tuple(getattr(r.chip, "weight_formats", ()) or ())
    if r.quant in formats:
        return
    alt = [q for q in ("w8a8", "w4a8", "bf16", "fp16", "fp8", "mxfp8") if q in formats]
    origin = {"plan": "", "checkpoint": " (from the checkpoint)", "catalog": " (the model's native dtype)"}[r.quant_origin or "plan"]
    yield diag(codes.QUANT_UNSUPPORTED,
               f"{_chip_label(r)} cannot run `{r.quant}` weights{origin}",
               r.quant_span or plan.model.name_span,
               related=[Related(plan.hardware.span_of("system") if plan.hardware.system else plan.hardware.span_of("chip"), "chip chosen here")],
               help=("quantize to " + " or ".join(f"`{a}`" for a in alt[:2]) + f"; {r.chip.id} supports " + ", ".join(formats)) if alt else "choose another chip",
               path=("model", "quant"))


def check_quant_engine(plan, r):
    """The engine takes the weight format (SN4002): its adapter has a ``--quantization`` for it and
    loads the checkpoint's format (:meth:`sncc.engines.base.EngineAdapter.quantization`; CUDA vLLM
    has no ``ascend``, the method of every msModelSlim format, and cannot load an msModelSlim
    checkpoint).  A format the chip cannot run is check_quant_supported's, an engine the chip's
    vendor cannot run SN4007's."""
    from sncc.catalog.engine_defaults import engine_defaults
    from sncc.engines.registry import plan_adapter

    adapter = plan_adapter(plan)
    if adapter is None or r.chip is None or r.quant is None:
        return
    formats = tuple(getattr(r.chip, "weight_formats", ()) or ())
    if r.quant not in formats:
        return
    row = engine_defaults().get("engine_hardware", {}).get(plan.engine.kind)
    if row is not None and r.chip.vendor not in row["vendors"]:
        return
    eng = plan.engine.kind
    ck = r.checkpoint
    of_format = adapter.quantization(r.quant)
    qa = of_format if of_format.refused else adapter.quantization(
        r.quant, ck.quant_source_file if ck is not None and ck.quant == r.quant else None)
    if not qa.refused:
        return
    origin = {"plan": "", "checkpoint": " (from the checkpoint)", "catalog": " (the model's native dtype)"}[r.quant_origin or "plan"]
    related = [Related(plan.engine.span_of("kind"), f"engine `{eng}`")]
    if not of_format.refused:       # the format is fine, this checkpoint's files are not
        message = f"engine `{eng}` cannot load this `{r.quant}` checkpoint{origin}"
        help_ = f"point `weights` at a {r.quant} checkpoint in the format `{eng}` loads (the note names it)"
        if plan.model.weights:
            related.append(Related(plan.model.span_of("weights"), f"format read from {ck.quant_source_file}"))
    else:
        message = f"engine `{eng}` has no working `--quantization` for `{r.quant}` weights{origin}"
        alt = [q for q in formats if q != r.quant and q not in ("bf16", "fp16")
               and not adapter.quantization(q).refused][:2]
        help_ = (("use " + " or ".join(f"`quant = {a}`" for a in alt) + " with a checkpoint in that format, or ")
                 if alt else "use ") + "an unquantized (`bf16`) checkpoint on this engine"
    yield diag(codes.QUANT_UNSUPPORTED, message, r.quant_span or plan.model.name_span, related=related,
               help=help_, notes=[qa.refused] + ([f"source: {'; '.join(qa.source)}"] if qa.source else []),
               path=("model", "quant"))


def check_kv_dtype_supported(plan, r):
    """The chip holds the KV cache in the requested dtype (SN4003): FP8 KV only
    on Ascend 950 and FP8-capable GPUs; A2/A3 quantize KV to INT8 (C8)."""
    kv = plan.kv_cache
    if r.chip is None or kv.dtype == "auto":
        return
    dtypes = tuple(getattr(r.chip, "kv_dtypes", ()) or ())
    if kv.dtype in dtypes:
        return
    alt = "int8" if "int8" in dtypes else (dtypes[0] if dtypes else None)
    fixes = [Fix(f"use {alt}", (Edit(kv.span_of("dtype"), alt),), "unsafe")] if alt and not kv.is_default("dtype") else []
    yield diag(codes.KV_DTYPE_UNSUPPORTED, f"{_chip_label(r)} cannot hold a `{kv.dtype}` KV cache",
               kv.span_of("dtype"), help=(f"use `dtype = {alt}`; supported: " + ", ".join(dtypes)) if alt else None,
               fixes=fixes, path=("kv_cache", "dtype"))

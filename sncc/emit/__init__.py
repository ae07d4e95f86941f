"""Emitters: a lowered plan → the text of each output file.

Every emitter is a pure function ``(plan, resolved) -> str``: no clock, no file or
environment reads, no dependence on ``PYTHONHASHSEED`` (keys are written in a
fixed order), so two builds of the same plan are byte-identical.

:data:`EMITTERS` maps each output file name to ``(emitter, schema name)``; the
schema name is the ``schemas/<name>.schema.json`` the output is validated
against (None: ``env.sh``, checked with ``bash -n``).  Which outputs a plan gets
depends on its engine and roles (:func:`outputs_for`):

=============================  =========================================================
``omni-infer.json``            engine ``omni-infer``
``vllm-ascend.prefill.toml``   engine ``vllm-ascend`` or ``vllm``, disaggregated, prefill
``vllm-ascend.decode.toml``    engine ``vllm-ascend`` or ``vllm``, disaggregated, decode
``vllm-ascend.toml``           engine ``vllm-ascend`` or ``vllm``, aggregated (``serve``)
``settings.json``              the plan has a ``gateway`` block
``env.sh``                     always
=============================  =========================================================

:func:`emit_all` returns the outputs plus a copy of every schema they reference,
under ``schemas/`` (the JSON ``$schema`` keys and the TOML ``#:schema``
directives point at ``./schemas/<name>.schema.json``, relative to the output,
so editors resolve them offline).  Write the result with
:func:`sncc.emit.writer.write_outputs`; check it with
:func:`sncc.emit.validate.validate_output`.
"""

from __future__ import annotations

from typing import Callable

from sncc.emit import env_sh, omni_infer, settings, vllm_ascend
from sncc.emit._common import SCHEMA_DIR
from sncc.lowering import LoweringError
from sncc.plan.model import Plan
from sncc.plan.resolve import Resolved

Emitter = Callable[[Plan, Resolved], str]

#: output file name → (emitter, schema name or None)
EMITTERS: dict[str, tuple[Emitter, str | None]] = {
    "omni-infer.json": (omni_infer.emit, omni_infer.SCHEMA),
    "vllm-ascend.prefill.toml": (vllm_ascend.emit_prefill, vllm_ascend.SCHEMA),
    "vllm-ascend.decode.toml": (vllm_ascend.emit_decode, vllm_ascend.SCHEMA),
    "vllm-ascend.toml": (vllm_ascend.emit_serve, vllm_ascend.SCHEMA),
    "settings.json": (settings.emit, settings.SCHEMA),
    "env.sh": (env_sh.emit, None),
}

_VLLM_ENGINES = ("vllm-ascend", "vllm")

#: output file name → predicate: does this plan get the file?
WHEN: dict[str, Callable[[Plan], bool]] = {
    "omni-infer.json": lambda p: p.engine.kind == "omni-infer",
    "vllm-ascend.prefill.toml": lambda p: p.engine.kind in _VLLM_ENGINES and p.disaggregated and p.prefill is not None,
    "vllm-ascend.decode.toml": lambda p: p.engine.kind in _VLLM_ENGINES and p.disaggregated and p.decode is not None,
    "vllm-ascend.toml": lambda p: p.engine.kind in _VLLM_ENGINES and p.serve is not None,
    "settings.json": lambda p: p.gateway is not None,
    "env.sh": lambda p: True,
}

__all__ = ["EMITTERS", "WHEN", "LoweringError", "emit_all", "outputs_for", "schema_for"]


def outputs_for(plan: Plan) -> list[str]:
    """Names of the output files ``plan`` produces, in :data:`EMITTERS` order."""
    return [name for name in EMITTERS if WHEN[name](plan)]


def schema_for(name: str) -> str | None:
    """Schema name of output ``name`` (``"vllm-ascend"`` for ``vllm-ascend.decode.toml``), or None.

    Also maps ``schemas/<x>.schema.json`` copies to None (they are schemas, not instances).
    """
    entry = EMITTERS.get(name)
    return entry[1] if entry else None


def emit_all(plan: Plan, resolved: Resolved, *, schemas: bool = True) -> dict[str, str]:
    """Every output of ``plan``: ``{file name: text}``, outputs first (in :data:`EMITTERS`
    order) then, when ``schemas`` is true, ``schemas/<name>.schema.json`` copies of the
    referenced schemas (sorted by name).  Deterministic.  Raises
    :class:`~sncc.lowering.LoweringError` for plans no output can represent.
    """
    from sncc import resources

    files: dict[str, str] = {}
    for name in outputs_for(plan):
        files[name] = EMITTERS[name][0](plan, resolved)
    if schemas:
        for s in sorted({sc for n in files if (sc := schema_for(n))}):
            files[f"{SCHEMA_DIR}/{s}.schema.json"] = resources.schema_path(s).read_text(encoding="utf-8")
    return files

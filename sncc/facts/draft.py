"""The draft checkpoints of speculative decoding: a ``speculative.model`` that names a local
directory with a config.json is read like ``model.weights`` (its positions and rope scaling are
what the length checks compare with the target's, docs/research/rule-kinds.md K2/K3).

A Hugging Face id or a missing directory is not read (the draft is then unknown and the checks
that need its shape skip themselves); an unreadable config.json is an SN2010 diagnostic at the
``model`` value.
"""

from __future__ import annotations

import os

from sncc import catalog
from sncc.diagnostics import codes
from sncc.diagnostics.model import diag


def draft_checkpoints(plan, roles, base_dir: str | None, diagnostics: list) -> dict:
    """``{speculative.model as written: CheckpointInfo}`` for every draft named by a role's
    speculative setting that is a readable local directory; problems are appended to ``diagnostics``."""
    out: dict = {}
    seen: set[str] = set()
    for rf in roles.values():
        sp = rf.speculative
        if sp is None or not sp.model or sp.model in seen:
            continue
        seen.add(sp.model)
        path = sp.model if base_dir is None or os.path.isabs(sp.model) else os.path.join(base_dir, sp.model)
        if not os.path.isdir(path):
            continue
        from sncc.catalog import hf_config

        try:
            info = hf_config.read_weights_dir(path)
        except catalog.CatalogError as e:
            diagnostics.append(diag(codes.CHECKPOINT_UNREADABLE, str(e), sp.span_of("model"),
                                    help="fix the draft's config.json; without it sncc cannot compare its positions"))
            continue
        if info is not None:
            out[sp.model] = info
    return out

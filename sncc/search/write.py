"""``sncc search --write DIR``: the best candidates as ``.sn`` files in canonical ``sncc fmt`` form.

Each file is the searched plan's own source with its role blocks replaced by the candidate's
(the settings the search does not vary, e.g. a role's ``env`` or ``eplb``, are copied from the base
role as written), without the ``search`` block (and without ``kv_transfer`` for an aggregated
candidate), with the ``env`` entries the candidate's layout needs and the plan lacks added to its
``env { }`` (:func:`sncc.search.candidate.candidate_env`), renamed ``<plan>-<rank>``, its
``import`` paths rebased to name the same files from DIR,
formatted by :func:`sncc.fmt.format_source`.  Every text is compiled again, as the file it will
be in DIR, and must check clean of errors and lower to a deployment (what ``sncc build`` writes)
before anything is written; DIR is untouched when one fails.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

from sncc.search.candidate import _KEPT, Candidate, RoleChoice

#: the Role fields a candidate writes, in the order a written block lists them
_WRITTEN = ("instances", "devices", "tp", "dp", "pp", "expert_parallel", "max_num_seqs",
            "max_num_batched_tokens", "chunked_prefill")


class WriteError(Exception):
    """A candidate's plan text could not be written (its source is spread over imported files,
    or the written text does not check or build: the message names the codes)."""


def _blocks(module: Any):
    plan = next(b for b in module.blocks if b.name == "plan")
    return plan, {it.name: it for it in plan.items if hasattr(it, "items")}


def _item_name(it: Any) -> str:
    return it.name if hasattr(it, "items") else it.key.text


def _role_text(src: str, choice: RoleChoice, base_block: Any, moe: bool, spec_in_plan: bool) -> str:
    lay = choice.layout
    lines = [f"instances = {choice.instances}", f"devices = {lay.devices}", f"tp = {lay.tp}", f"dp = {lay.dp}"]
    if lay.pp > 1:
        lines.append(f"pp = {lay.pp}")
    if moe and lay.tp * lay.dp > 1:
        lines.append(f"expert_parallel = {'true' if lay.expert_parallel else 'false'}")
    if choice.max_num_seqs is not None:
        lines.append(f"max_num_seqs = {choice.max_num_seqs}")
    lines.append(f"max_num_batched_tokens = {lay.max_num_batched_tokens}")
    if lay.chunk is not None:
        lines.append(f"chunked_prefill = {lay.chunk}")
    if spec_in_plan and not lay.speculative:
        lines.append("speculative { method = none }")
    if base_block is not None:
        for it in base_block.items:
            if _item_name(it) in _KEPT:
                lines.append(src[it.span.start:it.span.end])
    return f"{lay.role} {{\n" + "\n".join("    " + ln for ln in lines) + "\n  }"


#: plan values that name a file or folder relative to the plan file (``block``, ``key``, and whether
#: the path must exist next to the source plan to be one: ``weights`` and a draft ``model`` may be a
#: Hugging Face repository id or a path on the servers, left as written unless the folder is here)
PLAN_RELATIVE_PATHS = (("workload", "trace", False), ("model", "weights", True), ("speculative", "model", True))


def _moved(rel: str, src_dir: str, out_dir: str) -> str:
    """Path ``rel`` (relative to ``src_dir``) as seen from ``out_dir``: relative, or absolute when no
    relative path reaches it (another drive); ``/``-separated."""
    target = os.path.normpath(os.path.join(src_dir, rel))
    try:
        new = os.path.relpath(target, out_dir)
    except ValueError:                  # no relative path between two drives
        new = target
    return new.replace(os.sep, "/") if os.sep != "/" else new


def _rebased(comp: Any, out_path: str) -> list:
    """Edits ``(start, end, text)`` of the plan file's own relative paths so that they name the same
    files from ``out_path``'s folder: its ``import "..."`` paths and the plan values of
    :data:`PLAN_RELATIVE_PATHS`.  Absolute paths, values written in imported files and stdin's
    plan stay."""
    from sncc.fmt import quote

    if comp.source.name in ("<stdin>", "-"):
        return []
    src_dir = os.path.dirname(os.path.abspath(comp.source.name))
    out_dir = os.path.dirname(os.path.abspath(out_path))
    edits = []
    for imp in getattr(comp.module, "imports", ()):
        rel = imp.path.value
        if os.path.isabs(rel) or imp.span.file != comp.source.name:
            continue
        new = _moved(rel, src_dir, out_dir)
        if new != rel:
            edits.append((imp.path.span.start, imp.path.span.end, quote(new)))
    for block, key, must_exist in PLAN_RELATIVE_PATHS:
        node = getattr(comp.plan, block, None)
        rel = getattr(node, key, None) if node is not None else None
        span = node.span_of(key) if isinstance(rel, str) and not node.is_default(key) else None
        if span is None or span.file != comp.source.name or os.path.isabs(rel):
            continue
        if must_exist and not os.path.exists(os.path.join(src_dir, rel)):
            continue
        new = _moved(rel, src_dir, out_dir)
        if new != rel and comp.source.text[span.start:span.end].startswith('"'):
            edits.append((span.start, span.end, quote(new)))
    return edits


def _added_env(comp: Any, cand: Candidate, moe: bool) -> dict:
    """The ``env`` entries the search adds to candidate ``cand``
    (:func:`~sncc.search.candidate.candidate_env`: what its layout needs and the plan does not
    set, e.g. ``HCCL_INTRA_ROCE_ENABLE = 1`` for prefill and decode on one Ascend host), as the
    evaluated candidate carried them."""
    from sncc.search.candidate import candidate_env, candidate_plan

    if getattr(comp, "facts", None) is None:
        return {}
    return candidate_env(candidate_plan(comp.plan, cand, moe), comp.facts)


def _env_value(v: str) -> str:
    """An env value as a plan writes it: a whole number bare (``1``), anything else quoted."""
    from sncc.fmt import quote

    return v if v.isdigit() and (v == "0" or not v.startswith("0")) else quote(v)


def plan_text(comp: Any, cand: Candidate, name: str, moe: bool, header: str = "",
              out_path: Optional[str] = None) -> str:
    """The canonical ``.sn`` text of ``cand`` derived from compilation ``comp``'s source, named ``name``.

    ``header``: comment lines put first; ``out_path``: where the text will be written (its
    ``import`` paths are rebased to name the same files from there; None keeps them as written).
    Raises :class:`WriteError` when a block to replace lives in an imported file."""
    from sncc.fmt import format_source
    from sncc.source import SourceFile

    src = comp.source.text
    plan_blk, blocks = _blocks(comp.module)
    cut = [b for n, b in blocks.items() if n in ("prefill", "decode", "serve", "search")
           or (n == "kv_transfer" and cand.mode == "aggregated")]
    for b in cut + [plan_blk]:
        if b.span.file != comp.source.name:
            raise WriteError(f"`{b.name}` is written in {b.span.file}: --write rewrites the plan's own file only")
    roles = [b for n, b in blocks.items() if n in ("prefill", "decode", "serve")]
    at = min((b.span.start for b in roles), default=plan_blk.span.end - 1)

    def base_of(role: str):
        if role in blocks:
            return blocks[role]
        near = {"serve": ("decode", "prefill"), "prefill": ("serve", "decode"), "decode": ("serve", "prefill")}[role]
        return next((blocks[n] for n in near if n in blocks), None)

    new = "\n  ".join(_role_text(src, rc, base_of(rc.layout.role), moe, comp.plan.speculative is not None)
                      for rc in cand.roles)
    env_edits = []
    added = _added_env(comp, cand, moe)
    if added:
        lines = "".join(f"\n    {k} = {_env_value(v)}" for k, v in added.items())
        env_blk = blocks.get("env")
        if env_blk is not None:         # merged into the base plan's `env { }`: its keys kept
            if env_blk.span.file != comp.source.name:
                raise WriteError(f"`env` is written in {env_blk.span.file}: --write rewrites the plan's own file only")
            close = src.rindex("}", env_blk.span.start, env_blk.span.end)
            line = src.rfind("\n", env_blk.span.start, close) + 1
            if line and not src[line:close].strip():    # `}` on a line of its own: the keys before it
                env_edits.append((line, line, "".join(f"    {k} = {_env_value(v)}\n" for k, v in added.items())))
            else:
                env_edits.append((close, close, lines + "\n  "))
        elif comp.plan.env:
            raise WriteError("the plan's `env` is not written in its own file: "
                             "--write rewrites the plan's own file only")
        else:
            new += "\n  env { " + "  ".join(f"{k} = {_env_value(v)}" for k, v in added.items()) + " }"
    def end_of(b) -> int:       # a removed block takes its line break and the next line's indent
        e = b.span.end
        while e < len(src) and src[e] in " \t":
            e += 1
        if e < len(src) and src[e] == "\n":
            e += 1
            while e < len(src) and src[e] in " \t":
                e += 1
        return e

    edits = sorted([(b.span.start, end_of(b), "") for b in cut] + [(at, at, new + "\n  ")] + env_edits
                   + (_rebased(comp, out_path) if out_path else []), key=lambda e: (e[0], e[1]))
    out, pos = [], 0
    for start, end, text in edits:
        out.append(src[pos:start])
        out.append(text)
        pos = max(pos, end)
    out.append(src[pos:])
    text = "".join(out)
    label = plan_blk.label
    if label is not None:
        shift = sum(len(t) - (e - s) for s, e, t in edits if e <= label.span.start)
        a, b = label.span.start + shift, label.span.end + shift
        text = text[:a] + f'"{name}"' + text[b:]
    return format_source(SourceFile(comp.source.name, header + text))


def verify(text: str, path: str) -> list:
    """Error codes of ``text`` compiled as ``path``: its checks, and its lowering (``sncc build``)."""
    from sncc.compiler import Compilation
    from sncc.source import SourceFile

    comp = Compilation(SourceFile(path, text))
    errs = [d.code.code for d in comp.diagnostics if d.is_error]
    if not errs and comp.deployment is None:
        errs.append("no deployment")
    return sorted(set(errs))


def write_best(comp: Any, rows: list, out_dir: str, moe: bool) -> list:
    """Write ``rows`` (ranked :class:`~sncc.search.run.Row`) to ``out_dir`` as
    ``NN-<plan>-NN.sn``, the plan name made one safe file-name component
    (:func:`sncc.atomic_file.file_name_component`: ``"../x"`` and ``"team/x"`` stay in ``out_dir``);
    returns the paths (none, and ``out_dir`` not created, for no rows).  Every text is verified
    first; raises :class:`WriteError` (nothing written) when one fails."""
    from sncc.atomic_file import file_name_component

    base = comp.plan.name
    stem = file_name_component(base)
    texts = []
    for i, r in enumerate(rows):
        name = f"{base}-{i + 1:02d}"
        path = os.path.join(out_dir, f"{i + 1:02d}-{stem}-{i + 1:02d}.sn")
        m = r.metrics
        header = (f"# written by `sncc search {os.path.basename(comp.source.name)}`: rank {i + 1}, {r.candidate.label()},\n"
                  f"# {r.status} ({r.source}): {m['tokens_per_s_per_device']:.1f} output tokens/s per device, "
                  f"QPM {m['qpm']:.0f}, TTFT {m['ttft_s'].get('mean', 0):.2f} s (engine), "
                  f"{(m.get('client_ttft_s') or m['ttft_s']).get('mean', 0):.2f} s (client), "
                  f"TPOT {m['tpot_ms'].get('mean', 0):.1f} ms\n")
        text = plan_text(comp, r.candidate, name, moe, header, out_path=path)
        # verified where it will be written: its imports resolve from there, as `sncc check` reads them
        errs = verify(text, path)
        if errs:
            raise WriteError(f"{r.candidate.label()}: the written plan does not pass: {', '.join(errs)}")
        texts.append((path, text))
    if not texts:                       # nothing met or uncertain: DIR is not created
        return []
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    for path, text in texts:
        tmp = path + ".tmp"
        Path(tmp).write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return [p for p, _ in texts]

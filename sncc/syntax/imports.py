"""Resolve ``import "file.sn"`` statements structurally, at the AST level.

An imported file holds shared definitions: top-level blocks such as
``hardware { ... }``, ``model "deepseek-r1" { ... }``, ``gateway { ... }``.
They become defaults of the importing file's ``plan`` block: a block of the
same name in the plan is merged into the imported one key by key (the plan's
value wins, nested blocks merge recursively, a label in the plan replaces the
imported label); other imported blocks are added as they are.  Imports are
transitive; later imports override earlier ones; the importing file overrides
all of them.

Every node keeps the span of the file it was written in, so diagnostics point
into the right file; :class:`ImportGraph` records, for each imported file, the
``import`` statement that brought it in, so renderers can print the chain.
Cycles, missing files and ``plan`` blocks inside imported files are
diagnostics.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

from sncc.diagnostics import codes
from sncc.diagnostics.model import Diagnostic, Related, diag
from sncc.source import SourceFile, Span
from sncc.syntax import ast

#: reads a path and returns its text; raises OSError or UnicodeDecodeError
Reader = Callable[[str], str]


def _read_utf8(path: str) -> str:
    from sncc.source import read_bytes_limited

    return read_bytes_limited(path, regular_only=True).decode("utf-8")


#: folders of kernel pseudo-files and devices: their entries are not plans, and some
#: (``/proc/self/environ``) stat as regular files while holding the process's secrets
_PSEUDO_ROOTS = ("/proc", "/sys", "/dev")


def not_importable(path: str) -> str | None:
    """Why ``path`` cannot be imported (``"is a FIFO"``, ...), or None when it may be read.

    Only ``.sn`` files are imported (another file's syntax error would print one of its
    lines, a secret perhaps), and only what :func:`not_a_regular_input` accepts.  A path that
    does not exist returns None (the reader reports it, and the language server may hold an
    unsaved buffer of that name).
    """
    if not path.endswith(".sn"):
        # a plan imports plan definitions only; reading another file (`.env`, a key file)
        # would print its offending line, secrets included, in the syntax error
        return "is not a `.sn` file (imports bring in plan definitions only)"
    return not_a_regular_input(path)


def not_a_regular_input(path: str) -> str | None:
    """Why ``path`` is not a file sncc reads as input (imports, workload traces), or None.

    Only regular files: a FIFO would block the check, a device or a directory is not text, and
    files under ``/proc``, ``/sys`` and ``/dev`` are kernel pseudo-files (``/proc/self/environ``
    stats as a regular file and holds the process's secrets).  A path that does not exist returns
    None (the reader reports it).
    """
    import stat

    real = os.path.realpath(path)
    for root in _PSEUDO_ROOTS:
        if real == root or real.startswith(root + "/"):
            return f"is under {root}, a folder of kernel pseudo-files and devices"
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(st.st_mode):
        return None
    kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode)
            else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
            else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
    return f"is {kind}"


@dataclass
class ImportGraph:
    """Files reached through imports: name → SourceFile, and name → the span of
    the ``import`` statement that first brought it in."""

    sources: dict[str, SourceFile] = field(default_factory=dict)
    imported_by: dict[str, Span] = field(default_factory=dict)

    def chain(self, file: str) -> list[Span]:
        """Import statements leading from the root file to ``file`` (innermost first)."""
        out: list[Span] = []
        seen = set()
        while file in self.imported_by and file not in seen:
            seen.add(file)
            span = self.imported_by[file]
            out.append(span)
            file = span.file
        return out


def _key(item: ast.Item) -> tuple[str, str]:
    if isinstance(item, ast.Block):
        return ("block", item.name)
    return ("value", item.key.text)


def merge_block(base: ast.Block, over: ast.Block) -> ast.Block:
    """``over`` merged onto ``base``: each of ``over``'s items replaces the first
    ``base`` item of the same key (blocks merge recursively); the rest are appended.
    Duplicates written inside ``over`` itself stay, so they are still reported."""
    items = list(base.items)
    index = {}
    for i, it in enumerate(items):
        index.setdefault(_key(it), i)
    used: set[tuple[str, str]] = set()
    for it in over.items:
        k = _key(it)
        if k in index and k not in used:
            used.add(k)
            j = index[k]
            old = items[j]
            if isinstance(it, ast.Block) and isinstance(old, ast.Block):
                items[j] = merge_block(old, it)
            else:
                items[j] = it
        else:
            items.append(it)
    return ast.Block(over.name, over.name_span, over.label or base.label, tuple(items), over.span)


def _merge_defs(defs: list[ast.Block], blk: ast.Block) -> None:
    for i, d in enumerate(defs):
        if d.name == blk.name:
            defs[i] = merge_block(d, blk)
            return
    defs.append(blk)


def resolve_imports(
    module: ast.Module, source: SourceFile, parse: Callable, reader: Reader = _read_utf8
) -> tuple[ast.Module, ImportGraph, list[Diagnostic]]:
    """Apply ``module``'s imports (recursively) to its ``plan`` block.

    ``parse(SourceFile) -> (Module | None, diagnostics)`` parses imported files.
    Returns the merged module, the import graph (for rendering and the LSP) and
    the diagnostics of the imported files and of the imports themselves.
    """
    graph = ImportGraph({source.name: source})
    diags: list[Diagnostic] = []
    if not module.imports:
        return module, graph, diags

    def load(mod: ast.Module, src: SourceFile, stack: tuple[str, ...]) -> list[ast.Block]:
        """Definitions (merged top-level blocks) that ``mod``'s imports provide."""
        defs: list[ast.Block] = []
        base_dir = os.path.dirname(src.name) if src.name not in ("<stdin>", "-") else ""
        for imp in mod.imports:
            rel = imp.path.value
            path = os.path.normpath(os.path.join(base_dir, rel)) if not os.path.isabs(rel) else rel
            if path in stack:
                cycle = " → ".join(list(stack[stack.index(path):]) + [path])
                diags.append(diag(codes.IMPORT_CYCLE, f"import cycle: {cycle}", imp.path.span,
                                  help="move the shared definitions into a file that imports neither"))
                continue
            why = not_importable(path)
            if why is not None:
                diags.append(diag(codes.IMPORT_NOT_FOUND, f"cannot import `{rel}`: it {why}", imp.path.span,
                                  notes=[f"looked for {path}"], help="an import names a plan file (`.sn`) holding shared definitions"))
                continue
            try:
                text = reader(path)
            except UnicodeDecodeError:
                diags.append(diag(codes.IMPORT_NOT_FOUND, f"`{rel}` is not valid UTF-8", imp.path.span))
                continue
            except (OSError, ValueError) as e:  # ValueError: a NUL byte in the path
                diags.append(diag(codes.IMPORT_NOT_FOUND, f"cannot read `{rel}`: {getattr(e, 'strerror', None) or e}", imp.path.span,
                                  notes=[f"looked for {path}"], help="paths are relative to the importing file's folder"))
                continue
            sub_src = graph.sources.get(path) or SourceFile(path, text)
            graph.sources.setdefault(path, sub_src)
            graph.imported_by.setdefault(path, imp.span)
            sub, sub_diags = parse(sub_src)
            diags.extend(sub_diags)
            if sub is None:
                continue
            for d in load(sub, sub_src, stack + (path,)):
                _merge_defs(defs, d)
            for blk in sub.blocks:
                if blk.name == "plan":
                    diags.append(diag(codes.IMPORT_HOLDS_PLAN, f"`{rel}` holds a `plan` block; imported files hold definitions",
                                      imp.path.span, related=[Related(blk.name_span, "`plan` block here")],
                                      help="write its blocks at the top level of the file, without `plan`"))
                    continue
                _merge_defs(defs, blk)
        return defs

    defs = load(module, source, (os.path.normpath(source.name),))
    blocks = []
    for blk in module.blocks:
        if blk.name == "plan" and defs:
            base = ast.Block("plan", blk.name_span, blk.label, tuple(defs), blk.span)
            blk = merge_block(base, blk)
        blocks.append(blk)
    return ast.Module(tuple(blocks), module.span, module.imports), graph, diags

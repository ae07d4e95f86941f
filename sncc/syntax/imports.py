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

#: reads a path and returns its text; raises OSError (UnreadableFile) or UnicodeDecodeError
Reader = Callable[[str], str]

#: folders of kernel pseudo-files and devices: their entries are not plans, and some
#: (``/proc/self/environ``) stat as regular files while holding the process's secrets
_PSEUDO_ROOTS = ("/proc", "/sys", "/dev")


class UnreadableFile(OSError):
    """A plan input (import, trace, config.json) that sncc refuses or fails to read.

    ``path`` is the path as given, ``reason`` a lower-case phrase for a message
    ("is a FIFO (named pipe)", "larger than 64 MiB, the most sncc reads",
    "is not valid UTF-8 (byte 0xff)"); ``offset`` is the code-point offset of the first
    undecodable byte for an encoding error, else None.  ``str(e)`` is ``"path: reason"``.
    A subclass of :class:`OSError`, so callers that catch ``OSError`` keep working.
    """

    def __init__(self, path: str, reason: str, offset: int | None = None) -> None:
        super().__init__(reason)
        self.path, self.reason, self.offset = path, reason, offset
        self.strerror = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def _file_kind(mode: int) -> str:
    import stat

    return ("a directory" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def pseudo_root(path: str) -> str | None:
    """The kernel pseudo-file folder (``/proc``, ``/sys``, ``/dev``) that ``path`` resolves
    into (symlinks followed), or None.  A path with a NUL byte returns None (no file has it)."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return None
    for root in _PSEUDO_ROOTS:
        if real == root or real.startswith(root + "/"):
            return root
    return None


def read_bounded(path: str, limit: int) -> str:
    """The UTF-8 text of the regular file at ``path``, of at most ``limit`` bytes.

    Refuses, by raising :class:`UnreadableFile` before reading a byte: a path with a NUL
    byte; a path resolving under ``/proc``, ``/sys`` or ``/dev`` (``/dev/stdin``, or
    ``/proc/self/environ``, which stats as a regular file and holds the environment); a
    directory, FIFO, device or socket (the file is opened non-blocking and checked with
    ``fstat``, so a FIFO never blocks).  Also raises it for a file that does not exist
    or cannot be opened (``reason`` = the system's message), that holds more than
    ``limit`` bytes, or that is not valid UTF-8 (``offset`` set).  Reads at most
    ``limit + 1`` bytes, so memory is bounded whatever the file.
    """
    import stat

    if "\x00" in path:
        raise UnreadableFile(path, "the path holds a NUL byte")
    root = pseudo_root(path)
    if root is not None:
        raise UnreadableFile(path, f"is under {root}, a folder of kernel pseudo-files and devices")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise UnreadableFile(path, e.strerror or str(e)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnreadableFile(path, f"is {_file_kind(mode)}")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(limit + 1)
    except OSError as e:
        if isinstance(e, UnreadableFile):
            raise
        raise UnreadableFile(path, e.strerror or str(e)) from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > limit:
        raise UnreadableFile(path, f"larger than {_size(limit)}, the most sncc reads")
    from sncc.source import foreign_encoding

    enc = foreign_encoding(data)
    if enc is not None:
        raise UnreadableFile(path, f"is {enc} text, not UTF-8 (it starts with a byte-order mark)", 0)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        offset = len(data[: e.start].decode("utf-8", errors="replace"))
        raise UnreadableFile(path, f"is not valid UTF-8 (byte 0x{data[e.start]:02x})", offset) from None


def _size(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n:,} bytes"


def _read_utf8(path: str) -> str:
    from sncc.source import MAX_FILE_BYTES

    return read_bounded(path, MAX_FILE_BYTES)


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
    stats as a regular file and holds the process's secrets).  A path with a NUL byte is refused.
    A path that does not exist returns None (the reader reports it).
    """
    import stat

    if "\x00" in path:
        return "holds a NUL byte in its path"
    root = pseudo_root(path)
    if root is not None:
        return f"is under {root}, a folder of kernel pseudo-files and devices"
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(st.st_mode):
        return None
    return f"is {_file_kind(st.st_mode)}"


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


#: Longest chain of imports followed (file → file → ...).  Shared definitions need two or
#: three levels (site → cluster → plan); the bound keeps a generated 1,000-deep chain from
#: exhausting the Python stack.
MAX_IMPORT_DEPTH = 64


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def resolve_imports(
    module: ast.Module, source: SourceFile, parse: Callable, reader: Reader = _read_utf8
) -> tuple[ast.Module, ImportGraph, list[Diagnostic]]:
    """Apply ``module``'s imports (recursively) to its ``plan`` block.

    ``parse(SourceFile) -> (Module | None, diagnostics)`` parses imported files.
    Returns the merged module, the import graph (for rendering and the LSP) and
    the diagnostics of the imported files and of the imports themselves.

    Files are identified by their real path (symlinks resolved): each is read, parsed and
    resolved once, however many paths of the graph reach it (a diamond lattice costs one
    parse per file, not one per path), and a folder symlinked into itself is an import
    cycle (SN2013).  A chain deeper than :data:`MAX_IMPORT_DEPTH` files is SN2012.
    """
    graph = ImportGraph({source.name: source})
    diags: list[Diagnostic] = []
    if not module.imports:
        return module, graph, diags
    #: real path → the definitions that file provides (its imports merged, then its blocks)
    provided: dict[str, list[ast.Block]] = {}

    def load(mod: ast.Module, src: SourceFile, stack: tuple[tuple[str, str], ...]) -> list[ast.Block]:
        """Definitions (merged top-level blocks) that ``mod``'s imports provide.
        ``stack`` holds (real path, display path) of the files being loaded, outermost first."""
        defs: list[ast.Block] = []
        base_dir = os.path.dirname(src.name) if src.name not in ("<stdin>", "-") else ""
        for imp in mod.imports:
            rel = imp.path.value
            path = os.path.normpath(os.path.join(base_dir, rel)) if not os.path.isabs(rel) else rel
            why = not_importable(path)
            if why is not None:
                diags.append(diag(codes.IMPORT_NOT_FOUND, f"cannot import `{_shown(rel)}`: it {why}", imp.path.span,
                                  notes=[f"looked for {_shown(path)}"], help="an import names a plan file (`.sn`) holding shared definitions"))
                continue
            real = _real(path)
            reals = [r for r, _ in stack]
            if real in reals:
                cycle = " → ".join([shown for _, shown in stack[reals.index(real):]] + [path])
                diags.append(diag(codes.IMPORT_CYCLE, f"import cycle: {cycle}", imp.path.span,
                                  help="move the shared definitions into a file that imports neither"))
                continue
            if real not in provided:
                if len(stack) > MAX_IMPORT_DEPTH:
                    diags.append(diag(codes.IMPORT_NOT_FOUND,
                                      f"cannot import `{rel}`: imports nest more than {MAX_IMPORT_DEPTH} files deep",
                                      imp.path.span, help="import the shared definitions from fewer levels of files"))
                    continue
                provided[real] = list(read_and_load(imp, rel, path, real, stack))
            for d in provided[real]:
                _merge_defs(defs, d)
        return defs

    def read_and_load(imp: ast.Import, rel: str, path: str, real: str, stack) -> list[ast.Block]:
        try:
            text = reader(path)
        except UnicodeDecodeError:
            diags.append(diag(codes.IMPORT_NOT_FOUND, f"`{rel}` is not valid UTF-8", imp.path.span))
            return []
        except UnreadableFile as e:
            diags.append(diag(codes.IMPORT_NOT_FOUND, f"cannot import `{_shown(rel)}`: {_phrase(e.reason)}", imp.path.span,
                              notes=[f"looked for {_shown(path)}"], help="paths are relative to the importing file's folder"))
            return []
        except (OSError, ValueError) as e:  # ValueError: a NUL byte in the path
            diags.append(diag(codes.IMPORT_NOT_FOUND, f"cannot read `{_shown(rel)}`: {getattr(e, 'strerror', None) or e}", imp.path.span,
                              notes=[f"looked for {_shown(path)}"], help="paths are relative to the importing file's folder"))
            return []
        sub_src = graph.sources.get(path) or SourceFile(path, text)
        graph.sources.setdefault(path, sub_src)
        graph.imported_by.setdefault(path, imp.span)
        sub, sub_diags = parse(sub_src)
        diags.extend(sub_diags)
        if sub is None:
            return []
        defs = load(sub, sub_src, stack + ((real, path),))
        for blk in sub.blocks:
            if blk.name == "plan":
                diags.append(diag(codes.IMPORT_HOLDS_PLAN, f"`{rel}` holds a `plan` block; imported files hold definitions",
                                  imp.path.span, related=[Related(blk.name_span, "`plan` block here")],
                                  help="write its blocks at the top level of the file, without `plan`"))
                continue
            _merge_defs(defs, blk)
        return defs

    root = os.path.normpath(source.name)
    defs = load(module, source, ((_real(root) if source.name not in ("<stdin>", "-") else root, root),))
    blocks = []
    for blk in module.blocks:
        if blk.name == "plan" and defs:
            base = ast.Block("plan", blk.name_span, blk.label, tuple(defs), blk.span)
            blk = merge_block(base, blk)
        blocks.append(blk)
    return ast.Module(tuple(blocks), module.span, module.imports), graph, diags


def _phrase(reason: str) -> str:
    """``reason`` of :class:`UnreadableFile` as the rest of "cannot import `x`: ..."."""
    return ("it " + reason) if reason.startswith(("is ", "larger ")) else reason


def _shown(text: str) -> str:
    """A path as printed in a message: control characters (a NUL byte) escaped."""
    import re

    return re.sub(r"[\x00-\x1f\x7f]", lambda m: repr(m.group())[1:-1], text)

"""Hover, completion, code actions and go-to-definition, as plain functions of
a buffer's text and a code-point offset (the server converts LSP positions
with :meth:`sncc.source.SourceFile.offset_of_lsp` and back with
:meth:`~sncc.source.SourceFile.lsp_position`).

Key documentation comes from the typed plan itself: each pydantic field's
``description`` and ``json_schema_extra`` (``kind``, ``choices``) in
:mod:`sncc.plan.model`, its default and its bounds; catalog facts come from
:mod:`sncc.lsp.catalog_docs`.
"""

from __future__ import annotations

import os
from typing import Any

from lsprotocol import types

from sncc.lsp import catalog_docs
from sncc.lsp.context import Context, Token, context_at, model_for_path
from sncc.source import SourceFile

#: how many (file name, text) parses :func:`own_module` keeps: the open document and the files it
#: imports, so that hover and go-to-definition on an unchanged buffer do not re-parse it
PARSE_MEMO_SIZE = 4
_parsed: dict[tuple[str, str], object | None] = {}


def own_module(src: SourceFile):
    """The AST :class:`~sncc.syntax.ast.Module` of ``src``'s own text (None when it does not
    parse), remembered for the last :data:`PARSE_MEMO_SIZE` (name, text) pairs.

    Hover and go-to-definition read the file's own AST on every request; re-parsing a large plan
    takes about 0.8 s per request on 790 kB here (``bench/bench_large_plan.py`` sizes), so the
    parse of an unchanged buffer is reused.  The modules are read, never mutated, by this layer."""
    from sncc.syntax.parser import parse

    key = (src.name, src.text)
    if key in _parsed:
        _parsed[key] = _parsed.pop(key)        # most recently used last
        return _parsed[key]
    module, _ = parse(src)
    _parsed[key] = module
    while len(_parsed) > PARSE_MEMO_SIZE:
        _parsed.pop(next(iter(_parsed)))
    return module

#: what each field kind accepts, for hover and completion details
KIND_TEXT = {
    "count": "a whole number ≥ 1 (a count)",
    "int": "a whole number",
    "tokens": "a token count: a number or a quantity (`16k` = 16384, `1M` = 1048576)",
    "tokens-or-off": "a token count (`16k`) or `off`",
    "tokens-or-auto": "a token count (`16k`) or `auto` (the engine's own default)",
    "duration": "a duration with a unit (`ms`, `s`, `min`, `h`)",
    "duration-or-none": "a duration with a unit (`30s`) or `none` (unbounded)",
    "bytes": "a byte size with a unit (`GB`, `GiB`, …)",
    "bandwidth": "a bandwidth with a unit (`GB/s`, `TB/s`, …)",
    "ratio": "a fraction: `0.9` or `90%`",
    "float": "a number",
    "bool": "`true` or `false`",
    "string": "a string in double quotes",
    "enum": "one of the names listed",
    "secret": '`env("NAME")`: a reference to an environment variable, never a literal',
    "int-list": "a list of whole numbers, `[1, 2, 4]`",
    "env-map": "a block of `NAME = value` lines",
    "version": 'a release in double quotes, e.g. `"8.2.RC1"` or `"v0.11.0"`',
    "address-list": 'a list of addresses, each a string or `env("NAME")`: `["10.0.0.1", env("NODE1")]`',
}

#: keywords a value of each kind may be, besides its literals (the builder's
#: ``sncc.plan.build`` ``convert`` accepts each), offered by completion
KIND_KEYWORDS = {
    "tokens-or-off": [("off", "no chunking")],
    "tokens-or-auto": [("auto", "the engine's default, from config.json")],
    "duration-or-none": [("none", "unbounded")],
}

#: field kinds whose values take a unit, and the unit family
_UNIT_KIND = {"tokens": "tokens", "tokens-or-off": "tokens", "tokens-or-auto": "tokens", "duration": "duration",
              "duration-or-none": "duration", "bytes": "bytes", "bandwidth": "bandwidth", "ratio": "ratio"}


def _extra(info) -> dict:
    return info.json_schema_extra if isinstance(getattr(info, "json_schema_extra", None), dict) else {}


def _kind(info) -> str:
    from sncc.plan.build import _field_kind

    return _field_kind(info)


def _fmt_default(kind: str, v: Any) -> str:
    if v is None:
        return "unset"
    if isinstance(v, bool):
        return f"`{'true' if v else 'false'}`"
    if _UNIT_KIND.get(kind) == "tokens" and isinstance(v, int) and v % 1024 == 0 and v >= 1024:
        return f"`{v // 1024}k` ({v} tokens)"
    if _UNIT_KIND.get(kind) == "duration" and isinstance(v, (int, float)):
        return f"`{v:g}s`"
    return f"`{v}`"


def _bounds(info) -> str | None:
    words = []
    for mt in getattr(info, "metadata", []):
        for attr, sym in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            val = getattr(mt, attr, None)
            if val is not None:
                words.append(f"{sym} {val}")
    return ", ".join(words) or None


def _settable(cls) -> list[str]:
    """What a ``cls`` block accepts: the builder's own list (role `env { }` included)."""
    from sncc.plan.build import settable_fields

    return settable_fields(cls)


def _is_block(cls, name: str) -> bool:
    from sncc.plan import model as m
    from sncc.plan.build import _field_kind, _submodel

    if cls is m.Plan and name == "slo":
        return True
    info = cls.model_fields.get(name)
    return info is not None and (_submodel(info) is not None or _field_kind(info) == "env-map")


def _where(path: list[str]) -> str:
    names = path[1:] if path and path[0] == "plan" else path
    return ".".join(names) or "plan"


def _first_para(doc: str | None) -> str:
    return (doc or "").strip().split("\n\n")[0].replace("\n", " ")


def block_doc(cls, name: str) -> str:
    """Markdown for a block: its docstring and the keys it takes."""
    keys = ", ".join(f"`{k}`" for k in _settable(cls))
    label = f' "{cls.label_field}"' if cls.label_field else ""
    return f"**`{name}{label} {{ … }}`**\n\n{_first_para(cls.__doc__)}\n\nkeys: {keys}"


def field_doc(cls, name: str, path: list[str]) -> str | None:
    """Markdown for key ``name`` of model ``cls``: meaning, what it takes, default, bounds."""
    from sncc.plan import model as m
    from sncc.plan.build import _submodel

    if cls is m.Plan and name == "slo":
        metrics = ", ".join(f"`{k}` ({d})" for k, (_, d) in m.SLO_METRICS.items())
        return ("**`slo { … }`**\n\nservice-level objectives as comparisons, e.g. `ttft < 2s  tpot < 50ms  qpm >= 600`; "
                f"`metric.p99` bounds a percentile ({', '.join(m.SLO_STATS)})\n\nmetrics: {metrics}")
    info = cls.model_fields.get(name)
    if info is None:
        return None
    sub = _submodel(info)
    if sub is not None:
        return block_doc(sub, name)
    kind = _kind(info)
    extra = _extra(info)
    lines = [f"**`{name}`** in `{_where(path)}`", "", info.description or ""]
    lines.append("")
    lines.append(f"* takes {KIND_TEXT.get(kind, kind)}")
    unit_kind = _UNIT_KIND.get(kind)
    if unit_kind:
        from sncc.units import KIND_UNITS

        lines.append("* units: " + ", ".join(f"`{u}`" for u in KIND_UNITS.get(unit_kind, [])))
    if extra.get("choices"):
        lines.append("* choices: " + ", ".join(f"`{c}`" for c in extra["choices"]))
    if info.is_required():
        lines.append("* required")
    elif info.default_factory is not None:
        lines.append("* default: empty")
    else:
        lines.append(f"* default: {_fmt_default(kind, info.default)}")
    b = _bounds(info)
    if b:
        lines.append(f"* range: {b}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- AST context


def _ast_context(src: SourceFile, offset: int) -> Context | None:
    """The hover context from the parsed AST of ``src`` alone (None when it does not parse)."""
    from sncc.syntax import ast

    module = own_module(src)
    if module is None:
        return None

    def inside(span) -> bool:
        return span is not None and span.file == src.name and span.start <= offset <= span.end

    def tok(kind: str, span) -> Token:
        return Token(kind, src.text[span.start:span.end], span.start, span.end)

    for imp in getattr(module, "imports", ()):
        if inside(imp.path.span):
            return Context("import", [], [], "import", tok("string", imp.path.span))
    path: list[str] = []
    labels: list[str | None] = []
    items = list(module.blocks)
    while True:
        for it in items:
            if not inside(it.span):
                continue
            if isinstance(it, ast.Block):
                if inside(it.name_span):
                    return Context("key", path, labels, None, tok("name", it.name_span))
                if it.label is not None and inside(it.label.span):
                    return Context("label", path, labels, it.name, tok("string", it.label.span))
                path = path + [it.name]
                labels = labels + [it.label.value if it.label else None]
                items = list(it.items)
                break
            if inside(it.key.span):
                return Context("key", path, labels, None, tok("name", it.key.span))
            v = it.value
            key = it.key.parts[0]
            if isinstance(v, ast.Str) and inside(v.span):
                return Context("string", path, labels, key, tok("string", v.span))
            if isinstance(v, ast.Ident) and inside(v.span):
                return Context("value", path, labels, key, tok("name", v.span))
            if isinstance(v, (ast.Number, ast.QuantityLit)) and inside(v.span):
                return Context("unit", path, labels, key, tok("quantity", v.span))
            if isinstance(v, ast.Call) and inside(v.span):
                if v.args and isinstance(v.args[0], ast.Str) and inside(v.args[0].span):
                    return Context("env-arg", path, labels, key, tok("string", v.args[0].span))
            return Context("other", path, labels, key, None)
        else:
            return Context("other", path, labels, None, None)


# --------------------------------------------------------------------------- hover


def _value_doc(cls, key: str | None, value: str, path: list[str]) -> str | None:
    from sncc.plan import model as m

    if cls is m.Hardware and key == "system":
        return catalog_docs.system_doc(value)
    if cls is m.Hardware and key == "chip":
        return catalog_docs.chip_doc(value)
    if cls is m.Model and key == "quant":
        return catalog_docs.quant_doc(value) or field_doc(cls, key, path)
    if cls is m.Model and key == "id":
        return catalog_docs.model_doc(value)
    if cls is m.Engine and key == "kind":
        return catalog_docs.engine_doc(value)
    if isinstance(cls, type) and key is not None:
        return field_doc(cls, key, path)
    return None


def hover(src: SourceFile, offset: int) -> tuple[str, tuple[int, int]] | None:
    """Markdown and the (start, end) offsets it describes, for the cursor at ``offset``; None for nothing."""
    from sncc.plan import model as m

    ctx = _ast_context(src, offset) or context_at(src.text, offset, hover=True)
    if ctx.token is None:
        return None
    span = (ctx.token.start, ctx.token.end)
    word = ctx.token.text.strip('"')
    cls = model_for_path(ctx.path)
    doc = None
    if ctx.role == "key":
        if cls == "top":
            if word == "plan":
                doc = block_doc(m.Plan, "plan")
            elif word == "import":
                doc = '**`import "file.sn"`**\n\nbrings another file\'s top-level blocks in as defaults that this file overrides key by key'
            else:
                doc = field_doc(m.Plan, word, ["plan"])
        elif cls == "slo":
            metric = word.split(".")[0]
            if metric in m.SLO_METRICS:
                kind, desc = m.SLO_METRICS[metric]
                doc = (f"**`{metric}`** (SLO metric): {desc}\n\n* target: {KIND_TEXT.get(kind, kind)}"
                       f"\n* statistics: " + ", ".join(f"`{metric}.{s}`" if s != "mean" else f"`{metric}` (mean)" for s in m.SLO_STATS))
        elif cls == "env":
            doc = f"**`{word}`**: environment variable set for the engine processes (written to `env.sh`)"
        elif isinstance(cls, type):
            doc = field_doc(cls, word, ctx.path)
    elif ctx.role == "label":
        if ctx.key == "model":
            doc = catalog_docs.model_doc(word)
        elif ctx.key == "engine":
            doc = catalog_docs.engine_doc(word)
        elif ctx.key == "plan":
            doc = block_doc(m.Plan, "plan")
    elif ctx.role in ("string", "value", "unit") and isinstance(cls, type):
        doc = _value_doc(cls, ctx.key, word, ctx.path)
    elif ctx.role == "env-arg":
        doc = f"**`{word}`**: environment variable read when the plan is deployed; only its name is stored or emitted"
    elif ctx.role == "import":
        doc = f"**import** `{word}`: its top-level blocks are defaults for this plan"
    if not doc:
        return None
    return doc, span


# --------------------------------------------------------------------------- completion


def _item(label: str, kind: types.CompletionItemKind, detail: str | None = None, doc: str | None = None,
          edit: tuple[int, int, str] | None = None, src: SourceFile | None = None, sort: str | None = None) -> types.CompletionItem:
    text_edit = None
    if edit is not None and src is not None:
        from sncc.lsp.convert import lsp_range

        start, end, new = edit
        text_edit = types.TextEdit(lsp_range(src, src.span(start, end)), new)
    return types.CompletionItem(
        label=label, kind=kind, detail=detail,
        documentation=types.MarkupContent(types.MarkupKind.Markdown, doc) if doc else None,
        text_edit=text_edit, sort_text=sort, filter_text=edit[2] if edit else None,
    )


def _string_edit(src: SourceFile, tok: Token | None, offset: int) -> tuple[int, int] | None:
    """(start, end) of the text inside the string being typed (after its opening quote)."""
    if tok is None or tok.kind != "string":
        return None
    start = tok.start + 1
    end = tok.end - 1 if tok.text.endswith('"') and len(tok.text) > 1 and tok.end > offset else max(offset, start)
    return start, max(end, start)


def complete(src: SourceFile, offset: int) -> list[types.CompletionItem]:
    """Completion items for the cursor at ``offset`` of ``src``."""
    from sncc.plan import model as m

    ctx = context_at(src.text, offset)
    cls = model_for_path(ctx.path)
    K = types.CompletionItemKind
    out: list[types.CompletionItem] = []
    tok_edit = None
    if ctx.token is not None and ctx.token.kind == "name":
        tok_edit = (ctx.token.start, offset)
    if ctx.role == "key":
        if cls == "top":
            out.append(_item("plan", K.Module, "the plan block", block_doc(m.Plan, "plan")))
            out.append(_item("import", K.Keyword, "import shared definitions"))
            cls = m.Plan  # a file meant to be imported holds plan blocks at top level
            names = [n for n in _settable(m.Plan) if _is_block(m.Plan, n)]
        elif cls == "slo":
            for metric, (kind, desc) in m.SLO_METRICS.items():
                out.append(_item(metric, K.Field, desc, f"target: {KIND_TEXT.get(kind, kind)}"))
            return out
        elif isinstance(cls, type):
            names = _settable(cls)
        else:
            return out
        for n in names:
            block = _is_block(cls, n)
            info = cls.model_fields.get(n)
            detail = "block" if block else _kind(info) if info is not None else None
            out.append(_item(n, K.Module if block else K.Property, detail, field_doc(cls, n, ctx.path),
                             edit=(tok_edit[0], tok_edit[1], n) if tok_edit else None, src=src))
        return out
    if not isinstance(cls, type) and ctx.role != "label":
        return out
    if ctx.role == "label":
        if ctx.key == "import":
            return _import_paths(src, ctx.token, offset)
        if ctx.key == "model":
            what, items = "model", catalog_docs.ids("model")
        elif ctx.key == "engine":
            what, items = "engine", [(c, "serving engine") for c in _extra(m.Engine.model_fields["kind"]).get("choices", [])]
        else:
            return out
        rng = _string_edit(src, ctx.token, offset)
        for ident, detail in items:
            doc = catalog_docs.model_doc(ident) if what == "model" else None
            out.append(_item(ident, K.Value, detail, doc, edit=(rng[0], rng[1], ident) if rng else None, src=src))
        return out
    info = cls.model_fields.get(ctx.key or "")
    if info is None:
        return out
    kind = _kind(info)
    extra = _extra(info)
    if ctx.role == "value":
        if kind == "enum":
            for c in extra.get("choices", []):
                out.append(_item(c, K.EnumMember, f"{ctx.key}", edit=(tok_edit[0], tok_edit[1], c) if tok_edit else None, src=src))
        elif kind == "bool":
            out += [_item(v, K.Keyword, "bool", edit=(tok_edit[0], tok_edit[1], v) if tok_edit else None, src=src)
                    for v in ("true", "false")]
        elif kind in KIND_KEYWORDS:
            for word, detail in KIND_KEYWORDS[kind]:
                out.append(_item(word, K.Keyword, detail, edit=(tok_edit[0], tok_edit[1], word) if tok_edit else None, src=src))
        elif kind == "secret":
            out.append(_item('env("")', K.Function, "environment variable reference",
                             edit=(tok_edit[0], tok_edit[1], 'env("")') if tok_edit else None, src=src))
        return out
    if ctx.role == "unit":
        from sncc.units import KIND_UNITS

        unit_kind = _UNIT_KIND.get(kind)
        if unit_kind is None or ctx.token is None:
            return out
        import re

        num = re.match(r"[+-]?\d[\d_]*(\.\d+)?", ctx.token.text)
        if num is None:
            return out
        for u in KIND_UNITS.get(unit_kind, []):
            text = num.group(0) + u
            out.append(_item(text, K.Unit, f"{unit_kind} unit `{u}`", edit=(ctx.token.start, offset, text), src=src))
        return out
    if ctx.role == "string":
        what = None
        if cls is m.Hardware and ctx.key in ("system", "chip"):
            what = ctx.key
        elif cls is m.Engine and ctx.key == "version":
            what = "engine-version"
        elif cls is m.Hardware and ctx.key == "cann":
            what = "cann"
        if what is None:
            return out
        rng = _string_edit(src, ctx.token, offset)
        for ident, detail in catalog_docs.ids(what):
            doc = (catalog_docs.system_doc(ident) if what == "system" else
                   catalog_docs.chip_doc(ident) if what == "chip" else None)
            out.append(_item(ident, K.Value, detail, doc, edit=(rng[0], rng[1], ident) if rng else None, src=src))
    return out


#: most entries one ``import "`` completion lists (a folder of thousands of files stays responsive)
_IMPORT_ITEMS_MAX = 200


def _import_paths(src: SourceFile, tok: Token | None, offset: int) -> list[types.CompletionItem]:
    """Completion of the path inside ``import "..."``: the folders and ``.sn`` files of the folder
    typed so far, relative to the importing file's folder (as :mod:`sncc.syntax.imports` resolves
    it; the working directory for an unsaved file), hidden entries and build outputs (``x.out/``)
    left out, the file itself too; at most :data:`_IMPORT_ITEMS_MAX` items.  Never raises for an
    unreadable folder (no items)."""
    rng = _string_edit(src, tok, offset)
    if rng is None:
        return []
    typed = src.text[rng[0]:offset]
    here = os.path.dirname(os.path.abspath(src.name)) if os.path.isfile(src.name) else os.getcwd()
    sub = typed.rpartition("/")[0]
    folder = os.path.normpath(os.path.join(here, sub)) if sub else here
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    K = types.CompletionItemKind
    me = os.path.abspath(src.name)
    out: list[types.CompletionItem] = []
    prefix = sub + "/" if sub else ""
    for e in entries:
        if e.name.startswith(".") or len(out) >= _IMPORT_ITEMS_MAX:
            continue
        try:
            is_dir = e.is_dir()
        except OSError:
            continue
        if is_dir and not e.name.endswith(".out") and e.name != "__pycache__":
            text = f"{prefix}{e.name}/"
            out.append(_item(text, K.Folder, "folder", edit=(rng[0], rng[1], text), src=src))
        elif not is_dir and e.name.endswith(".sn") and os.path.abspath(e.path) != me:
            text = prefix + e.name
            out.append(_item(text, K.File, "plan definitions", edit=(rng[0], rng[1], text), src=src))
    return out


# --------------------------------------------------------------------------- code actions


def code_actions(uri: str, diagnostics: list[types.Diagnostic], rng: types.Range) -> list[types.CodeAction]:
    """Quick fixes for the ``fixes`` stored in each diagnostic's ``data`` that overlaps ``rng``.

    ``safe`` fixes are marked preferred; ``display-only`` ones are not offered.
    """
    def before(a: types.Position, b: types.Position) -> bool:
        return (a.line, a.character) < (b.line, b.character)

    out = []
    for d in diagnostics:
        if before(d.range.end, rng.start) or before(rng.end, d.range.start):
            continue
        data = d.data if isinstance(d.data, dict) else {}
        for fx in data.get("fixes", []) or []:
            if fx.get("applicability") == "display-only":
                continue
            changes: dict[str, list[types.TextEdit]] = {}
            for e in fx.get("edits", []):
                r = e["range"]
                changes.setdefault(e.get("uri", uri), []).append(types.TextEdit(
                    types.Range(types.Position(r["start"]["line"], r["start"]["character"]),
                                types.Position(r["end"]["line"], r["end"]["character"])),
                    e["newText"]))
            if not changes:
                continue
            out.append(types.CodeAction(
                title=fx.get("title", "apply fix"), kind=types.CodeActionKind.QuickFix, diagnostics=[d],
                edit=types.WorkspaceEdit(changes=changes), is_preferred=fx.get("applicability") == "safe",
            ))
    return out


# --------------------------------------------------------------------------- definition


def definition(comp, offset: int) -> list[types.Location]:
    """Go-to-definition at ``offset`` of ``comp``'s root file.

    * on an ``import "file.sn"`` path: the imported file;
    * on a key, block name or value inside the plan: every imported definition
      of the same path (``plan { hardware { cann } }`` → the top-level
      ``hardware { cann = … }`` of each imported file, transitively), i.e. the
      values this file overrides or extends.
    Returns [] when nothing is imported for that path.
    """
    from sncc.lsp.convert import path_to_uri
    from sncc.syntax import ast as A

    if comp is None:
        return []
    src = comp.source
    module = own_module(src)  # this file's own AST: the compilation's module is merged with its imports
    if module is None:
        return []
    for imp in module.imports:
        span = imp.path.span
        if span.file == src.name and span.start <= offset <= span.end:
            base = os.path.dirname(src.name)
            target = imp.path.value if os.path.isabs(imp.path.value) else os.path.normpath(os.path.join(base, imp.path.value))
            if os.path.isfile(target):
                zero = types.Position(0, 0)
                return [types.Location(path_to_uri(target), types.Range(zero, zero))]
    # the path (block names and the key) under the cursor, below `plan`
    path: list[str] = []
    blocks = [b for b in module.blocks if b.name == "plan" and b.span.start <= offset <= b.span.end]
    node = blocks[0] if blocks else None
    while node is not None:
        nxt = None
        for it in node.items:
            if it.span.start <= offset <= it.span.end:
                if isinstance(it, A.Block):
                    path.append(it.name)
                    nxt = it
                else:
                    path.append(it.key.text)
                break
        node = nxt
    if not path:
        return []
    out: list[types.Location] = []
    for name, isrc in comp.sources.items():
        if name == src.name:
            continue
        imod = own_module(isrc)
        if imod is None:
            continue
        items: tuple = tuple(imod.blocks)
        found = None
        for i, part in enumerate(path):
            found = None
            for it in items:
                key = it.name if isinstance(it, A.Block) else it.key.text
                if key == part:
                    found = it
                    break
            if found is None:
                break
            items = found.items if isinstance(found, A.Block) else ()
        if found is not None:
            span = found.name_span if isinstance(found, A.Block) else found.key.span
            sl, sc = isrc.lsp_position(span.start)
            el, ec = isrc.lsp_position(span.end)
            out.append(types.Location(path_to_uri(name), types.Range(types.Position(sl, sc), types.Position(el, ec))))
    return out

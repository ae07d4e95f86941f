"""AST → typed :class:`~sncc.plan.model.Plan`, with every value's span kept.

The walk is driven by the pydantic models: a field's ``kind`` (see
:data:`sncc.plan.model.KINDS`) says how a literal is read (units, booleans,
identifiers, ``env("NAME")``).  Problems are collected, not raised: unknown
keys (with "did you mean"), duplicate keys, wrong units, values out of range,
secrets written as literals.  Values that fail are dropped so that the rest of
the plan can still be checked; the plan is None only when something required
is missing.
"""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ValidationError

from sncc.diagnostics import codes
from sncc.diagnostics.model import Diagnostic, Edit, Fix, Related, diag
from sncc.diagnostics.secrets import SECRET_PATTERNS, looks_like_secret, url_with_password  # noqa: F401
from sncc.plan import model as m
from sncc.source import Span
from sncc.syntax import ast
from sncc.units import KIND_NOUN, KIND_UNITS, UnitError, parse_number, parse_quantity

#: C0 controls, DEL and C1 controls: never part of a name, id, path or URL
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_NAMES = {"\n": "line feed", "\r": "carriage return", "\t": "tab", "\x00": "NUL", "\x1b": "escape"}

#: Largest magnitude a numeric value may have, in its canonical unit: 2^53 - 1, the
#: largest integer an IEEE 754 double holds exactly.  Outputs are JSON, and I-JSON
#: (RFC 7493 §2.2) says integers beyond ±(2^53 - 1) are not interoperable; it also
#: keeps every product the checks form far from float overflow and Python's
#: int-to-str digit limit.
MAX_MAGNITUDE = 2**53 - 1

#: Longest string a plan key takes [characters]: Linux PATH_MAX (include/uapi/linux/limits.h,
#: 4096 bytes with the terminating NUL), the longest path a system call accepts.  Every string
#: key is a name, id, version, path or URL that ends up in a command line, a file header or a
#: config key; none is usefully longer.  A field may declare a tighter ``max_chars``.
MAX_STRING_CHARS = 4096
#: Longest ``env`` value [characters]: Linux MAX_ARG_STRLEN (include/uapi/linux/binfmts.h,
#: 32 pages = 131072 bytes), the longest single ``NAME=value`` string execve accepts.
MAX_ENV_VALUE_CHARS = 131072 - 1
_PATH_MAX_WHY = "names, ids, versions, paths and URLs are limited to 4,096 characters (Linux PATH_MAX)"


@dataclass
class Meta:
    """Spans of one block: the block, its name, each value and key, nested blocks."""

    block_span: Span | None = None
    name_span: Span | None = None
    values: dict[str, Span] = field(default_factory=dict)
    keys: dict[str, Span] = field(default_factory=dict)
    children: dict[str, "Meta"] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)
    #: the fields whose value was written as a percentage (``150%``), for the range error's help
    percent: set[str] = field(default_factory=set)
    #: each number (or number with a unit) as written (``0``, ``1.50``, ``20ms``), for the range error
    written: dict[str, str] = field(default_factory=dict)


#: longest name "did you mean" compares (difflib is quadratic in the lengths; keys are short)
_SUGGEST_MAX = 64


def _suggest(name: str, candidates: list[str]) -> list[str]:
    if len(name) > _SUGGEST_MAX:
        return []
    import difflib  # only when a name is misspelt

    return difflib.get_close_matches(name, candidates, n=3, cutoff=0.7)


def _clip(text: str, limit: int = 40) -> str:
    """``text`` as quoted in a message: at most ``limit`` characters (a 300 kB key is not echoed)."""
    return text if len(text) <= limit else text[: limit - 8] + "…" + text[-6:]


def _field_kind(info) -> str:
    extra = info.json_schema_extra or {}
    return extra.get("kind", "string") if isinstance(extra, dict) else "string"


def _submodel(info) -> type[m.Node] | None:
    """The Node subclass a field holds (unwrapping Optional), or None."""
    ann = info.annotation
    args = typing.get_args(ann) or (ann,)
    for a in args:
        if isinstance(a, type) and issubclass(a, m.Node):
            return a
    return None


def _value_noun(v: ast.Value) -> str:
    return {
        ast.Str: "a string", ast.Number: "a number", ast.QuantityLit: "a quantity",
        ast.Ident: "an identifier", ast.Call: "a function call", ast.ListLit: "a list",
    }[type(v)]


#: statistics the simulator evaluates per SLO metric (:func:`sncc.sim.engine.metrics.evaluate_slo`):
#: every statistic of a latency; a rate only as one figure (QPM and output tokens/s over the
#: steady window or the run, tokens/s per user as its mean over requests), written without one
SLO_METRIC_STATS = {"ttft": m.SLO_STATS, "engine_ttft": m.SLO_STATS, "tpot": m.SLO_STATS, "e2e": m.SLO_STATS,
                    "qpm": ("mean",), "output_tokens_per_s": ("mean",), "tokens_per_s_per_user": ("mean",)}


class _Builder:
    def __init__(self) -> None:
        self.diags: list[Diagnostic] = []
        self._where: list[str] = []             # dotted paths of the blocks being read
        self._keys: list[str | None] = []       # the key being read in each of them

    def error(self, code, message, span, **kw) -> None:
        """Record a diagnostic; its ``path`` defaults to the block and key being read (JSON's
        ``path``: ``("decode", "tp")``, ``("model",)`` for the model block itself)."""
        if "path" not in kw:
            kw["path"] = self._path()
        self.diags.append(diag(code, message, span, **kw))

    def _path(self) -> tuple[str, ...]:
        where = self._where[-1] if self._where else ""
        parts = [p for p in where.split(".") if p and p != "plan"]
        key = self._keys[-1] if self._keys else None
        return tuple(parts + [key] if key else parts)

    # --- values ---------------------------------------------------------
    def convert(self, kind: str, info, v: ast.Value, where: str, key: str, unit: str | None = None) -> Any:
        """Interpret literal ``v`` for a field of ``kind``; returns a marker on failure.

        ``unit`` (or the field's declared ``unit``) is the natural unit a bare number is
        hinted with (``ms`` for TPOT); the kind's canonical unit otherwise."""
        extra = info.json_schema_extra if info is not None and isinstance(info.json_schema_extra, dict) else {}
        unit = unit or extra.get("unit")
        if isinstance(v, ast.Number) and self.too_big(v, v.value, key):
            return _BAD
        if self.too_long(v, key, *extra.get("max_chars", (MAX_STRING_CHARS, _PATH_MAX_WHY))):
            return _BAD
        if kind != "secret" and isinstance(v, (ast.Str, ast.Ident)) and self.scan_secret(v, key):
            return _BAD  # dropped: no later message (an invalid enum, a mismatch) may repeat it
        if kind in ("count", "int"):
            if isinstance(v, ast.Number) and v.value == v.value.to_integral_value():
                return int(v.value)
            return self.bad(v, "an integer", where, key)
        if kind in ("tokens", "tokens-or-off", "tokens-or-auto"):
            if kind == "tokens-or-off" and isinstance(v, ast.Ident) and v.name in ("off", "false"):
                return None
            if kind == "tokens-or-auto" and isinstance(v, ast.Ident) and v.name == "auto":
                return "auto"
            if isinstance(v, ast.Number):
                if v.value == v.value.to_integral_value():
                    return int(v.value)
                return self.bad(v, "a whole number of tokens", where, key)
            if isinstance(v, ast.QuantityLit):
                return self.quantity(v, "tokens", where, key, integral=True)
            return self.bad(v, "a token count like `16k`" + {"tokens-or-off": " or `off`", "tokens-or-auto": " or `auto`"}.get(kind, ""), where, key)
        if kind == "duration-or-none":
            if isinstance(v, ast.Ident) and v.name in ("none", "off", "unbounded"):
                return 0.0  # no timeout
            kind = "duration"
        if kind in ("duration", "bytes", "bandwidth"):
            if isinstance(v, ast.QuantityLit):
                return self.quantity(v, kind, where, key)
            if isinstance(v, ast.Number):
                unit = unit or {"duration": "s", "bytes": "GiB", "bandwidth": "GB/s"}[kind]
                self.error(
                    codes.WRONG_UNIT, f"`{key}` needs {KIND_NOUN[kind]} with a unit, found the bare number `{v.text}`",
                    v.span, help=f"write e.g. `{v.text}{unit}`; units: {', '.join(KIND_UNITS[kind])}",
                    fixes=[Fix(f"add `{unit}`", (Edit(v.span, v.text + unit),), "unsafe")],
                )
                return _BAD
            return self.bad(v, KIND_NOUN[kind], where, key)
        if kind == "ratio":
            if isinstance(v, ast.Number):
                return float(v.value)
            if isinstance(v, ast.QuantityLit):
                return self.quantity(v, "ratio", where, key)
            return self.bad(v, "a fraction like `0.9` or `90%`", where, key)
        if kind == "float":
            if isinstance(v, ast.Number):
                return float(v.value)
            return self.bad(v, "a number", where, key)
        if kind == "bool":
            if isinstance(v, ast.Ident) and v.name in ("true", "false", "on", "off"):
                return v.name in ("true", "on")
            return self.bad(v, "`true` or `false`", where, key)
        if kind == "enum":
            choices = extra.get("choices", [])
            name = v.name if isinstance(v, ast.Ident) else v.value if isinstance(v, ast.Str) else None
            if name is None:
                return self.bad(v, "one of " + ", ".join(f"`{c}`" for c in choices), where, key)
            for c in choices:
                if c.lower() == name.lower():
                    return c
            close = _suggest(name.lower(), [c.lower() for c in choices])
            fixes = []
            help_ = "expected one of " + ", ".join(f"`{c}`" for c in choices)
            if close:
                best = next(c for c in choices if c.lower() == close[0])
                help_ = f"did you mean `{best}`? " + help_
                if len(close) == 1:
                    fixes = [Fix(f"replace with `{best}`", (Edit(v.span, best),), "safe")]
            self.error(codes.INVALID_VALUE, f"`{_clip(name)}` is not a valid `{key}` in `{where}`", v.span, help=help_, fixes=fixes)
            return _BAD
        if kind == "secret":
            if isinstance(v, ast.Call) and v.name == "env":
                return self.env_ref(v, where, key)
            if isinstance(v, ast.Str):
                self.error(
                    codes.LITERAL_SECRET, f"`{key}` is written as a literal string",
                    v.span, help='reference an environment variable instead: `env("GATEWAY_API_KEY")`',
                    notes=["secrets must not be stored in plans or emitted files"],
                )
                return _BAD
            return self.bad(v, '`env("NAME")`', where, key)
        if kind == "int-list":
            if not isinstance(v, ast.ListLit):
                return self.bad(v, "a list of integers like `[1, 2, 4]`", where, key)
            out = []
            for item in v.items:
                if isinstance(item, ast.Number) and self.too_big(item, item.value, key):
                    return _BAD
                if isinstance(item, ast.Number) and item.value == item.value.to_integral_value():
                    out.append(int(item.value))
                else:
                    return self.bad(item, "an integer", where, key)
            return out
        if kind == "address-list":
            if not isinstance(v, ast.ListLit):
                return self.bad(v, 'a list of addresses like `["10.0.0.1", env("NODE1_IP")]`', where, key)
            out = []
            for item in v.items:
                if isinstance(item, ast.Call) and item.name == "env":
                    ref = self.env_ref(item, where, key)
                    if ref is _BAD:
                        return _BAD
                    out.append(ref)
                elif isinstance(item, ast.Str):
                    if self.control_chars(item, where, key):
                        return _BAD
                    from sncc.plan.address import address_problem

                    why = address_problem(item.value)
                    if why is not None:
                        self.error(codes.INVALID_VALUE, f"`{item.value}` is not a host address: {why}", item.span,
                                   help="write an IPv4 address or a host name (RFC 1123: letters, digits and inner "
                                        "hyphens, labels joined by dots); name an IPv6-only node by its host name")
                        return _BAD
                    out.append(item.value)
                else:
                    return self.bad(item, 'a string or `env("NAME")`', where, key)
            return out
        if kind in ("version", "string") and isinstance(v, ast.Str) and self.control_chars(v, where, key):
            return _BAD
        if kind == "version" and isinstance(v, ast.Str):
            from sncc.catalog import parse_version

            try:
                parse_version(v.value)
            except ValueError:
                self.error(codes.INVALID_VALUE, f"`{key}` in `{where}` is not a release version", v.span,
                           help="write a release like `8.2.RC1` (CANN), `v0.11.0` (vllm-ascend) or `2.7.1.post1` (torch_npu)")
                return _BAD
            return v.value
        # string
        if isinstance(v, ast.Str):
            return v.value
        if isinstance(v, ast.Call) and v.name == "env":
            self.error(codes.INVALID_VALUE, f"`{key}` takes a literal string, not an environment reference", v.span,
                       help="only secrets (`api_key`) are read from the environment")
            return _BAD
        return self.bad(v, "a string in double quotes", where, key)

    def control_chars(self, v: ast.Str, where: str, key: str) -> bool:
        """Report SN2004 and return True when the string ``v`` holds a control character.

        Control characters are U+0000..U+001F (line feed, carriage return and tab
        included) and U+007F..U+009F.  Strings of kind ``string``/``version`` are
        names, ids, paths and URLs: they end up in file headers, comments, command
        lines and TOML keys, where a line break would end the line they sit in.
        """
        bad = _CONTROL_RE.search(v.value)
        if bad is None:
            return False
        ch = bad.group(0)
        self.error(codes.INVALID_VALUE,
                   f"`{key}` in `{where}` holds the control character U+{ord(ch):04X} ({_CONTROL_NAMES.get(ch, 'control')})",
                   v.span, help="names, ids, paths and URLs are one line of printable text: remove the escape "
                                "(`\\n`, `\\t`, ...)")
        return True

    def scan_secret(self, v: ast.Str | ast.Ident, key: str, what: str = "the value of") -> bool:
        """Report SN2007 and return True when the string (or bare identifier) ``v`` looks
        like a credential (:func:`looks_like_secret`); the message never repeats it."""
        text = v.value if isinstance(v, ast.Str) else v.name
        if not looks_like_secret(text):
            return False
        self.error(
            codes.LITERAL_SECRET, f"{what} `{key}` looks like a credential",
            v.span, help='keep credentials out of plans; use `env("NAME")` where a key is needed',
        )
        return True

    def env_ref(self, v: ast.Call, where: str, key: str):
        if len(v.args) != 1 or not isinstance(v.args[0], ast.Str):
            self.error(codes.INVALID_VALUE, '`env` takes one string: the variable name', v.span,
                       help='write `env("GATEWAY_API_KEY")`')
            return _BAD
        name = v.args[0].value
        if self.scan_secret(v.args[0], key, "the variable name of"):
            return _BAD  # the key itself written where its variable's name belongs
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            self.error(codes.INVALID_VALUE, f"`{name}` is not a valid environment variable name", v.args[0].span,
                       help="names are letters, digits and `_`, not starting with a digit")
            return _BAD
        return m.EnvRef(name=name)

    def quantity(self, v: ast.QuantityLit, kind: str, where: str, key: str, integral: bool = False):
        number = re.match(r"[+-]?[\d_]+(\.\d+)?", v.text).group(0)
        if self.too_big(v, parse_number(number), key):
            return _BAD
        try:
            q = parse_quantity(v.text)
        except UnitError as e:
            fixes = []
            help_ = f"units for {KIND_NOUN.get(kind, kind)}: {', '.join(KIND_UNITS.get(kind, []))}"
            if e.suggestion and e.suggestion in KIND_UNITS.get(kind, []):
                num = re.match(r"[+-]?[\d_]+(\.\d+)?", v.text).group(0)
                help_ = f"did you mean `{num}{e.suggestion}`? " + help_
                fixes = [Fix(f"use `{e.suggestion}`", (Edit(v.span, num + e.suggestion),), "safe")]
            self.error(codes.WRONG_UNIT, str(e), v.span, help=help_, fixes=fixes)
            return _BAD
        if q.kind != kind:
            self.error(
                codes.WRONG_UNIT, f"`{key}` needs {KIND_NOUN.get(kind, kind)}, found {KIND_NOUN[q.kind]} `{v.text}`",
                v.span, help=f"units for {KIND_NOUN.get(kind, kind)}: {', '.join(KIND_UNITS.get(kind, []))}",
            )
            return _BAD
        if self.too_big(v, q.value, key):
            return _BAD
        val = q.canonical()
        if integral and not isinstance(val, int):
            # `1.2k` = 1228.8 tokens: token counts round to the nearest token
            val = int(q.value.to_integral_value(rounding="ROUND_HALF_UP"))
        return val

    def too_big(self, v: ast.Value, value: Decimal, key: str) -> bool:
        """Report SN2009 and return True when ``|value|`` exceeds :data:`MAX_MAGNITUDE`.

        Compares digit counts before values, so a literal with a million digits
        costs no arithmetic (Decimal's context would overflow on it).
        """
        if value.is_zero() or value.adjusted() < 15 or value.adjusted() == 15 and abs(value) <= MAX_MAGNITUDE:
            return False
        raw = getattr(v, "text", None) or f'"{getattr(v, "value", "")}"'
        shown = raw if len(raw) <= 24 else raw[:12] + "…" + raw[-6:]
        self.error(codes.OUT_OF_RANGE, f"`{key}` = `{shown}` is too large: values are limited to 2^53 - 1 "
                   f"({MAX_MAGNITUDE:,}) in their base unit", v.span,
                   help="check for extra digits or a wrong unit")
        return True

    def too_long(self, v: ast.Value, key: str, limit: int, why: str) -> bool:
        """Report SN2009 and return True when string, name or list item ``v`` is longer than
        ``limit`` characters (:data:`MAX_STRING_CHARS` unless the field declares ``max_chars``);
        ``why`` is the help line naming the limit.  The text is never repeated in the message
        (it may be megabytes)."""
        items = v.items if isinstance(v, ast.ListLit) else v.args if isinstance(v, ast.Call) else (v,)
        for x in items:
            text = x.value if isinstance(x, ast.Str) else x.name if isinstance(x, ast.Ident) else None
            if text is not None and len(text) > limit:
                self.error(codes.OUT_OF_RANGE, f"`{key}` is {len(text):,} characters long; it takes at most {limit:,}",
                           x.span, help=why)
                return True
        return False

    def bad(self, v: ast.Value, expected: str, where: str, key: str):
        if isinstance(v, ast.QuantityLit) and expected in ("an integer", "a number"):
            try:
                q = parse_quantity(v.text)
                found = f"{KIND_NOUN[q.kind]} `{v.text}`"
            except UnitError:
                found = f"`{v.text}`"
            self.error(codes.WRONG_UNIT, f"`{key}` takes {expected} without a unit, found {found}", v.span)
            return _BAD
        text = v.value if isinstance(v, ast.Str) else v.name if isinstance(v, ast.Ident) else None
        modes = m.Graph.model_fields["mode"].json_schema_extra or {}
        if key == "graph_mode" and text in (modes.get("choices") or ()):
            # a graph mode written where the on/off switch goes: the mode is the plan's `graph { mode }`
            help_ = (f"`graph_mode` turns graphs on or off (`true` / `false`); the kind of graph goes in the plan's "
                     f"`graph {{ mode = {text} }}` block")
        else:
            help_ = f"write {expected} here (`sncc explain SN2004` lists the value kinds)"
        self.error(codes.INVALID_VALUE, f"`{key}` in `{where}` takes {expected}, found {_value_noun(v)}", v.span,
                   help=help_)
        return _BAD

    # --- blocks -----------------------------------------------------------
    def block(self, cls: type[m.Node], b: ast.Block, where: str) -> tuple[dict, Meta]:
        """(data, Meta) of block ``b`` read as ``cls`` (``where``: its dotted path, ``plan`` at the
        top); errors are recorded, never raised."""
        self._where.append(where)
        self._keys.append(None)
        try:
            return self._block(cls, b, where)
        finally:
            self._where.pop()
            self._keys.pop()

    def _block(self, cls: type[m.Node], b: ast.Block, where: str) -> tuple[dict, Meta]:
        data: dict[str, Any] = {}
        meta = Meta(block_span=b.span, name_span=b.name_span)
        fields = cls.model_fields
        if cls.label_field:
            if b.label is None:
                meta.failed.add(cls.label_field)  # reported here; not again as a missing key
                self.error(codes.MISSING_KEY, f"`{where}` needs a name: `{b.name} \"...\" {{ }}`", b.name_span,
                           help=f"e.g. {b.name} \"{'deepseek-r1' if b.name == 'model' else 'omni-infer' if b.name == 'engine' else 'my-plan'}\" {{ ... }}")
            else:
                info = fields[cls.label_field]
                val = self.convert(_field_kind(info), info, b.label, where, cls.label_field)
                if val is not _BAD:
                    data[cls.label_field] = val
                    meta.values[cls.label_field] = b.label.span
                else:
                    meta.failed.add(cls.label_field)
        elif b.label is not None:
            self.error(codes.SYNTAX_ERROR, f"`{b.name}` blocks take no name", b.label.span,
                       help=f"write `{b.name} {{ ... }}`",
                       fixes=[Fix("remove the name", (Edit(b.label.span, ""),), "safe")])
        seen: dict[str, Span] = {}
        settable = settable_fields(cls)
        for item in b.items:
            if isinstance(item, ast.Block):
                name, span = item.name, item.name_span
            else:
                name, span = item.key.text, item.key.span
            self._keys[-1] = name
            if name in seen:
                self.error(codes.DUPLICATE_KEY, f"`{name}` is given twice in `{where}`", span,
                           related=[Related(seen[name], "first given here")], help="remove one of them")
                continue
            seen[name] = span
            if cls is m.Plan and isinstance(item, ast.Block) and name == "slo":
                data["slo"], meta.children["slo"] = self.slo(item)
                continue
            if isinstance(item, ast.Block) and name in fields and _field_kind(fields[name]) == "env-map":
                data[name], meta.children[name] = self.env_block(item)
                continue
            if name not in fields or (name in _HIDDEN and _field_kind(fields[name]) != "env-map") or name == cls.label_field:
                self.unknown(name, span, where, settable, isinstance(item, ast.Block), cls=cls, meta=meta)
                continue
            info = fields[name]
            sub = _submodel(info)
            if sub is not None:
                if not isinstance(item, ast.Block):
                    self.error(codes.INVALID_VALUE, f"`{name}` is a block: write `{name} {{ ... }}`", item.span)
                    continue
                data[name], meta.children[name] = self.block(sub, item, f"{where}.{name}" if cls is not m.Plan else name)
                continue
            if isinstance(item, ast.Block):
                self.error(codes.INVALID_VALUE, f"`{name}` is a value, not a block: write `{name} = ...`", item.name_span)
                continue
            if isinstance(item, ast.Comparison):
                # reported, then read as an assignment so that one typo does not cascade
                self.error(codes.SYNTAX_ERROR, f"use `=` to set `{name}`; comparisons belong in `slo`", item.op_span,
                           fixes=[Fix("use `=`", (Edit(item.op_span, "="),), "safe")])
            if len(item.key.parts) > 1:
                self.unknown(name, span, where, settable, False, cls=cls, meta=meta)
                continue
            val = self.convert(_field_kind(info), info, item.value, where, name)
            if val is not _BAD:
                data[name] = val
                meta.values[name] = item.value.span
                meta.keys[name] = item.key.span
                if isinstance(item.value, (ast.Number, ast.QuantityLit)):
                    meta.written[name] = item.value.text
                if isinstance(item.value, ast.QuantityLit) and item.value.text.endswith("%"):
                    meta.percent.add(name)
            else:
                meta.failed.add(name)
        return data, meta

    def unknown(self, name: str, span: Span, where: str, candidates: list[str], is_block: bool,
                cls: type[m.Node] | None = None, meta: Meta | None = None) -> None:
        """SN2001 (SN2006 for a plan-level block) for ``name``, which the block does not define.

        An engine's spelling of a plan key (:func:`engine_alias`, ``tensor_parallel_size``) is
        named as such; a close misspelling is suggested.  Either way the key it stands for, when
        this block has it, joins ``meta.failed``: it is poisoned (:meth:`sncc.plan.model.Node.poison`),
        so no check reasons from its default."""
        code = codes.UNKNOWN_BLOCK if (is_block and where == "plan") else codes.UNKNOWN_KEY
        what = "block" if is_block else "key"
        alias = None if is_block else engine_alias(name)
        if alias is not None:
            help_, target = _alias_help(name, alias, cls, candidates)
            fixes = [Fix(f"rename to `{target}`", (Edit(span, target),), "safe")] if target else []
        elif not is_block and (homes := _blocks_holding(name, cls)):
            # a key of another block (`optimize { prefix_caching }`): a rename to a look-alike here
            # (`prefix_cache_hit`) would change the meaning, so no fix
            target, fixes = None, []
            blocks = ", ".join(f"`{h}`" for h in homes[:-1]) + (" and " if len(homes) > 1 else "") + f"`{homes[-1]}`"
            help_ = f"`{name}` is a key of {blocks}: move it there"
        else:
            close = _suggest(name, candidates)
            target = close[0] if len(close) == 1 and not is_block else None
            fixes = [Fix(f"rename to `{close[0]}`", (Edit(span, close[0]),), "safe")] if len(close) == 1 else []
            help_ = f"did you mean `{close[0]}`?" if close else "known keys: " + ", ".join(f"`{c}`" for c in candidates)
        if target and meta is not None and cls is not None and _submodel(cls.model_fields[target]) is None:
            meta.failed.add(target)  # the file meant to set it: no check runs on its default
        self.error(code, f"unknown {what} `{_clip(name)}` in `{where}`", span, help=help_, fixes=fixes)

    def slo(self, b: ast.Block) -> tuple[list[dict], Meta]:
        targets: list[dict] = []
        meta = Meta(block_span=b.span, name_span=b.name_span)
        seen: dict[str, Span] = {}
        for item in b.items:
            if isinstance(item, ast.Block):
                self.error(codes.INVALID_VALUE, "`slo` holds comparisons like `ttft < 2s`, not blocks", item.name_span)
                continue
            if isinstance(item, ast.Assignment):
                self.error(codes.SYNTAX_ERROR, f"write the target as a comparison: `{item.key.text} < ...`", item.span,
                           help="SLO targets are `ttft < 2s`, `tpot < 50ms`, `qpm >= 600`")
                continue
            parts = item.key.parts
            metric = parts[0]
            stat = parts[1] if len(parts) > 1 else "mean"
            if metric not in m.SLO_METRICS or len(parts) > 2:
                close = _suggest(metric, list(m.SLO_METRICS))
                self.error(codes.UNKNOWN_KEY, f"unknown SLO metric `{item.key.text}`", item.key.span,
                           help=(f"did you mean `{close[0]}`? " if close else "") + "metrics: " + ", ".join(f"`{k}`" for k in m.SLO_METRICS))
                continue
            allowed = SLO_METRIC_STATS.get(metric, m.SLO_STATS)
            if stat not in m.SLO_STATS and len(allowed) > 1:
                self.error(codes.UNKNOWN_KEY, f"unknown statistic `{stat}` for `{metric}`", item.key.span,
                           help="statistics: " + ", ".join(f"`{s}`" for s in allowed))
                continue
            if stat not in allowed:
                # the simulator judges rates by one figure (sncc.sim.engine.metrics.evaluate_slo); a
                # percentile written here would be accepted and silently judged as that figure
                at = Span(item.key.span.file, item.key.span.start + len(metric), item.key.span.end)
                if metric == "tokens_per_s_per_user":
                    msg = f"`{metric}` is judged by its mean over requests; its `{stat}` is not evaluated"
                    q = 100 - int(stat[1:]) if re.fullmatch(r"p\d{1,2}", stat) else None
                    help_ = f"write `{metric} >= X` for the mean"
                    if q is not None and f"p{q}" in m.SLO_STATS:
                        # per request, tokens/s = 1/TPOT: its pN is 1 / TPOT's p(100-N)
                        help_ += (f", or bound the per-request rate through TPOT (tokens/s per user = 1/TPOT): "
                                  f"`{metric}.{stat} >= X` is `tpot.p{q} <= 1/X`")
                else:
                    msg = f"`{metric}` is a rate, judged as one figure per run; it has no `{stat}`"
                    help_ = f"write `{metric} {item.op} ...` without a statistic"
                self.error(codes.UNKNOWN_KEY, msg, at, help=help_,
                           fixes=[Fix(f"judge the {'mean' if metric == 'tokens_per_s_per_user' else 'rate'}",
                                      (Edit(at, ""),), "unsafe")])
                continue
            label = item.key.text
            if label in seen:
                self.error(codes.DUPLICATE_KEY, f"`{label}` is given twice in `slo`", item.key.span,
                           related=[Related(seen[label], "first given here")])
                continue
            seen[label] = item.key.span
            kind = m.SLO_METRICS[metric][0]
            unit = m.SLO_UNITS.get(metric)
            if isinstance(item.value, ast.Number) and metric in m.SLO_MS_FROM and item.value.value >= m.SLO_MS_FROM[metric]:
                unit = "ms"
            val = self.convert(kind, None, item.value, "slo", metric, unit=unit)
            if val is _BAD:
                continue
            if item.op == "==":
                self.error(codes.INVALID_VALUE, "an SLO is a bound: use `<`, `<=`, `>` or `>=`", item.op_span)
                continue
            lower_is_better = kind == "duration"
            if lower_is_better != (item.op in ("<", "<=")):
                self.error(codes.INVALID_VALUE,
                           f"`{metric}` is a {'latency: bound it from above with `<`' if lower_is_better else 'rate: bound it from below with `>=`'}",
                           item.op_span)
                continue
            if val <= 0:
                self.error(codes.OUT_OF_RANGE, f"the `{label}` target must be positive", item.value.span)
                continue
            targets.append({"metric": metric, "stat": stat, "op": item.op, "target": float(val),
                            "span": item.span, "metric_span": item.key.span})
        return targets, meta

    def env_block(self, b: ast.Block) -> tuple[dict, Meta]:
        data: dict[str, str] = {}
        meta = Meta(block_span=b.span, name_span=b.name_span)
        for item in b.items:
            if not isinstance(item, ast.Assignment) or len(item.key.parts) != 1:
                self.error(codes.INVALID_VALUE, "`env` holds `NAME = value` lines", getattr(item, "span", b.span))
                continue
            name = item.key.text
            if looks_like_secret(name):
                self.error(codes.LITERAL_SECRET, "an `env` variable name looks like a credential", item.key.span,
                           help="name the variable (`GATEWAY_API_KEY`), and keep its value out of the plan")
                continue
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                self.error(codes.INVALID_VALUE, f"`{name}` is not a valid environment variable name", item.key.span)
                continue
            if name in data:
                self.error(codes.DUPLICATE_KEY, f"`{name}` is given twice in `env`", item.key.span,
                           related=[Related(meta.keys[name], "first given here")])
                continue
            v = item.value
            if self.too_long(v, name, MAX_ENV_VALUE_CHARS, "an environment value is limited to 131,071 characters "
                             "(Linux MAX_ARG_STRLEN): pass a long configuration as a file path"):
                continue
            if isinstance(v, ast.Number):
                if self.too_big(v, v.value, name):  # the checks read numeric env values as numbers
                    continue
                data[name] = v.text
            elif isinstance(v, ast.Str):
                if self.scan_secret(v, name):
                    continue
                if _NUMERIC.fullmatch(v.value.strip()) and self.too_big(v, parse_number(v.value.strip()), name):
                    continue  # `"1000…0"` is read as a number by the checks, like `1000…0`
                data[name] = v.value
            elif isinstance(v, ast.Ident):
                if self.scan_secret(v, name):  # `KEY = sk-abc…` unquoted is a NAME token
                    continue
                data[name] = v.name
            elif isinstance(v, ast.QuantityLit):
                if self.too_big(v, parse_number(re.match(r"[+-]?[\d_]+(\.\d+)?", v.text).group(0)), name):
                    continue
                data[name] = v.text
            else:
                self.error(codes.INVALID_VALUE, f"`{name}` takes a number or a string", v.span)
                continue
            meta.values[name] = v.span
            meta.keys[name] = item.key.span
        return data, meta


def _aliases() -> dict:
    """``sncc/plan/data/engine_aliases.toml``'s table, read once (on the first unknown key)."""
    global _ALIASES
    if _ALIASES is None:
        from importlib.resources import files

        try:
            import tomllib as toml
        except ImportError:  # Python 3.10
            import tomli as toml  # type: ignore[no-redef]
        _ALIASES = toml.loads(files("sncc.plan").joinpath("data", "engine_aliases.toml").read_text("utf-8"))["aliases"]
    return _ALIASES


_ALIASES: dict | None = None


def engine_alias(name: str) -> dict | None:
    """The alias entry of an engine's spelling ``name`` (dashes read as underscores), or None."""
    key = name.replace("-", "_")
    entry = _aliases().get(key)
    if entry is None and key != name:
        return {"key": key, "engine": "the engine", "dashed": True}
    return entry


def _blocks_holding(name: str, cls) -> list[str]:
    """The plan-level blocks (``prefill``, ``decode``, ``serve``, ``model``, ...) whose keys include
    ``name``, other than a ``cls`` block: where a key written in the wrong block belongs (not
    ``search``, whose keys are lists of the values searched)."""
    out = []
    for field_name, f in m.Plan.model_fields.items():
        sub = _submodel(f)
        if sub is not None and sub is not cls and sub is not m.Search and name in settable_fields(sub) and _submodel(sub.model_fields[name]) is None:
            out.append(field_name)
    return out


def _alias_help(name: str, alias: dict, cls, candidates: list[str]) -> tuple[str, str | None]:
    """(help text, the key of this block to rename to or None) for an engine alias."""
    keys = [alias["key"], *alias.get("also", [])]
    block = alias.get("block")
    here = block is None or (block == "role" and cls is m.Role) or (cls is not None and cls.__name__.lower() == block.replace("_", ""))
    target = next((k for k in keys if k in candidates), None) if here else None
    engine = alias["engine"]
    if alias.get("dashed"):
        help_ = f"keys are spelt with underscores: `{alias['key']}`" if target else f"`{name}` is not a key here either"
    elif target:
        help_ = f"{engine}'s `{name}` is `{target}` here"
    else:
        where = {"role": "a `prefill`, `decode` or `serve` block", None: "another block"}.get(block, f"`{block} {{ }}`")
        help_ = f"{engine}'s `{name}` is `{alias['key']}` in {where}"
    if alias.get("note"):
        help_ += f" ({alias['note']})"
    return help_, target


_BAD = object()
#: a plain number (the grammar's NUMBER), as a string env value may hold one
_NUMERIC = re.compile(r"[+-]?\d[\d_]*(\.\d+)?")
_HIDDEN = {"slo", "env"}


def settable_fields(cls) -> list[str]:
    """The keys and blocks a ``cls`` block may hold, in field order: every field but the label,
    the hidden ones (:data:`_HIDDEN`) only as the block they are written as (an ``env { }`` map,
    the plan's ``slo { }``).  The builder's list of what it accepts, and the language server's
    completion of keys (:func:`sncc.lsp.features._settable`)."""
    fields = cls.model_fields
    return [n for n in fields if n != cls.label_field
            and (n not in _HIDDEN or _field_kind(fields[n]) == "env-map" or (cls is m.Plan and n == "slo"))]


def _meta_at(meta: Meta, loc: tuple) -> tuple[Meta, str | None]:
    cur = meta
    for i, part in enumerate(loc):
        if isinstance(part, str) and part in cur.children:
            cur = cur.children[part]
        else:
            return cur, part if isinstance(part, str) else None
    return cur, None


def _field_loc(meta: Meta, loc: tuple) -> tuple:
    """``loc`` cut after the key :func:`_meta_at` names: a union-typed value's errors carry the
    branch as a last part (``("max_model_len", "int")``); its field is the key before it."""
    cur = meta
    for i, part in enumerate(loc):
        if isinstance(part, str) and part in cur.children:
            cur = cur.children[part]
        else:
            j = i + 1
            while j < len(loc) and isinstance(loc[j], int):     # list items keep their index
                j += 1
            return loc[:j]
    return loc


def _one_error_per_field(meta: Meta, errors: list) -> list:
    """pydantic's errors with one per field: a value of a union type (``int | "auto"``) fails
    every branch, and only the branch the value was written for says what is wrong — a range
    error over a type error (``max_model_len = 0``: "must be at least 1", not "Input should be
    'auto'").  The kept error's ``loc`` is the field's, so it can be dropped."""
    by_field: dict = {}
    for err in errors:
        loc = tuple(err["loc"])
        key = _field_loc(meta, loc)
        prev = by_field.get(key)
        if prev is None or (err["type"] in _RANGE_WORDS and prev["type"] not in _RANGE_WORDS):
            by_field[key] = dict(err, loc=key) if err["type"] != "missing" else err
    return list(by_field.values())


def _drop(data: dict, loc: tuple) -> bool:
    cur: Any = data
    for part in loc[:-1]:
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and isinstance(part, int) and part < len(cur):
            cur = cur[part]
        else:
            return False
    last = loc[-1] if loc else None
    if isinstance(cur, dict) and last in cur:
        del cur[last]
        return True
    return False


def _attach(node: BaseModel, meta: Meta) -> None:
    if isinstance(node, m.Node):
        node._block_span = meta.block_span
        node._name_span = meta.name_span
        node._value_spans = dict(meta.values)
        node._value_texts = {k: v for k, v in meta.written.items() if k not in meta.failed}
        node._key_spans = dict(meta.keys)
        node._invalid = frozenset(meta.failed)
        for name in meta.failed:
            node.poison(name)
    for name, child_meta in meta.children.items():
        child = getattr(node, name, None)
        if isinstance(child, BaseModel):
            _attach(child, child_meta)
    if isinstance(node, m.Node):
        env_meta = meta.children.get("env")
        if env_meta:
            node._env_spans = dict(env_meta.values)
            node._env_key_spans = dict(env_meta.keys)
    if isinstance(node, m.Plan):
        slo_meta = meta.children.get("slo")
        if slo_meta:
            node._slo_span = slo_meta.name_span


def _ratio_help(got, as_percent: bool, shown: str | None = None) -> str | None:
    """Help for a ratio field (at most 1) written above its bound: a bare number from 2 to 100
    was most likely meant as a percentage (``90`` → ``0.9``, ``90%``), so that is suggested; a
    value written as a percentage (``150%``) or a bare number below 2 (``1.5``) has no plausible
    reading in range, so the help states the bound instead.  Returns None when ``got`` is not a
    number."""
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return None
    if as_percent:
        # told in the unit the plan wrote: `150%` is over 100%, not "at most 1"
        written = shown if shown is not None else f"{got * 100:g}%"
        return f"{written} is over 100%: write a percentage such as `90%` (or a fraction such as `0.9`)"
    if 2 <= got <= 100:
        return f"a ratio is a fraction: did you mean `{got / 100:g}` (or `{got:g}%`)?"
    return "a ratio is at most 1 (100%): write a fraction such as `0.9` or a percentage such as `90%`"


def _bound_text(x, as_percent: bool) -> str:
    """A range error's bound as the plan's value is written: ``100%`` for a ratio field's ``1``
    when the value was written as a percentage, else :func:`_number_text`."""
    if as_percent and isinstance(x, (int, float)) and not isinstance(x, bool):
        return f"{x * 100:g}%"
    return _number_text(x)


def _number_text(x) -> str:
    """A number of a message as a person writes it: ``0`` and ``600`` for the floats ``0.0`` and
    ``600.0`` a float field holds, ``0.5`` for ``0.5``; anything else as ``str``."""
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return str(x)


_RANGE_WORDS = {
    "greater_than_equal": "at least {ge}", "greater_than": "greater than {gt}",
    "less_than_equal": "at most {le}", "less_than": "less than {lt}",
}


def is_definitions(module: ast.Module) -> bool:
    """True for a definitions file: top-level blocks, none of them ``plan``."""
    return bool(module.blocks) and not any(blk.name == "plan" for blk in module.blocks)


def check_definitions(b: "_Builder", module: ast.Module) -> dict[str, m.Node]:
    """Check the top-level blocks of a definitions file (one without ``plan``):
    each must be a block a plan may hold, with known keys and valid values (the typed-plan
    validation a plan importing it runs: types, units, enum names, ranges, at the same
    positions with the same codes).  Required keys are not demanded: the importing plan may
    supply them.  Returns ``{block name: typed node}`` of the blocks that validated."""
    fields = m.Plan.model_fields
    names = [n for n in fields if n not in ("name",)]
    seen: dict[str, Span] = {}
    nodes: dict[str, m.Node] = {}
    for blk in module.blocks:
        if blk.name in seen:
            b.error(codes.DUPLICATE_KEY, f"`{blk.name}` is defined twice in this file", blk.name_span,
                    related=[Related(seen[blk.name], "first defined here")])
            continue
        seen[blk.name] = blk.name_span
        if blk.name == "slo":
            b.slo(blk)
            continue
        if blk.name == "env":
            b.env_block(blk)
            continue
        sub = _submodel(fields[blk.name]) if blk.name in fields else None
        if sub is None:
            b.unknown(blk.name, blk.name_span, "plan", names, True)
            continue
        data, meta = b.block(sub, blk, blk.name)
        node = _validate(b, sub, data, meta, blk.name_span, prefix=(blk.name,), require=False)
        if node is not None:
            _attach(node, meta)
            nodes[blk.name] = node
    return nodes


def build_definitions(module: ast.Module) -> tuple[dict[str, m.Node], list[Diagnostic]]:
    """``({block name: typed node}, diagnostics)`` of a definitions file (:func:`check_definitions`)."""
    b = _Builder()
    nodes = check_definitions(b, module)
    return nodes, b.diags


def _validate(b: "_Builder", cls: type[m.Node], data: dict, meta: Meta, block_span: Span,
              prefix: tuple = (), require: bool = True):
    """Validate ``data`` (read by :meth:`_Builder.block`) as ``cls``; each value pydantic rejects
    (out of range: SN2009, else SN2004) is reported at its span and dropped, and validation
    re-run, so that every bad value is reported once.  ``prefix`` is the path of ``cls`` in a
    plan (``("hardware",)`` for a definitions file's block, ``()`` for the plan).  A missing
    required key is SN2002 when ``require``, else ignored (the node is then None).  Returns the
    node, or None."""
    dropped: set[tuple] = set()
    missing_reported: set[tuple] = set()  # validation is re-run after a drop: report each missing key once
    for _ in range(8):
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            progressed = False
            for err in _one_error_per_field(meta, exc.errors()):
                rel = tuple(err["loc"])
                loc = prefix + rel
                where_meta, fname = _meta_at(meta, rel)
                where = ".".join(str(p) for p in loc[:-1]) or "plan"
                if err["type"] == "missing":
                    if (not require or any(loc[: len(d)] == d for d in dropped) or loc[-1] in where_meta.failed
                            or loc in missing_reported):
                        continue
                    missing_reported.add(loc)
                    name = loc[-1]
                    hint = _engine_help(data) if loc == ("engine",) else None
                    b.error(codes.MISSING_KEY, f"missing `{name}` in `{where}`",
                            where_meta.name_span or block_span,
                            help=hint or _MISSING_HELP.get(str(name), f"add `{name} = ...`"), path=loc)
                    continue
                span = where_meta.values.get(fname) if fname else None
                ctx = err.get("ctx") or {}
                if err["type"] in _RANGE_WORDS:
                    # a ratio written as a percentage (`150%`) is told its bound in percent
                    as_percent = bool(fname) and loc[-1] == fname and fname in where_meta.percent
                    bound = _RANGE_WORDS[err["type"]].format(
                        **{k: _bound_text(ctx.get(k), as_percent) for k in ("ge", "gt", "le", "lt")})
                    notes = ["engines hold token and sequence counts as 32-bit integers (vLLM's InputBatch), "
                             f"so {m.INT32_MAX:,} is the largest they accept"] if ctx.get("le") == m.INT32_MAX else []
                    got = err.get("input")
                    # the value as the plan writes it (`0`, `150%`), not as the float field holds it (`0.0`)
                    shown = where_meta.written.get(fname) if fname and loc[-1] == fname else None
                    help_ = (_ratio_help(got, as_percent, shown)
                             if ctx.get("le") == 1 and err["type"] == "less_than_equal" else None)
                    b.error(codes.OUT_OF_RANGE, f"`{fname}` in `{where}` must be {bound}, found `{shown or _number_text(got)}`",
                            span or where_meta.name_span, notes=notes, help=help_, path=loc)
                else:
                    msg = err["msg"].removeprefix("Value error, ")  # a model validator's own sentence
                    b.error(codes.INVALID_VALUE, f"invalid `{fname}` in `{where}`: {msg}", span or where_meta.name_span,
                            path=loc)
                if _drop(data, rel):
                    dropped.add(loc)
                    progressed = True
                    if fname:
                        where_meta.failed.add(fname)  # written but rejected: poisoned (Node.poison)
            if not progressed:
                break
    return None


def build_plan(module: ast.Module) -> tuple[m.Plan | None, list[Diagnostic]]:
    """Turn a parsed module into a typed :class:`~sncc.plan.model.Plan`.

    Returns ``(plan, diagnostics)``.  ``plan`` is None when the file holds no
    plan or a required block or key is missing.
    """
    if is_definitions(module):
        # a definitions file (imported by plans): check each block on its own
        return None, build_definitions(module)[1]
    b = _Builder()
    plans = [blk for blk in module.blocks if blk.name == "plan"]
    for blk in module.blocks:
        if blk.name != "plan":
            close = _suggest(blk.name, ["plan"])
            b.error(codes.UNKNOWN_BLOCK, f"unknown top-level block `{blk.name}`", blk.name_span,
                    help="a plan file holds one `plan \"name\" { ... }` block, and shared definitions"
                         " go in a file that plans `import`" + (" (did you mean `plan`?)" if close else ""))
    if not plans:
        b.error(codes.MISSING_KEY, "the file holds no plan", Span(module.span.file, 0, 0),
                help='start with `plan "my-plan" { ... }`')
        return None, b.diags
    for extra in plans[1:]:
        b.error(codes.DUPLICATE_KEY, "a file holds one plan; this is a second one", extra.name_span,
                related=[Related(plans[0].name_span, "first plan here")], help="put each plan in its own file")
    blk = plans[0]
    data, meta = b.block(m.Plan, blk, "plan")
    plan = _validate(b, m.Plan, data, meta, blk.name_span)
    if plan is None:
        return None, b.diags
    _attach(plan, meta)
    _check_secret_env(b, plan, meta)
    _require_acceptance(b, plan)
    _connector_choices(b, plan)
    return plan, b.diags


def _connector_choices(b: "_Builder", plan: m.Plan) -> None:
    """An invalid ``kv_transfer.connector`` (SN2004) gets the connectors the plan's engine release
    builds for its roles in its help, and those it has but sncc has no launch facts for, marked
    (the adapter's :class:`~sncc.engines.base.ConnectorOffer`, the list SN3008's help shows), in
    place of every connector id the language knows; the "did you mean" and its fix stay."""
    idx = [i for i, d in enumerate(b.diags) if d.code is codes.INVALID_VALUE and d.path == ("kv_transfer", "connector")]
    if not idx:
        return
    import dataclasses

    from sncc.facts import connector_offer

    offer = connector_offer(plan)
    if offer is None:
        return
    for i in idx:
        d = b.diags[i]
        near = d.help.partition("? ")[0] + "? " if d.help and d.help.startswith("did you mean") else ""
        b.diags[i] = dataclasses.replace(d, help=near + offer.help() + "; `none` writes no kv_transfer_config")


def _secret_refs(node: BaseModel, out: dict[str, Span]) -> dict[str, Span]:
    """``{variable: span}`` of every ``env("NAME")`` a secret field (kind ``secret``) of
    ``node`` or its sub-blocks reads."""
    for name, info in type(node).model_fields.items():
        value = getattr(node, name, None)
        if isinstance(value, m.EnvRef) and _field_kind(info) == "secret" and isinstance(node, m.Node):
            out.setdefault(value.name, node.span_of(name))
        elif isinstance(value, BaseModel):
            _secret_refs(value, out)
    return out


def _env_keys(meta: Meta, out: list[Span]) -> list[tuple[str, Span]]:
    """(name, key span) of every ``env { }`` entry in ``meta``'s tree (plan and role env blocks)."""
    found: list[tuple[str, Span]] = []
    for child_name, child in meta.children.items():
        if child_name == "env":
            found += list(child.keys.items())
        else:
            found += _env_keys(child, out)
    return found


def _check_secret_env(b: _Builder, plan: m.Plan, meta: Meta) -> None:
    """SN2007 on an ``env`` entry that sets a variable a secret reference reads: the plan
    would carry the secret's literal value, and env.sh would export it."""
    refs = _secret_refs(plan, {})
    if not refs:
        return
    for name, span in _env_keys(meta, []):
        if name in refs:
            b.error(codes.LITERAL_SECRET, f"`env` sets `{name}`, the variable a secret is read from",
                    span, related=[Related(refs[name], "the secret reference")],
                    help=f"remove `{name}` from `env` and export it in the serving environment, outside the plan",
                    notes=["the plan and env.sh would hold the secret's literal value"])


def _require_acceptance(b: "_Builder", plan: m.Plan) -> None:
    """SN2005 for a speculative block that is on (``method`` not ``none``) with no ``acceptance``
    of its own or, for a role's block, from the plan-level block it overrides."""
    top = plan.speculative
    if top is not None and top.method != "none" and top.acceptance is None and not top.written("acceptance"):
        b.error(codes.MISSING_KEY, "missing `acceptance` in `speculative`", top.name_span,
                help=_MISSING_HELP["acceptance"])
    for name, role in plan.roles():
        sp = role.speculative
        if sp is None or sp.acceptance is not None or sp.written("acceptance"):
            continue
        method = sp.method if sp.written("method") or top is None else top.method
        if method == "none" or (top is not None and top.acceptance is not None):
            continue
        b.error(codes.MISSING_KEY, f"missing `acceptance` in `{name}.speculative`", sp.name_span,
                help=_MISSING_HELP["acceptance"])


def _engine_help(data: Any) -> str | None:
    """The help of a missing ``engine`` block for the plan's hardware: the first engine kind
    (:data:`sncc.engines.registry.KINDS`) that runs on its system's chip vendor (engines.toml
    ``[engine_hardware.<kind>] vendors``) at its adapter's default pin, e.g.
    ``add `engine "vllm" { version = "0.23.0" }``` on ``hgx-h100``; None when the system is not
    named or not known (the generic help then stands)."""
    from sncc import catalog
    from sncc.catalog.engine_defaults import engine_defaults
    from sncc.engines.registry import KINDS, adapter_for

    hw = data.get("hardware") if isinstance(data, dict) else None
    system = hw.get("system") if isinstance(hw, dict) else None
    if not isinstance(system, str):
        return None
    try:
        vendor = catalog.chip(catalog.system(system).chip).vendor
    except (KeyError, LookupError, AttributeError):
        return None
    rows = engine_defaults().get("engine_hardware", {})
    for kind in KINDS:
        if vendor in (rows.get(kind) or {}).get("vendors", ()):
            return f'add `engine "{kind}" {{ version = "{adapter_for(kind).default_version}" }}`'
    return None


_MISSING_HELP = {
    "model": 'add `model "deepseek-r1" { weights = "/data/models/..." }`',
    "hardware": 'add `hardware { system = "atlas-900-a3-superpod"  nodes = 11  cann = "8.2.RC1" }`',
    "engine": 'add `engine "vllm-ascend" { version = "v0.11.0" }`',
    "workload": "add `workload { input { mean = 3.5k  max = 16k }  output { mean = 1.2k  max = 32k } }`",
    "devices": "add `devices = N`: the devices of one instance",
    "acceptance": "add `acceptance = 0.7`: the measured draft acceptance rate",
    "input": "add `input { mean = 3.5k  max = 16k }`",
    "output": "add `output { mean = 1.2k  max = 32k }`",
}



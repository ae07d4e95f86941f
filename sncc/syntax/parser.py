"""Parse plan text with Lark (LALR, contextual lexer, positions kept) and turn
Lark's exceptions into :class:`~sncc.diagnostics.Diagnostic` values.

The grammar ships as package data (``grammar/sncc.lark`` in the repository,
``sncc/_grammar/sncc.lark`` in a wheel) and is built once per process.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import re

from sncc.diagnostics import codes
from sncc.diagnostics.model import Diagnostic, Related, diag
from sncc.source import SourceFile

#: How terminals are named in "expected ..." messages.
TERMINAL_NAMES = {
    "NAME": "a key or identifier",
    "STRING": "a string",
    "NUMBER": "a number",
    "QUANTITY": "a quantity like `2s` or `16k`",
    "LBRACE": "`{`",
    "RBRACE": "`}`",
    "EQUAL": "`=`",
    "COMPARE": "a comparison (`<`, `<=`, `>`, `>=`)",
    "LPAR": "`(`",
    "RPAR": "`)`",
    "LSQB": "`[`",
    "RSQB": "`]`",
    "COMMA": "`,`",
    "DOT": "`.`",
    "_SEP": "`;`",
    "SEMICOLON": "`;`",
    "$END": "end of file",
}


def _cache_file(grammar: str) -> str | None:
    """Path of the pickled-parser cache for ``grammar`` in the user's sncc cache
    directory (:func:`sncc.cache.cache_dir`), or None when caching is off."""
    import os

    from sncc.cache import cache_dir, key_of

    base = cache_dir()
    if base is None:
        return None
    try:
        import lark

        return os.path.join(base, f"lark-lalr-{key_of(grammar, lark.__version__)}.pickle")
    except Exception:  # noqa: BLE001 - no cache is always fine
        return None


@functools.lru_cache(maxsize=1)
def get_parser():
    """Build the Lark LALR parser once per process.

    Construction analyses the grammar (about 30 ms); the result is cached on
    disk by Lark's ``cache=`` option (:func:`_cache_file`), which checks a hash
    of the grammar, the options, Lark's and Python's versions, and rebuilds on
    any mismatch or unreadable file (loading takes about 2 ms).
    """
    from lark import Lark

    from sncc.resources import grammar_text

    grammar = grammar_text()
    options = dict(parser="lalr", lexer="contextual", propagate_positions=False, maybe_placeholders=True)
    cache = _cache_file(grammar)
    if cache is not None:
        try:
            return Lark(grammar, cache=cache, **options)
        except Exception:  # noqa: BLE001 - a cache problem must not stop a check
            pass
    return Lark(grammar, **options)


def _describe(term: str) -> str:
    return TERMINAL_NAMES.get(term, f"`{term.lower()}`")


def _expected(names) -> str:
    items = sorted({_describe(n) for n in names if not n.startswith("__ANON") and n != "_SEP"})
    if not items:
        return "something else"
    if len(items) > 6:
        items = items[:6] + ["…"]
    return ", ".join(items[:-1]) + (" or " if len(items) > 1 else "") + items[-1]


def _found(tok) -> str:
    if tok.type == "$END":
        return "end of file"
    from sncc.diagnostics.secrets import looks_like_secret

    text = str(tok)
    if looks_like_secret(text):
        return "a credential-like token (not shown)"
    if len(text) > 30:
        text = text[:27] + "..."
    return f"`{text}`"


def parse_tree(source: SourceFile):
    """Parse ``source`` into a Lark tree.

    Returns ``(tree, None)`` or ``(None, diagnostic)``: only the first syntax
    error of a file is reported, since later ones are usually cascades.
    """
    from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

    try:
        return get_parser().parse(source.text), None
    except UnexpectedToken as e:
        tok = e.token
        expected = getattr(e, "accepts", None) or e.expected
        if tok.type == "$END":
            end = len(source.text.rstrip())  # just after the last non-blank character
            found = _unclosed_block(source.text)
            if found is not None:
                opener, closer, outer = found
                name = _block_name(source.text, opener)
                related = [Related(source.span(end, end), "the file ends here")]
                if closer is not None:
                    related.append(Related(source.span(closer, closer + 1),
                                           "this `}` closes it by count, but its indentation is that of an outer block"))
                    related.append(Related(source.span(outer, outer + 1), "so this `{` is left open at the end of the file"))
                return None, diag(
                    codes.UNCLOSED_BLOCK,
                    f"unclosed delimiter: the {name + ' ' if name else ''}block's `{{` is never closed",
                    source.span(opener, opener + 1),
                    related=tuple(related),
                    help=(f"add `}}` where the {name + ' ' if name else ''}block ends"
                          + (f" (the `}}` on line {source.line_col(closer)[0]} now closes it)" if closer is not None
                             else "")),
                )
            return None, diag(
                codes.UNCLOSED_BLOCK,
                f"expected {_expected(expected)}, found end of file",
                source.span(end, end),
                help="complete the item before the end of the file",
            )
        start = tok.start_pos if tok.start_pos is not None else 0
        end = tok.end_pos if tok.end_pos is not None else start + len(str(tok))
        help_ = _token_help(source.text, tok, expected)
        spaced = _spaced_unit(source.text, start)
        if spaced is not None:   # `16 k`: the unit was read as the next key; point at the space
            return None, diag(codes.SYNTAX_ERROR, f"a space splits the quantity `{spaced[2]}`",
                              source.span(spaced[0], spaced[1]),
                              help=f"write quantities without a space: `{spaced[2].replace(' ', '')}`")
        exp = _exponent_number(source.text, start, tok)
        if exp is not None:   # `1e3`: read as the quantity `1e` (unit `e`) and the number `3`
            return None, diag(codes.SYNTAX_ERROR, f"exponent notation is not supported: `{exp[2]}`",
                              source.span(exp[0], exp[1]),
                              help=f"write the number out{exp[3]}, or with a unit: `1k` = 1024 tokens, `1M` = 1048576")
        if help_ is not None:
            pass
        elif tok.type == "EQUAL" and "EQUAL" not in expected:
            help_ = "a key takes one value; separate items with spaces, new lines or `;`"
        elif "EQUAL" in expected and tok.type in ("NUMBER", "QUANTITY", "STRING", "NAME"):
            help_ = "write `key = value`"
        elif tok.type == "COMMA":
            help_ = "items are separated by spaces, new lines or `;`, not `,`"
        elif tok.type == "COMPARE" and "EQUAL" in expected:
            help_ = "use `=` to set a value; comparisons belong in `slo`"
        return None, diag(
            codes.SYNTAX_ERROR,
            f"expected {_expected(expected)}, found {_found(tok)}",
            source.span(start, end),
            help=help_,
        )
    except UnexpectedCharacters as e:
        pos = e.pos_in_stream
        ch = source.text[pos] if pos < len(source.text) else ""
        help_ = None
        if ch == "'":
            help_ = "strings use double quotes: \"like this\""
        elif ch in _CURLY_QUOTES:
            help_ = "use straight quotes: strings are written in plain double quotes `\"like this\"`, not “ ” or ‘ ’"
        elif ch == '"':
            help_ = "a string must end on the line it starts; close it with `\"`"
        elif ch in "@$!&|^~`\\":
            help_ = "remove the character; comments start with `#`"
        elif ch == ":":
            help_ = ("set a value with `=`: `key = value`" + ("; a YAML engine config or a launch script is read with "
                     "`sncc import FILE`" if not _has_plan_block(source.text[:pos]) else ""))
        elif ch == "/":
            help_ = _slo_slash_help(source.text, pos) or (
                "a unit follows its number without a slash of its own: `rate = 4` (requests per second), "
                "`storage_bandwidth = 2GB/s`")
        shown = repr(ch)[1:-1] if ch and not ch.isprintable() else ch
        return None, diag(
            codes.UNEXPECTED_CHARACTER,
            f"unexpected character `{shown}`",
            source.span(pos, pos + 1),
            help=help_,
        )
    except UnexpectedInput as e:  # pragma: no cover - LALR raises the two above
        pos = getattr(e, "pos_in_stream", 0) or 0
        return None, diag(codes.SYNTAX_ERROR, "invalid syntax", source.span(pos, pos + 1))


#: typographic quotes a word processor or chat client substitutes for `"` and `'`
_CURLY_QUOTES = "\u201c\u201d\u201e\u201f\u2018\u2019\u201a\u201b\u00ab\u00bb"

#: an SLO comparison up to a number, at the end of the text before a `/` (`qpm >= 10` of `qpm >= 10/min`)
_SLO_BEFORE_SLASH = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z_0-9]*)(\.[A-Za-z0-9_]+)?[ \t]*(<=|>=|<|>)[ \t]*"
                               r"([0-9][0-9_]*(?:\.[0-9]+)?)([A-Za-z%]*)[ \t]*$")


def _slo_slash_help(text: str, pos: int) -> str | None:
    """The help for a `/` after an SLO target (``qpm >= 10/min``), or None when the text before
    offset ``pos`` is no SLO comparison: a rate SLO is counted per its own unit already, a
    latency SLO takes a duration."""
    from sncc.plan.model import SLO_METRICS, SLO_RATE_PER, SLO_UNITS   # the error path only

    m = _SLO_BEFORE_SLASH.search(text, max(0, pos - 200), pos)
    if m is None or m.end() != pos or m.group(1).lower() not in SLO_METRICS:
        return None
    metric, stat, op, number = m.group(1), m.group(2) or "", m.group(3), m.group(4)
    per = SLO_RATE_PER.get(metric.lower())
    if per is not None:
        what = "QPM" if metric.lower() == "qpm" else f"`{metric}`"
        return f"{what} is per {per} already: write `{metric}{stat} {op} {number}`"
    unit = SLO_UNITS.get(metric.lower(), "s")
    return f"a latency SLO takes a duration, without a slash: `{metric}{stat} {op} {number}{m.group(5) or unit}`"


_SPACED_UNIT = re.compile(r"(?<![\w.])([0-9][0-9_]*(?:\.[0-9]+)?)([ \t]+)([A-Za-z%][A-Za-z%/]*)[ \t]*(?:#[^\n]*)?\n?[ \t]*$")


#: a line that opens a plan block; blanks before it are ``[ \t]*``, not ``\s*``: ``\n\s*`` re-scanned
#: every run of blank lines from each of its newlines (50,000 empty lines took 5 s; found by bench/fuzz.py)
_PLAN_LINE = re.compile(r'^[ \t]*plan\s+"', re.M)


def _has_plan_block(text: str) -> bool:
    """True when ``text`` (the file up to an error) already opened a ``plan`` block."""
    return _PLAN_LINE.search(text) is not None


def _spaced_unit(text: str, start: int) -> tuple[int, int, str] | None:
    """``(start, end, "16 k")`` when the text before offset ``start`` ends in a number, blanks and a
    unit word (``max_num_batched_tokens = 16 k``): the parser took the unit for the next key."""
    m = _SPACED_UNIT.search(text, max(0, start - 200), start)
    if m is None or m.end() != start:
        return None
    return m.start(1), m.end(3), f"{m.group(1)} {m.group(3)}"


_EXPONENT_HEAD = re.compile(r"(?<![\w.])([+-]?[0-9][0-9_]*(?:\.[0-9]+)?[eE])$")


def _exponent_number(text: str, start: int, tok) -> tuple[int, int, str, str] | None:
    """``(start, end, "1e3", ": `1000`")`` when the unexpected number token at ``start`` is the
    exponent of a number in exponent notation (``1e3`` lexes as the quantity ``1e`` and ``3``)."""
    if tok.type != "NUMBER":
        return None
    m = _EXPONENT_HEAD.search(text, max(0, start - 60), start)
    if m is None:
        return None
    written = m.group(1) + str(tok)
    try:
        from decimal import Decimal

        value = Decimal(written.replace("_", ""))
        shown = f": `{value:f}`" if abs(value.adjusted()) <= 15 else ""
    except ArithmeticError:
        shown = ""
    if shown.endswith(".0`") or "." in shown and shown.rstrip("`").rstrip("0").endswith("."):
        shown = shown[:shown.index(".")] + "`"
    return m.start(1), start + len(str(tok)), written, shown


def _token_help(text: str, tok, expected) -> str | None:
    """A help line for an unexpected token that a common slip explains, or None."""
    if tok.type != "NAME":
        return None
    from sncc.plan.model import SLO_METRICS   # the error path only: parsing a good file never imports it

    before = text[max(0, (tok.start_pos or 0) - 40):tok.start_pos or 0]
    word = re.search(r"([A-Za-z_]+)\s+$", before)
    if word and word.group(1).lower() in SLO_METRICS:
        return f"an SLO is `metric.statistic < target`: `{word.group(1)}.{tok} < …`"
    return None


_LINE_END = re.compile(r"[\r\n]")


def _indent_at(text: str, pos: int) -> tuple[int, bool]:
    """(indentation of the line holding ``pos`` in columns, whether ``pos`` is its first non-blank)."""
    start = max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos)) + 1
    head = text[start:pos]
    stripped = head.lstrip(" \t")
    return len(head) - len(stripped), stripped == ""


def _unclosed_block(text: str) -> tuple[int, int | None, int] | None:
    """Where the block that is not closed starts, as rustc finds it: ``(opener, closer, outer)``.

    Braces are matched by count (strings and comments skipped).  A ``}`` that starts its line
    with less indentation than the line of the ``{`` it matches most likely closes an outer block,
    so the block missing its ``}`` is that ``{``'s (``opener``; ``closer`` that ``}``; ``outer``
    the ``{`` the count leaves open at the end of the file).  Without such a pair, the innermost
    ``{`` still open (``closer`` None, ``outer`` = ``opener``).  None when every ``{`` is closed."""
    stack: list[int] = []
    suspect: tuple[int, int] | None = None
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            m = _LINE_END.search(text, i)
            i = n if m is None else m.start()
            continue
        if c == '"':
            i += 1
            while i < n and text[i] not in '"\r\n':
                i += 2 if text[i] == "\\" else 1
        elif c == "{":
            stack.append(i)
        elif c == "}" and stack:
            o = stack.pop()
            if suspect is None:
                col, first = _indent_at(text, i)
                if first and col < _indent_at(text, o)[0]:
                    suspect = (o, i)
        i += 1
    if not stack:
        return None
    if suspect is not None:
        return suspect[0], suspect[1], stack[-1]
    return stack[-1], None, stack[-1]


_BLOCK_HEAD = re.compile(r'([A-Za-z_][A-Za-z0-9_.]*)(?:\s+"[^"\r\n]*")?\s*$')


def _block_name(text: str, brace: int) -> str:
    """``serve``, ``model "qwen3-32b"``: the head of the block whose ``{`` is at ``brace``, or ""."""
    m = _BLOCK_HEAD.search(text, max(0, brace - 200), brace)
    if m is None:
        return ""
    head = m.group(0).strip()
    return f"`{head if len(head) <= 40 else m.group(1)}`"


#: strings, comments and brackets: all :func:`_nesting_overflow` needs to see
_NESTING_TOKENS = re.compile(r'"[^"\\\r\n]*(?:\\[^\r\n][^"\\\r\n]*)*"?|#[^\r\n]*|[{}\[\]()]')


def _nesting_overflow(text: str, limit: int) -> int | None:
    """Offset of the first ``{``, ``[`` or ``(`` opened more than ``limit`` levels deep
    (strings and comments skipped), or None.

    Lark's LALR parser does not recurse, but 100 000 nested blocks still take it
    seconds; a regular-expression scan rejects such a file in milliseconds.
    """
    if text.count("{") + text.count("[") + text.count("(") <= limit:
        return None
    depth = 0
    for m in _NESTING_TOKENS.finditer(text):
        c = m.group()
        if len(c) != 1:
            continue
        if c in "{[(":
            depth += 1
            if depth > limit:
                return m.start()
        elif depth:
            depth -= 1
    return None


#: Most lexical items (tokens and comments) a file may hold.  Issue 5 requires `sncc check`
#: to finish a plan under 1 MB within 2 s; parsing and building the AST take about 7 µs
#: per token on the 2-core reference machine (bench/bench_large_plan.py), so 150 000
#: tokens cost about 1.1 s, leaving room for start-up (~0.5 s).  The largest example plan
#: has about 400 tokens; a 1 MB plan of realistic lines about 80 000.
MAX_TOKENS = 150_000

#: an approximation of the grammar's tokens, for counting them (C speed, ~0.1 s per MB)
_COUNT_TOKENS = re.compile(r'"[^"\\\r\n]*(?:\\[^\r\n][^"\\\r\n]*)*"?|#[^\r\n]*|[A-Za-z_][\w\-]*'
                           r'|[+-]?\d[\d_]*(?:\.\d+)?(?:[A-Za-z%][A-Za-z%/]*)?|[<>=]=|\S')


def _token_overflow(text: str, limit: int) -> int | None:
    """Offset of the first lexical item past ``limit`` items, or None (fast for small files)."""
    if len(text) <= limit or len(_COUNT_TOKENS.findall(text)) <= limit:
        return None
    m = next(itertools.islice(_COUNT_TOKENS.finditer(text), limit, None))
    return m.start()


@contextlib.contextmanager
def _gc_paused():
    """Pause the cyclic garbage collector: a parse allocates millions of acyclic objects
    (tokens, trees, AST nodes) and the collector's passes over them cost about 45% of
    the parse time of a large plan.  Reference counting still frees everything."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def parse(source: SourceFile) -> tuple[object | None, list[Diagnostic]]:
    """Parse ``source`` to an AST :class:`~sncc.syntax.ast.Module`.

    Returns ``(module, diagnostics)``; ``module`` is None when the text does not
    parse, nests deeper than :data:`~sncc.syntax.build_ast.MAX_DEPTH` or holds
    more than :data:`MAX_TOKENS` tokens.  Each diagnostic's ``path`` is the block and
    key its position is inside (:func:`sncc.syntax.paths.enclosing_paths`).
    """
    module, diags = _parse(source)
    if diags:
        from sncc.syntax.paths import with_paths

        diags = with_paths(diags, {source.name: source})
    return module, diags


def _parse(source: SourceFile) -> tuple[object | None, list[Diagnostic]]:
    from sncc.syntax.build_ast import MAX_DEPTH, build_module

    deep = _nesting_overflow(source.text, MAX_DEPTH)
    if deep is not None:
        return None, [diag(codes.SYNTAX_ERROR, f"blocks or lists nested more than {MAX_DEPTH} levels deep",
                           source.span(deep, deep + 1), help="plans need at most four levels of nesting")]
    many = _token_overflow(source.text, MAX_TOKENS)
    if many is not None:
        return None, [diag(codes.SYNTAX_ERROR, f"the file holds more than {MAX_TOKENS:,} tokens; this one is past the limit",
                           source.span(many, many + 1),
                           help="a plan needs a few hundred tokens: split generated content out, or shorten it")]
    with _gc_paused():
        tree, err = parse_tree(source)
        if err is not None:
            return None, [err]
        return build_module(tree, source)

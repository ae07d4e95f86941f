"""Where each key and value of a TOML or JSON document is written, for located diagnostics.

``tomllib`` and ``json`` read the values (the readers sncc trusts) but keep no positions; this
module only finds them.  :func:`key_map` scans a document those readers accepted and returns
``{path: Entry}``: a path is a tuple of table keys (``str``) and 0-based array indexes (``int``),
``("point", 1, "ttft_s")`` for the ``ttft_s`` of the second ``[[point]]``; an :class:`Entry` holds
the code-point offsets of its key and of its value (for a ``[[point]]`` table, its header).
Offsets follow :class:`sncc.source.Span`; line and column are computed by
:class:`sncc.source.SourceFile` alone, as for every other diagnostic.

Decisions: the scanners trust the reader's verdict (they run only on valid documents) and
never raise: what they cannot place (a nesting deeper than the recursion limit) is left out,
and :func:`locate` falls back to the nearest enclosing path, then to the start of the file.
:func:`syntax_error_offset` reads the position of a reader's own error (``json``'s ``pos``,
``tomllib``'s ``(at line L, column C)``).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple, Union

Path = Tuple[Union[str, int], ...]


@dataclass(frozen=True)
class Entry:
    """Offsets ``[start, end)`` of a key (None for an array element or the document) and its value."""

    key: Optional[Tuple[int, int]]
    value: Tuple[int, int]


KeyMap = Dict[Path, Entry]


def key_map(text: str, kind: str) -> KeyMap:
    """The positions of every key and value of ``text``, a valid ``kind`` (``"TOML"`` or
    ``"JSON"``) document; partial (never raising) when the scan cannot finish."""
    out: KeyMap = {}
    try:
        (_JsonScan if kind == "JSON" else _TomlScan)(text, out).run()
    except (IndexError, ValueError, RecursionError):
        pass
    return out


def toml_written_twice(text: str) -> Optional[Tuple[Path, Entry, Entry]]:
    """(path, first, second) of the first key or table a TOML ``text`` writes twice (``tomllib``
    refuses it and says where its reading stopped, after the value), or None."""
    scan = _TomlScan(text, {})
    try:
        scan.run()
    except (IndexError, ValueError, RecursionError):
        pass
    return scan.twice[0] if scan.twice else None


def locate(km: KeyMap, path: Path, *, key: bool = False) -> Tuple[int, int]:
    """Offsets of ``path``'s value (its key with ``key``, when it has one); the nearest enclosing
    path that is mapped when it is not; ``(0, 0)``, the start of the file, when none is."""
    for n in range(len(path), -1, -1):
        e = km.get(tuple(path[:n]))
        if e is not None:
            return e.key if key and e.key is not None and n == len(path) else e.value
    return (0, 0)


def line_col_offset(text: str, line: int, col: int) -> int:
    """The code-point offset of 1-based ``line`` and ``col`` as counted by ``tomllib`` (lines end
    at ``\\n``; clamped to the text)."""
    start = 0
    for _ in range(line - 1):
        nl = text.find("\n", start)
        if nl < 0:
            return len(text)
        start = nl + 1
    return min(len(text), start + max(0, col - 1))


_TOML_AT = re.compile(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)\s*$")


def syntax_error_offset(text: str, exc: Exception) -> Tuple[str, int]:
    """(message without its position, offset) of a ``json.JSONDecodeError`` or
    ``tomllib.TOMLDecodeError`` raised on ``text``."""
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg, max(0, min(exc.pos, len(text)))
    msg = str(exc)
    m = _TOML_AT.search(msg)
    if m is None:
        return msg, 0
    offset = len(text) if m.group(1) is None else line_col_offset(text, int(m.group(1)), int(m.group(2)))
    return msg[: m.start()], offset


# ------------------------------------------------------------------ JSON
_WS = " \t\r\n"
_JSON_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null|NaN|-?Infinity")


class _JsonScan:
    def __init__(self, text: str, out: KeyMap) -> None:
        self.t, self.out = text, out

    def ws(self, i: int) -> int:
        while i < len(self.t) and self.t[i] in _WS:
            i += 1
        return i

    def run(self) -> None:
        self.value(self.ws(0), (), None)

    def string(self, i: int) -> Tuple[str, int]:
        s, end = json.decoder.scanstring(self.t, i + 1)
        return s, end

    def value(self, i: int, path: Path, key: Optional[Tuple[int, int]]) -> int:
        t = self.t
        c = t[i]
        if c == "{":
            j = self.ws(i + 1)
            while t[j] != "}":
                name, kend = self.string(j)
                kspan = (j, kend)
                j = self.ws(kend)
                _expect(t, j, ":")
                j = self.value(self.ws(j + 1), path + (name,), kspan)
                j = self.ws(j)
                if t[j] == ",":
                    j = self.ws(j + 1)
            end = j + 1
        elif c == "[":
            j, n = self.ws(i + 1), 0
            while t[j] != "]":
                j = self.ws(self.value(j, path + (n,), None))
                n += 1
                if t[j] == ",":
                    j = self.ws(j + 1)
            end = j + 1
        elif c == '"':
            end = self.string(i)[1]
        else:
            m = _JSON_SCALAR.match(t, i)
            if m is None:
                raise ValueError(f"unexpected {c!r} at {i}")
            end = m.end()
        self.out[path] = Entry(key, (i, end))
        return end


def _expect(text: str, i: int, c: str) -> None:
    if text[i] != c:
        raise ValueError(f"expected {c!r} at {i}")


# ------------------------------------------------------------------ TOML
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TOML_SCALAR_END = re.compile(r"[,\]}#\r\n]")


class _TomlScan:
    """A scan of a valid TOML document: headers, dotted keys, the four string forms, arrays
    spanning lines and inline tables; other values (numbers, booleans, dates) end before the
    next ``, ] } #`` or line break."""

    def __init__(self, text: str, out: KeyMap) -> None:
        self.t, self.out = text, out
        #: concrete path of an array of tables -> index of its last table
        self.aot: Dict[Path, int] = {}
        #: (path, first entry, second entry) of each key or table written twice (a TOML error)
        self.twice: List[Tuple[Path, Entry, Entry]] = []

    def put(self, path: Path, entry: Entry) -> None:
        if path in self.out and path:
            self.twice.append((path, self.out[path], entry))
        self.out[path] = entry

    def skip(self, i: int, newlines: bool) -> int:
        """Past spaces and tabs (and with ``newlines`` line breaks and comments)."""
        t = self.t
        while i < len(t):
            c = t[i]
            if c in " \t" or (newlines and c in "\r\n"):
                i += 1
            elif newlines and c == "#":
                while i < len(t) and t[i] not in "\r\n":
                    i += 1
            else:
                break
        return i

    def run(self) -> None:
        t = self.t
        table: Path = ()
        i = self.skip(0, True)
        if t.startswith("\ufeff"):
            i = self.skip(1, True)
        self.out[()] = Entry(None, (0, len(t)))
        while i < len(t):
            if t[i] == "[":
                aot = t.startswith("[[", i)
                names, j = self.key(self.skip(i + (2 if aot else 1), False))
                j = self.skip(j, False)
                j += 2 if aot else 1
                table = self.resolve(names, aot)
                self.put(table, Entry((i, j), (i, j)))
                if aot:
                    arr = table[:-1]
                    if arr not in self.out:
                        self.out[arr] = Entry((i, j), (i, j))
                i = j
            else:
                names, kend = self.key(i)
                j = self.skip(kend, False)
                _expect(t, j, "=")
                path = table + names
                i = self.value(self.skip(j + 1, False), path, (i, kend))
                self.dotted_parents(table, names, (i, kend))
            i = self.skip(i, True)

    def dotted_parents(self, base: Path, names: Path, span: Tuple[int, int]) -> None:
        for n in range(1, len(names)):
            self.out.setdefault(base + names[:n], Entry(span, span))

    def resolve(self, names: Path, aot: bool) -> Path:
        """The concrete path of a header ``names``: each prefix that is an array of tables gets
        the index of its last table; a ``[[...]]`` header adds a table to its array."""
        path: Path = ()
        for k, name in enumerate(names):
            path = path + (name,)
            last = k == len(names) - 1
            if last and aot:
                n = self.aot.get(path, -1) + 1
                # a new table of the array: the arrays of tables nested under its previous one end
                self.aot = {p: v for p, v in self.aot.items() if p[: len(path)] != path or p == path}
                self.aot[path] = n
                path = path + (n,)
            elif path in self.aot:
                path = path + (self.aot[path],)
        return path

    def key(self, i: int) -> Tuple[Path, int]:
        """(names, end) of a (dotted) key starting at ``i``."""
        t = self.t
        names = []
        while True:
            c = t[i]
            if c == '"':
                end = self.basic_end(i)
                names.append(_toml_string(t[i:end]))
            elif c == "'":
                end = t.index("'", i + 1) + 1
                names.append(t[i + 1:end - 1])
            else:
                m = _BARE_KEY.match(t, i)
                if m is None:
                    raise ValueError(f"no key at {i}")
                end = m.end()
                names.append(m.group())
            j = self.skip(end, False)
            if j < len(t) and t[j] == ".":
                i = self.skip(j + 1, False)
                continue
            return tuple(names), end

    def basic_end(self, i: int) -> int:
        """End of the one-line basic string opening at ``i``."""
        t = self.t
        j = i + 1
        while t[j] != '"':
            j += 2 if t[j] == "\\" else 1
        return j + 1

    def value(self, i: int, path: Path, key: Optional[Tuple[int, int]]) -> int:
        t = self.t
        c = t[i]
        if t.startswith('"""', i) or t.startswith("'''", i):
            q = t[i:i + 3]
            j = i + 3
            while not t.startswith(q, j):
                j += 2 if (q == '"""' and t[j] == "\\") else 1
            end = j + 3
            while end < len(t) and t[end] == q[0] and end - j < 5:   # up to two quotes end the content
                end += 1
        elif c == '"':
            end = self.basic_end(i)
        elif c == "'":
            end = t.index("'", i + 1) + 1
        elif c == "[":
            j, n = self.skip(i + 1, True), 0
            while t[j] != "]":
                j = self.skip(self.value(j, path + (n,), None), True)
                n += 1
                if t[j] == ",":
                    j = self.skip(j + 1, True)
            end = j + 1
        elif c == "{":
            j = self.skip(i + 1, False)
            while t[j] != "}":
                names, kend = self.key(j)
                k = self.skip(kend, False)
                _expect(t, k, "=")
                kspan = (j, kend)
                j = self.skip(self.value(self.skip(k + 1, False), path + names, kspan), False)
                self.dotted_parents(path, names, kspan)
                if t[j] == ",":
                    j = self.skip(j + 1, False)
            end = j + 1
        else:
            m = _TOML_SCALAR_END.search(t, i)
            end = m.start() if m else len(t)
            while end > i and t[end - 1] in " \t":
                end -= 1
        if key is None:
            self.out[path] = Entry(key, (i, end))
        else:
            self.put(path, Entry(key, (i, end)))
        return end


def _toml_string(literal: str) -> str:
    """The value of a one-line TOML basic string literal (``"..."``, escapes decoded)."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib as toml
    else:  # pragma: no cover
        import tomli as toml
    return toml.loads(f"k = {literal}")["k"]

"""Read a launch script without running it: words with their offsets, assignments, exports and
the engine commands.

The reader is a small POSIX-shell word splitter (``shlex``'s quoting rules — single quotes, double
quotes, backslash escapes, ``#`` comments, ``\\``-newline continuations, where a newline is
``\\n``, ``\\r\\n`` or a lone ``\\r`` as in :class:`~sncc.source.SourceFile` — plus the offsets
``shlex`` does not keep, which located diagnostics need) and a documented variable expander:

* ``$NAME``, ``${NAME}``, ``${NAME:-default}`` / ``${NAME-default}`` expand to the value the
  script assigned before (``NAME=v``, ``export NAME=v``), else to the default, else stay as written
  and the word is marked *unresolved*; the default is expanded the same way, as bash does
  (``${MODEL:-$MODEL_DIR/m}``, ``${PORT:-${BASE:-8000}}``), and ``:-`` takes it for an empty value too;
  ``${NAME:=default}`` / ``${NAME=default}`` also assign the default (later lines see it), and
  ``${NAME:+alt}`` / ``${NAME+alt}`` expand to ``alt`` when ``NAME`` is set (non-empty with ``:``),
  else to nothing; any other form (``${NAME#pat}``, ``${#NAME}``, ``${NAME:?msg}``) is unresolved;
* an unquoted expansion's result is split into words at blanks and newlines and an empty one
  removed, as bash's field splitting does (``${OPT:+--flag $OPT}`` is two words);
* arrays: ``NAME=(w1 w2 ...)`` (and ``NAME+=(...)``) are recorded as the script reads them, and
  ``"${NAME[@]}"`` / ``${NAME[*]}`` expand to their words (each located at the expansion),
  ``${NAME[i]}`` to one, ``$NAME`` to the first; an array not set before is unresolved;
* ``$(...)`` and backquotes are never run: the word is unresolved, except the idiom for the
  script's own folder (``$(dirname "$0")``, ``$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)``),
  which becomes a path relative to the script (``.``, ``./..``), as ``sncc import`` reads paths;
* ``if`` / ``then`` / ``else`` / ``elif`` / ``fi`` and ``case`` are not evaluated: their words are
  recorded (:attr:`Script.conditionals`) and the assignments of every branch apply in order;
* redirections (``> log``, ``>> log``, ``2>&1``, ``&> log``, ``< /dev/null``, ``>| f``, ``> >(tee f)``)
  are dropped with their targets, as the shell takes them out of the command's words (an unquoted
  ``<`` or ``>`` ends a word, as in bash), and a here-document's body (``<<EOF`` ... ``EOF``) is
  skipped; a ``<name>`` placeholder copied from documentation (``--port <port>``) stays a word.

Shapes: a :class:`Word` is ``text`` (after quote removal and expansion) with ``start``/``end``
code-point offsets into the script; a :class:`Command` is its words (leading ``NAME=v`` assignments
split off as ``inline_env``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: words that start or continue a shell compound command the importer does not evaluate
CONDITIONAL_WORDS = frozenset({"if", "then", "else", "elif", "fi", "case", "esac", "while", "do", "done", "for"})
#: operators that end a simple command
OPERATORS = ("&&", "||", ";;", ";", "&", "|")
_LINE_END = re.compile(r"[\r\n]")
#: an array assignment's start: ``NAME=(`` or ``NAME+=(``
_ARRAY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=\(")
#: separates an array's words inside one expanded word until :meth:`_Lexer.tokens` splits them
_SEP = "\x1f"
#: a redirection operator with its optional file descriptor (bash "Redirections"): the longest
#: spellings first, ``&>`` before the ``&`` operator and ``>|`` before ``|``
_REDIRECT = re.compile(r"(?:[0-9]+)?(?:&>>|&>|>>|>&|>\||<<<|<<-|<<|<>|<&|>|<)")
#: what ``>&`` / ``<&`` duplicate or close (``2>&1``, ``<&-``): part of the operator, no target word
_FD = re.compile(r"[0-9]+-?|-")
#: a documentation placeholder (``<port>``, ``<model_path>``), kept as a word: as shell it is a
#: syntax error, so it is text copied from a page, not a redirection
_PLACEHOLDER = re.compile(r"<[A-Za-z0-9_.:/-]+>(?=[\s;&|)]|$)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: where field splitting splits an unquoted expansion's result: bash's default IFS (blank, tab, newline)
_IFS = re.compile(r"[ \t\n]+")
#: a positional parameter (``$1``, ``${10}``) or a special one (``$@``, ``$#``, ...): set by the
#: shell when the script runs (its arguments, its process), never by an assignment the reader sees
_SPECIAL = re.compile(r"[0-9@*#?$!-]")


def _special_reason(name: str) -> str:
    """Why the special parameter ``name`` (``2``, ``10``, ``@``) is unknown to the import."""
    if name.isdigit() and name != "0":
        return (f"`${name}` is argument {name} of the script, set by whatever runs it "
                "(a launcher that passes it the values)")
    if name == "0":
        return "`$0` is the name the script is run by"
    if name in "@*#":
        return f"`${name}` stands for the script's arguments, set by whatever runs it"
    return f"`${name}` is set by the shell when the script runs"
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.S)
#: the idiom for the script's own folder (or one relative to it), which needs no command to be run:
#: ``$(dirname "$0")``, ``$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)`` (sncc's launch scripts)
_SELF = r'"?(?:\$\{BASH_SOURCE(?:\[0\])?\}|\$BASH_SOURCE|\$0|\$\{0\})"?'
_SCRIPT_DIR = re.compile(
    r'\$\(\s*(?:dirname\s+' + _SELF + r'|cd\s+"?\$\(\s*dirname\s+' + _SELF + r'\s*\)(?P<rel>/[^"\s;&|()$`]*)?"?'
    r'\s*&&\s*pwd(?:\s+-[PL])?)\s*\)')


@dataclass(frozen=True)
class Word:
    """One shell word: ``text`` after quote removal and expansion, ``start``/``end`` its offsets in
    the script, ``unresolved`` the reason it could not be expanded statically (``""`` when it was)."""

    text: str
    start: int
    end: int
    unresolved: str = ""


@dataclass(frozen=True)
class Command:
    """One simple command: ``words`` (program first), ``inline_env`` the ``NAME=v`` words before it,
    ``background`` when it ends with ``&``."""

    words: tuple[Word, ...]
    inline_env: tuple[tuple[str, Word], ...] = ()
    background: bool = False


@dataclass
class Script:
    """What :func:`read_script` found: ``commands`` in order; ``assignments`` every ``NAME=v``
    (``exported`` or not) with its word; ``conditionals`` the words of ``if``/``case``... met;
    ``refused`` the declaration words that set nothing, their name not being one bash accepts."""

    commands: list[Command] = field(default_factory=list)
    assignments: list[tuple[str, Word, bool]] = field(default_factory=list)
    conditionals: list[Word] = field(default_factory=list)
    sourced: list["Sourced"] = field(default_factory=list)
    #: the words of ``export`` / ``readonly`` / ``local`` / ``declare`` whose name bash refuses
    #: (``export HCCL-BUFFSIZE=200``: "not a valid identifier", nothing set), with the builtin
    refused: list[tuple[Word, str]] = field(default_factory=list)


@dataclass
class Sourced:
    """A ``source FILE`` / ``. FILE`` command: ``word`` the file's word in this script; ``name`` the
    file read and ``script`` what :func:`read_script` found in it (its offsets are that file's), or
    ``script`` None and ``why`` the reason it was not read."""

    word: Word
    name: str = ""
    text: str = ""
    script: "Script | None" = None
    why: str = ""


class _Lexer:
    """Splits the script into words and operators, expanding variables from ``env`` as it goes."""

    def __init__(self, text: str, env: dict[str, str]):
        self.t, self.i, self.env = text, 0, env
        self._here: list[tuple[str, bool]] = []   # here-document delimiters awaiting their body
        self.split = False   # the word being read holds an array expansion (words joined by _SEP)

    def _break(self, i: int) -> int:
        """The length of the line break at offset ``i``: 2 for ``\\r\\n``, 1 for ``\\n`` or a lone
        ``\\r``, 0 for none.  The breaks are :class:`~sncc.source.SourceFile`'s, so that a script
        saved with Windows (CRLF) or old Mac (CR) line endings reads as its LF twin, continuations
        included, and the lines the reader sees are the lines diagnostics are located on."""
        t = self.t
        if t.startswith("\r\n", i):
            return 2
        return 1 if t[i:i + 1] in ("\n", "\r") else 0

    def _closing_brace(self, j: int) -> int:
        """The offset of the ``}`` that closes the ``${`` before ``j``, past nested ``${...}`` and
        ``$(...)`` (``${OUT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}``); -1 when none."""
        t, depth, parens = self.t, 1, 0
        while j < len(t):
            if t.startswith("${", j):
                depth, j = depth + 1, j + 2
                continue
            c = t[j]
            if c == "(":
                parens += 1
            elif c == ")":
                parens = max(parens - 1, 0)
            elif c == "}" and not parens or c == "}" and depth > 1:
                depth -= 1
                if depth == 0:
                    return j
            j += 1
        return -1

    def _var(self, quoted: bool) -> tuple[str, str]:
        """Expand the ``$...`` at ``self.i``; returns (text, unresolved reason).  The pieces of the
        result (:attr:`pieces`, for field splitting) are left in ``self.var_pieces``."""
        self.var_pieces = None
        text, why = self._expand(quoted)
        if self.var_pieces is None:
            self.var_pieces = [(text, not quoted)]
        return text, why

    def _expand(self, quoted: bool) -> tuple[str, str]:
        t, i = self.t, self.i
        if t.startswith("$(", i) or t.startswith("$((", i):
            depth, j = 0, i + 1
            while j < len(t):
                depth += {"(": 1, ")": -1}.get(t[j], 0)
                j += 1
                if depth == 0:
                    break
            self.i = j
            here = _SCRIPT_DIR.fullmatch(t[i:j])
            if here:   # the script's own folder: a path relative to the script, as the importer reads paths
                return "." + (here.group("rel") or "").rstrip("/"), ""
            return t[i:j], f"command substitution `{t[i:j]}` is not run"
        if t.startswith("${", i):
            j = self._closing_brace(i + 2)
            if j < 0:
                self.i = len(t)
                return t[i:], "unclosed `${`"
            body, self.i = t[i + 2:j], j + 1
            if re.fullmatch(r"[0-9]+|[@*#?$!-]", body):
                return t[i:j + 1], _special_reason(body)
            arr = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\[(@|\*|[0-9]+)\]", body)
            if arr:
                items = self.env.get(arr.group(1) + "[@]")
                if items is None:
                    return t[i:j + 1], f"the array `{arr.group(1)}` is not set before this line"
                words = items.split(_SEP) if items else []
                if arr.group(2).isdigit():
                    n = int(arr.group(2))
                    return (words[n] if n < len(words) else ""), ""
                self.split = True
                return (" ".join(words) if quoted and arr.group(2) == "*" else _SEP.join(words)), ""
            m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-=+])(.*))?", body, re.S)
            if not m:
                return t[i:j + 1], (f"`{t[i:j + 1]}` is not evaluated (the import expands `${{NAME}}`, "
                                    "`${NAME:-default}`, `${NAME:=default}` and `${NAME:+alternative}`)")
            name, colon, op, word = m.group(1), m.group(2), m.group(3), m.group(4)
            # bash: with the colon an empty value counts as unset, without it only an unset one
            is_set = name in self.env and not (colon and self.env[name] == "")
            if op == "+":     # the alternative when set, else nothing
                if not is_set:
                    return "", ""
                return self._sub_word(word, quoted)
            if is_set or (op is None and name in self.env):
                return self.env[name], ""
            if word is not None:   # expanded as bash does, from the same variables (`${A:-$B/x}`)
                text, why = self._sub_word(word, quoted)
                if op == "=" and not why:   # `:=` assigns the default: later lines see it
                    self.env[name] = text
                return text, why
            return t[i:j + 1], f"`${name}` is not set before this line"
        m = _NAME.match(t, i + 1)
        if not m:
            sp = _SPECIAL.match(t, i + 1)
            if sp:
                self.i = sp.end()
                return "$" + sp.group(0), _special_reason(sp.group(0))
            self.i = i + 1
            return "$", ""
        self.i = m.end()
        name = m.group(0)
        if name in self.env:
            return self.env[name], ""
        return "$" + name, f"`${name}` is not set before this line"

    def _sub_word(self, word: str, quoted: bool) -> tuple[str, str]:
        """The word of ``${NAME:-word}`` (``:=``, ``:+``) expanded from the same variables; its
        pieces become the expansion's (:meth:`_var`)."""
        sub = _Lexer(word, self.env)
        w = sub._word(whole=True, quoted=quoted)
        self.var_pieces = sub.pieces
        return w.text, w.unresolved

    def _fields(self, w: Word) -> list[Word]:
        """``w`` split into fields as bash splits an unquoted expansion's result (at blanks and
        newlines, the default IFS), each located at the whole word; a word made of unquoted
        expansions that give nothing is removed (``${OPT:+--flag}`` with ``OPT`` unset).  A word
        with an unresolved expansion keeps its written text, unsplit."""
        pieces = self.pieces
        if w.unresolved or not any(split for _, split in pieces):
            return [w]
        fields, cur, started = [], [], False
        for text, split in pieces:
            if not split:
                cur.append(text)
                started = True
                continue
            for k, part in enumerate(_IFS.split(text)):
                if k and started:
                    fields.append("".join(cur))
                    cur, started = [], False
                if part:
                    cur.append(part)
                    started = True
        if started:
            fields.append("".join(cur))
        return [Word(f, w.start, w.end, w.unresolved) for f in fields]

    def tokens(self):
        """Yield ``Word`` for words and ``(operator, offset)`` tuples for operators and newlines."""
        t = self.t
        while self.i < len(t):
            c = t[self.i]
            if c == "\\" and self._break(self.i + 1):
                self.i += 1 + self._break(self.i + 1)
                continue
            if c in " \t":
                self.i += 1
                continue
            if self._break(self.i):
                yield ("\n", self.i)
                self.i += self._break(self.i)
                self._skip_here_documents()
                continue
            if c == "#":
                m = _LINE_END.search(t, self.i)
                self.i = len(t) if m is None else m.start()
                continue
            if c in "<>" and t.startswith("(", self.i + 1):   # process substitution: a word, never run
                yield self._process_substitution()
                continue
            arr = _ARRAY.match(t, self.i)
            if arr:
                self._array(arr)
                continue
            if _PLACEHOLDER.match(t, self.i):
                yield self._word()
                continue
            r = _REDIRECT.match(t, self.i)
            if r:
                self._redirection(r)
                continue
            op = next((o for o in OPERATORS if t.startswith(o, self.i)), None)
            if op:
                yield (op, self.i)
                self.i += len(op)
                continue
            yield from self._words()

    def _words(self, stop: str = "") -> list[Word]:
        """The word at ``self.i`` as the words the shell makes of it: field splitting
        (:meth:`_fields`), then an array expansion's words, each located at the word
        (``"${A[@]}"`` of an empty array: none)."""
        self.split = False
        w = self._word(stop=stop)
        fields = self._fields(w)
        if not self.split:
            return fields
        return [Word(part, f.start, f.end, f.unresolved) for f in fields if f.text for part in f.text.split(_SEP)]

    def _array(self, m: re.Match) -> None:
        """Read the array assignment ``NAME=(...)`` at ``m`` (its words expanded as the shell does)
        into the variables: ``NAME[@]`` its words, ``NAME`` the first."""
        t, name = self.t, m.group(1)
        self.i = m.end()
        items: list[str] = []
        while self.i < len(t):
            c = t[self.i]
            if c == "\\" and self._break(self.i + 1):
                self.i += 1 + self._break(self.i + 1)
            elif c in " \t" or self._break(self.i):
                self.i += self._break(self.i) or 1
            elif c == "#":
                m2 = _LINE_END.search(t, self.i)
                self.i = len(t) if m2 is None else m2.start()
            elif c == ")":
                self.i += 1
                break
            else:
                start = self.i
                ws = self._words(stop=")")
                if self.i == start:   # nothing read (an operator inside the parentheses): skip it
                    self.i += 1
                    continue
                items.extend(w.text for w in ws)
        if m.group(2):   # NAME+=(...)
            old = self.env.get(name + "[@]")
            items = (old.split(_SEP) if old else []) + items
        self.env[name + "[@]"] = _SEP.join(items)
        self.env[name] = items[0] if items else ""

    def _process_substitution(self) -> Word:
        """The ``<(...)`` / ``>(...)`` at ``self.i`` as one unresolved word; moves past it."""
        t, start, depth, j = self.t, self.i, 0, self.i + 1
        while j < len(t):
            depth += {"(": 1, ")": -1}.get(t[j], 0)
            j += 1
            if depth == 0:
                break
        self.i = j
        return Word(t[start:j], start, j, f"process substitution `{t[start:j]}` is not run")

    def _blanks(self) -> None:
        while self.i < len(self.t) and self.t[self.i] in " \t":
            self.i += 1

    def _redirection(self, m: re.Match) -> None:
        """Move past the redirection ``m`` and its target (a word, a process substitution, or the
        descriptor of ``>&``/``<&``); a here-document's delimiter is queued for the next line."""
        op = m.group(0).lstrip("0123456789")
        self.i = m.end()
        if op in (">&", "<&"):
            fd = _FD.match(self.t, self.i)
            if fd:
                self.i = fd.end()
                return
        self._blanks()
        t = self.t
        if self.i >= len(t) or self._break(self.i) or any(t.startswith(o, self.i) for o in OPERATORS):
            return   # no target (a syntax error the shell reports): nothing more to drop
        if t[self.i] in "<>" and t.startswith("(", self.i + 1):
            self._process_substitution()
            return
        target = self._word()
        if op in ("<<", "<<-"):
            self._here.append((target.text, op == "<<-"))

    def _skip_here_documents(self) -> None:
        """At the start of a line: skip the bodies of the here-documents the previous line opened,
        each up to its delimiter line (leading tabs stripped for ``<<-``)."""
        t = self.t
        while self._here:
            delim, strip = self._here.pop(0)
            while self.i < len(t):
                m = _LINE_END.search(t, self.i)
                end = len(t) if m is None else m.start()
                line = t[self.i:end]
                self.i = end + (self._break(end) if end < len(t) else 0)
                if (line.lstrip("\t") if strip else line) == delim:
                    break

    def _backquoted(self) -> str:
        """The backquoted command at ``self.i`` as written (never run); moves past it."""
        j = self.t.find("`", self.i + 1)
        j = len(self.t) if j < 0 else j
        text, self.i = self.t[self.i:j + 1], j + 1
        return text

    def _word(self, whole: bool = False, quoted: bool = False, stop: str = "") -> Word:
        """The word at ``self.i``; ``whole``: all of the text is one word (the default of
        ``${NAME:-default}``, blanks and operators included), ``quoted`` inside double quotes,
        where a single quote is an ordinary character (bash: ``"${U:-'a'}"`` is ``'a'``)."""
        t, start = self.t, self.i
        out, why = [], ""
        # (text, split): what field splitting may split, as bash does: unquoted expansions, and in a
        # default's word (``whole``) its unquoted text, which is part of the expansion
        self.pieces = pieces = []
        bare = whole and not quoted

        def put(text: str, split: bool) -> None:
            out.append(text)
            pieces.append((text, split))

        while self.i < len(t):
            c = t[self.i]
            if not whole and (c in " \t\r\n" or c in stop or any(t.startswith(o, self.i) for o in OPERATORS)):
                break
            if not whole and c in "<>":
                ph = _PLACEHOLDER.match(t, self.i)
                if ph is None:
                    break   # a redirection starts here (`--port 8000>log`)
                put(ph.group(0), False)
                self.i = ph.end()
                continue
            if quoted and (c == "'" or c == "\\" and t[self.i + 1:self.i + 2] not in ('"', "\\", "$", "`")
                           and not self._break(self.i + 1)):
                put(c, False)
                self.i += 1
                continue
            if c == "\\":
                if self._break(self.i + 1):
                    self.i += 1 + self._break(self.i + 1)
                    if whole:
                        continue
                    break
                put(t[self.i + 1:self.i + 2], False)
                self.i += 2
            elif c == "'":
                j = t.find("'", self.i + 1)
                j = len(t) if j < 0 else j
                put(t[self.i + 1:j], False)
                self.i = j + 1
            elif c == '"':
                self.i += 1
                put("", False)   # a quoted word is a word, even when empty (`""`)
                while self.i < len(t) and t[self.i] != '"':
                    if t[self.i] == "\\" and self._break(self.i + 1):   # a continuation inside the quotes
                        self.i += 1 + self._break(self.i + 1)
                    elif t[self.i] == "\\" and t[self.i + 1:self.i + 2] in ('"', "\\", "$", "`"):
                        put(t[self.i + 1], False)
                        self.i += 2
                    elif t[self.i] == "$":
                        text, w = self._var(True)
                        put(text, False)
                        why = why or w
                    elif t[self.i] == "`":
                        put(self._backquoted(), False)
                        why = why or "a backquoted command is not run"
                    else:
                        put(t[self.i], False)
                        self.i += 1
                self.i += 1
            elif c == "$":
                text, w = self._var(False)
                out.append(text)
                pieces.extend(self.var_pieces if not quoted else [(text, False)])
                why = why or w
            elif c == "`":
                put(self._backquoted(), False)
                why = why or "a backquoted command is not run"
            else:
                put(c, bare)
                self.i += 1
        self.i = min(self.i, len(t))   # an unclosed quote or a trailing backslash runs to the end
        return Word("".join(out), start, self.i, why)


#: prefix commands that run the rest of the line as the command (POSIX ``exec``, ``command``,
#: ``nohup``, ``env``, ``nice``; util-linux ``setsid``; the shell keyword ``time``); sncc's own launch
#: scripts end in ``exec vllm serve ...``
WRAPPERS = ("exec", "command", "nohup", "setsid", "time", "env", "nice")
#: options of those prefixes that take the next word as their argument
_WRAPPER_ARG_OPTIONS = {"env": ("-u", "--unset", "-C", "--chdir", "-S", "--split-string"),
                        "nice": ("-n", "--adjustment"), "exec": ("-a",), "time": ("-f", "--format", "-o", "--output")}


def _unwrap(ws: list[Word], inline: list[tuple[str, Word]]) -> list[Word]:
    """``ws`` without its leading prefix commands (:data:`WRAPPERS`, with their options); the
    ``NAME=value`` words of ``env`` join ``inline`` as the command's environment.  ``ws`` is a
    simple command's words, program first; returns the words from the wrapped program on ([] when
    nothing follows).  Never raises."""
    ws = list(ws)
    while ws and ws[0].text.rsplit("/", 1)[-1] in WRAPPERS:
        prog = ws.pop(0).text.rsplit("/", 1)[-1]
        takes = _WRAPPER_ARG_OPTIONS.get(prog, ())
        while ws and ws[0].text.startswith("-") and ws[0].text != "-":
            opt = ws.pop(0).text
            if opt == "--":
                break
            if opt in takes and ws:
                ws.pop(0)
        if prog == "env":
            while ws and _ASSIGN.fullmatch(ws[0].text) and not ws[0].text.startswith("="):
                m = _ASSIGN.fullmatch(ws[0].text)
                inline.append((m.group(1), Word(m.group(2), ws[0].start, ws[0].end, ws[0].unresolved)))
                ws.pop(0)
    return ws


#: the commands that read a file into the running shell
SOURCE_COMMANDS = ("source", ".")
#: how deep ``source`` is followed (a file sourcing itself stops there)
_SOURCE_DEPTH = 8


def read_script(text: str, source=None, env: dict[str, str] | None = None, _depth: int = 0) -> Script:
    """Split ``text`` (a shell script or one command line) into commands and assignments.

    Variables are expanded from the assignments met so far, in text order (see the module
    docstring); nothing is executed.  ``source(path) -> (name, text)`` reads the file of a
    ``source FILE`` / ``. FILE`` command (raising OSError when it cannot): its assignments apply from
    there on, as the shell's do, and it is recorded in :attr:`Script.sourced`; without ``source``
    such a command is an ordinary one.  ``env`` is the variables set before (shared with the
    caller).  Never raises on odd input: an unclosed quote runs to the end.
    """
    env = {} if env is None else env
    script = Script()
    lexer = _Lexer(text, env)
    words: list[Word] = []

    def flush(background: bool = False) -> None:
        ws = list(words)
        words.clear()
        while ws and ws[0].text in CONDITIONAL_WORDS:
            script.conditionals.append(ws.pop(0))
        if not ws:
            return
        inline: list[tuple[str, Word]] = []
        exported = ws[0].text == "export"
        if exported or ws[0].text in ("local", "readonly", "declare"):
            # `-f` names functions (`export -f my-fn`, a hyphen allowed) and `=(` starts an array
            # whose elements are words of their own: no names to judge then
            names = not any(w.text.startswith("-") and "f" in w.text or "=(" in w.text for w in ws[1:])
            for w in ws[1:]:
                m = _ASSIGN.fullmatch(w.text)
                if m:
                    env[m.group(1)] = m.group(2)
                    script.assignments.append((m.group(1), Word(m.group(2), w.start, w.end, w.unresolved), exported))
                elif names and not (w.unresolved or w.text.startswith("-") or _NAME.fullmatch(w.text)):
                    # bash: "`HCCL-BUFFSIZE=200': not a valid identifier", status 1, the variable unset
                    script.refused.append((w, ws[0].text))
            return
        while ws and _ASSIGN.fullmatch(ws[0].text) and not ws[0].text.startswith("="):
            m = _ASSIGN.fullmatch(ws[0].text)
            inline.append((m.group(1), Word(m.group(2), ws[0].start, ws[0].end, ws[0].unresolved)))
            ws.pop(0)
        if not ws:   # plain assignments: shell variables from here on
            for name, w in inline:
                env[name] = w.text
                script.assignments.append((name, w, False))
            return
        ws = _unwrap(ws, inline)
        if not ws:   # `exec` alone (redirections only), `nohup` with nothing after it
            return
        if source is not None and ws[0].text in SOURCE_COMMANDS and len(ws) > 1:
            fw = ws[1]
            if fw.unresolved:
                script.sourced.append(Sourced(fw, why=fw.unresolved))
            elif _depth >= _SOURCE_DEPTH:
                script.sourced.append(Sourced(fw, why=f"sourced more than {_SOURCE_DEPTH} files deep"))
            else:
                try:
                    name, sub = source(fw.text)
                except OSError as e:
                    script.sourced.append(Sourced(fw, why=e.strerror or str(e)))
                else:
                    script.sourced.append(Sourced(fw, name, sub, read_script(sub, source, env, _depth + 1)))
            return
        script.commands.append(Command(tuple(ws), tuple(inline), background))

    for tok in lexer.tokens():
        if isinstance(tok, Word):
            if not words and tok.text in CONDITIONAL_WORDS:
                script.conditionals.append(tok)
                continue
            words.append(tok)
        else:
            flush(background=tok[0] == "&")
    flush()
    return script

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
* ``$(...)`` and backquotes are never run: the word is unresolved, except the idiom for the
  script's own folder (``$(dirname "$0")``, ``$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)``),
  which becomes a path relative to the script (``.``, ``./..``), as ``sncc import`` reads paths;
* ``if`` / ``then`` / ``else`` / ``elif`` / ``fi`` and ``case`` are not evaluated: their words are
  recorded (:attr:`Script.conditionals`) and the assignments of every branch apply in order.

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
#: a redirection operator at a word's start (bash manual, "Redirections"): an optional file-descriptor
#: number glued to it, then `<<<`, `<<`, `<>`, `<&`, `<`, `>>`, `>&`, `>|`, `>`, or `&>>` / `&>`; the shell
#: applies it to the command and removes it (and its target word) from the command's arguments
_REDIRECTION = re.compile(r"\d*(?:<<<|<<-?|<>|<&|<|>>|>&|>\||>)|&>>?")
#: the target of `>&` / `<&` glued to it: a file descriptor, optionally moved (`3-`), or `-` (close)
_DUP_TARGET = re.compile(r"\d+-?|-")
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
                continue
            if c == "#":
                m = _LINE_END.search(t, self.i)
                self.i = len(t) if m is None else m.start()
                continue
            m = _REDIRECTION.match(t, self.i)
            if m:
                self._redirection(m)
                continue
            op = next((o for o in OPERATORS if t.startswith(o, self.i)), None)
            if op:
                yield (op, self.i)
                self.i += len(op)
                continue
            yield from self._fields(self._word())

    def _redirection(self, m: re.Match) -> None:
        """Move past the redirection ``m`` matched at ``self.i`` and its target word (``2>&1``,
        ``> serve.log``, ``&> 'a b.log'``): neither is an argument of the command."""
        self.i = m.end()
        if m.group().endswith(("&",)):
            d = _DUP_TARGET.match(self.t, self.i)
            if d:
                self.i = d.end()
                return
        while self.i < len(self.t) and self.t[self.i] in " \t":
            self.i += 1
        if self.i < len(self.t) and not self._break(self.i) and not any(
                self.t.startswith(o, self.i) for o in OPERATORS):
            self._word()

    def _backquoted(self) -> str:
        """The backquoted command at ``self.i`` as written (never run); moves past it."""
        j = self.t.find("`", self.i + 1)
        j = len(self.t) if j < 0 else j
        text, self.i = self.t[self.i:j + 1], j + 1
        return text

    def _word(self, whole: bool = False, quoted: bool = False) -> Word:
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
            if not whole and (c in " \t\r\n<>" or any(t.startswith(o, self.i) for o in OPERATORS)):
                break
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

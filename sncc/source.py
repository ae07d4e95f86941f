"""Source files and spans; the one place where positions are converted.

Spans are stored as 0-based code-point offsets into the decoded text (Python
``str`` indices, which are also Lark's ``start_pos``/``end_pos``).  Every
conversion to a human or machine position lives here:

* :meth:`SourceFile.line_col` – 1-based line and 1-based column counted in
  Unicode code points (text, JSON, SARIF and GitHub outputs);
* :meth:`SourceFile.lsp_position` – 0-based line and UTF-16 code-unit column
  (Language Server Protocol).
"""

from __future__ import annotations

import bisect
import errno
import itertools
import re
from dataclasses import dataclass, field

#: Largest file sncc reads as a plan, an imported plan, a trace or a config.json, in
#: bytes (64 MiB).  Not a format limit: plans are hand-written (issue 5 asks that a
#: 5 MB one be handled) and this bound, 12× that, keeps ``/dev/zero`` or a runaway
#: file from exhausting memory (a ``str`` holds up to 4 bytes per character).
MAX_FILE_BYTES = 64 * 2**20


def read_bytes_limited(path: str, limit: int = MAX_FILE_BYTES, *, regular_only: bool = False) -> bytes:
    """Read the file at ``path`` (any kind: regular file, pipe, device), at most ``limit`` bytes.

    With ``regular_only``, anything but a regular file raises ``OSError`` (``EISDIR`` for a
    directory, ``EINVAL`` otherwise) before a byte is read: the file is opened non-blocking
    and checked with ``fstat``, so a FIFO never blocks.

    Raises :class:`OSError` from ``open``/``read``, or ``OSError(EFBIG)`` whose
    ``strerror`` says the file is larger than ``limit``.  A path with a NUL
    byte raises :class:`ValueError` (from ``open``).
    """
    if regular_only:
        import os
        import stat

        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
                raise OSError(code, "not a regular file" if code == errno.EINVAL else os.strerror(code), path)
        except BaseException:
            os.close(fd)
            raise
        f = os.fdopen(fd, "rb")
    else:
        f = open(path, "rb")
    with f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit / 2**20:g} MiB, the most sncc reads", path)
    return data


#: a line break (kept by ``split``): ``\r\n``, a lone ``\r`` or ``\n`` (the grammar ends comments and strings at
#: the same characters, grammar/sncc.lark)
LINE_BREAK_SPLIT = re.compile(r"(\r\n?|\n)")

#: the byte-order mark as a decoded character; a leading one is not counted as a column
BOM = "\ufeff"

#: byte-order marks of the encodings a plan file is not in (UTF-32 first: its little-endian mark
#: starts with UTF-16's), with the encoding's name
FOREIGN_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"), (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
                (b"\xff\xfe", "UTF-16 (little-endian)"), (b"\xfe\xff", "UTF-16 (big-endian)"))


def foreign_encoding(data: bytes) -> str | None:
    """The encoding whose byte-order mark ``data`` starts with (``"UTF-16 (little-endian)"``), or
    None: plan files are UTF-8, and a UTF-16/32 file decoded as UTF-8 is NUL bytes and garbage."""
    for mark, name in FOREIGN_BOMS:
        if data.startswith(mark):
            return name
    return None


@dataclass(frozen=True)
class Span:
    """A half-open range ``[start, end)`` of code-point offsets in ``file``.

    ``file`` is the display name of the source (a path as the user gave it, or
    ``<stdin>``).  ``start == end`` marks a point (for example end of file).
    """

    file: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"span end {self.end} before start {self.start}")


@dataclass
class SourceFile:
    """The text of one plan file with a line-start index.

    ``text`` is the decoded content; ``name`` is what diagnostics print.
    Line breaks are ``\\n``, ``\\r\\n`` or a lone ``\\r``.
    """

    name: str
    text: str
    _line_starts: list[int] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        # linear, at C speed: running sums of the line lengths (each with its break; a
        # `\r\n` pair is one break); line k + 1 starts where break k ends
        text = self.text
        if "\r" not in text:
            lengths = map((1).__add__, map(len, text.split("\n")[:-1]))
            self._line_starts = [0, *itertools.accumulate(lengths)]
        else:
            sums = list(itertools.accumulate(map(len, LINE_BREAK_SPLIT.split(text))))  # line, break, line, ...
            self._line_starts = [0, *sums[1::2]]

    def clamp(self, offset: int) -> int:
        """Clamp ``offset`` into ``[0, len(text)]``."""
        return max(0, min(offset, len(self.text)))

    def line_col(self, offset: int) -> tuple[int, int]:
        """Return the 1-based (line, column) of a code-point ``offset``.

        A leading byte-order mark (U+FEFF) is not a column: the first character
        after it is at column 1 (as in editors, which hide the mark).
        """
        offset = self.clamp(offset)
        line = bisect.bisect_right(self._line_starts, offset) - 1
        col = offset - self._line_starts[line] + 1
        if line == 0 and offset > 0 and self.text.startswith(BOM):
            col -= 1
        return line + 1, col

    def line_text(self, line: int) -> str:
        """Return line ``line`` (1-based) without its line break (and, on line 1, without a
        leading byte-order mark, so that :meth:`line_col` columns index into it)."""
        text = self._raw_line(line)
        return text[1:] if line == 1 and text.startswith(BOM) else text

    def _raw_line(self, line: int) -> str:
        start = self._line_starts[line - 1]
        end = self._line_starts[line] if line < len(self._line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    @property
    def line_count(self) -> int:
        """Number of lines (a trailing line break does not start a new one)."""
        return len(self._line_starts)

    def lsp_position(self, offset: int) -> tuple[int, int]:
        """Return the LSP position (0-based line, UTF-16 column) of ``offset``."""
        line, col = self.line_col(offset)
        prefix = self.text[self._line_starts[line - 1] : self.clamp(offset)]
        return line - 1, len(prefix.encode("utf-16-le")) // 2

    def offset_of_lsp(self, line: int, character: int) -> int:
        """Inverse of :meth:`lsp_position` (clamped to the file)."""
        if line >= len(self._line_starts):
            return len(self.text)
        start = self._line_starts[line]
        text = self._raw_line(line + 1)
        units = 0
        for i, ch in enumerate(text):
            if units >= character:
                return start + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return start + len(text)

    def span(self, start: int, end: int) -> Span:
        """A :class:`Span` in this file, clamped to its text."""
        start = self.clamp(start)
        return Span(self.name, start, max(start, self.clamp(end)))

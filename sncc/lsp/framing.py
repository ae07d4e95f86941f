"""A stdin reader for pygls' message loop (:func:`pygls.io_.run_async`) that
resynchronises after a wrong ``Content-Length`` header.

pygls reads a header line, then exactly ``Content-Length`` bytes of body.  With a length
10 bytes short, the rest of that body is glued to the next header (``...}Content-Length:
123``), which no longer matches, and every later message is lost; with a length too long
and no padding, the body swallows the next message.  This reader keeps pygls' loop and
protocol and only frames bytes:

* :meth:`ResyncReader.readline` drops anything before a ``Content-Length:`` header found
  inside a line (the leftover of a short body);
* :meth:`ResyncReader.readexactly` returns early, before the next ``Content-Length: N\\r\\n``
  header, when one arrives inside the announced body (raw CR LF cannot occur inside a JSON
  body outside whitespace, so such a header is never part of a valid body); the cut body
  fails to parse (pygls logs it) and the next message is read from its header.

Data is read as it arrives (``read1``), so a message is handled without waiting for the
next.  Each resynchronisation is logged as a warning.
"""

from __future__ import annotations

import asyncio
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from typing import BinaryIO

log = logging.getLogger("sncc.lsp")

#: a header line that starts a message (anywhere in the buffered bytes)
_HEADER = re.compile(rb"Content-Length:[ \t]*\d+\r?\n")
#: bytes asked of the pipe at a time
CHUNK = 1 << 16


class ResyncReader:
    """pygls ``AsyncReader`` (``readline()``, ``readexactly(n)``) over ``stdin``."""

    def __init__(self, stdin: BinaryIO, executor: ThreadPoolExecutor) -> None:
        self._stdin, self._executor = stdin, executor
        self._buf = bytearray()
        self._eof = False

    async def _fill(self) -> bool:
        """Read what the pipe has (at least one byte, or end of file); False at end of file."""
        if self._eof:
            return False
        read = getattr(self._stdin, "read1", None) or self._stdin.read
        data = await asyncio.get_running_loop().run_in_executor(self._executor, read, CHUNK)
        if not data:
            self._eof = True
            return False
        self._buf += data
        return True

    async def readline(self) -> bytes:
        """The next line (through ``\\n``), from the start of a header found inside it."""
        while b"\n" not in self._buf:
            if not await self._fill():
                line, self._buf = bytes(self._buf), bytearray()
                return line
        end = self._buf.index(b"\n") + 1
        line = bytes(self._buf[:end])
        del self._buf[:end]
        m = _HEADER.search(line)
        if m is not None and m.start() > 0:
            log.warning("skipped %d bytes before a Content-Length header (a wrong length before?)", m.start())
            line = line[m.start():]
        return line

    async def readexactly(self, n: int) -> bytes:
        """``n`` bytes of body, or fewer when a message header arrives inside them."""
        while True:
            m = _HEADER.search(self._buf, 0, n + 64)
            if m is not None and m.start() < n:
                log.warning("a message header arrived %d bytes into a body of %d: the Content-Length "
                            "was too long; reading on from the header", m.start(), n)
                body = bytes(self._buf[: m.start()])
                del self._buf[: m.start()]
                return body
            if len(self._buf) >= n or not await self._fill():
                break
        body = bytes(self._buf[:n])
        del self._buf[:n]
        return body

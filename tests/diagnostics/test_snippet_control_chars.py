"""A snippet never writes control characters to the terminal (a binary file checked by mistake
echoed its raw bytes, escape sequences included); the caret still points at the offending column."""
from __future__ import annotations

from sncc.diagnostics import codes
from sncc.diagnostics.model import diag
from sncc.diagnostics.render_text import render_one
from sncc.source import SourceFile


def test_control_characters_are_shown_as_replacement_characters():
    text = "\x7fELF\x02\x01\x1b[31mred\tx = 1\n"
    src = SourceFile("bin.sn", text)
    col = text.index("x")
    out = render_one(diag(codes.SYNTAX_ERROR, "bad", src.span(col, col + 1)), {"bin.sn": src})
    shown, caret = out.splitlines()[3], out.splitlines()[4]
    assert not any(ord(c) < 0x20 and c != "\t" or 0x7F <= ord(c) < 0xA0 for c in out.replace("\n", ""))
    assert "\ufffdELF" in shown
    assert shown.index("x = 1") - shown.index("|") == caret.index("^") - caret.index("|")

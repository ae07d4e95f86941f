"""What a `# sncc: ignore[...]` comment covers, exactly enough that `sncc fmt` can keep it
(issue 14 item 35): its line and, when a block opens there, that block up to its closing
brace — not an item written after the `}` on the closing line; a comment after nothing but
separators (`;`) stands alone and covers the next line, as fmt drops separators."""

from __future__ import annotations

from sncc.diagnostics import codes
from sncc.diagnostics.filters import apply_suppressions
from sncc.diagnostics.model import diag
from sncc.source import SourceFile


def _kept(text: str, at: str) -> bool:
    src = SourceFile("x.sn", text)
    d = diag(codes.PARALLEL_MISMATCH, "m", src.span(text.index(at), text.index(at) + len(at)))
    return any(x.code.code == "SN3001" for x in apply_suppressions([d], {"x.sn": src}, report_unused=False))


def test_block_opened_on_the_line_is_covered_to_its_brace():
    text = 'plan "p" {\n  decode { tp = 1  # sncc: ignore[SN3001] measured\n    ep = 64 }  serve_x = 1\n}\n'
    assert not _kept(text, "ep = 64")
    assert _kept(text, "serve_x")  # after the `}`: not inside the block


def test_separators_alone_before_the_comment_cover_the_next_line():
    text = 'plan "p" {\n  a = 1\n  ;  # sncc: ignore[SN3001] measured\n  tp = 1\n}\n'
    assert not _kept(text, "tp = 1")

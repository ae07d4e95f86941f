"""Hover and go-to-definition reuse the parse of an unchanged buffer (``features.own_module``).

A 790 kB plan took about 0.8 s to re-parse on every hover and every go-to-definition request
(break test of stop 27: "LSP ~6 s on a 540 KB plan" while hovering and jumping).  The memo is
keyed by the file name and its full text, so an edited buffer is parsed again.
"""

from __future__ import annotations

from unittest import mock

from sncc.lsp import features
from sncc.source import SourceFile

PLAN = '''plan "p" {
  model "qwen3-32b" { max_model_len = 8k }
  hardware { system = "hgx-h100" }
  serve { tp = %d }
}
'''


def _parses(calls):
    import sncc.syntax.parser as parser

    real = parser.parse

    def counting(src):
        calls.append(src.text)
        return real(src)
    return mock.patch.object(parser, "parse", counting)


def test_hover_twice_on_the_same_text_parses_once():
    features._parsed.clear()
    text = PLAN % 8
    src = SourceFile("memo.sn", text)
    calls: list[str] = []
    with _parses(calls):
        first = features.hover(src, text.index("max_model_len") + 2)
        second = features.hover(SourceFile("memo.sn", text), text.index("tp =") + 1)
    assert first is not None and second is not None
    assert len(calls) == 1


def test_an_edited_buffer_is_parsed_again():
    features._parsed.clear()
    calls: list[str] = []
    with _parses(calls):
        a = features.own_module(SourceFile("memo.sn", PLAN % 8))
        b = features.own_module(SourceFile("memo.sn", PLAN % 4))
    assert len(calls) == 2 and a is not b
    assert b.blocks[0].items[2].items[0].value.value == 4


def test_the_memo_keeps_only_the_last_few_files():
    features._parsed.clear()
    for i in range(features.PARSE_MEMO_SIZE + 3):
        features.own_module(SourceFile(f"f{i}.sn", PLAN % 8))
    assert len(features._parsed) == features.PARSE_MEMO_SIZE
    assert ("f0.sn", PLAN % 8) not in features._parsed

"""Every value kind a plan field can declare (``sncc.plan.model.KINDS``) is known to the
language server: hover says what it takes (not the raw kind name), completion offers its
keywords (``off``, ``auto``, ``none``), and a token count gets token units.

``max_model_len = auto`` (kind ``tokens-or-auto``, the engine's own default length) was
added by the checks; hover printed ``takes tokens-or-auto`` and completion offered nothing.
"""

from __future__ import annotations

import pytest

from sncc.lsp import features
from sncc.plan import model as m
from sncc.source import SourceFile

PLAN = '''plan "p" {
  model "qwen3-32b" { max_model_len = %s }
  hardware { system = "hgx-h100" }
  serve { tp = 8 }
}
'''


def _at(text: str, needle: str, shift: int = 0) -> tuple[SourceFile, int]:
    return SourceFile("p.sn", text), text.index(needle) + shift


@pytest.mark.parametrize("kind", m.KINDS)
def test_every_kind_has_hover_text(kind):
    assert kind in features.KIND_TEXT, f"value kind {kind!r} has no hover/completion text"


def test_hover_on_max_model_len_names_auto():
    src, off = _at(PLAN % "auto", "max_model_len", 2)
    doc, _ = features.hover(src, off)
    assert "tokens-or-auto" not in doc
    assert "`auto`" in doc
    assert "* units:" in doc  # a token count takes token units


def test_completion_offers_auto_for_max_model_len():
    text = PLAN % "a"
    src, off = _at(text, "= a }", 3)
    labels = [c.label for c in features.complete(src, off)]
    assert "auto" in labels


def test_completion_offers_token_units_for_max_model_len():
    text = PLAN % "16"
    src, off = _at(text, "= 16 }", 4)
    labels = [c.label for c in features.complete(src, off)]
    assert "16k" in labels


def test_completion_offers_none_for_a_duration_or_none():
    assert features._kind(m.Proxy.model_fields["read_timeout"]) == "duration-or-none"
    text = PLAN.replace("serve {", "proxy { read_timeout = n }\n  serve {") % "auto"
    src, off = _at(text, "read_timeout = n", len("read_timeout = n"))
    labels = [c.label for c in features.complete(src, off)]
    assert "none" in labels


@pytest.mark.parametrize("kind", sorted(features.KIND_KEYWORDS))
def test_every_offered_keyword_is_accepted_by_the_builder(kind):
    """Completion offers only what the plan builder accepts (both lists name the keywords)."""
    from sncc.plan.build import _BAD, _Builder
    from sncc.syntax.parser import parse

    field = next(info for cls in m.Node.__subclasses__() for info in cls.model_fields.values()
                 if features._kind(info) == kind)
    for word, _ in features.KIND_KEYWORDS[kind]:
        tree, diags = parse(SourceFile("k.sn", f'plan "p" {{ x = {word} }}\n'))
        assert not diags
        assert _Builder().convert(kind, field, tree.blocks[0].items[0].value, "plan", "x") is not _BAD, word

"""Every value kind a plan field can declare (``sncc.plan.model.KINDS``) reaches fmt's
property tests and keeps its value through ``sncc fmt``.

fmt's hypothesis tests (tests/fmt/test_suppressions_stay.py) and the fuzzer draw plans from
``fuzzgen.value_text``; a kind it does not know gets a quoted string, which the builder
refuses, so that kind's real values (``max_model_len = auto``, kind ``tokens-or-auto``) were
never formatted by those tests.  Here, for every kind: a good share (a quarter; the rest
probe edge cases: secrets, overflows) of generated values is accepted by
the builder, the kind's keywords are among them, and fmt leaves each value's text as written
and formats idempotently.
"""

from __future__ import annotations

import random

import fuzzgen
import pytest

from sncc.fmt import format_source
from sncc.plan import model as m
from sncc.plan.build import _BAD, _Builder, _field_kind
from sncc.source import SourceFile
from sncc.syntax.parser import parse

#: keywords each kind accepts besides its literals (sncc.plan.build convert)
KEYWORDS = {"tokens-or-off": "off", "tokens-or-auto": "auto", "duration-or-none": "none"}


def _fields_by_kind() -> dict[str, tuple[str, object, list[str]]]:
    """The first (field name, field info, choices) of every kind a plan-model field declares."""
    out: dict = {}
    todo, seen = [m.Plan], set()
    while todo:
        cls = todo.pop(0)
        if cls in seen:
            continue
        seen.add(cls)
        for name, info in cls.model_fields.items():
            sub = fuzzgen.submodel(info)
            if sub is not None:
                todo.append(sub)
                continue
            out.setdefault(_field_kind(info), (name, info, fuzzgen._choices(info)))
    return out


FIELDS = _fields_by_kind()


@pytest.mark.parametrize("kind", sorted(set(FIELDS) - {"env-map"}))
def test_generated_values_of_every_kind_build_and_survive_fmt(kind):
    name, info, choices = FIELDS[kind]
    rng = random.Random(f"kind-{kind}")
    texts = [fuzzgen.value_text(rng, kind, name, choices) for _ in range(80)]
    accepted = 0
    for text in texts:
        plan = f'plan "p" {{ {name} = {text} }}\n'
        tree, diags = parse(SourceFile("k.sn", plan))
        assert tree is not None and not diags, (text, diags)
        value = tree.blocks[0].items[0].value
        b = _Builder()
        if b.convert(kind, info, value, "plan", name) is not _BAD:
            accepted += 1
        out = format_source(SourceFile("k.sn", plan))
        assert f"{name} = {text}" in out, f"fmt changed the value text {text!r}: {out!r}"
        assert format_source(SourceFile("k.sn", out)) == out
    assert accepted >= len(texts) // 4, f"only {accepted} of {len(texts)} generated {kind} values build: {texts[:8]}"
    if kind in KEYWORDS:
        assert KEYWORDS[kind] in texts, f"the generator never writes `{KEYWORDS[kind]}` for {kind}"

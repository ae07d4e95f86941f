"""`sncc fmt` keeps every suppression comment covering the same items and is idempotent
(issue 14 item 35: a suppression moved off the line it covered turned a passing plan into a
failing one, and a second `fmt` changed the file again).  Tested with hypothesis over the
grammar: derivations of grammar/sncc.lark and plan-model plans (tests/fuzzgen.py) with
suppression comments inserted at random places — after an item, alone on a line before one,
inside a one-line block, after a closing brace."""

from __future__ import annotations

import random

import fuzzgen
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sncc.diagnostics.filters import scan_comments, suppression_ranges
from sncc.fmt import format_source
from sncc.source import SourceFile
from sncc.syntax import ast
from sncc.syntax.parser import parse

SUPPRESS = ["  # sncc: ignore[SN3001] measured", "  # sncc: ignore[SN4008, SN4004] short prompts", "  # sncc: ignore[]",
            "  # sncc: ignore[SN2001]"]


def _anchors(node, text: str, item=None, split=False):
    """``(offset, item, split)`` of everything a diagnostic can point at, in source order:
    ``item`` is the span of the key-value item (or block header, name to ``{``) it belongs to,
    ``split`` whether it lies in a block whose header the source broke over lines."""
    if isinstance(node, ast.Module):
        for n in sorted(list(node.imports) + list(node.blocks), key=lambda n: n.span.start):
            yield from _anchors(n, text)
    elif isinstance(node, ast.Block):
        start = (node.label.span if node.label is not None else node.name_span).end
        header = (node.span.start, start + _brace(text[start:]) + 1)
        split = split or any(ch in "\r\n" for ch in text[header[0]:header[1]])
        if not node.items:  # `name {` and `}` on different lines become `name {}`
            header = (node.span.start, node.span.end)
        yield node.name_span.start, header, split
        if node.label is not None:
            yield node.label.span.start, header, split
        for n in node.items:
            yield from _anchors(n, text, None, split)  # (no diagnostic points at a closing brace)
    elif isinstance(node, (ast.Assignment, ast.Comparison)):
        whole = (node.span.start, node.span.end)
        yield node.key.span.start, whole, split
        yield from _anchors(node.value, text, whole, split)
    elif isinstance(node, ast.Import):
        yield node.path.span.start, (node.span.start, node.span.end), split
    elif isinstance(node, (ast.ListLit, ast.Call)):
        yield node.span.start, item, split
        for v in (node.items if isinstance(node, ast.ListLit) else node.args):
            yield from _anchors(v, text, item, split)
    else:
        yield node.span.start, item, split


def _brace(text: str) -> int:
    """Offset of the first ``{`` outside comments in ``text``."""
    i = 0
    while text[i] != "{":
        if text[i] == "#":
            while text[i] not in "\r\n":
                i += 1
        else:
            i += 1
    return i


def _covers(src: SourceFile, r, offset: int) -> bool:
    first, last, end = r
    if first is None:
        return False
    line = src.line_col(offset)[0]
    return line == first or (first < line <= last and end is not None and offset < end)


def coverage(src: SourceFile) -> list[tuple[frozenset[int], bool]] | None:
    """For each anchor of the parsed file: the suppressions (by order in the file) that cover
    it, and whether fmt may widen that: its item is split over lines or has a comment inside
    (fmt writes it on one line, the comment before it), or it lies in a block whose `{` the
    source put on a later line than the name (fmt joins them, and a suppression of the header
    line covers the whole block)."""
    module, _ = parse(src)
    if module is None:
        return None
    ranges = suppression_ranges(src)
    comments = [c.start for c in scan_comments(src.text)]
    out = []
    for offset, (start, end), split in _anchors(module, src.text):
        loose = split or any(start < c < end for c in comments) or src.line_col(start)[0] != src.line_col(end)[0]
        out.append((frozenset(k for k, r in enumerate(ranges) if _covers(src, r, offset)), loose))
    return out


def with_suppressions(rng: random.Random, text: str) -> str:
    """``text`` with 1-4 suppression comments at line ends, on lines of their own, or after braces."""
    for _ in range(rng.randint(1, 4)):
        lines = text.split("\n")
        i = rng.randrange(len(lines))
        c = rng.choice(SUPPRESS)
        r = rng.random()
        if r < 0.5:
            lines[i] = lines[i] + c
        elif r < 0.8:
            lines.insert(i, c.strip())
        else:
            j = lines[i].find("}")
            if j >= 0:
                lines[i] = lines[i][: j + 1] + c + "\n" + lines[i][j + 1:]
            else:
                lines[i] = lines[i] + c
        text = "\n".join(lines)
    return text


def _source(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.5:
        base = fuzzgen.model_plan(rng)
    elif r < 0.8:
        base = rng.choice(fuzzgen.EXAMPLES).read_text(encoding="utf-8")
    else:
        base = fuzzgen.grammar_text(rng)
    return with_suppressions(rng, base)


def closes_then_continues(src: SourceFile) -> bool:
    """True when a line a suppression covers closes a block opened on an earlier line and then
    goes on with more items (``model = "x" }  tp = 2`` under ``# sncc: ...``): the only input
    whose coverage fmt cannot keep, since the items on both sides of the ``}`` belong to
    different blocks and go on different lines.  Documented in :mod:`sncc.fmt`."""
    lines = {r[0] for r in suppression_ranges(src) if r[0] is not None}
    if not lines:
        return False
    module, _ = parse(src)
    opened: list[int] = []
    def walk(node):
        if isinstance(node, ast.Block):
            close = node.span.end - 1
            start_line, close_line = src.line_col(node.span.start)[0], src.line_col(close)[0]
            yield close, start_line != close_line and close_line in lines
            for n in node.items:
                yield from walk(n)
        elif isinstance(node, ast.Module):
            for n in node.blocks:
                yield from walk(n)
    closes = [c for c, flagged in walk(module) if flagged]
    anchors = [a for a, _, _ in _anchors(module, src.text)]
    return any(src.line_col(a)[0] == src.line_col(c)[0] and a > c for c in closes for a in anchors)


def suppression_inside_an_item(src: SourceFile) -> bool:
    """True when a suppression comment sits inside a key-value item (between its key and its
    value, inside a list or call): fmt moves it before the item's line, as every comment there."""
    module, _ = parse(src)
    items = {item for _, item, _ in _anchors(module, src.text) if item is not None}
    sups = [c.start for c in scan_comments(src.text) if c.text.lstrip("#").strip().startswith("sncc")]
    return any(a < c < b for c in sups for a, b in items)


def check_fmt(text: str) -> None:
    src = SourceFile("x.sn", text)
    before = coverage(src)
    if before is None or closes_then_continues(src) or suppression_inside_an_item(src):
        return  # the two layouts fmt documents it cannot keep a suppression's reach through
    once = format_source(src)
    twice = format_source(SourceFile("x.sn", once))
    assert twice == once, "fmt is not idempotent"
    after = coverage(SourceFile("x.sn", once))
    assert after is not None, "fmt output does not parse"
    assert len(after) == len(before)
    # nothing covered before is uncovered (a passing plan stays passing); nothing is newly
    # covered, except in an item split over lines or with a comment inside (now on one line)
    lost = [i for i, ((b, _), (a, _)) in enumerate(zip(before, after)) if not b <= a]
    assert not lost, f"suppressions no longer cover anchors {lost[:5]} after fmt"
    gained = [i for i, ((b, inner), (a, _)) in enumerate(zip(before, after)) if a != b and not inner]
    assert not gained, f"suppressions newly cover anchors {gained[:5]} after fmt"


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=st.randoms(use_true_random=False).map(_source))
# found when this ran after tests/checks/test_examples.py: a block whose header a comment
# splits, ending on the line a suppression after the enclosing `}` covers
@example(text='plan "fuzz" { ASCEND_RT_VISIBLE_DEVICES "0.11.0" { ; ; } ; ASCEND_RT_VISIBLE_DEVICES  # comment\n'
              '{ ASCEND_RT_VISIBLE_DEVICES { } ; } ; }   # sncc: ignore[SN3001] measured')
def test_fmt_keeps_suppressions_and_is_idempotent(text):
    check_fmt(text)


@pytest.mark.parametrize("text", [
    # a one-line block too wide to stay compact, its suppression after the closing brace
    'plan "p" {\n  decode { ' + "  ".join(f"k{i} = {i}" for i in range(14)) + " }  # sncc: ignore[SN3001] measured\n}\n",
    # a suppression alone on its line before a compact block
    'plan "p" {\n  # sncc: ignore[SN3001] measured\n  decode { tp = 1  ep = 64 }\n  serve { tp = 2 }\n}\n',
    # items sharing a covered line inside an expanded block
    'plan "p" {\n  decode {\n    tp = 1  ep = 64  # sncc: ignore[SN3001] measured\n    max_num_seqs = 8\n  }\n}\n',
    # a suppression after an item inside a block the writer wrote on one line
    'plan "p" {\n  decode { tp = 1  # sncc: ignore[SN3001] measured\n  ep = 64 }\n}\n',
    # after a closing brace followed by another item on the same line
    'plan "p" {\n  decode { tp = 1 }  # sncc: ignore[SN3001] measured\n  serve { tp = 1 } prefill { tp = 2 }\n}\n',
    # a block whose header a comment splits, its body on the line a suppression after the
    # enclosing block's `}` covers (the inner items moved off that line)
    'plan "p" {\n  decode  # c\n  { inner { tp = 1 } } }  # sncc: ignore[SN3001] measured\n',
    # the same, too wide to stay compact: the suppression goes on the header line
    'plan "p" {\n  decode  # c\n  { inner { ' + "  ".join(f"k{i} = {i}" for i in range(14)) + " } } }  # sncc: ignore[SN3001] measured\n",
    # a comment inside the body: the block cannot be written on the covered line
    'plan "p" {\n  decode  # c\n  { inner { tp = 1 }  # c2\n  } }  # sncc: ignore[SN3001] measured\n',
])
def test_fixed_cases(text):
    check_fmt(text)


def test_a_line_of_separators_alone_is_skipped_by_a_suppression_standing_above_it():
    """Found by the property above: a suppression alone on a line, then a line holding only
    `; ;`, covered that empty line, and `fmt` (which drops the separators) moved the next
    item under it, so the formatted file suppressed more than its source."""
    text = 'plan "p" {\n  # sncc: ignore[SN3001] measured\n  ; ;\n  decode { tp = 1 }\n}\n'
    src = SourceFile("p.sn", text)
    ((first, _, _),) = suppression_ranges(src)
    assert first == 4
    out = format_source(src)
    ((first_out, _, _),) = suppression_ranges(SourceFile("p.sn", out))
    assert SourceFile("p.sn", out).line_text(first_out).strip().startswith("decode")

"""The static shell reader of `sncc import`: words with offsets, expansion from earlier
assignments, nothing executed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sncc.importer.shell import read_script


def _words(text: str):
    return [[w.text for w in c.words] for c in read_script(text).commands]


def test_continuations_quotes_and_comments():
    text = "vllm serve m \\\n  --a '{\"x\": 1}' \\\n  --b \"two words\"  # comment\n"
    assert _words(text) == [["vllm", "serve", "m", "--a", '{"x": 1}', "--b", "two words"]]
    w = read_script(text).commands[0].words[4]
    assert text[w.start:w.end] == "'{\"x\": 1}'"


def test_variables_expand_from_earlier_assignments_only():
    text = "export TP=8\nPORT=9000\nvllm serve m -tp $TP --port ${PORT} --x ${UNSET:-7} --y $LATER --z $(hostname) --w `id`\nLATER=1\n"
    sc = read_script(text)
    words = sc.commands[0].words
    assert [w.text for w in words[3:]] == ["-tp", "8", "--port", "9000", "--x", "7", "--y", "$LATER", "--z", "$(hostname)",
                                           "--w", "`id`"]
    assert [bool(w.unresolved) for w in words[3:]] == [False] * 6 + [False, True, False, True, False, True]
    assert [(n, exported) for n, _, exported in sc.assignments] == [("TP", True), ("PORT", False), ("LATER", False)]


def test_inline_env_background_and_conditionals():
    sc = read_script("if [ -n x ]; then A=1; else A=2; fi\nCUDA_VISIBLE_DEVICES=0,1 vllm serve m$A &\n")
    cmd = sc.commands[-1]
    assert [n for n, _ in cmd.inline_env] == ["CUDA_VISIBLE_DEVICES"] and cmd.background
    assert cmd.words[2].text == "m2" and [w.text for w in sc.conditionals] == ["if", "then", "else", "fi"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab $'\"\\{}()`#;&|=-\n\t")), max_size=60))
def test_any_text_is_read_without_raising_and_offsets_stay_in_the_text(text):
    sc = read_script(text)
    for c in sc.commands:
        for w in c.words:
            assert 0 <= w.start <= w.end <= len(text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["--tensor-parallel-size", "-tp", "8", "x", "--max-model-len", "1k", "--enforce-eager=no",
                                 "--speculative-config", "'{\"method\": 1}'", "--hf-overrides", "'[]'", "--config",
                                 "c.yaml", "--no-such", "$V", "'<p>'", "\\\n", "--headless", "&", ";", "vllm serve m"]),
                max_size=14))
def test_import_of_any_command_gives_diagnostics_not_exceptions(parts):
    from sncc.importer import import_sources
    from sncc.source import SourceFile

    res = import_sources([SourceFile("run.sh", "export V=1\nvllm serve m " + " ".join(parts) + "\n")],
                         system="hgx-h100", engine_version="0.11.0", reader=lambda p: (_ for _ in ()).throw(OSError(p)))
    assert all(d.span is not None for d in res.diagnostics)


def test_redirections_are_not_words_of_the_command():
    """`> log`, `2>&1`, `>>f`, `2>>f`, `&> f`, `< in`, `>&2`: the shell applies them to the command and
    removes them from its arguments (bash manual, Redirections); `nohup vllm serve ... > serve.log 2>&1 &`
    gave the engine the arguments `>`, `serve.log`, `2>` and a command `1`."""
    for line in ("vllm serve m --a 1 > serve.log 2>&1 &", "vllm serve m --a 1 >>serve.log 2>>err.log",
                 "vllm serve m --a 1 &> all.log", "vllm serve m < /dev/null --a 1", "vllm serve m --a 1 >&2",
                 "vllm serve m --a 1 2> 'err file.log'", "vllm serve m --a 1 1>out.log 2>&1"):
        sc = read_script(line + "\n")
        assert [[w.text for w in c.words] for c in sc.commands] == [["vllm", "serve", "m", "--a", "1"]], line
    assert read_script("vllm serve m > serve.log 2>&1 &\n").commands[0].background
    # a `>` inside quotes, or a digit not glued to it, is an ordinary word
    assert _words("vllm serve m --x '>' --y \"a>b\" --n 2 > f\n") == [["vllm", "serve", "m", "--x", ">", "--y", "a>b", "--n", "2"]]

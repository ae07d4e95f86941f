"""`${VAR:=default}` / `${VAR=default}` (assign the default) and `${VAR:+alt}` / `${VAR+alt}` (the
alternative when set) expand as bash does (GNU Bash manual, "Shell Parameter Expansion":
`${parameter:=word}` "If parameter is unset or null, the expansion of word is assigned to
parameter"; `${parameter:+word}` "If parameter is null or unset, nothing is substituted, otherwise
the expansion of word is substituted"; without the colon only unset counts;
https://www.gnu.org/software/bash/manual/html_node/Shell-Parameter-Expansion.html).  Before, both
were "not a plain expansion" (SN8005).  Forms the reader does not evaluate stay SN8005 at the word."""

from __future__ import annotations

import pytest

from sncc.importer import import_sources
from sncc.importer.shell import read_script
from sncc.source import SourceFile


def _texts(text):
    sc = read_script(text)
    return [[(w.text, w.unresolved) for w in c.words] for c in sc.commands]


def test_assign_default_expands_and_sets_the_variable_for_later_lines():
    got = _texts(': "${PORT:=8000}"\nE=\nvllm serve m --port $PORT ${E:=filled} $E ${U=unset-only} $U\n')
    # bash 5.2: `: 8000`, then `vllm serve m --port 8000 filled filled unset-only unset-only`
    assert got[0] == [(":", ""), ("8000", "")]
    assert [t for t, _ in got[1][3:]] == ["--port", "8000", "filled", "filled", "unset-only", "unset-only"]
    assert not any(why for _, why in got[1])


def test_assign_default_keeps_a_set_value():
    got = _texts("PORT=9000\nE=\nvllm serve m ${PORT:=8000} ${E=kept-empty}x\n")
    assert [t for t, _ in got[0][3:]] == ["9000", "x"]


def test_alternative_is_the_word_when_set_and_nothing_when_unset():
    got = _texts('Q=fp8\nE=\nvllm serve m ${Q:+--quantization $Q} x${U:+alt} x${E:+alt} x${E+alt}\n')
    # bash 5.2 (unquoted, word-split): --quantization fp8 x x xalt
    assert [t for t, _ in got[0][3:]] == ["--quantization", "fp8", "x", "x", "xalt"]
    assert not any(why for _, why in got[0])


def test_import_reads_an_alternative_option():
    text = ('export HCCL_BUFFSIZE=512\nLEN=16384\n'
            'vllm serve Qwen/Qwen3-32B -tp 4 ${LEN:+--max-model-len $LEN} --max-num-seqs ${SEQS:=32}\n')
    res = import_sources([SourceFile("run.sh", text)])
    assert not [d for d in res.diagnostics if d.code.code == "SN8005"], [d.message for d in res.diagnostics]
    assert "max_model_len = 16384" in res.text and "max_num_seqs = 32" in res.text, res.text


@pytest.mark.parametrize("form", ["${LEN%%00}", "${LEN/1/2}", "${#LEN}", "${LEN:0:2}", "${LEN:?unset}"])
def test_other_forms_stay_a_located_diagnostic(form):
    text = f"export HCCL_BUFFSIZE=512\nLEN=16384\nvllm serve Qwen/Qwen3-32B -tp 4 --max-model-len {form}\n"
    res = import_sources([SourceFile("run.sh", text)])
    (d,) = [d for d in res.diagnostics if d.code.code == "SN8005"]
    assert text[d.span.start:d.span.end] == form
    assert "not evaluated" in d.message

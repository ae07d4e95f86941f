"""`${VAR:-default}` whose default names another variable (`${MODEL:-$MODEL_DIR/Qwen3-32B}`,
`${PORT:-${BASE_PORT:-8000}}`): the default is expanded from the variables set before, as bash does
(GNU Bash manual, "Shell Parameter Expansion": the word of `${parameter:-word}` "is subject to tilde
expansion, parameter expansion, command substitution, and arithmetic expansion";
https://www.gnu.org/software/bash/manual/html_node/Shell-Parameter-Expansion.html).  Before, the
default was taken as written (`$MODEL_DIR/Qwen3-32B`), a resolved word holding a `$`."""

from __future__ import annotations

from expect import compile_text

from sncc.importer import import_sources
from sncc.importer.shell import read_script
from sncc.source import SourceFile

SCRIPT = ('MODEL_DIR=/data/models\n'
          'BASE_PORT=9000\n'
          'vllm serve ${MODEL:-$MODEL_DIR/Qwen3-32B} --port "${PORT:-${BASE_PORT:-8000}}" -tp 2 \\\n'
          '  --max-model-len ${MAX_LEN:-$((8192))}\n')


def _words(text):
    return read_script(text).commands[0].words


def test_a_default_naming_a_variable_is_expanded_and_the_words_keep_their_offsets():
    ws = _words(SCRIPT)
    assert [w.text for w in ws[2:7]] == ["/data/models/Qwen3-32B", "--port", "9000", "-tp", "2"]
    assert not any(w.unresolved for w in ws[2:7])
    for w, written in zip(ws[2:7], ["${MODEL:-$MODEL_DIR/Qwen3-32B}", "--port", '"${PORT:-${BASE_PORT:-8000}}"',
                                    "-tp", "2"]):
        assert SCRIPT[w.start:w.end] == written
    # an arithmetic default is a command the reader does not run: unresolved, never a number
    assert ws[-1].unresolved and SCRIPT[ws[-1].start:ws[-1].end] == "${MAX_LEN:-$((8192))}"


def test_nested_defaults_and_quotes_follow_bash():
    ws = _words('O=o\nE=\nvllm serve "${U:-$O/${O}x}" ${E:-set-but-empty} ${E-unset-only} "${U:-\'q $O\'}" '
                "${U:-'q $O'} ${U:-\\$O}\n")
    # bash 5.2: o/ox, set-but-empty, 'q o', q $O, $O (the unquoted empty `${E-unset-only}` is no word)
    assert [w.text for w in ws[2:]] == ["o/ox", "set-but-empty", "'q o'", "q $O", "$O"]
    assert not any(w.unresolved for w in ws[2:])


def test_a_default_naming_an_unset_variable_is_unresolved_with_its_name():
    (w,) = _words("vllm serve ${MODEL:-$MODEL_DIR/m}\n")[2:]
    assert w.unresolved and "$MODEL_DIR" in w.unresolved


def test_import_takes_the_expanded_default_and_locates_it():
    text = ("export HCCL_BUFFSIZE=512\nDEFAULT_LEN=16384\n"
            "vllm serve Qwen/Qwen3-32B -tp 4 --max-model-len ${MAX_LEN:-$DEFAULT_LEN} --quantization ascend\n")
    res = import_sources([SourceFile("run.sh", text)])
    assert "max_model_len = 16384  # from run.sh:3" in res.text, res.text
    assert not [d for d in res.diagnostics if d.code.code == "SN8005"], [d.message for d in res.diagnostics]
    assert compile_text(res.text).plan.model.max_model_len == 16384


def test_import_reports_the_unset_variable_of_a_default_at_its_word():
    text = "export HCCL_BUFFSIZE=512\nvllm serve Qwen/Qwen3-32B -tp 4 --max-model-len ${MAX_LEN:-$DEFAULT_LEN}\n"
    res = import_sources([SourceFile("run.sh", text)])
    (d,) = [d for d in res.diagnostics if d.code.code == "SN8005"]
    assert "$DEFAULT_LEN" in d.message and text[d.span.start:d.span.end] == "${MAX_LEN:-$DEFAULT_LEN}"

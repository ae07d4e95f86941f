"""Bash arrays in launch scripts: `ARGS=(--tensor-parallel-size 4 ...)` then `vllm serve m "${ARGS[@]}"`
imports the array's words as the command's (was SN8001 "`${ARGS[@]}` is an extra positional
argument", an error on a script that runs); `${ARGS[1]}` is one element, `$ARGS` the first; an array
the reader did not see stays unresolved (SN8005), never an extra positional."""

from __future__ import annotations

from sncc.importer import import_sources
from sncc.importer.shell import read_script
from sncc.source import SourceFile


def _words(text: str):
    return [[w.text for w in c.words] for c in read_script(text).commands]


def test_array_expansions_become_words():
    text = ("ARGS=(--tensor-parallel-size 4 \\\n  --max-model-len '8192')\nEXTRA=( --port 8000 )\n"
            'vllm serve m "${ARGS[@]}" ${EXTRA[*]} --x ${ARGS[1]} --y $ARGS\n')
    assert _words(text) == [["vllm", "serve", "m", "--tensor-parallel-size", "4", "--max-model-len", "8192",
                             "--port", "8000", "--x", "4", "--y", "--tensor-parallel-size"]]


def test_array_words_are_located_at_the_expansion_and_expand_variables():
    text = 'TP=8\nARGS=(--tensor-parallel-size "$TP")\nvllm serve m "${ARGS[@]}"\n'
    words = read_script(text).commands[0].words
    assert [w.text for w in words[3:]] == ["--tensor-parallel-size", "8"]
    assert all(text[w.start:w.end] == '"${ARGS[@]}"' for w in words[3:])


def test_an_array_the_reader_did_not_see_is_unresolved_not_an_extra_positional():
    res = import_sources([SourceFile("run.sh", 'vllm serve Qwen/Qwen3-32B "${ARGS[@]}" --max-model-len 8192\n')],
                         system="hgx-h100", engine_version="0.11.0", reader=lambda p: (_ for _ in ()).throw(OSError(p)))
    codes = [d.code.code for d in res.diagnostics]
    assert "SN8001" not in codes and "SN8005" in codes, [(d.code.code, d.message) for d in res.diagnostics]


def test_a_script_with_an_array_imports_its_options():
    script = ("MODEL=/models/Qwen3-32B\nARGS=(--tensor-parallel-size 4 --max-model-len 8192)\n"
              'vllm serve "$MODEL" "${ARGS[@]}" --port 8000\n')
    res = import_sources([SourceFile("run.sh", script)], system="hgx-h100", engine_version="0.11.0",
                         reader=lambda p: (_ for _ in ()).throw(OSError(p)))
    assert not res.has_errors, [(d.code.code, d.message) for d in res.diagnostics]
    assert "tp = 4  # from run.sh:3" in res.text and "max_model_len = 8192  # from run.sh:3" in res.text

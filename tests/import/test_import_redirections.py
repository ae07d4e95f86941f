"""Shell redirections are not arguments: `vllm serve ... > server.log 2>&1 &` (the vllm-ascend
tutorials' `nohup` form) and `... 2>&1 | tee log` import the command without the redirections and
their targets; a here-document's body is not read as commands."""

from __future__ import annotations

import pytest

from sncc.importer import import_sources
from sncc.importer.shell import read_script
from sncc.source import SourceFile


def _words(text: str):
    return [[w.text for w in c.words] for c in read_script(text).commands]


@pytest.mark.parametrize("tail", [
    "> server.log 2>&1 &", ">server.log 2>&1", ">> log.txt 2>&1", "2>/dev/null", "2> err.log 1>out.log",
    "&> server.log &", "&>>server.log", ">&2", "2>&1 | tee server.log", "1>&2", "< /dev/null", ">| out.log",
    "> >(tee out.log) 2>&1",
])
def test_redirections_and_their_targets_are_not_words(tail):
    words = _words(f"vllm serve m --port 8000 {tail}\n")
    assert words[0] == ["vllm", "serve", "m", "--port", "8000"], words


def test_a_redirection_glued_to_a_word_ends_it_but_a_quoted_one_does_not():
    assert _words("vllm serve m --port=8000>log\n")[0] == ["vllm", "serve", "m", "--port=8000"]
    # bash: digits alone before `>` are the descriptor (`8000>log` redirects fd 8000)
    assert _words("vllm serve m --port 8000>log\n")[0] == ["vllm", "serve", "m", "--port"]
    assert _words("vllm serve <model_path> --port <port>\n")[0] == ["vllm", "serve", "<model_path>", "--port", "<port>"]
    assert _words("vllm serve m --x 'a>b' --y \"c<d\"\n")[0] == ["vllm", "serve", "m", "--x", "a>b", "--y", "c<d"]


def test_redirection_before_the_program_and_exec_redirection_alone():
    assert _words("exec > run.log 2>&1\n2>err.log vllm serve m\n") == [["vllm", "serve", "m"]]


def test_here_document_body_is_not_commands():
    text = ("cat > cfg.yaml <<'EOF'\nvllm serve not-this --tp 1\nmax-num-seqs: 8\nEOF\n"
            "cat <<-END\n\tvllm serve nor-this\n\tEND\n"
            "vllm serve m --config cfg.yaml\n")
    assert _words(text) == [["cat"], ["cat"], ["vllm", "serve", "m", "--config", "cfg.yaml"]]


def test_nohup_tutorial_line_imports_its_model_without_errors():
    script = ("nohup vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4 --max-model-len 8192 "
              "> server.log 2>&1 &\n")
    res = import_sources([SourceFile("run.sh", script)], system="hgx-h100", engine_version="0.11.0",
                         reader=lambda p: (_ for _ in ()).throw(OSError(p)))
    assert not res.has_errors, [d.message for d in res.diagnostics]
    assert 'model "Qwen/Qwen3-32B"' in res.text and "2>" not in res.text

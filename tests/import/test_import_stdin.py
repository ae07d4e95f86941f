"""`sncc import -` reads the launch command from stdin (a pasted `vllm serve` line), as `check -`
and `fmt -` read a plan; it was "cannot read `-`: No such file or directory"."""

from __future__ import annotations

from click.testing import CliRunner

from sncc.cli import main


def test_import_reads_stdin():
    r = CliRunner().invoke(main, ["import", "-", "--system", "hgx-h100"],
                           input="vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len 4096\n")
    assert r.exit_code == 0, r.output
    assert 'model "Qwen/Qwen3-32B"' in r.output and "tp = 2  # from <stdin>:1" in r.output


def test_check_import_reads_stdin():
    r = CliRunner().invoke(main, ["check", "--import", "-", "--system", "hgx-h100"],
                           input="vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len 4096\n")
    assert r.exit_code == 0, r.output
    assert "cannot read" not in r.output

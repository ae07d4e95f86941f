"""The acceptance `sncc import` writes for a `--speculative-config` without a measured rate:
plan_keys.toml `[speculative]` names the methods its DeepSeek-V3 MTP figure is written for; an
n-gram drafter (prompt lookup) is not one of them, and is left unset for the user to measure."""
from __future__ import annotations

from expect import compile_text

from sncc.importer import import_sources
from sncc.importer.plan_keys import speculative_defaults
from sncc.source import SourceFile


def _imp(method):
    line = ("vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4 --max-model-len 8192 "
            f"--speculative-config '{{\"method\": \"{method}\", \"num_speculative_tokens\": 3}}'\n")
    return import_sources([SourceFile("run.sh", line)], system="hgx-h100")


def test_an_ngram_drafter_gets_no_mtp_acceptance():
    res = _imp("ngram")
    assert "# acceptance = ?  # no sourced default for `method = ngram`" in res.text, res.text
    assert "DeepSeek-V3" not in res.text and "arXiv:2412.19437" not in res.text
    (d,) = [d for d in res.diagnostics if "acceptance" in d.message]
    assert d.code.code == "SN8008" and "left unset" in d.message
    assert [x.code.code for x in compile_text(res.text).diagnostics if "acceptance" in x.message] == ["SN2005"]


def test_an_mtp_drafter_keeps_the_sourced_default():
    res = _imp("mtp")
    sd = speculative_defaults()
    assert f"acceptance = {sd['acceptance_when_unstated']}  # assumed, measure it: {sd['acceptance_source']}" in res.text


def test_the_default_names_the_methods_it_is_written_for():
    methods = speculative_defaults()["acceptance_methods"]
    assert "mtp" in methods and "ngram" not in methods

"""vLLM's n-gram drafter matches the last n tokens against the prompt for n from
`prompt_lookup_min` to `prompt_lookup_max` (vllm/config/speculative.py SpeculativeConfig: the two
fields, each `ge=1`; __post_init__ for `ngram`: both unset is 5 and 5, one unset takes the other's
value, `prompt_lookup_min` above `prompt_lookup_max` is a ValueError).  The plan's
`speculative { prompt_lookup_max  prompt_lookup_min }` are written into `--speculative-config`
with vLLM's spelling, `sncc import` reads them back (they were SN8004, dropped), a window whose
minimum is above its maximum is an error, and the keys on a method that does not read them are a
warning."""

from __future__ import annotations

import json

import pytest

from expect import compile_text, outputs_of, role_yaml

from sncc.importer import import_sources
from sncc.source import SourceFile

PLAN = '''plan "ngram" {
  model "qwen3-32b" {}
  hardware { system = "hgx-h100"  nodes = 1 }
  engine "vllm" { version = "0.23.0" }
  serve { devices = 8  tp = 8 }
  speculative { method = METHOD  draft_tokens = 4  acceptance = 0.5  WINDOW }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''


def _plan(window="prompt_lookup_max = 4  prompt_lookup_min = 2", method="ngram"):
    return PLAN.replace("WINDOW", window).replace("METHOD", method)


def test_the_window_is_written_with_vllms_spelling():
    spec = json.loads(role_yaml(outputs_of(_plan()), "serve")["speculative-config"])
    assert spec == {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4, "prompt_lookup_min": 2}


def test_no_window_writes_none_and_the_engine_keeps_its_default():
    spec = json.loads(role_yaml(outputs_of(_plan(window="")), "serve")["speculative-config"])
    assert spec == {"method": "ngram", "num_speculative_tokens": 4}


def test_a_minimum_above_the_maximum_is_an_error_at_the_minimum():
    text = _plan(window="prompt_lookup_max = 2  prompt_lookup_min = 4")
    (d,) = [d for d in compile_text(text).diagnostics if d.is_error]
    start = text.index("prompt_lookup_min = ") + len("prompt_lookup_min = ")
    assert d.span.start == start and "prompt_lookup_max" in d.message


def test_a_window_on_a_method_that_reads_none_is_a_warning():
    text = _plan(method="mtp", window="prompt_lookup_max = 4").replace('model "qwen3-32b" {}', 'model "deepseek-r1" {}')
    got = [d for d in compile_text(text).diagnostics if "prompt_lookup_max" in d.message]
    assert [d.code.code for d in got] == ["SN4015"], [(d.code.code, d.message) for d in compile_text(text).diagnostics]


def test_the_corrected_twin_is_clean():
    assert not [d for d in compile_text(_plan()).diagnostics if d.is_error or "prompt_lookup" in d.message]


def test_import_reads_the_window():
    text = ("vllm serve Qwen/Qwen3-32B -tp 8 --max-model-len 8192 --speculative-config "
            "'{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"prompt_lookup_max\": 4, \"prompt_lookup_min\": 2}'\n")
    res = import_sources([SourceFile("run.sh", text)], system="hgx-h100", engine_version="0.23.0")
    assert not [d for d in res.diagnostics if d.code.code == "SN8004"], [d.message for d in res.diagnostics]
    sp = compile_text(res.text.replace("# acceptance = ?", "acceptance = 0.5")).plan.serve.speculative
    assert (sp.prompt_lookup_max, sp.prompt_lookup_min) == (4, 2), res.text

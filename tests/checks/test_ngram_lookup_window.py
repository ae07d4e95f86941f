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


# --- the window in force per role: a role's block overrides the plan-level one key by key, so a role
# --- giving one end of the window and the plan-level block the other can still invert it

PD = '''plan "ngram-pd" {
  model "qwen3-32b" {}
  hardware { system = "hgx-h100"  nodes = 2 }
  engine "vllm" { version = "0.23.0" }
  prefill { devices = 8  tp = 8 }
  decode { devices = 8  tp = 8  speculative { ROLE } }
  speculative { method = ngram  draft_tokens = 4  acceptance = 0.5  TOP }
  kv_transfer { connector = nixl }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''


def _pd(role: str, top: str) -> str:
    return PD.replace("ROLE", role).replace("TOP", top)


def _window_errors(text: str):
    return [d for d in compile_text(text).diagnostics if d.is_error and "prompt_lookup" in d.message]


def _value_at(text: str, key: str, after: str) -> int:
    return text.index(f"{key} = ", text.index(after)) + len(f"{key} = ")


def test_a_role_minimum_above_the_plan_level_maximum_is_an_error_at_both():
    text = _pd("prompt_lookup_min = 6", "prompt_lookup_max = 4")
    (d,) = _window_errors(text)
    assert d.span.start == _value_at(text, "prompt_lookup_min", "decode {"), d
    assert "decode" in d.message and "6" in d.message and "4" in d.message, d.message
    (rel,) = d.related
    assert rel.span.start == _value_at(text, "prompt_lookup_max", "speculative { method"), rel
    assert d.path == ("decode", "speculative", "prompt_lookup_min")


def test_a_role_maximum_below_the_plan_level_minimum_is_an_error_at_the_role_value():
    text = _pd("prompt_lookup_max = 2", "prompt_lookup_min = 3")
    (d,) = _window_errors(text)
    assert d.span.start == _value_at(text, "prompt_lookup_max", "decode {"), d
    (rel,) = d.related
    assert rel.span.start == _value_at(text, "prompt_lookup_min", "speculative { method"), rel


def test_the_corrected_twins_are_clean():
    assert _window_errors(_pd("prompt_lookup_min = 3", "prompt_lookup_max = 4")) == []
    assert _window_errors(_pd("prompt_lookup_max = 5", "prompt_lookup_min = 3")) == []


def test_one_block_inverted_is_reported_once():
    # the role's own block inverts the window: its validator reports it (SN2004), the per-role check not again
    text = _pd("prompt_lookup_max = 2  prompt_lookup_min = 4", "prompt_lookup_max = 8")
    assert [d.code.code for d in _window_errors(text)] == ["SN2004"]

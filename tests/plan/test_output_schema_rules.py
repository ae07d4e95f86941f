"""What the output schemas refuse is already a `check` error (it once passed `check` and
failed `build` with SN9001): capture sizes with a 0 or a duplicate (`cudagraph_capture_sizes`
is `uniqueItems`, items >= 1), decode gears likewise, and a `base_url` / `local_endpoint`
without an http(s) scheme (settings.json `^https?://`)."""

from __future__ import annotations

import pytest

from tests_helpers import compile_plan

BASE = '''plan "m" {
  model "qwen3-32b" {}
  hardware { system = "atlas-800-a2"  nodes = 1  cann = "8.2.RC1" }
  engine "vllm-ascend" { version = "v0.11.0rc0" }
  serve { devices = 8  tp = 8 }
  graph { GRAPH }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
  gateway { GATEWAY }
}
'''


def _diags(graph="capture_sizes = [1, 2, 4, 8]", gateway='base_url = "https://api.example.com/v1"'):
    text = BASE.replace("GRAPH", graph).replace("GATEWAY", gateway)
    return text, compile_plan(text).diagnostics


def test_base_plan_is_clean():
    _, diags = _diags()
    assert not [d for d in diags if d.is_error], [(d.code.code, d.message) for d in diags]


@pytest.mark.parametrize("edit,bad", [
    ({"graph": "capture_sizes = [1, 2, 2, 8]"}, "[1, 2, 2, 8]"),
    ({"graph": "capture_sizes = [0, 8]"}, "[0, 8]"),
    ({"graph": "capture_sizes = [-4, 8]"}, "[-4, 8]"),
    ({"graph": "decode_gears = [8, 8]"}, "[8, 8]"),
    ({"graph": "decode_gears = [0]"}, "[0]"),
    ({"gateway": 'base_url = "api.example.com/v1"'}, '"api.example.com/v1"'),
    ({"gateway": 'base_url = "ftp://api.example.com"'}, '"ftp://api.example.com"'),
    ({"gateway": 'local_endpoint = "localhost:8000/v1"'}, '"localhost:8000/v1"'),
    ({"gateway": 'local_endpoint = "http://"'}, '"http://"'),
])
def test_what_the_schemas_refuse_is_one_located_error(edit, bad):
    text, diags = _diags(**edit)
    errs = [d for d in diags if d.is_error]
    codes = ("SN2004", "SN2009") if "graph" in edit else ("SN2004",)
    assert len(errs) == 1 and errs[0].code.code in codes, [(d.code.code, d.message) for d in diags]
    assert errs[0].span.start == text.index(bad)
    if "gateway" in edit:
        assert "http" in errs[0].message + (errs[0].help or "")


@pytest.mark.parametrize("url, says", [
    ("https://not a url", "whitespace"),
    ("http://", "names no host"),
    ("https:///v1", "names no host"),
])
def test_a_url_with_no_host_or_with_spaces_says_which(url, says):
    _, diags = _diags(gateway=f'base_url = "{url}"')
    errs = [d for d in diags if d.is_error]
    assert len(errs) == 1 and says in errs[0].message, [(d.code.code, d.message) for d in diags]

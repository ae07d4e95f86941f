"""SN2007 (a literal secret) wherever a credential can be placed: glued to word characters
(`"prefix_sk-live-…"`, which the `\\b` anchors skipped), as an `env("…")` variable name, as an
`env` key, in an enum or label; a plan `env` entry that sets the variable a secret reference
reads (the literal would be exported by env.sh) is an error; and the text format masks the
secret in its source excerpt."""

from __future__ import annotations

import pytest

from tests_helpers import compile_plan

BASE = '''plan "m" {
  model "qwen3-32b" { SERVED }
  hardware { system = "hgx-h100"  nodes = 1 }
  engine "vllm" {}
  serve { devices = 8  tp = 8 }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
  gateway { api_key = env("GATEWAY_API_KEY") GWEXTRA }
  env { ENV }
}
'''
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2"
AKIA = "AKIAIOSFODNN7EXAMPLE"
SK = "sk-live-4f9a8b7c6d5e4f3a2b1c"


def _plan(served="", gateway="", env="OMP_NUM_THREADS = 1"):
    text = BASE.replace("SERVED", served).replace("GWEXTRA", gateway).replace("ENV", env)
    return text, compile_plan(text).diagnostics


def test_clean_plan():
    _, diags = _plan()
    assert not [d for d in diags if d.is_error], [(d.code.code, d.message) for d in diags]


@pytest.mark.parametrize("where,secret", [
    ("served", f'served_name = "prefix_{SK}"'),
    ("served", f'served_name = "x{AKIA}y"'),
    ("served", f'served_name = "tok_{GHP}"'),
    ("served", f'served_name = "1{SK}"'),
    ("gateway", f'model_id = "{SK}"'),
    ("gateway", f'api_key = env("{GHP}")'),
    ("env", f"{AKIA} = 1"),
    ("env", f'NAME = "my_{SK}"'),
    ("env", f"NAME = {SK}"),
])
def test_placements_draw_sn2007(where, secret):
    kw = {where: secret}
    if where == "gateway" and secret.startswith("api_key"):
        text = BASE.replace('api_key = env("GATEWAY_API_KEY") GWEXTRA', secret).replace("SERVED", "").replace("ENV", "X = 1")
        diags = compile_plan(text).diagnostics
    else:
        text, diags = _plan(**kw)
    hits = [d for d in diags if d.code.code == "SN2007"]
    assert len(hits) == 1, [(d.code.code, d.message) for d in diags]
    for d in diags:  # no message repeats the secret
        for s in (SK, AKIA, GHP):
            assert s not in d.message and s not in (d.help or ""), d.message


def test_words_that_merely_contain_sk_are_not_secrets():
    _, diags = _plan(served='served_name = "task-abcdefghijkl"')
    assert not [d for d in diags if d.code.code == "SN2007"]


def test_env_entry_setting_a_secret_reference_is_an_error():
    text, diags = _plan(env='GATEWAY_API_KEY = "hunter2-plaintext-key"')
    hits = [d for d in diags if d.code.code == "SN2007"]
    assert len(hits) == 1, [(d.code.code, d.message) for d in diags]
    assert hits[0].span.start == text.index("GATEWAY_API_KEY = ")
    assert hits[0].related and hits[0].related[0].span.start == text.index('env("GATEWAY_API_KEY")')


def test_text_excerpt_masks_the_secret():
    from sncc.diagnostics import render_text

    text, diags = _plan(served=f'served_name = "prefix_{SK}"')
    comp = compile_plan(text)
    out = render_text.render(comp.diagnostics, comp.sources, 1)
    assert "SN2007" in out
    assert SK not in out and SK[:8] not in out
    assert 'served_name = "' in out  # the rest of the line is shown


def test_syntax_error_does_not_echo_a_credential_token():
    text = BASE.replace("SERVED", f"served_name = x {SK}").replace("GWEXTRA", "").replace("ENV", "X = 1")
    diags = compile_plan(text).diagnostics
    assert diags and diags[0].code.code == "SN1001"
    assert SK not in diags[0].message and SK[:10] not in diags[0].message

"""Every string key has a length bound with a located SN2009, never echoing the text.

Before: a 2 MB ``served_name`` was accepted and written into every launch script."""
from __future__ import annotations

from expect import ROOT, compile_text

BASE = (ROOT / "tests" / "golden" / "vllm-ascend-qwen3-32b-a2" / "plan.sn").read_text(encoding="utf-8")


def _errors(text):
    return [(d.code.code, d.message, d.help, d.span) for d in compile_text(text).diagnostics if d.is_error]


def test_a_2mb_served_name_is_an_error_at_the_value():
    long = "x" * 2_000_000
    text = BASE.replace('weights = "/data/models/Qwen3-32B"', f'weights = "/data/models/Qwen3-32B"  served_name = "{long}"')
    (err,) = _errors(text)
    assert err[0] == "SN2009" and "`served_name` is 2,000,000 characters long; it takes at most 4,096" == err[1]
    assert "PATH_MAX" in err[2] and long[:100] not in err[1] + err[2]
    assert text[err[3].start:err[3].start + 2] == '"x'


def test_4096_characters_pass_and_4097_do_not():
    ok = BASE.replace('"/data/models/Qwen3-32B"', '"/' + "d" * 4094 + '"')
    assert not [e for e in _errors(ok) if e[0] == "SN2009"]
    bad = BASE.replace('"/data/models/Qwen3-32B"', '"/' + "d" * 4096 + '"')
    assert [e[0] for e in _errors(bad)] == ["SN2009"]


def test_a_field_bound_and_the_env_value_bound():
    nic = BASE.replace('engine "vllm-ascend"', 'hosts { nic = "enp189s0f0enp189s0f0" }\n  engine "vllm-ascend"')
    (err,) = _errors(nic)
    assert "at most 15" in err[1] and "IFNAMSIZ" in err[2]
    env = BASE.replace("slo {", 'env { MY_CONFIG = "' + "v" * 200_000 + '" }\n  slo {')
    (err,) = _errors(env)
    assert "`MY_CONFIG` is 200,000 characters long" in err[1] and "MAX_ARG_STRLEN" in err[2]
    assert not _errors(BASE.replace("slo {", 'env { MY_CONFIG = "' + "v" * 5000 + '" }\n  slo {'))

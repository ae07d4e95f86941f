"""The driver runs vLLM's own parser, not a stand-in: known-bad command lines are rejected with vLLM's
own messages, release differences show, and parsed values come back as vLLM computes them.

Needs the vLLM virtualenvs (tools/setup_vllm_venv.sh); skips without them unless SNCC_REQUIRE_VLLM=1.
"""

from __future__ import annotations

import pytest

import conformance_harness as H

#: the releases the conformance stage pins (Omni-Infer release_v0.3.0 runs on 0.9.0; vllm-ascend
#: v0.11.0 / v0.23.0 on 0.11.0 / 0.23.0; 0.33.0 is the newest on PyPI that parses with torch 2.13.0)
PINNED = ("0.9.0", "0.11.0", "0.23.0", "0.33.0")

CASES = {
    "good": ["serve", "/models/m", "-tp", "4", "--max-num-seqs", "7", "--no-enable-prefix-caching"],
    "unknown-flag": ["serve", "/models/m", "--bogus-flag", "1"],
    "bad-int": ["serve", "/models/m", "--tensor-parallel-size", "two"],
    "bad-choice": ["serve", "/models/m", "--dtype", "float7"],
    "model-option": ["serve", "--model", "/models/m"],
    "bad-json": ["serve", "/models/m", "--compilation-config", "{not json"],
    "yaml-false": ["serve", "/models/m", "--config", "false.yaml"],
    "yaml-device": ["serve", "/models/m", "--config", "device.yaml"],
    "ascend-quant": ["serve", "/models/m", "--quantization", "ascend"],
}


@pytest.fixture(scope="module")
def verdicts(vllm_results, tmp_path_factory):
    """``{version: {case: result}}`` for every pinned release that has a virtualenv (checked in the
    same subprocess as the plans' command lines)."""
    cwd = tmp_path_factory.mktemp("parser-is-real")
    (cwd / "false.yaml").write_text("enable-chunked-prefill: false\nmax-num-seqs: 5\n")
    (cwd / "device.yaml").write_text("device: npu\n")
    cases = [{"id": f"parser-is-real::{k}", "argv": v, "cwd": str(cwd)} for k, v in CASES.items()]
    # what vllm-ascend's / Omni-Infer's NPUPlatform.pre_register_and_update adds to the parser
    cases.append({"id": "parser-is-real::ascend-quant-on-npu", "argv": CASES["ascend-quant"], "cwd": str(cwd),
                  "parser_choices": {"--quantization": ["ascend"]}})
    out = {}
    for version in PINNED:
        results = vllm_results.check(version, cases)
        if results is not None:
            out[version] = {k.split("::", 1)[1]: r for k, r in results.items()}
    return out


def _for(verdicts, version):
    if version not in verdicts:
        msg = f"no virtualenv with vLLM {version} (tools/setup_vllm_venv.sh {version})"
        if H.require_vllm():
            pytest.fail(msg + " and SNCC_REQUIRE_VLLM=1")
        pytest.skip(msg)
    return verdicts[version]


@pytest.mark.parametrize("version", PINNED)
def test_good_command_line_parses_to_vllms_values(verdicts, version):
    r = _for(verdicts, version)["good"]
    assert r["ok"], r
    assert r["launcher"] == "run_server"
    assert r["args"]["tensor_parallel_size"] == 4 and r["args"]["max_num_seqs"] == 7
    assert r["args"]["enable_prefix_caching"] is False


@pytest.mark.parametrize("version", PINNED)
@pytest.mark.parametrize("case, stage, message", [
    ("unknown-flag", "parse", "unrecognized arguments: --bogus-flag"),
    ("bad-int", "parse", "invalid int value: 'two'"),
    ("bad-choice", "parse", "invalid choice: 'float7'"),
    ("bad-json", "parse", "--compilation-config"),
    # 0.11.0 / 0.23.0: "unrecognized arguments: --device npu"; 0.9.0: "invalid choice: 'npu'";
    # 0.33.0: "ambiguous option: --device could match --device-ids, ..."
    ("yaml-device", "parse", "--device"),
])
def test_known_bad_command_lines_are_rejected(verdicts, version, case, stage, message):
    r = _for(verdicts, version)[case]
    assert not r["ok"], r
    assert r["stage"] == stage and message in r["error"], r


def test_model_option_rule_differs_between_releases(verdicts):
    """vLLM 0.11.0 refuses `--model` with `vllm serve` (issue 9); later releases accept it."""
    old = _for(verdicts, "0.11.0")["model-option"]
    assert not old["ok"] and "positional argument" in old["error"], old
    new = _for(verdicts, "0.33.0")["model-option"]
    assert new["ok"] and new["args"]["model"] == "/models/m", new


@pytest.mark.parametrize("version", ["0.9.0", "0.11.0", "0.23.0"])
def test_yaml_false_is_dropped_by_the_config_loader(verdicts, version):
    """`key: false` in a --config YAML leaves vLLM's default (issue 9): sncc must emit `--no-X` instead."""
    r = _for(verdicts, version)["yaml-false"]
    assert r["ok"], r
    assert r["args"]["max_num_seqs"] == 5
    assert r["args"]["enable_chunked_prefill"] is not False


def test_ascend_quantization_needs_the_npu_platforms_parser_addition(verdicts):
    """`--quantization ascend` is no vLLM choice: vllm-ascend's and Omni-Infer's platform append it to
    the parser before parsing (their manifests' parser_choices_added); plain vLLM 0.9.0 refuses it."""
    plain = _for(verdicts, "0.9.0")["ascend-quant"]
    assert not plain["ok"] and "invalid choice: 'ascend'" in plain["error"], plain
    assert _for(verdicts, "0.9.0")["ascend-quant-on-npu"]["ok"]

"""One rule turns a role's arguments into the TOML, the YAML and the command line, and the
three carry the same arguments (sncc/emit/args.py).

For every golden case and role: ``<role>.toml`` (vllm-ascend) minus the positional ``model`` ==
``<role>.yaml`` + the role's ``--no-X`` switches, which every launch script of the role passes;
the YAML has no ``false`` and no nested map (vLLM 0.11.0 drops the first and cannot parse the
second); what a launch script adds beyond them is only per-server flags.
"""

from __future__ import annotations

import json
import shlex

import pytest

from expect import ROOT, role_toml, role_yaml
from sncc.emit.args import cli_tokens, cli_words, split, yaml_scalar
from sncc.lowering.deployment import Arg, ShellValue

GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "plan.sn").is_file())
#: flags a launch script may add to the role's arguments: they differ per server process
PER_SERVER = {"port", "data-parallel-size-local", "data-parallel-address", "data-parallel-rpc-port",
              "data-parallel-start-rank", "headless", "data-parallel-rank", "data-parallel-size", "kv-transfer-config"}


def tree(case: str) -> dict[str, str]:
    exp = GOLDEN / case / "expected"
    return {p.relative_to(exp).as_posix(): p.read_text(encoding="utf-8") for p in exp.rglob("*") if p.is_file()}


def command(script: str) -> list[str]:
    """The argv after ``exec`` in a launch script (line continuations joined, shell-split)."""
    body = script.split("\nexec ", 1)[1].replace("\\\n", " ")
    body = body.replace('"$SNCC_OUT/', '"OUT/')
    return shlex.split(body)


def flags_of(argv: list[str]) -> dict[str, object]:
    """``--name value`` / ``--name`` / ``--no-name`` pairs of a vllm serve argv (after the model)."""
    out: dict[str, object] = {}
    i = 5  # vllm serve <model> --config <file>
    while i < len(argv):
        a = argv[i]
        assert a.startswith("--"), argv[i:]
        vals = []
        while i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            vals.append(argv[i + 1])
            i += 1
        name = a[2:]
        if not vals:
            out[name[3:] if name.startswith("no-") else name] = not name.startswith("no-")
        else:
            out[name] = vals[0] if len(vals) == 1 else vals
        i += 1
    return out


@pytest.mark.parametrize("case", CASES)
def test_yaml_has_no_false_and_no_nested_map(case):
    files = tree(case)
    for name in files:
        if name.endswith(".yaml") and "/" not in name and not name.startswith("omni_placement."):
            doc = role_yaml(files, name[:-5])
            assert all(v is not False for v in doc.values()), name
            assert not any(isinstance(v, dict) for v in doc.values()), name
            for k, v in doc.items():
                if isinstance(v, str) and v.startswith("{"):
                    assert isinstance(json.loads(v), dict), (name, k)


@pytest.mark.parametrize("case", CASES)
def test_toml_yaml_and_command_line_carry_the_same_arguments(case):
    files = tree(case)
    roles = [n[:-5] for n in files if n.endswith(".yaml") and "/" not in n and not n.startswith("omni_placement.")]
    assert roles
    for role in roles:
        yaml_doc = role_yaml(files, role)
        yaml_args = {k: (json.loads(v) if isinstance(v, str) and v.startswith("{") else v) for k, v in yaml_doc.items()}
        scripts = [t for n, t in files.items() if n.startswith(f"launch/{role}-")]
        assert scripts, role
        cli_sets = []
        for s in scripts:
            argv = command(s)
            assert argv[:2] == ["vllm", "serve"] and argv[3:5] == ["--config", f"OUT/{role}.yaml"], argv[:5]
            flags = flags_of(argv)
            assert set(flags) - PER_SERVER - {k for k, v in flags.items() if v is False} == set(), flags
            cli_sets.append({k: v for k, v in flags.items() if k not in PER_SERVER})
        assert all(c == cli_sets[0] for c in cli_sets), "every server of a role gets the same role switches"
        switches = cli_sets[0]
        assert all(v is False for v in switches.values())
        assert not set(switches) & set(yaml_args)
        combined = {**yaml_args, **switches}
        if f"{role}.toml" in files:
            toml_doc = role_toml(files, role)
            assert toml_doc.pop("model") == command(scripts[0])[2]
            assert toml_doc == combined, (role, set(toml_doc) ^ set(combined))


def test_rule_per_value_kind():
    assert cli_words(Arg("enforce-eager", True)) == ["--enforce-eager"]
    assert cli_words(Arg("enable-chunked-prefill", False)) == ["--no-enable-chunked-prefill"]
    assert cli_words(Arg("max-num-seqs", 48)) == ["--max-num-seqs", "48"]
    assert cli_words(Arg("x", {"a": 1, "b": [1, 2]})) == ["--x", "'{\"a\": 1, \"b\": [1, 2]}'"]
    assert cli_words(Arg("goodput", ["ttft:2000", "tpot:50"])) == ["--goodput", "ttft:2000", "tpot:50"]
    assert cli_words(Arg("data-parallel-address", ShellValue("{NODE_3_IP}"))) == ["--data-parallel-address", '"${NODE_3_IP}"']
    assert cli_tokens(Arg("x", {"a": 1})) == ["--x", '{"a": 1}']
    yaml_args, cli = split((Arg("a", True), Arg("b", False), Arg("c", 1)))
    assert [a.name for a in yaml_args] == ["a", "c"] and [a.name for a in cli] == ["b"]


@pytest.mark.parametrize("value", ["on", "yes", "1e3", "null", "~", "a: b", "#x", "é", "0x1F", True, 0.9, 16384,
                                   [1, 2, "on"], {"k": "v", "n": [1]}])
def test_yaml_scalars_read_back_as_written(value):
    import yaml

    got = yaml.safe_load(f"k: {yaml_scalar(value)}\n")["k"]
    assert (json.loads(got) if isinstance(value, dict) else got) == value

"""Secrets and determinism (issue 5 §6).

* No emitted file — nor anything sncc prints — contains the value of an environment
  variable a plan references with ``env("NAME")``: the builds run in subprocesses
  with every referenced variable set to a distinctive value, and every output byte is
  searched for it.
* A string in a plan that looks like a credential is SN2007, in every place a string
  can appear and for each common token shape; ordinary strings are not.
* ``sncc build`` outputs, ``sncc check --format json`` and ``sncc simulate --format
  json`` are byte-identical across runs and across ``PYTHONHASHSEED`` values.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from expect import ROOT, compile_text

EXAMPLES = sorted((ROOT / "examples").glob("*.sn"))
SEED = ROOT / "examples" / "deepseek-r1-a3-7p1d.sn"
HASH_SEEDS = ("0", "0", "1", "12345")


def sncc_run(*args, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``sncc ARGS`` in a fresh interpreter (bytes output)."""
    return subprocess.run([sys.executable, "-c", "import sys; from sncc.cli import main; sys.argv[0] = 'sncc'; main()",
                           *map(str, args)], capture_output=True, env=env, cwd=cwd, timeout=300)


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def env_refs(text: str) -> list[str]:
    return sorted(set(re.findall(r'env\("([A-Za-z_][A-Za-z0-9_]*)"\)', text)))


def text_with_imports(path: Path, seen: frozenset = frozenset()) -> str:
    """The plan's text followed by the text of every file it imports (transitively)."""
    text = path.read_text(encoding="utf-8")
    for rel in re.findall(r'^\s*import\s+"([^"]+)"', text, flags=re.M):
        sub = (path.parent / rel).resolve()
        if sub not in seen and sub.is_file():
            text += "\n" + text_with_imports(sub, seen | {sub})
    return text


def _forms(value: str) -> list[bytes]:
    """The value as it could appear in an output: raw, lower case, URL- or base64-encoded, JSON-escaped."""
    raw = value.encode()
    return [raw, value.lower().encode(), urllib.parse.quote(value, safe="").encode(),
            base64.b64encode(raw), value.replace("/", "\\/").encode()]


# --------------------------------------------------------------------------- secrets


def _leak_plan(tmp_path: Path) -> tuple[Path, list[str]]:
    """The seed plan with its API key read from a variable no other test sets; returns
    (path, referenced names)."""
    text = SEED.read_text(encoding="utf-8").replace('env("GATEWAY_API_KEY")', 'env("SNCC_TEST_LEAK_KEY")')
    p = tmp_path / "leak.sn"
    p.write_text(text, encoding="utf-8")
    return p, env_refs(text)


@pytest.mark.parametrize("plan", [*EXAMPLES, "leak"], ids=[p.name for p in EXAMPLES] + ["renamed-key"])
def test_no_env_value_in_any_output(tmp_path, plan):
    """Every variable a plan references set to a distinctive value: no output file, and no
    stdout or stderr of build, check or simulate, holds the value in any common encoding."""
    if plan == "leak":
        path, names = _leak_plan(tmp_path)
    else:
        path = plan
        names = env_refs(text_with_imports(path))
        assert names, f"{path.name} references no environment variable: the test would prove nothing"
    values = {n: f"SNCC-secret/{n}+value=7f3a9c2e1b" for n in names}
    env = dict(os.environ, **values)
    out = tmp_path / "out"
    res = sncc_run("build", path, "-o", out, env=env)
    assert res.returncode == 0, res.stderr.decode()
    outputs = files_of(out)
    assert outputs
    printed = {"build stdout": res.stdout, "build stderr": res.stderr}
    for cmd in (("check", "--format", "json", path), ("simulate", "--format", "json", path)):
        r = sncc_run(*cmd, env=env)
        printed[f"{cmd[0]} stdout"], printed[f"{cmd[0]} stderr"] = r.stdout, r.stderr
    for value in values.values():
        for form in _forms(value):
            for where, data in {**outputs, **printed}.items():
                assert form not in data, f"the value of a referenced variable appears in {where}"
    # the reference itself is kept, by name
    text = b"".join(outputs.values())
    for n in names:
        assert n.encode() in text, f"{n} is not referenced by name in any output"


SHAPES = [
    "sk-abcdefghijklmnopqrstuv", "sk-proj-AbCdEf0123456789_xyz", "sk-ant-api03-abcdefghijklmnop",
    "Bearer abcdefghijklmnopqrstuvwxyz012345", "AKIAIOSFODNN7EXAMPLE", "ASIAIOSFODNN7EXAMPLE",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz",
    "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "xoxb-1234567890-abcdefghijkl",
    "AIzaSyA-1234567890abcdefghijklmnopqrstu", "-----BEGIN RSA PRIVATE KEY-----",
    "https://user:sk-abcdefghijklmnop@gateway.example.com/api",
]
#: where a string can sit: (text in the seed plan, replacement with {s} for the string)
PLACES = [
    ('base_url = "https://gateway.example.com/api"', 'base_url = "{s}"'),
    ('model_id = "deepseek-r1"', 'model_id = "{s}"'),
    ('weights = "/data/models/DeepSeek-R1-W8A8"', 'weights = "/data/models/{s}"'),
    ('graph_cache = "/data/torchair_cache/deepseek-r1-w8a8"', 'graph_cache = "{s}"'),
    ("env { HCCL_BUFFSIZE = 1000 }", 'env {{ HCCL_BUFFSIZE = 1000  OPENAI_API_KEY = "{s}" }}'),
    ('plan "deepseek-r1-a3-7p1d"', 'plan "{s}"'),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s[:14])
@pytest.mark.parametrize("place", PLACES, ids=lambda p: p[0].split()[0])
def test_credential_shapes_are_errors(shape, place):
    """Each credential shape, in each place a string can be: SN2007 on that string."""
    base = SEED.read_text(encoding="utf-8")
    old, new = place
    assert base.count(old) == 1
    text = base.replace(old, new.format(s=shape))
    diags = compile_text(text).diagnostics
    hits = [d for d in diags if d.code.code == "SN2007"]
    assert hits, [(d.code.code, d.message) for d in diags]
    at = text.index(shape)
    assert any(d.span.start <= at < d.span.end for d in hits)


def test_unquoted_key_in_env_block_is_an_error():
    """`KEY = sk-…` without quotes lexes as an identifier; it is still SN2007 (it would reach env.sh)."""
    text = SEED.read_text(encoding="utf-8").replace(
        "env { HCCL_BUFFSIZE = 1000 }", "env { HCCL_BUFFSIZE = 1000  OPENAI_API_KEY = sk-abcdefghijklmnop }")
    assert "SN2007" in {d.code.code for d in compile_text(text).diagnostics}


def test_literal_api_key_is_an_error():
    text = SEED.read_text(encoding="utf-8").replace('env("GATEWAY_API_KEY")', '"not-even-key-shaped"')
    assert "SN2007" in {d.code.code for d in compile_text(text).diagnostics}


@pytest.mark.parametrize("s", ["sk-1", "task-manager-abcdefghij", "/data/models/hf_cache", "AKIA-short", "desk-lamp-0123456789",
                               "Bearer", "skeleton-key", "https://gateway.example.com/api"])
def test_ordinary_strings_are_not_flagged(s):
    text = SEED.read_text(encoding="utf-8").replace('base_url = "https://gateway.example.com/api"', f'base_url = "{s}"')
    assert "SN2007" not in {d.code.code for d in compile_text(text).diagnostics}


# --------------------------------------------------------------------------- determinism


def _run_seeded(args: tuple, seed: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONHASHSEED=seed, GATEWAY_API_KEY="x")
    return sncc_run(*args, env=env, cwd=cwd)


@pytest.mark.parametrize("plan", EXAMPLES, ids=lambda p: p.name)
def test_build_and_check_identical_across_hash_seeds(tmp_path, plan):
    """`sncc build` (every file) and `sncc check --format json` are byte-identical for
    PYTHONHASHSEED 0 (twice), 1 and 12345."""
    def one(i_seed):
        i, seed = i_seed
        out = tmp_path / f"out-{i}"
        b = _run_seeded(("build", plan, "-o", out), seed, ROOT)
        c = _run_seeded(("check", "--format", "json", plan.relative_to(ROOT)), seed, ROOT)
        return b, c, out

    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(one, enumerate(HASH_SEEDS)))
    b0, c0, out0 = runs[0]
    assert b0.returncode == 0, b0.stderr.decode()
    first = files_of(out0)
    assert "sncc-manifest.json" in first
    for (b, c, out), seed in zip(runs[1:], HASH_SEEDS[1:]):
        assert b.returncode == 0, b.stderr.decode()
        assert files_of(out) == first, f"build output differs with PYTHONHASHSEED={seed}"
        assert c.returncode == c0.returncode and c.stdout == c0.stdout, f"check --format json differs with PYTHONHASHSEED={seed}"


def test_simulate_identical_across_hash_seeds(tmp_path):
    """`sncc simulate --format json` of the seed plan is byte-identical across hash seeds."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(lambda s: _run_seeded(("simulate", "--format", "json", SEED.relative_to(ROOT)), s, ROOT),
                             HASH_SEEDS))
    assert runs[0].returncode in (0, 1), runs[0].stderr.decode()
    assert runs[0].stdout.strip()
    for r, seed in zip(runs[1:], HASH_SEEDS[1:]):
        assert r.stdout == runs[0].stdout, f"simulate --format json differs with PYTHONHASHSEED={seed}"

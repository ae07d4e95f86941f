"""Every key sncc writes is one the pinned release reads, by its manifest (extracted from the
tagged source by tools/extract_*.py into ``sncc/engines/<engine>/data/<version>.json``):

* each role argument (``<role>.yaml`` / ``.toml``) and each per-server flag is an argument of the
  vLLM the release runs; a ``false`` value only for a boolean switch (``--no-X``); a value from
  the argument's choices when it has them;
* each ``--additional-config`` key (dotted) is in the release's ``additional_config``;
* each Omni-Infer model-extra-config ``section.field`` and OmniPlacement key is read at the revision.

The CI stage goes further and runs vLLM's own parser on every command line (conformance work).
"""

from __future__ import annotations

import pytest

from expect import ROOT, deployment_of
from sncc.engines.registry import adapter_for

GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "plan.sn").is_file())


def _deployment(case: str):
    return deployment_of((GOLDEN / case / "plan.sn").read_text(), str(GOLDEN / case / "plan.sn"))


def dotted(obj: dict, prefix: str = "") -> list[str]:
    """Dotted leaf paths of a nested object (``{}`` is a leaf)."""
    out = []
    for k, v in obj.items():
        key = f"{prefix}.{k}" if prefix else k
        out += dotted(v, key) if isinstance(v, dict) and v else [key]
    return out


def argument_problems(dep, manifest, plugin=None) -> list[str]:
    """What in ``dep``'s role arguments and server flags ``manifest`` (a vLLM manifest) refuses;
    ``plugin`` (the engine's own manifest) adds the ``--quantization`` methods it registers."""
    bad = []
    extra = {"quantization": set(plugin.quantization_methods)} if plugin is not None else {}
    args = [(r.name, a) for r in dep.roles for a in r.args] + [(p.name, a) for p in dep.processes for a in p.flags]
    for where, a in args:
        spec = manifest.arguments.get(a.name) if manifest.has_arg(a.name) else None
        if spec is None:
            bad.append(f"{where}: --{a.name} is not an argument of vLLM {manifest.version}")
        elif a.value is False and not spec.boolean:
            bad.append(f"{where}: --{a.name} = false, but it is no boolean switch")
        elif spec.choices and isinstance(a.value, str) and a.value not in set(spec.choices) | extra.get(a.name, set()):
            bad.append(f"{where}: --{a.name} {a.value} not in {spec.choices}")
    return bad


@pytest.mark.parametrize("case", CASES)
def test_arguments_are_the_run_vllm_s(case):
    dep = _deployment(case)
    a = adapter_for(dep.engine)
    m = a.vllm_manifest(dep.engine_version)
    assert m is not None, f"no manifest of vLLM {dep.vllm_version} (tools/extract_vllm_args.py writes it)"
    assert argument_problems(dep, m, a.manifest(dep.engine_version) if a.kind != "vllm" else None) == []


@pytest.mark.parametrize("case", CASES)
def test_engine_config_keys_are_the_release_s(case):
    dep = _deployment(case)
    a = adapter_for(dep.engine)
    if a.kind == "vllm":
        # plain vLLM reads no platform config: nothing of the kind may be written for it
        assert all(r.arg("additional-config") is None and not r.files for r in dep.roles), case
        return
    m = a.manifest(dep.engine_version)
    assert m is not None, f"no {dep.engine} {dep.engine_version} manifest (tools/extract_*.py writes it)"
    bad = []
    for r in dep.roles:
        ac = r.arg("additional-config") or {}
        bad += [f"{r.name}: additional_config.{k}" for k in dotted(ac) if not m.has_additional_config_key(k)]
        for name, obj in r.files.items():
            if name.startswith("model_extra_config."):
                bad += [f"{name}: {k}" for sec, fields in obj.items() for k in [sec] + [f"{sec}.{f}" for f in fields]
                        if k not in m.model_extra_config_keys]
            elif name.startswith("omni_placement."):
                bad += [f"{name}: {k}" for k in obj if k not in m.omni_placement_keys]
    assert bad == []


def test_the_argument_check_finds_what_vllm_refuses():
    """A flag vLLM does not have, and `false` on a non-boolean, are reported (so the test above can fail)."""
    import dataclasses
    from pathlib import Path

    from sncc.engines.manifest import Manifest
    from sncc.lowering.deployment import Arg

    dep = _deployment("vllm-h100-llama-serve")
    rows = {a.name: {"type": "bool" if isinstance(a.value, bool) else "str", "boolean": isinstance(a.value, bool)}
            for r in dep.roles for a in r.args}
    rows |= {a.name: {"type": "int"} for p in dep.processes for a in p.flags}
    m = Manifest(engine="vllm", version="x", path=Path("x.json"), data={"arguments": rows})
    assert argument_problems(dep, m) == []
    role = dep.roles[0]
    bad_role = dataclasses.replace(role, args=role.args + (Arg("device", "cuda"), Arg("max-model-len", False)))
    bad = dataclasses.replace(dep, roles=(bad_role,) + dep.roles[1:])
    got = argument_problems(bad, m)
    assert any("--device is not an argument" in g for g in got) and any("no boolean switch" in g for g in got)

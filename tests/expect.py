"""Shared test helpers: the repository root, compiling text without the CLI, the one parser of
inline expectations (``# E: CODE[:COL]`` errors, ``# W: CODE[:COL]`` warnings), and a plan's
deployment and output files (``deployment_of``, ``outputs_of``, ``role_yaml`` ...).

A module of its own (not ``conftest``) so that test folders with their own ``conftest.py``
(e.g. ``tests/conformance/``) never shadow it: import it as ``from expect import ...``."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXPECT = re.compile(r"# E: (SN\d{4})(?::(\d+))?")


def compile_text(text: str, name: str = "plan.sn"):
    """Compile ``text`` and return the :class:`sncc.compiler.Compilation`."""
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    return compile_file(SourceFile(name, text))


def expectations(path: pathlib.Path) -> list[tuple[str, int, int | None]]:
    """Inline ``# E: CODE[:COL]`` expectations of a plan file: (code, line, column)."""
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        for m in EXPECT.finditer(line):
            out.append((m.group(1), i, int(m.group(2)) if m.group(2) else None))
    return out


EXPECT_SEV = re.compile(r"# ([EW]): (SN\d{4})(?::(\d+))?")


def expectations_with_severity(path: pathlib.Path) -> list[tuple[str, str, int, int | None]]:
    """Inline ``# E: CODE[:COL]`` (error) and ``# W: CODE[:COL]`` (warning) expectations:
    (severity, code, line, column)."""
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        for m in EXPECT_SEV.finditer(line):
            sev = "error" if m.group(1) == "E" else "warning"
            out.append((sev, m.group(2), i, int(m.group(3)) if m.group(3) else None))
    return out


def deployment_of(text: str, name: str = "plan.sn"):
    """The :class:`~sncc.lowering.deployment.Deployment` of plan ``text``; fails the test when the
    plan has errors (check or lowering)."""
    comp = compile_text(text, name)
    errors = [d for d in comp.diagnostics if d.is_error]
    assert comp.plan is not None and not errors, [(d.code.code, d.message) for d in errors]
    assert comp.deployment is not None, comp.deployment_diagnostics
    return comp.deployment


def outputs_of(text: str, name: str = "plan.sn", schemas: bool = False) -> dict[str, str]:
    """Every output file of plan ``text`` (``{path: text}``), each validated against its schema."""
    from sncc.emit import emit_all
    from sncc.emit.validate import validate_outputs

    files = emit_all(deployment_of(text, name), schemas=True)
    assert validate_outputs(files) == []
    return files if schemas else {k: v for k, v in files.items() if not k.startswith("schemas/")}


def role_toml(files: dict[str, str], role: str) -> dict:
    """The parsed ``<role>.toml`` (vllm-ascend) of an output set."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads(files[f"{role}.toml"])


def role_yaml(files: dict[str, str], role: str) -> dict:
    """The parsed ``<role>.yaml`` of an output set (PyYAML's safe loader, as ``vllm serve --config``)."""
    import yaml

    return yaml.safe_load(files[f"{role}.yaml"])


def additional_config(files: dict[str, str], role: str) -> dict:
    """The role's ``--additional-config`` object (from its YAML's JSON string), {} when absent."""
    import json

    raw = role_yaml(files, role).get("additional-config")
    return json.loads(raw) if raw else {}


def cpu_seconds(fn, *args, repeat: int = 3) -> float:
    """The least process CPU time (``time.process_time``, seconds) of ``repeat`` calls of
    ``fn(*args)``.  CPU time, not wall time: other processes sharing the machine's cores
    stretch the wall clock, not the work done; the least of a few runs drops one-off costs
    (first-call caches, a page fault storm)."""
    import time

    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn(*args)
        best = min(best, time.process_time() - t0)
    return best


#: CPU time of an input 8× larger over the smaller one's: 8 for a linear cost, 64 for a
#: quadratic one; 24 leaves room for measurement noise and cache effects on small inputs
SCALE_FACTOR = 8
LINEAR_RATIO_LIMIT = 24.0


def assert_linear(fn, small, large, what: str, repeat: int = 3) -> float:
    """Assert that ``fn(large)`` costs less than :data:`LINEAR_RATIO_LIMIT` × ``fn(small)``
    in CPU time, ``large`` being :data:`SCALE_FACTOR` × ``small`` in size (a ratio within one
    run, so the test holds on a loaded machine).  Returns the ratio."""
    t_small = max(cpu_seconds(fn, small, repeat=repeat), 1e-6)
    t_large = cpu_seconds(fn, large, repeat=repeat)
    ratio = t_large / t_small
    print(f"{what}: {t_large:.4f} s CPU vs {t_small:.4f} s at 1/{SCALE_FACTOR} the size: {ratio:.1f}x")
    assert ratio < LINEAR_RATIO_LIMIT, (
        f"{what}: {SCALE_FACTOR}x the input costs {ratio:.1f}x the CPU time (linear: ~{SCALE_FACTOR}x)")
    return ratio

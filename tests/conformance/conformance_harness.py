"""Conformance harness: build plans, run their launch scripts with recording stand-ins, and hand the
recorded ``vllm serve`` command lines to the real vLLM parser of each pinned release.

Shapes:

* :class:`Tree` — one output folder of ``sncc build`` (or a hand-made fixture of the same layout,
  docs/design.md §6): ``root``, ``name``, and ``deployment`` (``manifest.json``'s ``deployment``:
  ``engine``, ``engine_version``, ``vllm``).
* :class:`Recording` — one program start a launch script made: ``script`` (relative to the tree),
  ``program`` (``vllm``, ``python``, ``python3``), ``argv`` (without the program), ``cwd``, ``env``
  (the variables the scripts set or changed: the engine's environment).
* :func:`check_with_vllm` — ``{case id: result}`` from tools/check_vllm_argv.py run with the
  venv's python of one vLLM release (one subprocess per release).

The vLLM virtualenvs (tools/setup_vllm_venv.sh) are found through ``SNCC_VLLM_VENVS``
(``os.pathsep``-separated venv folders, or folders holding ``.venv-vllm-<X>``), else the
repository's own ``.venv-vllm-<X>``.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "tools"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

#: seconds one vLLM release may take to check a batch (import ~15-30 s, then milliseconds per argv)
BATCH_TIMEOUT_S = 900
#: seconds one launch script may run with the stand-ins (it only sources files and execs)
SCRIPT_TIMEOUT_S = 60


def plan_files() -> list[Path]:
    """Every plan the conformance stage builds: ``examples/*.sn`` (not ``examples/broken/``),
    ``tests/known-good/**/*.sn`` and the golden builds' ``tests/golden/*/plan.sn``."""
    plans = sorted((REPO / "examples").glob("*.sn"))
    plans += sorted((REPO / "tests" / "known-good").glob("**/*.sn"))
    plans += sorted((REPO / "tests" / "golden").glob("*/plan.sn"))
    return plans


def plan_id(plan: Path) -> str:
    """A short test id: ``examples/x.sn`` → ``x``; ``tests/golden/g/plan.sn`` → ``golden/g``."""
    rel = plan.relative_to(REPO)
    if rel.parts[0] == "examples":
        return plan.stem
    if rel.name == "plan.sn":
        return f"{rel.parts[-3]}/{rel.parts[-2]}"
    return str(rel.with_suffix(""))


@dataclass
class Tree:
    """One output folder laid out as docs/design.md §6."""

    root: Path
    name: str
    deployment: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def at(cls, root: Path, name: str | None = None) -> "Tree":
        """Read ``root/manifest.json`` (its ``deployment`` table; empty when absent)."""
        deployment: dict[str, Any] = {}
        manifest = root / "manifest.json"
        if manifest.is_file():
            deployment = json.loads(manifest.read_text(encoding="utf-8")).get("deployment", {}) or {}
        return cls(root=root, name=name or root.name, deployment=deployment)

    @property
    def engine(self) -> str | None:
        """``vllm``, ``vllm-ascend`` or ``omni-infer``."""
        return self.deployment.get("engine")

    @property
    def engine_version(self) -> str | None:
        """The engine release (``v0.11.0``, ``release_v0.3.0``; for plain vLLM its version)."""
        return self.deployment.get("engine_version")

    @property
    def vllm_version(self) -> str | None:
        """The vLLM release the engine runs on (``0.11.0``)."""
        return self.deployment.get("vllm") or (self.engine_version if self.engine == "vllm" else None)

    @property
    def launch_scripts(self) -> list[Path]:
        """``launch/*.sh``, sorted."""
        return sorted((self.root / "launch").glob("*.sh"))

    @property
    def has_launch_tree(self) -> bool:
        """Whether this is the §6 tree (a ``manifest.json`` with ``deployment`` and a ``launch/`` folder)."""
        return bool(self.deployment) and (self.root / "launch").is_dir()

    def files(self, pattern: str) -> list[Path]:
        """Files of the tree matching a glob, sorted."""
        return sorted(self.root.glob(pattern))


def build(plan: Path, out: Path) -> tuple[Tree | None, str]:
    """``sncc build PLAN -o OUT`` through click's CliRunner: ``(tree, output)``; ``tree`` is None
    when the build failed (then ``output`` holds the diagnostics)."""
    from click.testing import CliRunner

    from sncc.cli import main

    result = CliRunner().invoke(main, ["build", str(plan), "-o", str(out)], catch_exceptions=True)
    if result.exit_code != 0 or not out.is_dir():
        text = result.output
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            text += f"\n{type(result.exception).__name__}: {result.exception}"
        return None, text
    return Tree.at(out, plan_id(plan)), result.output


# ----------------------------------------------------------------------------- recording stand-ins

_RECORDER = '''#!{python}
"""Stand-in for `{program}` (tests/conformance/conformance_harness.py): record argv, cwd and environment, exit 0."""
import json, os, sys
path = os.environ["SNCC_CONFORMANCE_RECORD"]
with open(path, "a", encoding="utf-8") as fh:
    fh.write(json.dumps({{"program": "{program}", "argv": sys.argv[1:], "cwd": os.getcwd(),
                         "env": dict(os.environ)}}) + "\\n")
'''

#: programs the launch scripts may start, replaced by recorders
PROGRAMS = ("vllm", "python", "python3")


def stand_in_bin(folder: Path) -> Path:
    """Write recording stand-ins for :data:`PROGRAMS` into ``folder`` (the recorders run with this
    interpreter's absolute path, so a stand-in ``python3`` does not catch them)."""
    folder.mkdir(parents=True, exist_ok=True)
    for program in PROGRAMS:
        path = folder / program
        path.write_text(_RECORDER.format(python=sys.executable, program=program), encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


_REQUIRED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[?\-=+][^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_MUST = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?\?")
_ASSIGNED = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=", re.M)
_NODE_IP = re.compile(r"^NODE_(\d+)_IP$")


def dummy_value(name: str, scratch: Path) -> str:
    """A stand-in value for a variable the scripts expect from the operator: node addresses on the
    loopback range (``NODE_<k>_IP`` → ``127.0.0.<k+1>``; nothing is contacted), ``lo`` for a network
    interface, an existing empty JSON file for a path, ``1`` otherwise."""
    m = _NODE_IP.match(name)
    if m:
        return f"127.0.0.{int(m.group(1)) % 250 + 1}"
    upper = name.upper()
    if upper.endswith(("_IP", "_ADDR", "_ADDRESS", "_HOST")):
        return "127.0.0.1"
    if "NIC" in upper or "IFNAME" in upper or upper.endswith("_IFACE"):
        return "lo"
    if upper.endswith(("_PATH", "_FILE", "_DIR")) or "RANK_TABLE" in upper:
        path = scratch / f"{name.lower()}.json"
        if not path.exists():
            path.write_text("{}\n", encoding="utf-8")
        return str(path)
    if upper.endswith("_PORT"):
        return "18000"
    return "1"


def operator_variables(tree: Tree, base_env: dict[str, str], scratch: Path) -> dict[str, str]:
    """Variables the tree's shell files read but never set (node addresses, NIC, rank tables …),
    each with a :func:`dummy_value`; the documented node variables of docs/design.md §2.4."""
    read: set[str] = set()
    assigned: set[str] = set()
    required: set[str] = set()
    for path in [*tree.files("launch/*.sh"), *tree.files("env/*.sh")]:
        text = path.read_text(encoding="utf-8")
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        read.update(a or b for a, b in _REQUIRED.findall(text))
        required.update(_MUST.findall(text))
        assigned.update(_ASSIGNED.findall(text))
    shell_own = {"BASH_SOURCE", "PWD", "HOME", "PATH", "IFS", "RANDOM", "LINENO", "OLDPWD", "SHELL"}
    out: dict[str, str] = {}
    # `${VAR:?message}` is always the operator's, even where a file re-exports it (`export VAR="${VAR}"`)
    for name in sorted((read - assigned - shell_own) | required):
        if name in base_env or name.isdigit():
            continue
        out[name] = dummy_value(name, scratch)
    return out


@dataclass
class Recording:
    """One program start recorded while running a launch script (see the module docstring)."""

    script: str
    program: str
    argv: list[str]
    cwd: str
    env: dict[str, str]

    @property
    def serve_argv(self) -> list[str] | None:
        """``["serve", ...]`` when this start is a ``vllm serve`` (also ``python -m vllm.entrypoints.cli.main serve``)."""
        argv = self.argv
        if self.program in ("python", "python3") and argv[:2] == ["-m", "vllm.entrypoints.cli.main"]:
            argv = argv[2:]
        elif self.program != "vllm":
            return None
        return list(argv) if argv[:1] == ["serve"] else None


@dataclass
class ScriptRun:
    """The outcome of one launch script: its exit status, output, and what it started."""

    script: str
    returncode: int
    output: str
    recordings: list[Recording]


def run_launch_scripts(tree: Tree, scratch: Path, extra_env: dict[str, str] | None = None) -> list[ScriptRun]:
    """Run every ``launch/*.sh`` of ``tree`` with ``bash``, the stand-ins first on ``PATH`` and the
    operator variables set to dummies; return what each started."""
    scratch.mkdir(parents=True, exist_ok=True)
    bin_dir = stand_in_bin(scratch / "bin")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("SNCC_", "VLLM_", "HCCL_", "ASCEND_"))}
    base_env["PATH"] = f"{bin_dir}{os.pathsep}{base_env.get('PATH', '')}"
    base_env.update(operator_variables(tree, base_env, scratch))
    base_env.update(extra_env or {})
    runs: list[ScriptRun] = []
    for script in tree.launch_scripts:
        record = scratch / f"{script.stem}.jsonl"
        record.unlink(missing_ok=True)
        env = dict(base_env, SNCC_CONFORMANCE_RECORD=str(record))
        proc = subprocess.run(["bash", str(script)], cwd=str(scratch), env=env, capture_output=True, text=True,
                              timeout=SCRIPT_TIMEOUT_S)
        recordings: list[Recording] = []
        if record.exists():
            for line in record.read_text(encoding="utf-8").splitlines():
                doc = json.loads(line)
                changed = {k: v for k, v in doc["env"].items()
                           if env.get(k) != v and k not in ("SNCC_CONFORMANCE_RECORD", "PWD", "OLDPWD", "SHLVL", "_")}
                recordings.append(Recording(script=str(script.relative_to(tree.root)), program=doc["program"],
                                            argv=doc["argv"], cwd=doc["cwd"], env=changed))
        runs.append(ScriptRun(script=str(script.relative_to(tree.root)), returncode=proc.returncode,
                              output=(proc.stdout + proc.stderr).strip(), recordings=recordings))
    return runs


# ----------------------------------------------------------------------------- the real vLLM parser


def platform_parser_choices(tree: Tree) -> dict[str, list[Any]]:
    """What the tree's engine platform adds to vLLM's parser (vllm-ascend, Omni-Infer: ``--quantization
    ascend``), from the engine manifest's ``parser_choices_added``; ``{}`` for plain vLLM."""
    from sncc.engines import manifest as M

    if tree.engine in (None, "vllm") or not tree.engine_version:
        return {}
    try:
        return {k: list(v) for k, v in M.load(tree.engine, tree.engine_version).parser_choices_added.items()}
    except M.ManifestError:
        return {}


def _venv_candidates() -> list[Path]:
    spec = os.environ.get("SNCC_VLLM_VENVS", "")
    return [Path(p) for p in spec.split(os.pathsep) if p] if spec else [REPO]


def vllm_python(version: str) -> Path | None:
    """The python of a virtualenv that holds vLLM ``version``, or None.  Looks in ``SNCC_VLLM_VENVS``
    (each entry a venv, or a folder with ``.venv-vllm-<version>``), else in the repository."""
    for cand in _venv_candidates():
        for venv in (cand / f".venv-vllm-{version}", cand):
            py = venv / "bin" / "python"
            if py.is_file() and (venv.name == f".venv-vllm-{version}" or _venv_has(venv, version)):
                return py
    return None


def _venv_has(venv: Path, version: str) -> bool:
    return any(venv.glob(f"lib/python*/site-packages/vllm-{version}.dist-info"))


def require_vllm() -> bool:
    """``SNCC_REQUIRE_VLLM=1``: a missing vLLM virtualenv fails the test instead of skipping it."""
    return os.environ.get("SNCC_REQUIRE_VLLM", "") == "1"


def check_with_vllm(python: Path, cases: Iterable[dict[str, Any]], deep: bool = False) -> dict[str, dict[str, Any]]:
    """Run ``cases`` (``{"id", "argv", "cwd"?, "env"?}``) through tools/check_vllm_argv.py with
    ``python``; ``{id: result}``.  Raises ``RuntimeError`` when the driver itself fails."""
    cases = list(cases)
    if not cases:
        return {}
    payload = json.dumps({"cases": cases, "deep": deep})
    env = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_")}
    env.update(VLLM_LOGGING_LEVEL="ERROR", PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([str(python), str(TOOLS / "check_vllm_argv.py"), "--batch", "-"], input=payload,
                          capture_output=True, text=True, env=env, timeout=BATCH_TIMEOUT_S)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{python} tools/check_vllm_argv.py exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    try:
        out = json.loads(proc.stdout)
    except ValueError as exc:
        raise RuntimeError(f"tools/check_vllm_argv.py answered no JSON ({exc}):\n{proc.stdout[-2000:]}\n"
                           f"{proc.stderr[-2000:]}") from None
    return {r["id"]: r for r in out["results"]}


def describe_rejection(case: dict[str, Any], result: dict[str, Any]) -> str:
    """A message for a rejected command line: the exact argv, where, and vLLM's own error."""
    import shlex

    return (f"vLLM {result.get('vllm', '')} rejected {case['id']} at stage {result['stage']}:\n"
            f"  vllm {shlex.join(case['argv'])}\n  (cwd {case.get('cwd')})\n  error: {result['error']}"
            + (f"\n{result['traceback']}" if result.get("traceback") else ""))

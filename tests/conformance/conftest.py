"""Session fixtures of the conformance stage: every plan built once, every launch script run once
with recording stand-ins, and every recorded ``vllm serve`` command line checked by the real vLLM
parser in one subprocess per pinned release (tests/conformance/conformance_harness.py)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import conformance_harness as H


@dataclass
class Built:
    """One plan or fixture: its tree (None when the build failed), build output, and launch runs."""

    name: str
    tree: H.Tree | None
    output: str = ""
    runs: list[H.ScriptRun] = field(default_factory=list)
    expect: dict[str, Any] = field(default_factory=dict)

    def cases(self) -> list[dict[str, Any]]:
        """The driver cases of every recorded ``vllm serve`` start: ``{"id", "argv", "cwd", "env",
        "parser_choices"}`` (the choices the engine's platform plugin adds, from its manifest)."""
        choices = H.platform_parser_choices(self.tree) if self.tree is not None else {}
        out = []
        for run in self.runs:
            for i, rec in enumerate(run.recordings):
                argv = rec.serve_argv
                if argv is not None:
                    out.append({"id": f"{self.name}::{rec.script}#{i}", "argv": argv, "cwd": rec.cwd,
                                "env": rec.env, "parser_choices": choices})
        return out


def _collect(trees: dict[str, Built], tmp: Path) -> None:
    for name, built in trees.items():
        if built.tree is not None and built.tree.has_launch_tree:
            built.runs = H.run_launch_scripts(built.tree, tmp / "runs" / name.replace("/", "__"))


@pytest.fixture(scope="session")
def built_plans(tmp_path_factory) -> dict[str, Built]:
    """``{plan id: Built}`` for every plan of :func:`conformance_harness.plan_files`, built into a temp folder."""
    tmp = tmp_path_factory.mktemp("conformance-plans")
    out: dict[str, Built] = {}
    for plan in H.plan_files():
        name = H.plan_id(plan)
        tree, text = H.build(plan, tmp / "out" / name.replace("/", "__"))
        out[name] = Built(name=name, tree=tree, output=text)
    _collect(out, tmp)
    return out


@pytest.fixture(scope="session")
def fixture_trees(tmp_path_factory) -> dict[str, Built]:
    """``{fixture name: Built}`` of the hand-made trees in tests/conformance/fixtures/ (copied, so
    that a script run leaves no file behind); ``expect`` is the fixture's ``expect.json``."""
    import json

    tmp = tmp_path_factory.mktemp("conformance-fixtures")
    out: dict[str, Built] = {}
    for folder in sorted(p for p in H.FIXTURES.iterdir() if p.is_dir()):
        copy = tmp / "trees" / folder.name
        shutil.copytree(folder, copy)
        expect_file = copy / "expect.json"
        expect = json.loads(expect_file.read_text(encoding="utf-8")) if expect_file.exists() else {}
        out[folder.name] = Built(name=folder.name, tree=H.Tree.at(copy, folder.name), expect=expect)
    _collect(out, tmp)
    return out


class VllmResults:
    """The real parser's verdicts: one subprocess per vLLM release checks every tree's command lines
    (and the cases handed to :meth:`check`), on first use."""

    def __init__(self, groups: list[dict[str, Built]]) -> None:
        self.groups = groups
        self._by_version: dict[str, dict[str, dict[str, Any]] | None] = {}
        self._extra: dict[str, list[dict[str, Any]]] = {}

    def _run(self, version: str, extra: list[dict[str, Any]]) -> dict[str, dict[str, Any]] | None:
        python = H.vllm_python(version)
        if python is None:
            return None
        cases = [c for group in self.groups for b in group.values()
                 if b.tree is not None and b.tree.vllm_version == version for c in b.cases()]
        results = H.check_with_vllm(python, cases + extra)
        for r in results.values():
            r.setdefault("vllm", version)
        return results

    def check(self, version: str, cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]] | None:
        """Results of ``cases`` (ids unique in the session) on ``version``; None without its virtualenv.
        Cases given before the release is first run share its subprocess with the trees."""
        missing = [c for c in cases if c["id"] not in (self._by_version.get(version) or {})]
        if version not in self._by_version:
            self._by_version[version] = self._run(version, missing)
        elif missing and self._by_version[version] is not None:
            self._by_version[version].update(H.check_with_vllm(H.vllm_python(version), missing))
        results = self._by_version[version]
        return None if results is None else {c["id"]: results[c["id"]] for c in cases}

    def for_tree(self, built: Built) -> dict[str, dict[str, Any]]:
        """``{case id: result}`` for ``built``; skips (or fails with ``SNCC_REQUIRE_VLLM=1``) when the
        tree's vLLM release has no virtualenv."""
        version = built.tree.vllm_version if built.tree else None
        if not version:
            pytest.fail(f"{built.name}: manifest.json names no vLLM release (deployment.vllm)")
        results = self.check(version, built.cases())
        if results is None:
            msg = (f"no virtualenv with vLLM {version} (tools/setup_vllm_venv.sh {version}; "
                   f"or point SNCC_VLLM_VENVS at one)")
            if H.require_vllm():
                pytest.fail(msg + " and SNCC_REQUIRE_VLLM=1")
            pytest.skip(msg)
        return results


@pytest.fixture(scope="session")
def vllm_results(built_plans, fixture_trees) -> VllmResults:
    """The real vLLM parser's results for every recorded command line (lazy, one subprocess per release)."""
    return VllmResults([built_plans, fixture_trees])

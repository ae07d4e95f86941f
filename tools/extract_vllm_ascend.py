#!/usr/bin/env python3
"""Extract what one tagged vllm-ascend release reads into sncc/engines/vllm_ascend/data/<tag>.json.

Usage (any python ≥ 3.10; nothing is imported from vllm-ascend, its source is read with ``ast``)::

    python tools/extract_vllm_ascend.py --tag v0.11.0 [--git-dir DIR]

``DIR`` is a bare clone of https://github.com/vllm-project/vllm-ascend (default: the
``$SNCC_VLLM_ASCEND_GIT`` variable, else ``/work/.mirror/vllm-project+vllm-ascend/repo``).

Written, from the tag's ``vllm_ascend/`` package (tests excluded):

* ``additional_config`` — every key the tag reads from ``--additional-config`` (``ascend_config.py``
  and every other module that reads the dict), nested dicts as dotted keys, with the default where
  it is a literal (tools/_source_ast.py: ``ConfigReads`` says how the dict is followed);
* ``env`` — every variable of ``vllm_ascend/envs.py``'s ``env_variables`` with its default and cast,
  and ``env_read_elsewhere`` — variables other modules read with a literal name (``os.getenv`` …);
* ``quantization_methods`` — the platform's ``supported_quantization``;
* ``parser_choices_added`` — choices the platform appends to vLLM's own parser before parsing
  (``pre_register_and_update``: ``--quantization ascend``);
* ``kv_connectors`` — the connectors registered with ``KVConnectorFactory.register_connector``;
* ``attention_backends`` — the backend classes ``get_attn_backend_cls`` can return;
* ``graph_modes`` — the vLLM ``CUDAGraphMode`` / ``CompilationLevel`` / ``CompilationMode`` members
  the platform module refers to, and the string values compared with a torchair ``mode``.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _manifest_io import FORMAT, command_line, write_manifest  # noqa: E402
from _source_ast import ConfigReads, TagTree, env_reads, env_table, literal, module_constants  # noqa: E402

REPO_URL = "https://github.com/vllm-project/vllm-ascend"
DEFAULT_GIT_DIR = "/work/.mirror/vllm-project+vllm-ascend/repo"
PACKAGE = "vllm_ascend"
ENVS = "vllm_ascend/envs.py"
PLATFORM = "vllm_ascend/platform.py"


def _class_attr(tree: ast.Module, cls: str, attr: str) -> ast.AST | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == attr:
                    return stmt.value
                if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in stmt.targets):
                    return stmt.value
    return None


def quantization_methods(trees: dict[str, ast.Module], constants: dict[str, Any], platform: str = PLATFORM,
                         cls: str = "NPUPlatform") -> list[Any]:
    """``<cls>.supported_quantization`` of module ``platform``, names resolved through the tree's module constants."""
    tree = trees.get(platform)
    node = _class_attr(tree, cls, "supported_quantization") if tree else None
    if not isinstance(node, (ast.List, ast.Tuple)):
        return []
    out: list[Any] = []
    for elt in node.elts:
        ok, value = literal(elt)
        if ok:
            out.append(value)
        elif isinstance(elt, ast.Name) and elt.id in constants:
            out.append(constants[elt.id])
        else:
            out.append({"<name>": ast.unparse(elt)})
    return out


def parser_choice_additions(trees: dict[str, ast.Module], constants: dict[str, Any],
                            platform: str = PLATFORM) -> dict[str, list[Any]]:
    """Choices the platform adds to vLLM's own parser before it parses (``pre_register_and_update``):
    ``{"--quantization": ["ascend"]}`` from ``<a> = parser._option_string_actions.get("--opt")`` and
    ``<a>.choices.append(<value>)`` in the platform module."""
    tree = trees.get(platform)
    out: dict[str, list[Any]] = {}
    if tree is None:
        return out
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        actions: dict[str, str] = {}
        for node in ast.walk(fn):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
                    and node.value.func.attr == "get" and "_option_string_actions" in ast.unparse(node.value.func)
                    and node.value.args):
                ok, opt = literal(node.value.args[0])
                if ok and isinstance(opt, str):
                    actions[node.targets[0].id] = opt
        for node in ast.walk(fn):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
                    and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "choices"
                    and isinstance(node.func.value.value, ast.Name) and node.func.value.value.id in actions
                    and node.args):
                ok, value = literal(node.args[0])
                if not ok and isinstance(node.args[0], ast.Name):
                    ok, value = node.args[0].id in constants, constants.get(node.args[0].id)
                if ok:
                    row = out.setdefault(actions[node.func.value.value.id], [])
                    if value not in row:
                        row.append(value)
    return out


def kv_connectors(trees: dict[str, ast.Module]) -> dict[str, Any]:
    """``{name: {"module", "class", "registered_in"}}`` of ``KVConnectorFactory.register_connector(...)`` calls."""
    out: dict[str, Any] = {}
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "register_connector" and len(node.args) >= 3):
                vals = [literal(a) for a in node.args[:3]]
                if all(ok for ok, _ in vals):
                    name, module, cls = (v for _, v in vals)
                    out[name] = {"module": module, "class": cls, "registered_in": f"{path}:{node.lineno}"}
    return out


def attention_backends(trees: dict[str, ast.Module]) -> list[str]:
    """Dotted class paths ``get_attn_backend_cls`` returns (string literals naming a ``vllm_ascend`` class)."""
    out: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "get_attn_backend_cls":
                for sub in ast.walk(node):
                    if (isinstance(sub, ast.Constant) and isinstance(sub.value, str)
                            and sub.value.startswith(PACKAGE + ".") and sub.value.rsplit(".", 1)[-1][:1].isupper()):
                        out.add(sub.value)
    return sorted(out)


def graph_modes(trees: dict[str, ast.Module]) -> dict[str, list[str]]:
    """Members of vLLM's graph/compilation enums the platform module names, and torchair ``mode`` strings."""
    enums = ("CUDAGraphMode", "CompilationLevel", "CompilationMode")
    out: dict[str, set[str]] = {e: set() for e in enums}
    torchair: set[str] = set()
    tree = trees.get(PLATFORM)
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in enums:
            if node.attr.isupper():
                out[node.value.id].add(node.attr)
    for path, t in trees.items():
        if "torchair" not in path and path != "vllm_ascend/ascend_config.py":
            continue
        for node in ast.walk(t):
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
                left, right = node.left, node.comparators[0]
                for a, b in ((left, right), (right, left)):
                    if (isinstance(a, ast.Attribute) and a.attr == "mode" and isinstance(b, ast.Constant)
                            and isinstance(b.value, str) and b.value):
                        torchair.add(b.value)
    result = {k: sorted(v) for k, v in out.items() if v}
    if torchair:
        result["torchair_graph_config.mode"] = sorted(torchair)
    return result


def plugin_tables(tree: TagTree, trees: dict[str, ast.Module], envs_path: str, platform: str,
                  extra_files: tuple[str, ...] = ()) -> dict[str, Any]:
    """The tables every vLLM platform plugin's manifest has (vllm-ascend, Omni-Infer): ``additional_config``
    (+ ``additional_config_root_open``), ``env``, ``env_read_elsewhere``, ``quantization_methods``,
    ``parser_choices_added``, ``kv_connectors``, and ``files`` (the sources they were read from)."""
    reads = ConfigReads(trees)
    envs = env_table(tree.files[envs_path], envs_path) if envs_path in tree.files else {}
    constants = module_constants(trees)
    elsewhere = {k: v for k, v in env_reads(trees, skip=[envs_path], constants=constants).items() if k not in envs}
    files = sorted({ref.rsplit(":", 1)[0] for row in reads.keys.values() for ref in row["read_in"]}
                   | {p for p in (envs_path, platform, *extra_files) if p in tree.files})
    return {
        "files": files,
        "additional_config": reads.keys,
        "additional_config_root_open": bool(getattr(reads, "open_root", False)),
        "env": envs,
        "env_read_elsewhere": elsewhere,
        "quantization_methods": quantization_methods(trees, constants, platform),
        "parser_choices_added": parser_choice_additions(trees, constants, platform),
        "kv_connectors": kv_connectors(trees),
    }


def extract(tag: str, git_dir: str) -> dict[str, Any]:
    """The manifest document of vllm-ascend ``tag``."""
    tree = TagTree(git_dir, tag, [PACKAGE])
    trees = {p: t for p, t in tree.parsed().items() if "/tests/" not in p and not p.startswith("tests/")}
    tables = plugin_tables(tree, trees, ENVS, PLATFORM)
    return {
        "format": FORMAT,
        "engine": "vllm-ascend",
        "version": tag,
        "source": {"repo": REPO_URL, "tag": tag, "commit": tree.commit, "files": tables.pop("files")},
        "generated_by": command_line("extract_vllm_ascend.py", "--tag", tag),
        **tables,
        "attention_backends": attention_backends(trees),
        "graph_modes": graph_modes(trees),
    }


def run(argv: list[str] | None, *, doc: str, flag: str, example: str, env_var: str, default_git: str,
        repo: str, out_dir: str, extract_fn: Any) -> int:
    """The command line both source extractors share: ``--<flag> REV [--git-dir DIR] [--out FILE]``."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument(f"--{flag}", required=True, dest="rev", help=f"the revision to read, e.g. {example}")
    ap.add_argument("--git-dir", default=os.environ.get(env_var, default_git), help=f"a bare clone of {repo}")
    ap.add_argument("--out", type=Path, default=None, help=f"default {out_dir}/<{flag}>.json")
    ns = ap.parse_args(argv)
    write_manifest(extract_fn(ns.rev, ns.git_dir), ns.out or Path(out_dir) / f"{ns.rev}.json")
    return 0


def main(argv: list[str] | None = None) -> int:
    return run(argv, doc=__doc__, flag="tag", example="v0.11.0", env_var="SNCC_VLLM_ASCEND_GIT",
               default_git=DEFAULT_GIT_DIR, repo="vllm-project/vllm-ascend",
               out_dir="sncc/engines/vllm_ascend/data", extract_fn=extract)


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Extract what one Omni-Infer revision reads into sncc/engines/omni_infer/data/<rev>.json.

Usage (any python ≥ 3.10; nothing is imported from Omni-Infer, its source is read with ``ast``)::

    python tools/extract_omni_infer.py --rev release_v0.3.0 [--git-dir DIR]

``DIR`` is a bare clone of https://github.com/omni-ai-npu/omni-infer (default: the
``$SNCC_OMNI_INFER_GIT`` variable, else ``/work/.mirror/omni-ai-npu+omni-infer/repo``).

Written, from the revision's ``omni/`` package (tests excluded) and its global proxy script:

* ``model_extra_config`` — the JSON file at ``MODEL_EXTRA_CFG_PATH``: each top-level key the loader
  (``omni/models/common/config/model_config.py``: ``init_model_extra_config``) reads with
  ``config_data["<key>"]`` and unpacks into a config dataclass with ``**``, and that dataclass's
  fields with their annotation and literal default (an unknown field is a ``TypeError`` there, so
  this list is closed);
* ``additional_config`` — every key the revision reads from ``--additional-config``
  (tools/_source_ast.py ``ConfigReads``), nested dicts as dotted keys;
* ``env`` — ``omni/adaptors/vllm/envs.py``'s ``env_variables`` with defaults, and
  ``env_read_elsewhere`` — other literal ``os.getenv`` … reads in ``omni/``;
* ``omni_placement`` — the OmniPlacement ``config.yaml`` keys: those the shipped
  ``omni/accelerators/placement/config.yaml`` sets (with its values) and those the planner reads
  (``config.getattr("k", default)``, ``getattr(self.config, "k", default)``, ``self.config.k``);
* ``global_proxy`` — the options of ``omni/accelerators/sched/global_proxy/global_proxy.sh`` and
  the load-balancing policy names its ``--prefill-lb-sdk`` / ``--decode-lb-sdk`` accept (the
  patterns of its ``case "$lb_sdk_line"`` block);
* ``quantization_methods``, ``parser_choices_added`` and ``kv_connectors`` as for vllm-ascend.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _manifest_io import FORMAT, command_line  # noqa: E402
from _source_ast import TagTree, literal  # noqa: E402
from extract_vllm_ascend import plugin_tables, run  # noqa: E402

REPO_URL = "https://github.com/omni-ai-npu/omni-infer"
DEFAULT_GIT_DIR = "/work/.mirror/omni-ai-npu+omni-infer/repo"
PACKAGE = "omni"
ENVS = "omni/adaptors/vllm/envs.py"
PLATFORM = "omni/adaptors/vllm/platform.py"
MODEL_CONFIG = "omni/models/common/config/model_config.py"
PLACEMENT = "omni/accelerators/placement"
PLACEMENT_YAML = f"{PLACEMENT}/config.yaml"
PROXY = "omni/accelerators/sched/global_proxy/global_proxy.sh"


def _dataclass_fields(tree: ast.Module, cls: str) -> dict[str, Any]:
    """``{field: {"type", "default"?, "default_expr"?}}`` of dataclass ``cls`` in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            out: dict[str, Any] = {}
            for stmt in node.body:
                if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                    continue
                row: dict[str, Any] = {"type": ast.unparse(stmt.annotation), "line": stmt.lineno}
                value = stmt.value
                if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("field"):
                    kws = {kw.arg: kw.value for kw in value.keywords}
                    if "default" in kws:
                        value = kws["default"]
                    elif "default_factory" in kws:
                        fac = kws["default_factory"]
                        value = fac.body if isinstance(fac, ast.Lambda) else None
                        if value is None:
                            row["default_factory"] = ast.unparse(fac)
                if value is None and "default_factory" not in row and stmt.value is None:
                    row["required"] = True
                elif value is not None:
                    ok, lit = literal(value)
                    if ok:
                        row["default"] = lit
                    else:
                        row["default_expr"] = ast.unparse(value)
                out[stmt.target.id] = row
            return out
    return {}


def model_extra_config(tree: ast.Module) -> dict[str, Any]:
    """``{top-level key: {"dataclass", "required": True, "fields": {...}}}`` of the model extra config
    loader: every ``Cls(**<name>["key"])`` call in ``init_model_extra_config``."""
    out: dict[str, Any] = {}
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "init_model_extra_config"):
            continue
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            for kw in node.keywords:
                if kw.arg is None and isinstance(kw.value, ast.Subscript):
                    ok, key = literal(kw.value.slice)
                    if ok and isinstance(key, str):
                        out[key] = {"dataclass": node.func.id, "required": True, "line": node.lineno,
                                    "fields": _dataclass_fields(tree, node.func.id)}
    return out


def _is_config(node: ast.AST) -> bool:
    """``config`` or ``self.config`` (the OmniPlacement ``Config`` object)."""
    return (isinstance(node, ast.Name) and node.id == "config") or (
        isinstance(node, ast.Attribute) and node.attr == "config"
        and isinstance(node.value, ast.Name) and node.value.id == "self")


def placement_reads(trees: dict[str, ast.Module]) -> dict[str, Any]:
    """Keys the placement package reads from its ``Config``: ``{key: {"default"?, "read_in": [...]}}``."""
    out: dict[str, dict[str, Any]] = {}

    def record(key: str, where: str, default: ast.AST | None, has_default: bool) -> None:
        row = out.setdefault(key, {"read_in": set()})
        row["read_in"].add(where)
        if has_default:
            ok, value = literal(default)
            if ok and "default" not in row:
                row["default"] = value

    for path, tree in trees.items():
        if not path.startswith(PLACEMENT + "/"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                # config.getattr("k", default)
                if (isinstance(f, ast.Attribute) and f.attr == "getattr" and _is_config(f.value) and node.args):
                    ok, key = literal(node.args[0])
                    if ok and isinstance(key, str):
                        record(key, f"{path}:{node.lineno}", node.args[1] if len(node.args) > 1 else None,
                               len(node.args) > 1)
                # getattr(self.config, "k", default)
                elif (isinstance(f, ast.Name) and f.id == "getattr" and len(node.args) >= 2
                      and _is_config(node.args[0])):
                    ok, key = literal(node.args[1])
                    if ok and isinstance(key, str):
                        record(key, f"{path}:{node.lineno}", node.args[2] if len(node.args) > 2 else None,
                               len(node.args) > 2)
            elif (isinstance(node, ast.Attribute) and _is_config(node.value) and not node.attr.startswith("_")
                  and node.attr != "getattr" and isinstance(node.ctx, ast.Load)):
                record(node.attr, f"{path}:{node.lineno}", None, False)
    return {k: {**v, "read_in": sorted(v["read_in"])} for k, v in sorted(out.items())}


def placement_config(tree: TagTree, trees: dict[str, ast.Module]) -> dict[str, Any]:
    """The OmniPlacement keys: the shipped ``config.yaml`` top-level keys with their values, merged
    with the keys the planner reads.  ``{key: {"example"?, "default"?, "read_in"?}}``."""
    import yaml  # sncc's own dependency set has PyYAML through the test extras; the extractor needs it

    keys: dict[str, Any] = {k: dict(v) for k, v in placement_reads(trees).items()}
    text = tree.files.get(PLACEMENT_YAML)
    if text is not None:
        data = yaml.safe_load(text) or {}
        for k, v in data.items():
            keys.setdefault(k, {})["example"] = v
            keys[k]["in_shipped_config"] = True
    return dict(sorted(keys.items()))


_CASE = re.compile(r'case\s+"\$(?P<var>[a-z_]+)"\s+in(?P<body>.*?)\besac\b', re.S)
_PATTERN = re.compile(r'^\s*"?(?P<pat>[A-Za-z0-9_|-]+)"?\)', re.M)


def global_proxy(text: str) -> dict[str, Any]:
    """``{"options": [...], "lb_policies": [...], "lb_policy_default"?}`` of the global proxy script.

    Options are the ``--long`` patterns of its argument loop; policies the patterns of the
    ``case "$lb_sdk_line"`` block (the value of ``--prefill-lb-sdk`` / ``--decode-lb-sdk``); any other
    value configures nginx's default round robin."""
    options: set[str] = set()
    policies: list[str] = []
    for m in _CASE.finditer(text):
        pats = [p.group("pat") for p in _PATTERN.finditer(m.group("body"))]
        if m.group("var") == "lb_sdk_line":
            for p in pats:
                for alt in p.split("|"):
                    if alt not in policies:
                        policies.append(alt)
    for m in re.finditer(r'^\s*(--[a-z][a-z0-9-]*)(?:\|-[A-Za-z])?\)', text, re.M):
        options.add(m.group(1))
    out: dict[str, Any] = {"options": sorted(options), "lb_policies": sorted(policies)}
    for var in ("prefill_lb_sdk", "decode_lb_sdk"):
        m = re.search(rf'^\s*{var}="?([A-Za-z0-9_]*)"?\s*$', text, re.M)
        if m:
            out[f"{var}_default"] = m.group(1)
    return out


def extract(rev: str, git_dir: str) -> dict[str, Any]:
    """The manifest document of Omni-Infer revision ``rev`` (a branch, tag or commit)."""
    tree = TagTree(git_dir, rev, [PACKAGE], suffixes=(".py", ".yaml", ".sh"))
    trees = {p: t for p, t in tree.parsed().items() if "/tests/" not in p and "/test/" not in p}
    tables = plugin_tables(tree, trees, ENVS, PLATFORM, (MODEL_CONFIG, PLACEMENT_YAML, PROXY))
    return {
        "format": FORMAT,
        "engine": "omni-infer",
        "version": rev,
        "source": {"repo": REPO_URL, "rev": rev, "commit": tree.commit, "files": tables.pop("files")},
        "generated_by": command_line("extract_omni_infer.py", "--rev", rev),
        **tables,
        "model_extra_config": model_extra_config(trees[MODEL_CONFIG]) if MODEL_CONFIG in trees else {},
        "omni_placement": placement_config(tree, trees),
        "global_proxy": global_proxy(tree.files.get(PROXY, "")),
    }


def main(argv: list[str] | None = None) -> int:
    return run(argv, doc=__doc__, flag="rev", example="release_v0.3.0", env_var="SNCC_OMNI_INFER_GIT",
               default_git=DEFAULT_GIT_DIR, repo="omni-ai-npu/omni-infer",
               out_dir="sncc/engines/omni_infer/data", extract_fn=extract)


if __name__ == "__main__":
    raise SystemExit(main())

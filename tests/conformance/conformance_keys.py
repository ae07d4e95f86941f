"""Pure key check of an output tree against the engines' manifests (sncc/engines/manifest.py).

:func:`manifest_errors` returns one message per finding (sorted), ``"<file>: <what>"``:

* a ``<role>.yaml`` key that is not a ``vllm serve`` argument of the tree's vLLM release, a
  ``false`` value that release's ``--config`` loader drops, a nested map where the release wants a
  JSON string, a JSON argument that is not valid JSON;
* a ``--x`` option on a recorded command line that the release does not have;
* an ``additional_config`` key (from the YAML or the command line) that the engine release reads
  nowhere, and a KV connector that neither vLLM nor the engine registers;
* an exported variable that neither vLLM, the engine release nor CANN & co. (cann_env.json) read;
* Omni-Infer: a model extra config file without a required section or with a field its dataclass
  lacks, an OmniPlacement key the planner neither reads nor ships, a global proxy option or
  load-balancing policy its script does not accept.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any, Iterable

import yaml

from sncc.engines import manifest as M

_EXPORT = re.compile(r"^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=", re.M)


def _engine_manifest(tree) -> tuple[M.Manifest | None, M.Manifest | None, list[str]]:
    errors: list[str] = []
    vllm = engine = None
    try:
        vllm = M.load("vllm", tree.vllm_version)
    except (M.ManifestError, TypeError) as exc:
        errors.append(f"manifest.json: {exc}")
    if tree.engine == "vllm":
        engine = vllm
    else:
        try:
            engine = M.load(tree.engine, tree.engine_version)
        except (M.ManifestError, TypeError) as exc:
            errors.append(f"manifest.json: {exc}")
    return vllm, engine, errors


def _label(m: M.Manifest) -> str:
    return f"vLLM {m.version}" if m.engine == "vllm" else f"{m.engine} {m.version}"


def additional_config_errors(where: str, engine: M.Manifest, value: Any) -> list[str]:
    """Findings for one ``--additional-config`` value (a JSON string or a dict)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            return [f"{where}: additional-config is not JSON ({exc})"]
    if not isinstance(value, dict):
        return [f"{where}: additional-config is not a JSON object"]
    if engine.engine == "vllm":
        return [f"{where}: additional-config {sorted(value)} is read by no plain vLLM code"] if value else []
    out: list[str] = []

    def walk(obj: dict[str, Any], prefix: str) -> None:
        for key, sub in obj.items():
            dotted = f"{prefix}{key}"
            if not engine.has_additional_config_key(dotted):
                out.append(f"{where}: additional-config key {dotted} is read by no {_label(engine)} code")
                continue
            row = engine.additional_config.get(dotted, {})
            if isinstance(sub, dict) and row.get("kind") == "dict" and not row.get("open"):
                walk(sub, dotted + ".")

    walk(value, "")
    return out


def _kv_errors(where: str, vllm: M.Manifest, engine: M.Manifest, value: str) -> list[str]:
    try:
        doc = json.loads(value)
    except ValueError as exc:
        return [f"{where}: kv-transfer-config is not JSON ({exc})"]
    name = doc.get("kv_connector") if isinstance(doc, dict) else None
    known = vllm.kv_connectors | engine.kv_connectors
    if name is not None and name not in known:
        return [f"{where}: kv_connector {name} is registered by neither {_label(vllm)} nor {_label(engine)}"]
    return []


def yaml_errors(rel: str, data: dict[str, Any], vllm: M.Manifest, engine: M.Manifest) -> list[str]:
    """Findings for one ``vllm serve --config`` YAML (already loaded)."""
    out: list[str] = []
    rules = vllm.config_file_rules
    for key, value in data.items():
        if not vllm.has_arg(key):
            out.append(f"{rel}: {key} is not a `vllm serve` argument of vLLM {vllm.version}")
            continue
        arg = vllm.arg(key)
        if value is False and rules.get("false") == "dropped":
            out.append(f"{rel}: {key}: false is dropped by vLLM {vllm.version}'s --config loader "
                       f"(pass {arg.negative or '--no-' + arg.name})")
        if arg.json and isinstance(value, dict) and rules.get("nested_map") == "python-str":
            out.append(f"{rel}: {key} is a nested map; vLLM {vllm.version} needs it as a JSON string")
        if arg.json and isinstance(value, str) and value[:1] in "{[" and arg.name not in ("additional-config",):
            try:
                json.loads(value)
            except ValueError as exc:
                out.append(f"{rel}: {key} is not valid JSON ({exc})")
        if arg.name == "additional-config":
            out.extend(additional_config_errors(rel, engine, value))
        if arg.name == "kv-transfer-config" and isinstance(value, str):
            out.extend(_kv_errors(rel, vllm, engine, value))
    return out


def argv_errors(where: str, argv: list[str], vllm: M.Manifest, engine: M.Manifest) -> list[str]:
    """Findings for one recorded ``vllm serve`` argv (``argv[0] == "serve"``)."""
    out: list[str] = []
    for i, token in enumerate(argv):
        if not token.startswith("--") or token == "--":
            continue
        name, _, inline = token.partition("=")
        if not vllm.has_arg(name):
            out.append(f"{where}: {name} is not a `vllm serve` option of vLLM {vllm.version}")
            continue
        value = inline or (argv[i + 1] if i + 1 < len(argv) else "")
        canonical = vllm.arg(name).name
        if canonical == "additional-config":
            out.extend(additional_config_errors(where, engine, value))
        elif canonical == "kv-transfer-config":
            out.extend(_kv_errors(where, vllm, engine, value))
    return out


def env_errors(rel: str, text: str, vllm: M.Manifest, engine: M.Manifest) -> list[str]:
    """Findings for one shell file: every exported variable must have a reader."""
    known = vllm.env_vars | engine.env_vars | M.runtime_env().env_vars
    readers = _label(vllm) if engine is vllm else f"{_label(vllm)}, {_label(engine)}"
    return [f"{rel}: {name} is read by neither {readers} nor CANN (sncc/engines/cann_env.json)"
            for name in sorted(set(_EXPORT.findall(text))) if name not in known]


def omni_errors(tree, engine: M.Manifest) -> list[str]:
    """Omni-Infer files: model extra config, OmniPlacement YAML, global proxy call."""
    out: list[str] = []
    for path in tree.files("model_extra_config.*.json"):
        rel = path.name
        data = json.loads(path.read_text(encoding="utf-8"))
        for section in engine.model_extra_config_sections:
            if section not in data:
                out.append(f"{rel}: missing required section {section}")
        for section, fields in data.items():
            if section not in engine.model_extra_config_sections:
                continue  # other top-level sections are ignored by the loader
            for key in fields:
                if f"{section}.{key}" not in engine.model_extra_config_keys:
                    out.append(f"{rel}: {section}.{key} is not a field of {_label(engine)}'s dataclass")
    for path in tree.files("omni_placement.*.yaml"):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for key in data:
            if key not in engine.omni_placement_keys:
                out.append(f"{path.name}: {key} is neither read nor shipped by {_label(engine)}'s OmniPlacement")
    proxy = tree.root / "proxy.sh"
    options = set(engine.data.get("global_proxy", {}).get("options", ()))
    if proxy.is_file() and "global_proxy" in proxy.read_text(encoding="utf-8"):
        tokens = shlex.split(proxy.read_text(encoding="utf-8"), comments=True)
        for i, token in enumerate(tokens):
            if token in ("--prefill-lb-sdk", "--decode-lb-sdk") and i + 1 < len(tokens):
                if tokens[i + 1] not in engine.lb_policies:
                    out.append(f"proxy.sh: {token} {tokens[i + 1]} is not a policy of {_label(engine)}'s global proxy")
            elif token.startswith("--") and options and token.split("=")[0] not in options:
                out.append(f"proxy.sh: {token} is not an option of {_label(engine)}'s global_proxy.sh")
    return out


def vllm_config_files(tree) -> list:
    """The ``vllm serve --config`` YAML files of a tree: root-level ``*.yaml`` but OmniPlacement's."""
    return [p for p in tree.files("*.yaml") if not p.name.startswith("omni_placement.")]


def manifest_errors(tree, recordings: Iterable = ()) -> list[str]:
    """Every finding for ``tree`` (a conformance_harness.Tree) and its recorded starts, sorted."""
    vllm, engine, errors = _engine_manifest(tree)
    if vllm is None or engine is None:
        return errors
    for path in vllm_config_files(tree):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        errors.extend(yaml_errors(path.name, data, vllm, engine))
    for path in [*tree.files("env/*.sh"), *tree.files("launch/*.sh")]:
        errors.extend(env_errors(str(path.relative_to(tree.root)), path.read_text(encoding="utf-8"), vllm, engine))
    for rec in recordings:
        if rec.serve_argv is not None:
            errors.extend(argv_errors(rec.script, rec.serve_argv, vllm, engine))
    if tree.engine == "omni-infer":
        errors.extend(omni_errors(tree, engine))
    return sorted(set(errors))

#!/usr/bin/env python3
"""Dump every `vllm serve` argument of the installed vLLM release into sncc/engines/vllm/data/<X>.json.

Usage (with the python of a virtualenv that holds vLLM X, see README.md "Conformance")::

    .venv-vllm-0.11.0/bin/python tools/extract_vllm_args.py --version 0.11.0

It builds vLLM's own parser for ``vllm serve`` (tools/vllm_cli.py: the CPU platform, the
``FlexibleArgumentParser`` and the serve subparser that ``vllm/entrypoints/cli/main.py`` builds) and
writes, per argument: the dashed name, aliases, the ``--no-`` form of a ``BooleanOptionalAction``,
the argparse action, type, choices, default, nargs, whether it takes JSON (and, for a JSON argument
typed by a config dataclass, that dataclass's fields with their defaults and choices), the help
group, and whether vLLM marks it deprecated.  It also probes how the release's ``--config`` YAML
loader turns values into arguments (``true``/``false``, lists, nested maps), and lists the
environment variables ``vllm/envs.py`` defines with their defaults (evaluated with none set), and
the KV connectors vLLM registers.

The JSON is sorted and deterministic; ``generated_by`` is the command above.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import os
import sys
import tempfile
import typing
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _manifest_io import FORMAT, command_line, jsonable, write_manifest  # noqa: E402

#: wrappers vLLM puts around an argument's type (vllm/engine/arg_utils.py, vllm/utils/argparse_utils.py)
_WRAPPERS = {"_optional_type": "optional", "_parse_type": "parse"}


def _inner_callable(fn: Any) -> Any:
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            content = cell.cell_contents
        except ValueError:
            continue
        if callable(content):
            return content
    return None


def _dataclass_of(fn: Any) -> type | None:
    """The config dataclass a ``parse_dataclass`` type validates against (default arg or closure)."""
    candidates = list(getattr(fn, "__defaults__", None) or ())
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            candidates.append(cell.cell_contents)
        except ValueError:
            pass
    for c in candidates:
        if isinstance(c, type) and dataclasses.is_dataclass(c):
            return c
    return None


def describe_type(fn: Any) -> dict[str, Any]:
    """``{"type": name, "optional": bool, "json": bool, "json_dataclass": Name?}`` of an argparse type.

    Names: ``int``, ``float``, ``str``, ``json`` (``json.loads`` or a config dataclass validated from
    JSON), ``json_or_str`` (``union_dict_and_str``: JSON when the value looks like an object),
    ``human_readable_int`` (``1k``, ``2M``), ``str`` also for no type and for an anonymous string
    normaliser (then ``converter`` is ``<lambda>``), otherwise the type function's own name."""
    out: dict[str, Any] = {"optional": False, "json": False}
    if fn is None:  # argparse passes the string itself
        out["type"] = "str"
        return out
    for _ in range(8):
        name = getattr(fn, "__name__", "")
        if name in _WRAPPERS:
            if _WRAPPERS[name] == "optional":
                out["optional"] = True
            inner = _inner_callable(fn)
            if inner is None:
                break
            fn = inner
            continue
        break
    name = getattr(fn, "__name__", type(fn).__name__)
    dc = _dataclass_of(fn)
    if fn in (int, float, str):
        out["type"] = fn.__name__
    elif dc is not None:
        out.update(type="json", json=True, json_dataclass=dc.__name__)
        out["_dataclass"] = dc
    elif name == "loads" and getattr(fn, "__module__", "").startswith("json"):
        out.update(type="json", json=True)
    elif name == "union_dict_and_str":
        out.update(type="json_or_str", json=True)
    elif isinstance(fn, type) and issubclass(fn, enum.Enum):
        out["type"] = fn.__name__
    elif name == "<lambda>":  # a string normaliser (e.g. 0.23's --moe-backend: lower(), "-" -> "_")
        out.update(type="str", converter=name)
    else:
        out["type"] = name
    return out


def _choices_of_hint(hint: Any) -> list | None:
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return [jsonable(a) for a in typing.get_args(hint)]
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return [m.name for m in hint]
    if origin is typing.Union or str(origin) == "types.UnionType" or type(hint).__name__ == "UnionType":
        out: list = []
        for a in typing.get_args(hint):
            if a is type(None):
                continue
            sub = _choices_of_hint(a)
            if sub is None:
                return None
            out.extend(x for x in sub if x not in out)
        return out or None
    return None


def _type_text(hint: Any) -> str:
    if isinstance(hint, str):
        return hint
    if isinstance(hint, type) and typing.get_origin(hint) is None:
        return hint.__name__
    return str(hint).replace("typing.", "")


def dataclass_fields(cls: type) -> dict[str, Any]:
    """Top-level fields of a vLLM config dataclass: ``{name: {"type", "default", "choices"?}}``."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - forward references vLLM itself resolves lazily
        hints = {}
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name.startswith("_") or not f.init:
            continue
        row: dict[str, Any] = {"type": _type_text(hints.get(f.name, f.type))}
        if type(f.default).__name__ == "FieldInfo":  # pydantic Field(default=..., ge=...) in a config dataclass
            _pydantic_field(f.default, row)
        elif f.default is not dataclasses.MISSING:
            row["default"] = jsonable(f.default)
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            try:
                row["default"] = jsonable(f.default_factory())  # type: ignore[misc]
            except Exception:  # noqa: BLE001
                row["default"] = {"<factory>": getattr(f.default_factory, "__name__", "?")}
        else:
            row["required"] = True
        choices = _choices_of_hint(hints.get(f.name))
        if choices:
            row["choices"] = choices
        out[f.name] = row
    return out


def _pydantic_field(info: Any, row: dict[str, Any]) -> None:
    default = getattr(info, "default", None)
    factory = getattr(info, "default_factory", None)
    if type(default).__name__ != "PydanticUndefinedType":
        row["default"] = jsonable(default)
    elif factory is not None:
        try:
            row["default"] = jsonable(factory())
        except Exception:  # noqa: BLE001
            row["default"] = {"<factory>": getattr(factory, "__name__", "?")}
    constraints = [repr(m) for m in getattr(info, "metadata", ()) or ()]
    if constraints:
        row["constraints"] = constraints


def _groups(parser: argparse.ArgumentParser) -> dict[int, str]:
    out: dict[int, str] = {}
    for group in parser._action_groups:  # noqa: SLF001 - argparse keeps groups here
        for action in group._group_actions:  # noqa: SLF001
            out[id(action)] = group.title or ""
    return out


def _canonical(action: argparse.Action) -> str:
    longs = [o for o in action.option_strings if o.startswith("--") and not o.startswith("--no-")]
    want = "--" + action.dest.replace("_", "-")
    if want in longs:
        return want
    if longs:
        return longs[0]
    return action.option_strings[0]


def describe_action(action: argparse.Action, group: str, deprecated: bool) -> tuple[str, dict[str, Any]]:
    """``(dashed name without --, row)`` for one argparse action of the serve parser."""
    name = _canonical(action).lstrip("-")
    kind = type(action).__name__
    boolean = isinstance(action, argparse.BooleanOptionalAction)
    row: dict[str, Any] = {"dest": action.dest, "action": kind, "group": group}
    row["aliases"] = sorted(o for o in action.option_strings
                            if o != "--" + name and not (boolean and o == "--no-" + name))
    row["boolean"] = boolean
    if boolean:
        row["negative"] = "--no-" + name
    row["flag"] = kind in ("_StoreTrueAction", "_StoreFalseAction", "_StoreConstAction", "_CountAction")
    info = describe_type(action.type)
    dc = info.pop("_dataclass", None)
    row.update(info)
    if boolean or row["flag"]:
        row["type"] = "bool"
    choices = action.choices
    row["choices"] = None if choices is None else [jsonable(c) for c in choices]
    row["default"] = jsonable(action.default)
    row["nargs"] = action.nargs if isinstance(action.nargs, (int, str)) or action.nargs is None else str(action.nargs)
    row["required"] = bool(action.required)
    row["deprecated"] = deprecated or bool(getattr(action, "deprecated", False))
    if dc is not None:
        row["json_fields"] = dataclass_fields(dc)
    return name, row


def _deprecated_actions(parser: argparse.ArgumentParser) -> set[int]:
    return {id(a) for a in getattr(parser, "_deprecated", set()) or set()}


def probe_config_file(parser: Any) -> dict[str, Any]:
    """How this release's ``--config`` YAML loader turns values into arguments: the argument list
    ``load_config_file`` returns for a ``true`` and a ``false`` boolean switch, a list, a nested map
    and a number (the keys are real arguments so that a release that consults its own options, like
    0.33's ``--no-`` lookup, answers as it would for a user's file)."""
    yaml_text = (
        "enable-prefix-caching: true\n"
        "enable-chunked-prefill: false\n"
        "cuda-graph-sizes: [1, 2]\n"
        "compilation-config:\n  level: 3\n"
        "max-num-seqs: 16\n"
    )
    out: dict[str, Any] = {}
    # the method is public from 0.10 on; 0.9.x calls it _load_config_file
    load = getattr(parser, "load_config_file", None) or getattr(parser, "_load_config_file")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "probe.yaml")
        Path(path).write_text(yaml_text)
        try:
            out["expanded"] = list(load(path))
        except Exception as exc:  # noqa: BLE001
            out["error"] = f"{type(exc).__name__}: {exc}"
        toml = os.path.join(tmp, "probe.toml")
        Path(toml).write_text("max-num-seqs = 16\n")
        try:
            load(toml)
            out["toml"] = "accepted"
        except Exception as exc:  # noqa: BLE001
            out["toml"] = f"{type(exc).__name__}: {exc}"
    out["yaml"] = yaml_text
    if "expanded" not in out:
        return out
    exp = out["expanded"]
    out["rules"] = {
        "true": "flag" if "--enable-prefix-caching" in exp else "other",
        "false": ("no-flag" if "--no-enable-chunked-prefill" in exp else
                  "dropped" if "enable-chunked-prefill" not in " ".join(exp) else "other"),
        "list": _list_rule(exp),
        "nested_map": _nested_rule(exp),
    }
    return out


def _list_rule(exp: list[str]) -> str:
    if "--cuda-graph-sizes" not in exp:
        return "other"
    i = exp.index("--cuda-graph-sizes")
    if exp[i + 1:i + 3] == ["1", "2"]:
        return "repeated-values"
    return "python-str" if exp[i + 1:i + 2] == ["[1, 2]"] else "other"


def _nested_rule(exp: list[str]) -> str:
    if "--compilation-config" not in exp:
        return "other"
    value = exp[exp.index("--compilation-config") + 1]
    try:
        return "json" if json.loads(value) == {"level": 3} else "other"
    except ValueError:
        return "python-str"


def vllm_env_vars() -> dict[str, Any]:
    """``vllm/envs.py``'s ``environment_variables``: name → ``{"default": value with none of them set}``
    (paths under the user's home are written with ``~``; a value that differs between two reads,
    such as a fresh uuid that vLLM generates and stores in the environment, is written ``{"<random>": type name}`` so that the manifest stays
    deterministic)."""
    import vllm.envs as envs

    table = getattr(envs, "environment_variables", {})
    home = os.path.expanduser("~")
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k in table}
    out: dict[str, Any] = {}
    try:
        for name in sorted(table):
            try:
                value = table[name]()
                # get_env_or_set_default: a fresh random name (uuid) generated once and stored in
                # os.environ for the child processes; not a default
                if name in os.environ or value != table[name]():
                    os.environ.pop(name, None)
                    value = {"<random>": type(value).__name__}
            except Exception as exc:  # noqa: BLE001
                value = {"<error>": type(exc).__name__}
            if isinstance(value, str) and home and home != "/" and home in value:
                value = value.replace(home, "~")
            out[name] = {"default": jsonable(value)}
    finally:
        os.environ.update(saved)
    return out


def kv_connectors() -> list[str] | dict[str, str]:
    """Names of the KV connectors vLLM itself registers (``KVConnectorFactory._registry``), sorted."""
    try:
        from vllm.distributed.kv_transfer.kv_connector.factory import KVConnectorFactory
    except Exception as exc:  # noqa: BLE001 - a release without the factory
        return {"<error>": f"{type(exc).__name__}: {exc}"}
    return sorted(getattr(KVConnectorFactory, "_registry", {}))


def vllm_commit() -> str | None:
    """The git commit the installed wheel was built from (``vllm/_version.py``'s ``__commit_id__``,
    written by setuptools-scm as ``g<short hash>``; 0.9.x wheels carry none)."""
    try:
        from vllm import _version
    except ImportError:
        return None
    commit = getattr(_version, "__commit_id__", None) or None
    return commit[1:] if isinstance(commit, str) and commit.startswith("g") else commit


def extract(version: str) -> dict[str, Any]:
    """The manifest document of the installed vLLM, which must be ``version``."""
    import vllm_cli

    installed = vllm_cli.vllm_version()
    if installed != version:
        raise SystemExit(f"this interpreter has vLLM {installed}, not {version}: run it with .venv-vllm-{version}/bin/python")
    cli = vllm_cli.ServeCLI()
    serve = cli.serve
    groups = _groups(serve)
    deprecated = _deprecated_actions(serve)
    arguments: dict[str, Any] = {}
    positionals: dict[str, Any] = {}
    for action in serve._actions:  # noqa: SLF001
        if isinstance(action, argparse._HelpAction):  # noqa: SLF001
            continue
        if not action.option_strings:
            positionals[action.dest] = {"nargs": action.nargs, "default": jsonable(action.default),
                                        "group": groups.get(id(action), "")}
            continue
        name, row = describe_action(action, groups.get(id(action), ""), id(action) in deprecated)
        arguments[name] = row
    import vllm

    files = sorted({
        os.path.relpath(sys.modules[m].__file__, os.path.dirname(os.path.dirname(vllm.__file__)))
        for m in ("vllm.engine.arg_utils", "vllm.entrypoints.cli.serve", "vllm.envs",
                  cli.parser.__class__.__module__)
        if m in sys.modules and getattr(sys.modules[m], "__file__", None)
    })
    return {
        "format": FORMAT,
        "engine": "vllm",
        "version": version,
        "source": {"repo": "https://github.com/vllm-project/vllm", "tag": f"v{version}", "commit": vllm_commit(),
                   "package": "vllm", "version": version, "pypi": f"https://pypi.org/project/vllm/{version}/",
                   "files": files, "python": sys.version.split()[0]},
        "generated_by": command_line("extract_vllm_args.py", "--version", version),
        "command": "vllm serve",
        "positionals": positionals,
        "arguments": arguments,
        "config_file": probe_config_file(cli.serve),
        "env": vllm_env_vars(),
        "kv_connectors": kv_connectors(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", required=True, help="the vLLM release installed in this interpreter, e.g. 0.11.0")
    ap.add_argument("--out", type=Path, default=None,
                    help="output path (default sncc/engines/vllm/data/<version>.json)")
    ns = ap.parse_args(argv)
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    doc = extract(ns.version)
    write_manifest(doc, ns.out or Path("sncc/engines/vllm/data") / f"{ns.version}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The one rule that turns engine arguments into the YAML, the TOML and the command line.

An argument is a dashed name and a typed value (:class:`~sncc.lowering.deployment.Arg`):

=================  ===============================  ==================================  =====================
value              ``<role>.yaml``                  command line                        ``<role>.toml``
=================  ===============================  ==================================  =====================
scalar             ``name: value``                  ``--name value``                    ``name = value``
``true``           ``name: true``                   ``--name``                          ``name = true``
``false``          (absent: vLLM drops ``false``)   ``--no-name``                       ``name = false``
list               ``name: [a, b]``                 ``--name a b``                      ``name = [a, b]``
object             ``name: '<JSON>'`` (a string)    ``--name '<JSON>'``                 ``[name]`` table
=================  ===============================  ==================================  =====================

Why: ``vllm serve --config`` (vLLM 0.11.0 ``FlexibleArgumentParser.load_config_file``) turns a
true boolean into ``--name``, silently drops a false one (``enable-chunked-prefill: false``
would leave vLLM's default, on), repeats list items, and passes a nested map as Python
``str(dict)``, which no JSON argument accepts; from 0.23.0 nested maps become JSON, so a JSON
string is right for every pin.  Config arguments are inserted right after the model, so the
command line (per-server flags) wins over the YAML.

So a role's false booleans go on every launch command line (:func:`split`), and the three files
carry the same arguments: ``toml == yaml + false booleans`` (tests/emit/test_args_rule.py).
"""

from __future__ import annotations

import json
import shlex

from sncc.lowering.deployment import Arg, ShellValue


def split(args: tuple[Arg, ...]) -> tuple[list[Arg], list[Arg]]:
    """(arguments for the YAML, arguments for the command line): false booleans go to the command line."""
    yaml_args = [a for a in args if a.value is not False]
    cli = [a for a in args if a.value is False]
    return yaml_args, cli


def json_text(value) -> str:
    """Compact, deterministic JSON of an argument object (keys in insertion order)."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)


def _dq(text: str) -> str:
    """``text`` inside shell double quotes (``\\``, ``"``, ``$`` and backquote escaped)."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("`", "\\`")
    return f'"{out}"'


def shell_value(v) -> str:
    """One shell word for ``v``: a :class:`ShellValue` as a double-quoted string whose ``{VAR}``
    placeholders become ``${VAR}``; anything else single-quoted where needed (:func:`shlex.quote`)."""
    if isinstance(v, ShellValue):
        import re

        parts = re.split(r"(\{[A-Za-z_][A-Za-z0-9_]*\})", v.template)
        body = "".join("${" + p[1:-1] + "}" if re.fullmatch(r"\{[A-Za-z_][A-Za-z0-9_]*\}", p)
                       else _dq(p)[1:-1] for p in parts)
        return f'"{body}"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list)) and not isinstance(v, str):
        return shlex.quote(json_text(v))
    return shlex.quote(str(v))


def cli_words(a: Arg) -> list[str]:
    """The shell words of one argument on the command line (see the module table)."""
    if a.value is True:
        return [f"--{a.name}"]
    if a.value is False:
        return [f"--no-{a.name}"]
    if isinstance(a.value, list):
        return [f"--{a.name}"] + [shell_value(x) for x in a.value]
    return [f"--{a.name}", shell_value(a.value)]


def cli_tokens(a: Arg) -> list:
    """The argv items of one argument, unquoted (for tests and ``vllm``'s own parser): the
    ``ShellValue`` items are kept as they are."""
    if a.value is True:
        return [f"--{a.name}"]
    if a.value is False:
        return [f"--no-{a.name}"]
    if isinstance(a.value, list):
        return [f"--{a.name}"] + [x if isinstance(x, ShellValue) else str(x) for x in a.value]
    if isinstance(a.value, dict):
        return [f"--{a.name}", json_text(a.value)]
    return [f"--{a.name}", a.value if isinstance(a.value, ShellValue) else str(a.value)]


def yaml_scalar(v) -> str:
    """A YAML flow value readable by YAML 1.1 and 1.2 loaders: strings as JSON double-quoted
    strings (so ``on`` / ``yes`` / ``1e3`` stay strings), objects as a JSON string, lists as
    flow sequences."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    if isinstance(v, dict):
        return json.dumps(json_text(v), ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(yaml_scalar(x) for x in v) + "]"
    return json.dumps(str(v), ensure_ascii=False)

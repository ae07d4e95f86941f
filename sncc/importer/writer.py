"""Write the imported plan: ``sncc fmt``'s layout, one key per line, each value with its origin.

A value is a :class:`Value` (the plan literal and the comment after it).  :func:`plan_text` lays
out the blocks in the order the README's example uses (model, hardware, engine, roles, kv_cache,
graph, eplb, hosts, env, workload) and ends with the arguments kept as comments (SN8004).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

BLOCK_ORDER = ("model", "hardware", "engine", "serve", "kv_cache", "kv_transfer", "graph", "eplb", "hosts", "env", "workload")
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: enum-valued plan keys written bare (`quant = w8a8`); other strings are quoted
BARE_KEYS = frozenset({"quant", "dtype", "method", "cudagraph_mode", "dist", "chunked_prefill", "connector"})


class _Unresolved:
    """The value of a plan key the script computes at run time (``$(nvidia-smi ...)``): never a
    number; written as a commented ``# key = ?`` line the user completes."""

    def __repr__(self) -> str:
        return "UNRESOLVED"


UNRESOLVED = _Unresolved()


class _NotCopied:
    """The value of an ``env`` variable that holds a credential (SN8013): never written; the plan
    gets a comment line naming the variable instead."""

    def __repr__(self) -> str:
        return "NOT_COPIED"


NOT_COPIED = _NotCopied()


@dataclass(frozen=True)
class Value:
    """A plan value (bool, int, float, str, list) and the comment written after it."""

    value: object
    comment: str = ""


def literal(key: str, v) -> str:
    """The plan literal of ``v`` for ``key``: booleans ``true``/``false``, numbers as written,
    enum keys bare, other strings double-quoted (JSON escapes, which the plan grammar reads)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer() and key not in ("memory_utilization",):
        return str(int(v))
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(literal(key, x) for x in v) + "]"
    s = str(v)
    if (key in BARE_KEYS or s in _bare_words().get(key, ())) and _BARE.fullmatch(s):
        return s
    return json.dumps(s, ensure_ascii=False)


@lru_cache(maxsize=None)
def _bare_words() -> dict[str, frozenset[str]]:
    """The keyword values plan keys take besides their kind's literals (``max_model_len = auto``, the
    ``tokens-or-auto`` kind of :mod:`sncc.plan.model`); any other string (a served name ``auto``) is quoted."""
    from pydantic import BaseModel

    from sncc.plan import model as pm

    out: dict[str, set[str]] = {}
    for obj in vars(pm).values():
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            for name, f in obj.model_fields.items():
                kind = (f.json_schema_extra or {}).get("kind") if isinstance(f.json_schema_extra, dict) else None
                if isinstance(kind, str) and kind.endswith("-or-auto"):
                    out.setdefault(name, set()).add("auto")
    return {k: frozenset(v) for k, v in out.items()}


def _line(indent: int, key: str, val: Value) -> str:
    if val.value is UNRESOLVED:
        return f"{'  ' * indent}# {key} = ?" + (f"  # {val.comment}" if val.comment else "")
    text = f"{'  ' * indent}{key} = {literal(key, val.value)}"
    return text + (f"  # {val.comment}" if val.comment else "")


def plan_text(name: str, blocks: dict, header: list[str], kept: list[str]) -> str:
    """The plan file: ``header`` comment lines, ``plan "name" { ... }`` with ``blocks``
    (``{block: {key: Value | dict}}``; ``model`` and ``engine`` carry their label under ``""``),
    then ``kept`` comment lines inside the plan."""
    out = [f"# {h}" for h in header]
    out.append(f"plan {json.dumps(name)} {{")
    for block in BLOCK_ORDER:
        body = blocks.get(block)
        if body is None:
            continue
        label = body.get("")
        head = f"  {block}" + (f" {json.dumps(label.value)}" if label is not None else "") + " {"
        if label is not None and label.comment:
            out.append(f"  # {block}: {label.comment}")
        items = [(k, v) for k, v in body.items() if k != ""]
        if not items:
            out.append(head + " }")
            continue
        out.append(head)
        for k, v in items:
            if isinstance(v, dict):
                out.append(f"    {k} {{")
                out += [_line(3, kk, vv) for kk, vv in v.items()]
                out.append("    }")
            elif block == "env" and v.value is NOT_COPIED:
                out.append(f"    # {k}: value not copied (a credential" + (f", {v.comment}" if v.comment else "")
                           + "); export it in the shell that starts the servers")
            elif block == "env":
                out.append(f"    {k} = {json.dumps(str(v.value))}" + (f"  # {v.comment}" if v.comment else ""))
            else:
                out.append(_line(2, k, v))
        out.append("  }")
    if kept:
        out.append("  # not imported (SN8004: no plan key); `sncc build` does not write them:")
        out += [f"  #   {k}" for k in kept]
    out.append("}")
    return "\n".join(out) + "\n"

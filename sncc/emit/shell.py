"""Shell pieces shared by the launch, env, proxy, bench and start scripts.

Executed scripts (``launch/``, ``start/``, ``proxy.sh``, ``bench.sh``) run under
``set -euo pipefail`` and check every variable they need (``: "${NAME:?message}"``) before
anything else; sourced files (``env/``) only set variables.  Every value is quoted
(:func:`sncc.emit.args.shell_value`); shellcheck passes on all of them.
"""

from __future__ import annotations

from sncc.emit._common import comment_safe, generated_by, one_line
from sncc.emit.args import shell_value
from sncc.lowering.deployment import Deployment, EnvVar, Required

#: how an executed script finds the output folder (one level above launch/ and start/, or its own folder)
OUT_UP = 'SNCC_OUT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"'
OUT_HERE = 'SNCC_OUT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"'


def header(dep: Deployment, what: str, depth: int = 1) -> list[str]:
    """The first lines of an executed script ``depth`` folders below the output folder (0: at its
    top); the ``source-path`` directive lets shellcheck follow the sourced env files from any cwd."""
    up = "SCRIPTDIR" + "/.." * depth
    return ["#!/usr/bin/env bash", f"# shellcheck source-path={up}", f"# {one_line(what)}",
            f"# {generated_by(dep.name)}."]


def needs(req: list[Required] | tuple[Required, ...]) -> str:
    """``Needs: A, B.`` (``Needs: nothing.``): the variables a script's caller sets, for its header."""
    names = list(dict.fromkeys(r.name for r in req))
    return "Needs: " + (", ".join(names) if names else "nothing") + "."


def require(req: list[Required] | tuple[Required, ...]) -> list[str]:
    """``: "${NAME:?message}"`` lines, one per required variable, in order."""
    out = []
    for r in req:
        msg = "".join(c for c in comment_safe(r.help) if c not in _UNSAFE_IN_MESSAGE)
        out.append(f': "${{{r.test or r.name}:?{msg}}}"')
    return out


#: characters a ``${NAME:?message}`` word inside double quotes would expand or end on
_UNSAFE_IN_MESSAGE = set("\\\"'`${}")


def exports(env: tuple[EnvVar, ...] | list[EnvVar]) -> list[str]:
    """``export NAME=value  # note`` lines under ``# section`` headings."""
    lines: list[str] = []
    section = None
    for v in env:
        if v.section != section:
            section = v.section
            if section:
                lines += ["", f"# {one_line(section)}"]
        line = f"export {v.name}={shell_value(v.value)}"
        if v.note:
            line += f"  # {one_line(v.note)}"
        lines.append(line)
    return lines


def source(rel: str) -> list[str]:
    """Source ``$SNCC_OUT/<rel>`` (``rel`` relative to the output folder) with the shellcheck
    directive that names it."""
    return [f"# shellcheck source={rel}", f'. "$SNCC_OUT/{rel}"']


def continued(words: list[str], indent: str = "  ") -> str:
    """``words`` as one command, a flag (and its value) per continued line."""
    parts: list[str] = []
    cur: list[str] = []
    for w in words:
        if w.startswith("--") and cur:
            parts.append(" ".join(cur))
            cur = []
        cur.append(w)
    if cur:
        parts.append(" ".join(cur))
    return (" \\\n" + indent).join(parts)

"""``env/common.sh``: the variables every server shares (safe to source: assignments only).

It defines ``SNCC_OUT`` (the output folder, from its own location), the node addresses the
plan gives (``NODE_<k>_IP``; a caller's value wins), the vendor's setup scripts (CANN's
``set_env.sh``, each when present), then the shared exports of
:func:`sncc.lowering.env.common_env`.  No ``set -e``/``-u``/``pipefail``, no client secret.
"""

from __future__ import annotations

from sncc.emit import shell
from sncc.emit._common import generated_by, one_line
from sncc.emit.args import shell_value
from sncc.lowering.deployment import Deployment


def emit(dep: Deployment) -> dict[str, str]:
    """``{"env/common.sh": text}``."""
    lines = ["# shellcheck shell=bash",
             f"# Shared environment of {dep.engine} {dep.engine_version}; {generated_by(dep.name)}.",
             "# Sourced by every launch script; safe to source by hand: it only sets variables"
             + (" (and sources the vendor's setup scripts, which set variables)." if dep.setup_scripts else "."),
             'SNCC_OUT="${SNCC_OUT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"']
    given = [n for n in dep.nodes if n.address is not None or n.address_env is not None]
    if given:
        lines += ["", "# node addresses from the plan's hosts block (a value already set wins)"]
        for n in given:
            # ${NAME:-}: an unset env("NAME") leaves NODE_<k>_IP empty, so a script under set -u
            # still reaches its own check, which names the variable
            inner = f"${{{n.address_env}:-}}" if n.address_env is not None else shell_value(n.address)
            if inner.startswith("'") or inner.startswith('"'):
                inner = inner[1:-1]
            lines.append(f'{n.address_var}="${{{n.address_var}:-{inner}}}"')
    if dep.setup_scripts:
        lines += ["", "# vendor environment, sourced before sncc's exports so that they and the plan's env win;",
                  "# a missing script is reported, not fatal (an image may set the environment up itself)",
                  'case $- in *u*) _sncc_u=1; set +u ;; *) _sncc_u= ;; esac  # vendor scripts run without nounset']
        for sc in dep.setup_scripts:
            q = shell_value(sc.path)
            lines += [f"# {one_line(sc.what)}: {one_line(sc.source)}",
                      "# shellcheck disable=SC1090,SC1091",
                      f'if [ -f {q} ]; then . {q}; else echo "sncc: {one_line(sc.what)} environment not found: '
                      f'{sc.path} (set software.install_path in the plan)" >&2; fi']
        lines += ['if [ -n "$_sncc_u" ]; then set -u; fi', "unset _sncc_u"]
    lines += shell.exports(dep.common_env)
    return {"env/common.sh": "\n".join(lines) + "\n"}

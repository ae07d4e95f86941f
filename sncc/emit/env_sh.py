"""``env.sh``: the runtime environment of a plan, as a bash file to source.

Layout::

    #!/usr/bin/env bash
    # provenance comment
    set -euo pipefail
    : "${GATEWAY_API_KEY:?set GATEWAY_API_KEY}"     # one line per secret the plan references
    # <section>
    export NAME=value  # how the value was derived

Sections and defaults come from :func:`sncc.lowering.lower` (device visibility,
HCCL buffer and timeouts, the optimisation switches the plan enables, every
plan ``env`` override).  Every value goes through :func:`shlex.quote`, names
are checked to be shell identifiers, and a secret is only ever referenced by
name: the ``:?`` line makes sourcing fail when it is unset, but the file never
holds its value.  The output passes ``bash -n``.
"""

from __future__ import annotations

import shlex

from sncc.emit._common import generated_by, one_line
from sncc.lowering import lower
from sncc.plan.model import Plan
from sncc.plan.resolve import Resolved


def emit(plan: Plan, resolved: Resolved) -> str:
    """``env.sh`` text (deterministic, LF line ends, trailing newline)."""
    dep = lower(plan, resolved)
    lines = [
        "#!/usr/bin/env bash",
        f"# Runtime environment, engine {dep.engine}; {generated_by(plan.name)}.",
        "# Source it before starting an engine:  . ./env.sh",
        "set -euo pipefail",
    ]
    if dep.secrets:
        lines += ["", "# secrets: referenced by name only; export them before sourcing this file"]
        for name in dep.secrets:
            lines.append(f': "${{{name}:?set {name}}}"')
    section = None
    for v in dep.env:
        if v.section != section:
            section = v.section
            lines += ["", f"# {section}"]
        line = f"export {v.name}={shlex.quote(v.value)}"
        if v.note:
            line += f"  # {one_line(v.note)}"
        lines.append(line)
    return "\n".join(lines) + "\n"

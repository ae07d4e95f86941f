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
plan ``env`` override), plus, for vllm-ascend on Ascend, the env spelling of
the plan's options in its release (``optimize.micro_batch = 2`` →
``VLLM_ASCEND_ENABLE_DBO=1``, v0.9.0rc1 to v0.11.x, DeepSeek/MLA models;
:func:`sncc.lowering.ascend_options.plan_options`) in the optimisations
section; a plan ``env`` value of the same name wins.  Every value goes
through :func:`shlex.quote`, names are checked to be shell identifiers, and a
secret is only ever referenced by
name: the ``:?`` line makes sourcing fail when it is unset, but the file never
holds its value.  The output passes ``bash -n``.
"""

from __future__ import annotations

import shlex

from sncc.emit._common import generated_by, one_line
from sncc.lowering import EnvVar, lower
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
    for v in _with_option_env(plan, resolved, dep):
        if v.section != section:
            section = v.section
            lines += ["", f"# {one_line(section)}"]
        line = f"export {v.name}={shlex.quote(v.value)}"
        if v.note:
            line += f"  # {one_line(v.note)}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def _with_option_env(plan: Plan, resolved: Resolved, dep) -> list[EnvVar]:
    """``dep.env`` with the env variables of the vllm-ascend options the build writes
    (:func:`sncc.lowering.ascend_options.plan_options`) inserted in the optimisations section,
    before the plan's own ``env`` entries; a name the plan sets itself is not added again."""
    out = list(dep.env)
    if dep.vendor != "ascend" or plan.engine.kind != "vllm-ascend":
        return out
    from sncc.lowering.ascend_options import plan_options

    extra = []
    for use in plan_options(plan, resolved):
        if not use.written:
            continue
        sp = use.spelling
        for name, value in sp.env.items():
            if name in plan.env:
                continue
            extra.append(EnvVar("optimisations", name, value,
                                f"plan optimize.{use.option} = {use.value}: {sp.name} ({sp.releases})"
                                + (f"; {sp.notes}" if sp.notes else "")))
    at = next((i for i, v in enumerate(out) if v.section == "plan env"), len(out))
    return out[:at] + extra + out[at:]

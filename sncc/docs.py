"""Generate ``docs/codes.md`` from the code registry (:mod:`sncc.diagnostics.codes`).

Regenerate with::

    python -m sncc.docs > docs/codes.md

``tests/test_formats.py`` fails when the committed file differs from
:func:`codes_markdown`.
"""

from __future__ import annotations

import sys

from sncc.diagnostics.codes import REGISTRY, ErrorCode

GROUPS = (
    ("SN1", "Syntax and suppressions"),
    ("SN2", "Structure, keys, values, units, imports"),
    ("SN3", "Parallelism and device counts"),
    ("SN4", "Quantization, memory and software versions"),
    ("SN5", "Scheduler and context lengths"),
    ("SN6", "Gateway"),
    ("SN7", "SLO feasibility"),
    ("SN9", "Internal"),
)


def _fence(text: str) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}sn\n{text}\n{ticks}"


def code_section(ec: ErrorCode) -> str:
    """The Markdown section of one code."""
    return "\n".join([
        f"### {ec.code} `{ec.name}`",
        "",
        f"Default severity: **{ec.severity}**. {ec.summary[0].upper()}{ec.summary[1:]}.",
        "",
        ec.explanation,
        "",
        "Failing example:",
        "",
        _fence(ec.bad),
        "",
        "Fixed:",
        "",
        _fence(ec.good),
        "",
    ])


def codes_markdown() -> str:
    """The whole ``docs/codes.md`` text (deterministic, ends with one newline)."""
    out = [
        "# sncc diagnostic codes",
        "",
        "<!-- Generated from sncc/diagnostics/codes.py by `python -m sncc.docs > docs/codes.md`; do not edit. -->",
        "",
        "Every code sncc can report. `sncc explain CODE` prints the same text; `--select`/`--ignore` "
        "and `# sncc: ignore[CODE] reason` comments accept the code or its name.",
        "",
        "| Code | Name | Severity | Summary |",
        "| --- | --- | --- | --- |",
    ]
    for code in sorted(REGISTRY):
        ec = REGISTRY[code]
        out.append(f"| [{ec.code}](#{ec.code.lower()}-{ec.name}) | `{ec.name}` | {ec.severity} | {ec.summary} |")
    out.append("")
    for prefix, title in GROUPS:
        members = [REGISTRY[c] for c in sorted(REGISTRY) if c.startswith(prefix)]
        if not members:
            continue
        out += [f"## {prefix}xxx: {title}", ""]
        out += [code_section(ec) for ec in members]
    others = [REGISTRY[c] for c in sorted(REGISTRY) if not c.startswith(tuple(p for p, _ in GROUPS))]
    if others:
        out += ["## Other", ""] + [code_section(ec) for ec in others]
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(codes_markdown())

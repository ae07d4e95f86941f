"""Generate ``docs/codes.md`` from the code registry (:mod:`sncc.diagnostics.codes`).

Regenerate with::

    python -m sncc.docs > docs/codes.md

``tests/test_formats.py`` fails when the committed file differs from
:func:`codes_markdown`.
"""

from __future__ import annotations

import sys

from sncc.diagnostics.codes import REGISTRY, ErrorCode

#: (code prefix, title) of each section of docs/codes.md, in code order; a code no prefix takes goes
#: under "Other".  SN80xx and SN81xx are the import and search blocks of docs/design.md §8.
GROUPS = (
    ("SN1", "Syntax and suppressions"),
    ("SN2", "Structure, keys, values, units, imports"),
    ("SN3", "Parallelism and device counts"),
    ("SN4", "Quantization, memory and software versions"),
    ("SN5", "Scheduler and context lengths"),
    ("SN6", "Gateway"),
    ("SN7", "SLO feasibility"),
    ("SN80", "Import (`sncc import`, located in the launch script)"),
    ("SN81", "Search (`sncc search`, located in the plan's `search { }` block)"),
    ("SN9", "Internal"),
)


#: what a diagnostic's ``path`` (JSON ``path``, SARIF ``properties.path``) names, code by code
PATH_NOTE = (
    "**`path`.** In `--format json` (and SARIF's `properties.path`) every diagnostic carries `path`, the "
    "block and key it is about, relative to the `plan` block: `[\"decode\", \"tp\"]`, `[\"model\"]` "
    "for the model block itself, `[\"hardware\"]` for a missing `hardware` block. "
    "SN1001–SN1004 (syntax, encoding), SN1005 and SN1006 (suppression comments) have no syntax tree "
    "to take it from, so it is read from the text before the diagnostic's position "
    "(`sncc/syntax/paths.py`): the blocks enclosing the position, then the item it falls inside "
    "(after a key or block name, before its value is complete: `prefill { tp = = 8 }` is at "
    "`[\"prefill\", \"tp\"]`, "
    "the `{` of a block never closed at `[\"decode\"]`); a dotted key (`ttft.p99`) is one element and "
    "block labels are left out. The plan block itself is `[\"plan\"]`: a position directly inside it "
    "or on its head, and SN2011 when the plan has no role (otherwise SN2011 names the role block it "
    "points at, `[\"prefill\"]`). `[]` means a position outside every block (before or after the "
    "top-level blocks) and SN1060, a file that could not be read."
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
        PATH_NOTE,
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
        out += [f"## {prefix}{'x' * (6 - len(prefix))}: {title}", ""]   # SN1xxx, SN80xx
        out += [code_section(ec) for ec in members]
    others = [REGISTRY[c] for c in sorted(REGISTRY) if not c.startswith(tuple(p for p, _ in GROUPS))]
    if others:
        out += ["## Other", ""] + [code_section(ec) for ec in others]
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(codes_markdown())

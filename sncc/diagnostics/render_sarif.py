"""``--format sarif``: SARIF 2.1.0 (OASIS, Errata 01), the format GitHub code
scanning and other static-analysis dashboards ingest.

One run; ``tool.driver.rules`` has one entry per code that appears in the
results (sorted by code; ``ruleIndex`` points into it) with the registry's
summary, explanation, failing and fixed examples, ``helpUri`` (the code's
:attr:`~sncc.diagnostics.codes.ErrorCode.url`) and default level.  Each
result has ``ruleId``, ``level`` (``error``, ``warning``, ``note`` for info
and hint), the message (followed by notes and help, one per line), the
primary location, ``relatedLocations``, ``fixes`` and, in its property bag (§3.8), the
diagnostic's logical ``path`` in the plan, as in ``--format json`` (``properties.path``:
``["decode", "tp"]``).

Positions: regions are 1-based with an exclusive ``endColumn``, and the run
declares ``columnKind: unicodeCodePoints``, so columns are the code-point
columns of :meth:`sncc.source.SourceFile.line_col` (the SARIF default would be
UTF-16 code units).  Artifact URIs are the paths as given, as relative URI
references with ``/`` separators and percent-encoding (absolute paths become
``file://`` URIs), so keep paths repository-relative for code scanning.
"""

from __future__ import annotations

import json
from pathlib import PurePath
from urllib.parse import quote

from sncc import __version__
from sncc.diagnostics.codes import ErrorCode
from sncc.diagnostics.model import Diagnostic
from sncc.source import SourceFile, Span

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://sncc.dev"
LEVEL = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}


def artifact_uri(name: str) -> str:
    """A file name as an artifact URI: relative paths as a percent-encoded URI reference, absolute ones as ``file://``."""
    p = PurePath(name)
    if p.is_absolute():
        return p.as_uri()
    return quote(p.as_posix(), safe="/")


def region(span: Span, sources: dict[str, SourceFile]) -> dict | None:
    """The SARIF region of ``span`` (None when its source text is unknown)."""
    src = sources.get(span.file)
    if src is None:
        return None
    sl, sc = src.line_col(span.start)
    el, ec = src.line_col(span.end)
    return {"startLine": sl, "startColumn": sc, "endLine": el, "endColumn": ec}


#: the region of a file-level result, whose source text is unknown (a missing or unreadable file, a
#: folder: SN1060): its first line.  GitHub code scanning refuses a result location without
#: ``region.startLine`` (its SARIF rule GH1003)
FILE_REGION = {"startLine": 1, "startColumn": 1}


def physical_location(span: Span, sources: dict[str, SourceFile]) -> dict:
    """``physicalLocation`` of ``span``: its region, or :data:`FILE_REGION` when the source text is
    unknown."""
    r = region(span, sources)
    return {"artifactLocation": {"uri": artifact_uri(span.file)}, "region": dict(FILE_REGION) if r is None else r}


def rule(ec: ErrorCode) -> dict:
    """The ``reportingDescriptor`` of a registry code."""
    help_text = (f"{ec.explanation}\n\nFailing example:\n\n{ec.bad}\n\nFixed:\n\n{ec.good}")
    help_md = (f"{ec.explanation}\n\nFailing example:\n\n```\n{ec.bad}\n```\n\nFixed:\n\n```\n{ec.good}\n```\n\n"
               f"[{ec.code} ({ec.name})]({ec.url})")
    return {
        "id": ec.code,
        "name": ec.name,
        "shortDescription": {"text": ec.summary},
        "fullDescription": {"text": ec.explanation},
        "help": {"text": help_text, "markdown": help_md},
        "helpUri": ec.url,
        "defaultConfiguration": {"level": LEVEL.get(ec.severity, "note")},
    }


def result(d: Diagnostic, index: int, sources: dict[str, SourceFile]) -> dict:
    """The SARIF ``result`` of one diagnostic (``index`` is its rule's index)."""
    text = "\n".join([d.message] + [f"note: {n}" for n in d.notes] + ([f"help: {d.help}"] if d.help else []))
    out: dict = {
        "ruleId": d.code.code,
        "ruleIndex": index,
        "level": LEVEL.get(d.severity, "note"),
        "message": {"text": text},
        "locations": [{"physicalLocation": physical_location(d.span, sources)}] if d.span is not None else [],
        "properties": {"path": list(d.path)},
    }
    if d.related:
        out["relatedLocations"] = [
            {"id": i, "physicalLocation": physical_location(r.span, sources), "message": {"text": r.message}}
            for i, r in enumerate(d.related, start=1)
        ]
    fixes = []
    for f in d.fixes:
        by_file: dict[str, list[dict]] = {}
        for e in f.edits:
            r = region(e.span, sources)
            if r is None:
                break
            by_file.setdefault(e.span.file, []).append({"deletedRegion": r, "insertedContent": {"text": e.new_text}})
        else:
            if by_file:
                fixes.append({"description": {"text": f.title},
                              "artifactChanges": [{"artifactLocation": {"uri": artifact_uri(name)}, "replacements": reps}
                                                  for name, reps in by_file.items()]})
    if fixes:
        out["fixes"] = fixes
    return out


def document(diags: list[Diagnostic], sources: dict[str, SourceFile], error: str | None = None) -> dict:
    """The SARIF log as a dict.  With ``error`` (sncc could not run, e.g. a usage error), the run
    has one invocation with ``executionSuccessful: false`` and the message as an error
    notification (SARIF 2.1.0 §3.20)."""
    used = sorted({d.code.code: d.code for d in diags}.values(), key=lambda ec: ec.code)
    index = {ec.code: i for i, ec in enumerate(used)}
    log = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "sncc",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [rule(ec) for ec in used],
            }},
            "columnKind": "unicodeCodePoints",
            "results": [result(d, index[d.code.code], sources) for d in diags],
        }],
    }
    if error is not None:
        log["runs"][0]["invocations"] = [{"executionSuccessful": False, "toolExecutionNotifications": [
            {"level": "error", "message": {"text": error}}]}]
    return log


def render(diags: list[Diagnostic], sources: dict[str, SourceFile], files: int) -> str:
    """Serialise :func:`document` (2-space indent, trailing newline); ``files`` is unused (kept for a uniform signature)."""
    return json.dumps(document(diags, sources), indent=2, ensure_ascii=False) + "\n"

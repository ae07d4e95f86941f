"""The Ascend software stack as one compatible set (SN4021): the HDK driver the CANN release
needs, NNAL at the CANN version, and — with ``software { install_path }`` — the versions the
target machine's own version files record.

Facts: ``engine_rules.toml [[software_sets]]`` and ``[[version_files]]`` (docs/research/rule-kinds.md
K10: vllm-ascend installation.md, vllm-ascend#5468, #15411).  The torch / torch_npu / vLLM members of
the set are SN4012 (:mod:`sncc.checks.versions`), CANN against the engine release SN4006.

Version files are read with a bounded reader (regular files only, at most
:data:`VERSION_FILE_LIMIT` bytes); a missing or unreadable file is skipped — the plan may be
checked away from the target machine.
"""

from __future__ import annotations

import os
import re

from sncc.checks._rules import cmp_version, engine_release, in_range, release_cann, rows, sources
from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag

#: largest version file read [bytes] (the real ones are a few hundred bytes)
VERSION_FILE_LIMIT = 64 * 1024
_VERSION = re.compile(r"\d+(?:\.\d+)*(?:\.?(?:RC|rc|alpha|beta|T)\d+)?(?:\.\w+)?")


def read_version_file(path: str, keys) -> str | None:
    """The version recorded in the ``key=value`` file at ``path`` under the first of ``keys``
    present (``Version=25.5.1``, ``toolkit_running_version=[8.3.RC2:...]``), or None when the file
    is missing, not a regular file, too large or holds no such key."""
    from sncc.source import read_bytes_limited

    try:
        text = read_bytes_limited(path, VERSION_FILE_LIMIT, regular_only=True).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None
    found = {}
    for line in text.splitlines():
        if "=" not in line:
            continue
        k, v = line.split("=", 1)
        m = _VERSION.search(v)
        if m:
            found.setdefault(k.strip(), m.group(0))
    return next((found[k] for k in keys if k in found), None)


def installed_versions(install_path: str) -> dict[str, tuple[str, str]]:
    """``{component: (version, file)}`` read under ``install_path`` (``[[version_files]]``)."""
    out = {}
    for row in rows("version_files"):
        path = os.path.join(install_path, row["path"])
        v = read_version_file(path, row.get("keys", ("version",)))
        if v is not None:
            out[row["component"]] = (v, path)
    return out


def _same(a: str, b: str) -> bool:
    c = cmp_version(a, b)
    return c == 0 if c is not None else a.strip().lower() == b.strip().lower()


def check_software_set(plan, r):
    """HDK and NNAL form a published compatible set with CANN; installed files agree with the
    plan (SN4021)."""
    if not r.is_ascend:
        return
    sw, hw, eng = plan.software, plan.hardware, plan.engine
    declared = {"cann": (hw.cann, hw.span_of("cann")) if hw.cann else None,
                "hdk": (sw.hdk, sw.span_of("hdk")) if sw is not None and sw.hdk else None,
                "nnal": (sw.nnal, sw.span_of("nnal")) if sw is not None and sw.nnal else None}
    found = installed_versions(sw.install_path) if sw is not None and sw.install_path else {}
    for comp, (v, path) in found.items():
        d = declared.get(comp)
        if d is not None and not _same(d[0], v):
            yield diag(codes.SOFTWARE_SET_MISMATCH, f"the plan says {comp} {d[0]}, but {path} records {v}", d[1],
                       related=[Related(sw.span_of("install_path"), "install path given here")],
                       help=f"write the installed version ({comp} = \"{v}\") or install {comp} {d[0]}",
                       path=("software", comp) if comp != "cann" else ("hardware", "cann"))
    eff = {k: (v[0], v[1]) for k, v in declared.items() if v is not None}
    for comp, (v, path) in found.items():
        eff.setdefault(comp, (v, sw.span_of("install_path")))
    cann = eff.get("cann", (None, None))[0]
    if cann is None:
        cann = release_cann(plan, r)
    if cann is None:
        return
    for row in rows("software_sets"):
        if eng.kind not in row.get("engines", ()):
            continue
        sev = None if row.get("severity") == "error" else "warning"
        if row["rule"] == "nnal_equals_cann" and "nnal" in eff:
            version = engine_release(plan, r)
            if version and row.get("min_version") and not in_range(version, row["min_version"], None):
                continue
            nnal, span = eff["nnal"]
            if not _same(nnal, cann):
                yield diag(codes.SOFTWARE_SET_MISMATCH, f"NNAL {nnal} is not the CANN release {cann}: vllm-ascend needs NNAL == CANN",
                           span, severity=sev, notes=[row.get("notes", ""), "source: " + sources(row)],
                           help=f"install NNAL {cann} (libatb.so of the same release as the toolkit)", path=("software", "nnal"))
        elif row["rule"] in ("hdk_above", "hdk_at_least") and "hdk" in eff:
            c = cmp_version(cann, row["cann_from"])
            if c is None or c < 0:
                continue
            hdk, span = eff["hdk"]
            h = cmp_version(hdk, row["hdk"])
            if h is None:
                continue
            bad = h <= 0 if row["rule"] == "hdk_above" else h < 0
            if not bad:
                continue
            need = f"newer than {row['hdk']}" if row["rule"] == "hdk_above" else f"{row['hdk']} or newer"
            yield diag(codes.SOFTWARE_SET_MISMATCH,
                       f"HDK driver {hdk} is too old for CANN {cann}: CANN {row['cann_from']} and later need a driver {need}",
                       span, severity=sev, related=[Related(hw.span_of("cann"), f"CANN {cann}")] if hw.cann else [],
                       notes=[row.get("notes", ""), "source: " + sources(row)],
                       help=f"upgrade the HDK driver and firmware ({need}), or use the CANN release your driver supports",
                       path=("software", "hdk"))

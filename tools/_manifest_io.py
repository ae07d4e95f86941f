"""Shared by the manifest extractors in tools/: JSON-safe values and one deterministic writer.

No sncc import and nothing beyond the standard library, so that every extractor runs under any
interpreter (a vLLM virtualenv's python, or sncc's).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

#: manifest format version (``"format"`` in every manifest); sncc/engines/manifest.py reads this one
FORMAT = 1

REPO = Path(__file__).resolve().parent.parent


def jsonable(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON: enums by value, tuples/sets as lists (sets sorted), dataclass
    instances as ``{"<dataclass>": Name}``, callables and other objects as ``{"<repr>": ...}`` when
    the repr is stable (no memory address), else ``{"<object>": TypeName}``."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
    if isinstance(value, enum.Enum):
        return jsonable(value.value, depth + 1) if depth < 4 else str(value.value)
    if depth > 4:
        return {"<object>": type(value).__name__}
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v, depth + 1) for v in value), key=lambda x: json.dumps(x, sort_keys=True))
    if isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"<dataclass>": type(value).__name__}
    if isinstance(value, type):
        return {"<type>": value.__name__}
    text = repr(value)
    if " at 0x" in text or len(text) > 200:
        return {"<object>": type(value).__name__}
    return {"<repr>": text}


def command_line(tool: str, *args: str) -> str:
    """The command that regenerates a manifest, as written into its ``generated_by``."""
    return " ".join(["python", f"tools/{tool}", *(shlex.quote(a) for a in args)])


def write_manifest(doc: dict[str, Any], out: Path) -> Path:
    """Write ``doc`` as sorted, indented JSON (one trailing newline) to ``out`` (relative to the repo
    root when not absolute), print where and how it was made, and return the path."""
    if not out.is_absolute():
        out = REPO / out
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    print(f"wrote {out.relative_to(REPO) if out.is_relative_to(REPO) else out}", file=sys.stderr)
    print(f"regenerate with: {doc.get('generated_by', '')}", file=sys.stderr)
    return out

"""The README states the JSON diagnostics `format_version` that `render_json` writes."""

from __future__ import annotations

import re

from sncc.diagnostics.render_json import FORMAT_VERSION


def test_readme_names_the_current_format_version(root):
    readme = (root / "README.md").read_text(encoding="utf-8")
    stated = re.findall(r"`format_version` \(`\"([\d.]+)\"`", readme)
    assert stated == [FORMAT_VERSION], stated

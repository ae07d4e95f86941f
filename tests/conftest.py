"""pytest fixtures shared by every test folder; the helpers live in ``tests/expect.py``."""

from __future__ import annotations

import pathlib

import pytest

from expect import (ROOT, additional_config, compile_text, deployment_of, expectations,  # noqa: F401  (re-exported)
                    expectations_with_severity, outputs_of, role_toml, role_yaml)


@pytest.fixture
def root() -> pathlib.Path:
    """The repository root."""
    return ROOT

"""pytest fixtures shared by every test folder; the helpers live in ``tests/expect.py``."""

from __future__ import annotations

import pathlib

import pytest

from expect import ROOT, compile_text, expectations, expectations_with_severity  # noqa: F401  (re-exported)


@pytest.fixture
def root() -> pathlib.Path:
    """The repository root."""
    return ROOT

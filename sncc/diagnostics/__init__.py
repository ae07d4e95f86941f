"""Diagnostics: the one ``Diagnostic`` type, the code registry and renderers."""

from sncc.diagnostics.model import Diagnostic, Fix, Related, Severity, diag

__all__ = ["Diagnostic", "Fix", "Related", "Severity", "diag"]

"""The sncc language server (``sncc lsp``), built on pygls; installed with the
``lsp`` extra (``pip install 'sncc[lsp]'``).

Modules: :mod:`sncc.lsp.server` (pygls wiring), :mod:`sncc.lsp.convert`
(checking a buffer, diagnostics to LSP), :mod:`sncc.lsp.features` (hover,
completion, code actions, definition), :mod:`sncc.lsp.context` (what is under
the cursor) and :mod:`sncc.lsp.catalog_docs` (catalog facts for hover).
Importing this package imports nothing heavy; pygls is imported by
:func:`serve` only.
"""

from __future__ import annotations


def serve() -> None:
    """Run the server over stdio (raises ImportError when pygls is missing)."""
    from sncc.lsp.server import main

    main()

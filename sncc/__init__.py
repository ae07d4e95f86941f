"""sncc, the supernode configuration compiler.

Pipeline (one module per phase, see ``sncc/compiler.py``)::

    source text ─ syntax/parser.py ─▶ Lark tree ─ syntax/build_ast.py ─▶ AST
        ─ plan/build.py ─▶ typed Plan (pydantic, spans kept)
        ─ checks/ (CHECKS tuple) ─▶ diagnostics
        ─ lowering/ ─▶ engine-neutral deployment ─ emit/ ─▶ files
    typed Plan ─ sim/ ─▶ predicted TTFT, TPOT, QPM

Importing this package is cheap on purpose: heavy modules are imported by the
phase that needs them.
"""

__version__ = "0.2.0"

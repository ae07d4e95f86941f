"""Source text → Lark tree → sncc's own AST (frozen dataclasses with spans)."""

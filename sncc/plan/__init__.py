"""The typed plan: pydantic models (model.py), AST → plan (build.py) and the
derived facts every later phase needs (resolve.py)."""

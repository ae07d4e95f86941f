"""Former home of the run preparation, kept as the import path :mod:`sncc.checks._cost` uses.
The code lives in :mod:`sncc.sim.engine.run`."""
from sncc.sim.engine.run import resolve_kv_bytes_per_token, resolve_quant  # noqa: F401

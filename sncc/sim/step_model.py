"""Former home of the step-time model, kept as the import path :mod:`sncc.checks._cost` and
:mod:`sncc.checks.speculative` use (checks may not move simulator internals).  The model lives
in :mod:`sncc.sim.cost.step`."""
from sncc.sim.cost.step import StepModel, expected_accepted_tokens  # noqa: F401

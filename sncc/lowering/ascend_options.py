"""Moved to :mod:`sncc.engines.vllm_ascend.options` (the vllm-ascend adapter's option table);
kept as an alias for modules that have not switched yet (``sncc.sim.from_plan``)."""

from sncc.engines.vllm_ascend.options import *  # noqa: F401,F403
from sncc.engines.vllm_ascend.options import leaves, plan_options, plan_version, spellings  # noqa: F401

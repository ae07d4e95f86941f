"""The discrete-event simulation: ``des`` (event loop, :class:`Simulation`), ``events`` (event
kinds), ``run`` (cost models and KV pools prepared once per run, :func:`simulate_spec`),
``memory`` (KV pool of a role from :mod:`sncc.capacity`), ``metrics`` (:class:`SimResult`) and
``screen`` (the analytic screen: the same step costs without the event loop)."""

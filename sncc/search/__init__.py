"""``sncc search``: find the best plan under the SLOs (issue 12).

* :mod:`sncc.search.space` — the dimension table and the role layouts it spans (``search { }``);
* :mod:`sncc.search.candidate` — candidates as typed plans derived from one compilation;
* :mod:`sncc.search.pricing` — per-role cost tables and their closed-form combination;
* :mod:`sncc.search.run` — the stages: price, combine, checks + screen, event simulation;
* :mod:`sncc.search.report` / :mod:`sncc.search.write` — tables, JSON, plot, ``--write``;
* :mod:`sncc.search.command` — the click command.
"""

"""Compatibility name: the facts layer moved to :mod:`sncc.facts` (``Resolved`` is
:class:`sncc.facts.Facts`, ``resolve`` is :func:`sncc.facts.derive`)."""

from sncc.facts import Facts as Resolved, derive as resolve

__all__ = ["Resolved", "resolve"]

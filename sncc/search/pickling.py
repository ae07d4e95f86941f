"""Pickling of what the search ships to its workers (the base plan and its facts, once per worker).

The facts hold read-only mappings (:class:`types.MappingProxyType`, e.g. the catalog's), which
:mod:`pickle` refuses; :func:`register` teaches it to rebuild them from a plain dict copy (the
copy is as read-only as the original).  Importing :mod:`sncc.search.run` registers it.
"""
from __future__ import annotations

import copyreg
import types


def mapping_proxy(d: dict) -> types.MappingProxyType:
    """A read-only view of ``d`` (the reconstructor pickle calls in a worker)."""
    return types.MappingProxyType(d)


def _reduce(m: types.MappingProxyType):
    return mapping_proxy, (dict(m),)


def register() -> None:
    """Register the MappingProxyType reducer with :mod:`copyreg` (idempotent)."""
    copyreg.pickle(types.MappingProxyType, _reduce)

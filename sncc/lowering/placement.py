"""Where each instance and DP rank runs: nodes and device slices.

Rule (first fit, in prefill, decode, serve order, instance by instance; the node-level half is
:func:`sncc.facts.packing.pack`, which the checks share):

* an instance of ``D >= N`` devices (``N`` per node) takes ``ceil(D / N)`` fresh nodes, filled
  in order;
* a smaller instance goes into the current node at the first offset that is a multiple of
  ``D`` (so a slice never straddles an Atlas A3 HiAM module pair or an NVLink domain half)
  and still fits, else into a fresh node;
* DP rank ``r`` holds the instance's devices ``[r × tp × pp, (r + 1) × tp × pp)``; a rank never
  spans two nodes.

With the node size unknown (a chip without a system), each instance gets its own node of
exactly its size.
"""

from __future__ import annotations

from dataclasses import dataclass

from sncc.units import format_count


class PlacementError(ValueError):
    """The instances cannot be laid out (one line; lowering turns it into a diagnostic).
    ``path`` is the plan value it is about (``("serve", "tp")``, ``("hardware", "nodes")``)."""

    def __init__(self, message: str, path: tuple[str, ...], help: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.help = help


@dataclass(frozen=True)
class RankSlot:
    """DP rank ``dp_rank`` of an instance: ``node`` and its device indices there."""

    dp_rank: int
    node: int
    devices: tuple[int, ...]


@dataclass(frozen=True)
class InstanceSlot:
    """One instance: ``role``, ``index``, its nodes (in order) and ranks."""

    role: str
    index: int
    nodes: tuple[int, ...]
    ranks: tuple[RankSlot, ...]


def place(roles: list[tuple], per_node: int | None,
          nodes_available: int | None) -> tuple[list[InstanceSlot], list[int]]:
    """Lay out ``roles`` = ``[(name, instances, dp, devices_per_rank)]`` (optionally with a fifth
    item, the rank's ``tp``: the error then says whether its TP group or its pipeline spans nodes).

    Returns (instance slots in order, devices used on each node).  Raises :class:`PlacementError`
    when a rank would straddle two nodes or more nodes are needed than ``nodes_available``.
    """
    from sncc.facts.packing import pack

    slots: list[InstanceSlot] = []
    for name, instances, dp, per_rank, *rest in roles:
        tp = rest[0] if rest else per_rank
        d = dp * per_rank
        if instances and per_node is not None and d >= per_node and per_node % per_rank:
            where = (f"more than a node's {per_node}: its TP group would span nodes"
                     if per_rank > per_node and tp > per_node else
                     f"more than a node's {per_node}: tp {tp} fits a node of {per_node}, but its "
                     f"pp = {per_rank // tp} pipeline stages would sit on different nodes"
                     if per_rank > per_node else
                     f"which a node of {per_node} devices does not hold a whole number of: a rank would straddle two nodes")
            raise PlacementError(f"`{name}`: one DP rank takes tp × pp = {format_count(per_rank, 'device')}, {where}; "
                                 "sncc starts every rank inside one node "
                                 "(tensor or pipeline parallelism across nodes needs a Ray cluster, which sncc "
                                 "does not launch)", (name, "tp"))
    sizes = [dp * per_rank for _, instances, dp, per_rank, *_ in roles for _ in range(instances)]
    packed, used, _ = pack(sizes, per_node)
    at = iter(packed)
    for name, instances, dp, per_rank, *rest in roles:
        for i in range(instances):
            node_ids, offset = next(at)
            ranks = []
            for r in range(dp):
                lo = offset + r * per_rank
                node = node_ids[0] + (lo // per_node if per_node else 0)
                base = lo % per_node if per_node else lo
                ranks.append(RankSlot(r, node, tuple(range(base, base + per_rank))))
            slots.append(InstanceSlot(name, i, tuple(dict.fromkeys(rs.node for rs in ranks)), tuple(ranks)))
    if nodes_available is not None and len(used) > nodes_available:
        why, fix = _idle_devices(roles, per_node)
        raise PlacementError(f"the instances need {len(used)} nodes and the plan has {nodes_available}" + why,
                             ("hardware", "nodes"), help=f"set `nodes = {len(used)}`" + fix)
    return slots, used


def _idle_devices(roles: list[tuple], per_node: int | None) -> tuple[str, str]:
    """(": why", ", or how") for the roles whose instances, smaller than a node and not dividing it,
    leave devices of each node idle (the rule of :func:`place`: such an instance never spans two
    nodes); ("", "") when none does."""
    if not per_node:
        return "", ""
    why, names = [], []
    for name, instances, dp, per_rank, *_ in roles:
        d = dp * per_rank
        if d < per_node and per_node % d:
            fit = per_node // d
            why.append(f"`{name}`: {format_count(instances, 'instance')} of {d} devices; an instance smaller than "
                       f"a node stays inside one node, so {fit} per node of {per_node} ({per_node - fit * d} devices idle)")
            names.append(f"`{name}`")
    if not why:
        return "", ""
    sizes = [k for k in range(1, per_node + 1) if per_node % k == 0]
    listed = ", ".join(map(str, sizes[:-1])) + f" or {sizes[-1]}" if len(sizes) > 1 else str(sizes[0])
    return (": " + "; ".join(why),
            f", or give each {' and '.join(names)} instance a device count that divides {per_node} ({listed})")

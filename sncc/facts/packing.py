"""How instances pack into nodes: the node-level half of the placement rule, shared by lowering
(:func:`sncc.lowering.placement.place`, which adds DP ranks and device slices) and the checks that
count the nodes a layout takes (SN3002's help).

Rule (first fit, instance by instance in the order given):

* an instance of ``D >= N`` devices (``N`` per node) takes ``ceil(D / N)`` fresh nodes, filled
  in order;
* a smaller instance goes into the current node at the first offset that is a multiple of
  ``D`` (so a slice never straddles an Atlas A3 HiAM module pair or an NVLink domain half)
  and still fits, else into a fresh node: it never spans two nodes.

With the node size unknown (``N`` None: a chip without a system), each instance gets its own node
of exactly its size.
"""

from __future__ import annotations


def pack(sizes: list[int], per_node: int | None) -> tuple[list[tuple[list[int], int]], list[int], list[int]]:
    """For instances of ``sizes`` devices: ((its node ids, its first device's offset in the first
    node) per instance, devices used per node, each node's size).  Never raises."""
    out: list[tuple[list[int], int]] = []
    used: list[int] = []
    node_sizes: list[int] = []
    for d in sizes:
        if per_node is None:
            out.append(([len(used)], 0))
            used.append(d)
            node_sizes.append(d)
        elif d >= per_node:
            n = -(-d // per_node)
            first = len(used)
            for j in range(n):
                used.append(min(per_node, d - j * per_node))
                node_sizes.append(per_node)
            out.append((list(range(first, first + n)), 0))
        else:
            k = len(used) - 1
            offset = None
            if k >= 0 and node_sizes[k] == per_node:
                start = -(-used[k] // d) * d if per_node % d == 0 else used[k]
                if start + d <= per_node:
                    offset = start
            if offset is None:
                used.append(0)
                node_sizes.append(per_node)
                k, offset = len(used) - 1, 0
            used[k] = offset + d
            out.append(([k], offset))
    return out, used, node_sizes


def nodes_taken(sizes: list[int], per_node: int) -> int:
    """The nodes instances of ``sizes`` devices take on nodes of ``per_node`` (:func:`pack`)."""
    return len(pack(sizes, per_node)[1])

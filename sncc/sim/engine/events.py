"""Kinds of events of the discrete-event loop (:class:`sncc.sim.engine.des.Simulation`).

The heap holds ``(time [s], sequence number, kind, argument)``; the kind indexes the
simulation's handler table, so the values are the table's positions."""
from __future__ import annotations

from enum import IntEnum


class Event(IntEnum):
    """What happens at an event time; the argument is an instance or request index."""

    ARRIVAL = 0        #: a new conversation (request) arrives (open loop), argument unused
    STEP_DONE = 1      #: a prefill step (disaggregated) or a serve step (aggregated) ends; argument: instance
    KV_ARRIVED = 2     #: a request's KV reached its decode instance; argument: request
    DECODE_DONE = 3    #: a decode step ends; argument: decode instance
    FOLLOW_UP = 4      #: a conversation's next turn is issued after the think time; argument: request

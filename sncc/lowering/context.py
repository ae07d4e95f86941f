"""What every lowering step reads: the plan, its resolved facts, the engine adapter and pin,
and the derived values computed once (:class:`LowerCtx`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sncc.lowering.hosts import PortBases, port_bases
from sncc.lowering.roles import RoleFacts, role_facts


class LoweringError(ValueError):
    """The plan cannot be lowered to a runnable deployment; the message is one line.

    ``path`` is the logical plan path the problem is about (for the diagnostic's location);
    ``code`` the diagnostic code (:data:`~sncc.diagnostics.codes.DEPLOYMENT_IMPOSSIBLE` when None);
    ``help`` the fix, when the lowering knows one (else the diagnostic points at ``sncc explain``).
    """

    def __init__(self, message: str, path: tuple[str, ...] = (), code=None, help: str | None = None) -> None:
        super().__init__(" ".join(str(message).split()))
        self.path = path
        self.code = code
        self.help = help


@dataclass
class LowerCtx:
    """Inputs of one lowering run.

    ``vendor`` is ``ascend`` or ``nvidia`` and ``per_node`` the devices per node (None when
    unknown), both the facts layer's;
    ``nodes_available`` the plan's node count (None when it gives devices only and the node size
    is unknown); ``connector_id`` the effective KV connector (None: ``none``, or an aggregated plan naming a P/D
    transfer connector, which has no peer there);
    ``roles`` the facts layer's :class:`~sncc.facts.model.RoleFacts` by name; ``slots`` the placement
    (:class:`~sncc.lowering.placement.InstanceSlot` list), set once placed.
    """

    plan: Any
    resolved: Any
    adapter: Any
    pin: Any
    pin_note: str
    vendor: str
    per_node: int | None
    nodes_available: int | None
    roles: dict[str, RoleFacts]
    ports: PortBases
    connector_id: str | None
    notes: list[str] = field(default_factory=list)
    slots: list = field(default_factory=list)
    #: plan env entries nothing of the pinned release reads (``env.unread_plan_env``'s cache)
    unread_env: dict | None = None
    #: (``slots``, nodes they use): ``launch._nodes``'s cache, valid while ``slots`` is that list
    nodes_used: tuple | None = None

    @property
    def ascend(self) -> bool:
        """True on Ascend NPUs."""
        return self.vendor == "ascend"

    @property
    def vllm_version(self) -> str:
        """The vLLM release the engine runs: ``software.vllm`` when the plan gives it, else what the
        adapter knows of the plan's release (:meth:`~sncc.engines.base.EngineAdapter.vllm_version`)."""
        sw = self.plan.software
        if sw is not None and sw.vllm:
            return sw.vllm.lstrip("v")
        return self.adapter.vllm_version(self.plan.engine.version)

    def vllm_at_least(self, version: str) -> bool:
        """True when the engine runs vLLM ``version`` or newer (an unparsable version: the pin's)."""
        from sncc import catalog

        try:
            return catalog.parse_version(self.vllm_version) >= catalog.parse_version(version)
        except ValueError:
            return catalog.parse_version(self.pin.vllm) >= catalog.parse_version(version)


def make_context(plan, resolved) -> LowerCtx:
    """Build the :class:`LowerCtx` of ``plan``.  Raises :class:`LoweringError` for an engine
    sncc has no adapter for."""
    from sncc.engines.registry import UnknownEngine, adapter_for

    try:
        adapter = adapter_for(plan.engine.kind)
    except UnknownEngine as e:
        raise LoweringError(str(e), ("engine", "kind")) from None
    choice = adapter.choose(plan.engine.version)
    vendor = resolved.vendor or "ascend"
    per_node = resolved.devices_per_node
    hw = plan.hardware
    if hw.nodes is not None:
        nodes = hw.nodes
    elif hw.devices is not None and per_node:
        nodes = -(-hw.devices // per_node)
    else:
        nodes = None
    roles = {n: role_facts(resolved, n) for n, _ in plan.roles()}
    cid = None
    kt = plan.kv_transfer
    if plan.disaggregated:
        cid = kt.connector if kt is not None and kt.connector else adapter.default_connector_id()
        if cid == "none":
            cid = None
    elif kt is not None and kt.connector not in (None, "none"):
        # a `serve` role gets a connector that works on one server (KV offload); a P/D transfer
        # connector has no peer there and is not written (SN3026 says so)
        from sncc import catalog

        try:
            cid = kt.connector if catalog.kv_connector(kt.connector).aggregated else None
        except KeyError:
            cid = None
    return LowerCtx(plan=plan, resolved=resolved, adapter=adapter, pin=choice.pin, pin_note=choice.note,
                    vendor=vendor, per_node=per_node, nodes_available=nodes, roles=roles, ports=port_bases(plan),
                    connector_id=cid)

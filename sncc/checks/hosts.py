"""``hosts`` checks that need the typed plan only (SN2040): an address given to two nodes, a
``nic`` that is no interface name.  Lowering refuses these too (with the address count, which
needs the deployment's node count, :mod:`sncc.lowering.hosts`); checking them here reports them
alongside any other error, where lowering, which only runs on a plan without errors, would
report them only once the rest is fixed."""

from __future__ import annotations

from sncc.diagnostics import codes
from sncc.diagnostics.model import diag
from sncc.plan.address import nic_problem, repeated_address


def check_hosts(plan, r):
    """No ``hosts.addresses`` entry (literal or ``env("NAME")``) given to two nodes, and
    ``hosts.nic`` an interface name (SN2040)."""
    hosts = plan.hosts
    if hosts is None:
        return
    for key, why in (("addresses", repeated_address(list(hosts.addresses or []))), ("nic", nic_problem(hosts.nic))):
        if why:
            yield diag(codes.HOSTS_ADDRESSES, why, hosts.span_of(key) or hosts.name_span,
                       help=f"see `sncc explain {codes.HOSTS_ADDRESSES.code}`", path=("hosts", key))

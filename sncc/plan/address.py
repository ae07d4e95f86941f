"""What a literal node address in ``hosts.addresses`` may be: the one rule, read by the plan
builder (SN2004 at the literal) and by lowering's ``hosts`` check; and the rules of ``hosts``
that need the plan only (no entry given to two nodes, ``nic`` an interface name), read by the
``hosts`` check (:mod:`sncc.checks.hosts`, so ``sncc check`` reports them next to any other
error) and by lowering (which refuses such a plan however it is called)."""

from __future__ import annotations

import re

#: one label of a host name (RFC 1123 §2.1, RFC 952): letters, digits and hyphens, 1-63 characters,
#: neither starting nor ending with a hyphen (a leading digit is allowed since RFC 1123)
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
#: an IPv6 zone (``%eth0``): an interface name or index
_ZONE = re.compile(r"[A-Za-z0-9_.:@-]{1,15}")
#: a Linux network interface name (IFNAMSIZ - 1 = 15 characters, no whitespace or slash)
_NIC = re.compile(r"[A-Za-z0-9_.:@-]{1,15}")


def address_problem(text: str) -> str | None:
    """Why ``text`` is no literal node address, or None when it is one: an IPv4 literal or a host
    name per RFC 1123 §2.1 (labels of letters, digits and inner hyphens, at most 63 characters
    each and 253 in all; a name of digits and dots only must be an IPv4 address).  An IPv6
    literal, bracketed or not, is refused with its reason (the launch files' URLs).  Nothing here is expanded by a shell inside
    double quotes, and no literal starts with `-` (it would be read as an option)."""
    import ipaddress

    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    addr, _, zone = bare.partition("%")
    if ":" in bare:
        try:
            ipaddress.IPv6Address(addr)
        except ValueError:
            return "not an IPv6 address"
        if "%" in bare and not _ZONE.fullmatch(zone):
            return "its zone after `%` is not an interface name"
        # a well-formed IPv6 literal is still refused: the launch files join an address and a port
        # as `http://<address>:<port>` (bench.sh's --base-url, the P/D proxy's server URLs), which
        # an unbracketed IPv6 address breaks, and the engines' own address options take it bare
        return "an IPv6 address: the launch files sncc writes join address and port as `http://<address>:<port>`; give the node's host name"
    if bare is not text:
        return "brackets hold an IPv6 address only"
    name = text[:-1] if text.endswith(".") else text
    if re.fullmatch(r"[0-9.]+", name):
        try:
            ipaddress.IPv4Address(name)
            return None
        except ValueError:
            return "not an IPv4 address (four numbers 0-255 separated by dots)"
    if not name:
        return "empty"
    if len(name) > 253:
        return "a host name has at most 253 characters (RFC 1123)"
    for label in name.split("."):
        if not label:
            return "a host name has no empty label (`..`, or a dot at the start)"
        if not _LABEL.fullmatch(label):
            if label.startswith("-") or label.endswith("-"):
                return f"the label `{label}` starts or ends with `-` (RFC 1123)"
            if len(label) > 63:
                return f"a label has at most 63 characters (RFC 1123); `{label[:20]}…` has {len(label)}"
            return f"the label `{label}` holds a character other than letters, digits and `-` (RFC 1123)"
    return None


def repeated_address(addrs) -> str | None:
    """Why the ``hosts.addresses`` entries ``addrs`` (strings and ``env("NAME")`` references)
    give one address to two nodes: a literal, or an ``env("NAME")`` given twice, among every
    entry (the used nodes' and any spare ones past them); None when none repeats.  Two entries
    reading one variable resolve to one address when the scripts run.  Needs no node count."""
    seen: dict[str, int] = {}
    seen_env: dict[str, int] = {}
    for k, a in enumerate(addrs):
        name = getattr(a, "name", None)
        if name is not None:
            if name in seen_env:
                return (f"`hosts.addresses` gives `env(\"{name}\")` to node {seen_env[name]} and node {k}: both read "
                        f"the one variable `{name}`, so both nodes get one address when the scripts run; each node "
                        "needs its own address")
            seen_env[name] = k
            continue
        if str(a) in seen:
            return f"`hosts.addresses` gives `{a}` to node {seen[str(a)]} and node {k}: each node needs its own address"
        seen[str(a)] = k
    return None


def nic_problem(nic) -> str | None:
    """Why ``hosts.nic`` is not a network interface name, or None (also without one)."""
    if nic is None or nic == "" or _NIC.fullmatch(str(nic)):
        return None
    return (f"`hosts.nic = \"{nic}\"` is not a network interface name (at most 15 letters, digits and "
            "`_.:@-`; the dev field of: ip -4 route list 0/0)")

"""``proxy.sh``: start the router in front of the servers (:class:`~sncc.lowering.deployment.ProxySpec`).

It lists every prefill and decode (or every serve) API server by node address variable and
port, with the policy named in its header; the router's code comes from a source checkout of
the pinned engine (``root_env``), since the engines' wheels do not ship it.
"""

from __future__ import annotations

from sncc.emit import shell
from sncc.emit.args import cli_words
from sncc.lowering.deployment import Deployment


def emit(dep: Deployment) -> dict[str, str]:
    """``{"proxy.sh": text}``, or {} without a proxy."""
    px = dep.proxy
    if px is None:
        return {}
    req = list(dep.proxy_required())
    what = (f"{px.kind} proxy on port {px.port} over {len(px.endpoints)} API servers; policy: {px.policy}"
            f" ({px.script})")
    lines = shell.header(dep, what, depth=0)
    lines += [f"# Run on node {px.node} (or any host that reaches every server). " + shell.needs(req),
              "set -euo pipefail", shell.OUT_HERE]
    lines += shell.source("env/common.sh")
    lines += shell.require(req)
    words = [px.launcher, f'"${{{px.root_env}}}/{px.script}"']
    for a in px.flags:
        words += cli_words(a)
    lines.append("exec " + shell.continued(words))
    return {"proxy.sh": "\n".join(lines) + "\n"}

"""The :class:`Deployment`: every instance, rank, node, device slice and port of a plan.

Lowering (:func:`sncc.lowering.lower`) builds it once; the emitters read nothing else (no
catalog look-ups, no plan reading).  All values are final: engine arguments in the pinned
vLLM's dashed spelling with typed values, environment variables as strings, ports as ints.

Shapes::

    Deployment
      roles:  RoleDeployment (args: role-level engine arguments, the same on every server)
                instances: InstanceDeployment (nodes, ranks, ports)
                  processes: ServerProcess (one launch script: per-process flags and env)
      nodes:  NodeDeployment (address, NIC, per-node env)
      proxy:  ProxySpec | None      bench: BenchSpec | None      client: dict | None
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ShellValue:
    """A value the shell completes when the script runs: ``template`` with ``{VAR}`` placeholders
    for variables sncc names (``"{NODE_7_IP},{NODE_8_IP}"``); everything else is literal."""

    template: str

    @property
    def variables(self) -> tuple[str, ...]:
        """The placeholder names, in order of first use."""
        import re

        return tuple(dict.fromkeys(re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", self.template)))


@dataclass(frozen=True)
class Arg:
    """One engine argument: ``name`` is the dashed argument (``tensor-parallel-size``, no
    ``--``), ``value`` a bool / int / float / str / list / dict, ``note`` how sncc derived it
    (written as a comment where the format allows)."""

    name: str
    value: Any
    note: str = ""


@dataclass(frozen=True)
class EnvVar:
    """One ``export NAME=value``: ``value`` a literal string or a :class:`ShellValue` (expanded
    when the file is sourced); ``section`` groups lines under a heading."""

    name: str
    value: "str | ShellValue"
    note: str = ""
    section: str = ""


@dataclass(frozen=True)
class Required:
    """A variable a script needs from its caller: ``name`` and the message printed when unset;
    ``test`` the variable the script checks when that is another one (``NODE_1_IP``, which
    ``env/common.sh`` sets from the plan's ``env("NODE1_IP")``), else "" (``name`` itself)."""

    name: str
    help: str
    test: str = ""


def node_requirement(k: int, address: "str | None", address_env: "str | None", what: str) -> "Required | None":
    """What a script needs from its caller for node ``k``'s address: nothing when the plan gives
    it literally (``env/common.sh`` sets ``NODE_<k>_IP``), the plan's ``env("NAME")`` variable
    when it names one, else ``NODE_<k>_IP`` itself."""
    var = f"NODE_{k}_IP"
    if address is not None:
        return None
    if address_env is not None:
        return Required(address_env, f"set {address_env} (plan hosts.addresses[{k}]) or {var} to the address of "
                                     f"node {k} ({what})", test=var)
    return Required(var, f"set {var} to the address of node {k} ({what})")


@dataclass(frozen=True)
class NodeDeployment:
    """Node ``index`` (0-based over the deployment).  ``address_var`` is the shell variable that
    holds its address in every script (``NODE_<index>_IP``); ``address`` the plan's literal
    address (None: the caller sets the variable), ``address_env`` an ``env("…")`` reference;
    ``devices`` the devices the deployment uses there; ``env`` the node's own variables."""

    index: int
    address_var: str
    address: str | None = None
    address_env: str | None = None
    devices: int = 0
    env: tuple[EnvVar, ...] = ()

    def required(self, what: str) -> "Required | None":
        """:func:`node_requirement` of this node."""
        return node_requirement(self.index, self.address, self.address_env, what)


@dataclass(frozen=True)
class RankDeployment:
    """One data-parallel rank of an instance: ``dp_rank`` in ``[0, dp)``, its ``node`` and
    ``devices`` (device indices on that node), and its API ``port`` when it serves one."""

    dp_rank: int
    node: int
    devices: tuple[int, ...]
    port: int | None = None


@dataclass(frozen=True)
class ServerProcess:
    """One engine process, started by ``launch/<name>.sh``: ``flags`` are the per-process
    arguments appended to the command line (after the role's YAML), ``env`` its variables (the
    node's and its own), ``required`` the variables its caller must set; ``api_port`` is None
    for a ``--headless`` follower."""

    name: str
    role: str
    instance: int
    node: int
    ranks: tuple[int, ...]
    devices: tuple[int, ...]
    api_port: int | None
    flags: tuple[Arg, ...] = ()
    env: tuple[EnvVar, ...] = ()
    required: tuple[Required, ...] = ()
    summary: str = ""


@dataclass(frozen=True)
class InstanceDeployment:
    """Instance ``index`` of a role: the ``nodes`` it spans, its ``ranks``, its DP master
    (``dp_master_node``, ``dp_rpc_port``), the KV-transfer port base ``kv_port`` (None without a
    connector) and the server ``processes`` that start it."""

    role: str
    index: int
    nodes: tuple[int, ...]
    ranks: tuple[RankDeployment, ...]
    dp_master_node: int
    dp_rpc_port: int | None
    kv_port: int | None
    processes: tuple[ServerProcess, ...]


@dataclass(frozen=True)
class RoleDeployment:
    """One role (``prefill``, ``decode`` or ``serve``): ``args`` are the role-level engine
    arguments (the YAML / TOML), ``tp``/``dp``/``pp`` its parallel sizes, ``devices`` per
    instance, ``kv_role`` ``kv_producer`` / ``kv_consumer`` / None, ``launch`` ``internal`` or
    ``external`` data parallelism, ``files`` extra per-role files (Omni-Infer: model extra
    config, OmniPlacement YAML) as name → object."""

    name: str
    tp: int
    dp: int
    pp: int
    devices: int
    kv_role: str | None
    launch: str
    args: tuple[Arg, ...]
    instances: tuple[InstanceDeployment, ...]
    files: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def arg(self, name: str) -> Any:
        """The value of role argument ``name`` (dashed), or None."""
        return next((a.value for a in self.args if a.name == name), None)


@dataclass(frozen=True)
class Endpoint:
    """An API server the proxy or the benchmark reaches: node ``node`` (its ``address_var``) and ``port``."""

    role: str
    node: int
    address_var: str
    port: int


@dataclass(frozen=True)
class ProxySpec:
    """The router in front of the servers.  ``kind``: ``pd`` (prefill/decode pairs), ``dp``
    (load balancing over aggregated instances) or ``global`` (Omni-Infer's nginx global proxy);
    ``script`` the entry point relative to ``root_env`` (a source checkout the caller names);
    ``flags`` the full argument list in order; ``node`` where it runs; ``port`` where clients call."""

    kind: str
    script: str
    root_env: str
    root_help: str
    node: int
    port: int
    flags: tuple[Arg, ...]
    policy: str
    endpoints: tuple[Endpoint, ...]
    launcher: str = "python"
    source: tuple[str, ...] = ()


@dataclass(frozen=True)
class SetupScript:
    """A vendor script every server's shell sources before sncc's exports (CANN's ``set_env.sh``):
    ``path`` on the target machine, ``what`` it sets up, ``source`` of the path."""

    path: str
    what: str
    source: str


@dataclass(frozen=True)
class BenchClient:
    """One ``vllm bench serve`` process: ``flags`` in order; ``target`` the address variable and
    port it calls; ``result_file`` the ``--save-result`` file it writes; ``share`` what part of
    the workload it runs ("" when it runs the whole workload)."""

    flags: tuple[Arg, ...]
    target: Endpoint
    result_file: str
    share: str = ""


@dataclass(frozen=True)
class BenchSpec:
    """The benchmark of the deployment: one client against the entry point (the proxy or the one
    API server), or one client per API server, each with its share of the workload, when several
    servers have no router in front; ``notes`` how the plan's workload was mapped."""

    clients: tuple[BenchClient, ...]
    notes: tuple[str, ...] = ()

    @property
    def result_files(self) -> tuple[str, ...]:
        """The result file of every client, in client order."""
        return tuple(c.result_file for c in self.clients)


@dataclass(frozen=True)
class Deployment:
    """Everything the output files of one plan say; see the module docstring.

    ``engine`` is the plan's engine label, ``engine_version`` the pin built for (``pin_note``
    says how it was chosen), ``vllm_version`` the vLLM it runs, ``model_path`` the positional
    model argument, ``secrets`` the names of variables the plan references as secrets (never
    their values), ``manifest_facts`` informational facts for ``manifest.json`` (chip, CANN,
    versions), ``extra_files`` engine-specific top-level files (Omni-Infer's inventory) as
    name → object.
    """

    name: str
    engine: str
    engine_version: str
    pin_note: str
    vllm_version: str
    vendor: str
    model_path: str
    served_name: str
    disaggregated: bool
    roles: tuple[RoleDeployment, ...]
    nodes: tuple[NodeDeployment, ...]
    common_env: tuple[EnvVar, ...]
    proxy: ProxySpec | None
    bench: BenchSpec | None
    client: dict | None
    secrets: tuple[str, ...] = ()
    setup_scripts: tuple[SetupScript, ...] = ()
    manifest_facts: dict = field(default_factory=dict)
    extra_files: dict[str, Any] = field(default_factory=dict)
    #: the catalog system id built for ("" when the plan names none), in the role YAML's header
    #: so that `sncc import` of the tree reads the hardware back
    system: str = ""

    def role(self, name: str) -> RoleDeployment | None:
        """The :class:`RoleDeployment` called ``name``, or None."""
        return next((r for r in self.roles if r.name == name), None)

    @property
    def processes(self) -> tuple[ServerProcess, ...]:
        """Every server process, in role, instance, node order."""
        return tuple(p for r in self.roles for i in r.instances for p in i.processes)

    def node(self, index: int) -> NodeDeployment:
        """Node ``index``."""
        return self.nodes[index]

    def proxy_required(self) -> tuple[Required, ...]:
        """The variables ``proxy.sh`` checks before it starts: the router's source checkout
        (``root_env``), then the address of every node it calls; () without a proxy."""
        px = self.proxy
        if px is None:
            return ()
        req = [Required(px.root_env, f"set {px.root_env} to {px.root_help}")]
        req += [q for k in sorted({e.node for e in px.endpoints})
                if (q := self.node(k).required("a server the proxy calls")) is not None]
        return tuple(req)

    def bench_required(self) -> tuple[Required, ...]:
        """The variables ``bench.sh`` checks before it starts: the address of every node its
        clients call, once each; () without a benchmark."""
        if self.bench is None:
            return ()
        req, seen = [], set()
        for c in self.bench.clients:
            t = c.target
            need = self.node(t.node).required(f"the {t.role} the benchmark calls")
            if need is not None and need.name not in seen:
                seen.add(need.name)
                req.append(need)
        return tuple(req)

    def required_by_script(self) -> dict[str, tuple[Required, ...]]:
        """Every script's checked variables, the one source of its ``shell.require`` lines and of
        the list ``sncc build`` prints: ``launch/<process>.sh``, ``proxy.sh``, ``bench.sh``."""
        out = {f"launch/{p.name}.sh": tuple(p.required) for p in self.processes}
        if self.proxy is not None:
            out["proxy.sh"] = self.proxy_required()
        if self.bench is not None:
            out["bench.sh"] = self.bench_required()
        return out

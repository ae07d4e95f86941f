"""What every engine adapter answers, and the data it answers from.

An adapter (:class:`EngineAdapter`) is the one place that knows an engine target: which
releases sncc pins (:class:`Pin`, read from the adapter's ``data/pins.toml``), the argument
manifest of each pinned release (:class:`Manifest`, ``data/<version>.json``, extracted from the
tagged sources by ``tools/extract_*.py``), the KV connectors it ships with their port rules
(:class:`ConnectorSpec`), how a role's servers are launched (internal or external data
parallelism), and the engine-specific questions checks, lowering and the simulator ask
(``supports_component``, ``release_options``, ``torchair_mode``, ...).  Code outside
``sncc/engines/`` never compares ``engine.kind`` with a name: it asks
:func:`sncc.engines.registry.adapter_for` and then the adapter.

Every fact in ``pins.toml`` carries its source (a tagged file of the engine's repository).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from importlib.resources import files
from types import MappingProxyType
from typing import Any, Mapping

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


#: speculative methods whose drafter is a separate checkpoint: vLLM raises "num_speculative_tokens
#: was provided but without speculative model" without ``speculative_config.model``
#: (vllm/config/speculative.py, SpeculativeConfig.__post_init__)
DRAFT_CHECKPOINT_METHODS = ("draft_model", "eagle", "eagle3")


class AdapterDataError(ValueError):
    """An adapter's data file is malformed (a bug in sncc's data, not in the plan)."""


@dataclass(frozen=True)
class Pin:
    """One engine release sncc writes launch files for.

    ``version`` is spelled as a plan writes it (``v0.11.0`` for vllm-ascend, ``0.11.0`` for
    vLLM, ``release_v0.3.0`` for Omni-Infer); ``vllm`` is the vLLM release it runs (its
    argument parser reads the YAML and the command line); ``revision`` a commit for branch
    pins; ``source`` where the pin's facts were read.
    """

    version: str
    vllm: str
    revision: str = ""
    status: str = "R"
    source: tuple[str, ...] = ()
    notes: str = ""


@dataclass(frozen=True)
class PinChoice:
    """The pin a plan is built for: ``exact`` when the plan named a pinned release (or named none
    and got the default); ``note`` says which pin was taken and why (empty when exact and named)."""

    pin: Pin
    requested: str | None
    exact: bool
    note: str = ""


@dataclass(frozen=True)
class ArgSpec:
    """One engine argument of a manifest: dashed ``name`` (no leading ``--``), ``type`` as the
    extractor wrote it (``int``, ``str``, ``json``, ``bool`` ...), ``default``, ``choices``
    (None: any), ``boolean`` (a BooleanOptionalAction: ``--x`` / ``--no-x``)."""

    name: str
    type: str = ""
    default: Any = None
    choices: tuple | None = None
    boolean: bool = False


@dataclass(frozen=True)
class Manifest:
    """What one pinned release accepts, extracted from its tagged source.

    ``arguments``: dashed name → :class:`ArgSpec`; ``additional_config``: dotted keys of
    ``--additional-config`` (vllm-ascend, Omni-Infer); ``env``: environment variables the
    engine reads (its ``envs.py`` and, ``env_read_elsewhere``, any other module's literal reads);
    ``model_extra_config``: Omni-Infer's ``section`` and ``section.field`` keys; ``placement``:
    the OmniPlacement YAML keys it reads; ``quantization_methods``: the ``--quantization`` values a
    plugin registers beside vLLM's own.  ``source`` / ``regenerate``: where it came from and the command
    that rewrites it.
    """

    engine: str
    version: str
    arguments: Mapping[str, ArgSpec]
    additional_config: frozenset[str] = frozenset()
    env: frozenset[str] = frozenset()
    model_extra_config: frozenset[str] = frozenset()
    placement: frozenset[str] = frozenset()
    quantization_methods: frozenset[str] = frozenset()
    source: str = ""
    regenerate: str = ""

    def has_argument(self, name: str) -> bool:
        """True when ``--name`` is an argument (``no-x`` counts for a boolean ``x``)."""
        name = name.lstrip("-")
        if name in self.arguments:
            return True
        return name.startswith("no-") and self.arguments.get(name[3:], ArgSpec("")).boolean


def _spec(name: str, d: Any) -> ArgSpec:
    if not isinstance(d, Mapping):
        return ArgSpec(name)
    ch = d.get("choices")
    typ = str(d.get("type") or "")
    return ArgSpec(name=name, type=typ, default=d.get("default"),
                   choices=tuple(ch) if isinstance(ch, (list, tuple)) else None,
                   boolean=bool(d.get("boolean") or d.get("action") in ("BooleanOptionalAction", "store_true")
                                or typ == "bool"))


def _names(obj: Any) -> frozenset[str]:
    """Key names of a manifest section given as a list of names, a list of ``{"name": ...}`` rows
    or a mapping (nested mappings are flattened to dotted keys)."""
    out: set[str] = set()

    def walk(prefix: str, v: Any) -> None:
        if isinstance(v, Mapping):
            for k, sub in v.items():
                key = f"{prefix}.{k}" if prefix else str(k)
                out.add(key)
                if isinstance(sub, Mapping) and "type" not in sub and "default" not in sub:
                    walk(key, sub)
        elif isinstance(v, (list, tuple)):
            for item in v:
                if isinstance(item, str):
                    out.add(f"{prefix}.{item}" if prefix else item)
                elif isinstance(item, Mapping) and ("name" in item or "key" in item):
                    n = str(item.get("name") or item.get("key"))
                    out.add(f"{prefix}.{n}" if prefix else n)

    walk("", obj)
    return frozenset(out)


def _sections(obj: Any) -> frozenset[str]:
    """``section`` and ``section.field`` names of a config made of dataclass sections
    (``{"model_parallel_config": {"fields": {"dp_size": {...}}}}``); other shapes as :func:`_names`."""
    if isinstance(obj, Mapping) and obj and all(isinstance(v, Mapping) and "fields" in v for v in obj.values()):
        out = set(obj)
        for sec, v in obj.items():
            out |= {f"{sec}.{f}" for f in (v["fields"] or {})}
        return frozenset(out)
    return _names(obj)


def manifest_from_json(doc: Mapping[str, Any], where: str = "manifest") -> Manifest:
    """A :class:`Manifest` from its JSON document (the shape of ``docs/design.md`` §4:
    ``engine``, ``version``, ``arguments`` as a mapping or a list of rows, ``additional_config``,
    ``env``, ``model_extra_config``; a plugin's manifest may have no ``arguments``).  Raises
    :class:`AdapterDataError` when it has none of these sections."""
    raw = doc.get("arguments", doc.get("args"))
    if raw is None:
        if not any(k in doc for k in ("additional_config", "env", "env_vars", "model_extra_config", "config_fields")):
            raise AdapterDataError(f"{where}: no `arguments`, `additional_config` or `env`")
        raw = {}   # a plugin's manifest (vllm-ascend, Omni-Infer): its arguments are its vLLM's
    args: dict[str, ArgSpec] = {}
    if isinstance(raw, Mapping):
        for k, v in raw.items():
            n = str(k).lstrip("-")
            args[n] = _spec(n, v)
    else:
        for row in raw:
            if isinstance(row, str):
                n = row.lstrip("-")
                args[n] = ArgSpec(n)
            elif isinstance(row, Mapping):
                for n in [row.get("name"), *(row.get("option_strings") or ())]:
                    if n and str(n).startswith("--") or (n and not str(n).startswith("-")):
                        nn = str(n).lstrip("-")
                        args[nn] = _spec(nn, row)
    return Manifest(engine=str(doc.get("engine", "")), version=str(doc.get("version", "")),
                    arguments=MappingProxyType(args),
                    additional_config=_names(doc.get("additional_config", ())),
                    env=_names(doc.get("env", doc.get("env_vars", ()))) | _names(doc.get("env_read_elsewhere", ())),
                    model_extra_config=_sections(doc.get("model_extra_config", doc.get("config_fields", ()))),
                    placement=_names(doc.get("omni_placement", ())),
                    quantization_methods=frozenset(map(str, doc.get("quantization_methods", ()))),
                    source=str(doc.get("source", "")), regenerate=str(doc.get("regenerate", "")))


@dataclass(frozen=True)
class ConnectorSpec:
    """A KV connector as one engine release spells it.

    ``class_name`` is ``kv_connector``; ``module_path`` the ``kv_connector_module_path`` when the
    connector is not registered by name; ``kv_role`` overrides the producer/consumer role
    (NIXL runs ``kv_both``); ``port_rule`` how the connector derives its listening ports:
    ``"kv_port+rank"`` (each DP rank listens on ``kv_port + dp_rank × tp × pp + local rank``, so
    one instance needs ``devices`` consecutive ports from ``kv_port``), ``"env"`` (the port base is
    the environment variable ``port_env``), ``"llmdatadist"`` (Omni-Infer: rank tables and
    ``LLMDATADIST_*`` environment); ``engine_id``: ``"per-node"`` (a unique id per process; vLLM
    appends ``_dp<local rank>``) or ``"kv-rank"`` (Omni-Infer: the instance's kv_rank);
    ``rank_table_env`` the variable naming a rank table the connector needs (its path is the
    caller's: rank tables hold the NPUs' own addresses); ``min_kv_port`` the lowest port clear of
    ranges the transport takes for itself, by devices per node.
    """

    id: str
    class_name: str
    module_path: str = ""
    kv_role: str = ""
    port_rule: str = "kv_port+rank"
    port_env: str = ""
    host_env: str = ""
    engine_id: str = "per-node"
    rank_table_env: str = ""
    min_kv_port: Mapping[str, int] = field(default_factory=dict, hash=False)
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    source: tuple[str, ...] = ()
    notes: str = ""


class EngineAdapter:
    """Base of the adapters in ``sncc/engines/<engine>/adapter.py``.

    Subclasses set :attr:`kind` (the plan's ``engine "<kind>"`` label), :attr:`label` and
    :attr:`package` (the Python package holding ``data/``), and override the questions whose
    answer differs from vLLM's.  Data is read lazily and cached per adapter instance.
    """

    kind: str = ""
    label: str = ""
    package: str = ""
    #: how each role's servers start: "internal" (one process per node of an instance, vLLM's
    #: internal DP with --headless followers) or "external" (one process per DP rank)
    launch_disaggregated: str = "internal"
    launch_aggregated: str = "internal"
    #: modules with ``emit(dep) -> {name: text}`` writing this engine's own files (beyond the
    #: shared YAML, launch, env, proxy, bench and settings files of :mod:`sncc.emit`)
    emitters: tuple[str, ...] = ()

    # ------------------------------------------------------------------ data
    @cached_property
    def data(self) -> Mapping[str, Any]:
        """The adapter's ``data/pins.toml`` (pins, connectors, launch facts), parsed."""
        try:
            text = (files(self.package) / "data" / "pins.toml").read_text(encoding="utf-8")
        except (FileNotFoundError, ModuleNotFoundError) as e:
            raise AdapterDataError(f"{self.package}: no data/pins.toml") from e
        return tomllib.loads(text)

    @cached_property
    def pins(self) -> tuple[Pin, ...]:
        """The pinned releases, oldest first.  Raises :class:`AdapterDataError` for a bad row."""
        out = []
        for i, d in enumerate(self.data.get("pins", ())):
            try:
                out.append(Pin(version=d["version"], vllm=d["vllm"], revision=d.get("revision", ""),
                               status=d.get("status", "R"), source=tuple(d.get("source", ())), notes=d.get("notes", "")))
            except KeyError as e:
                raise AdapterDataError(f"{self.package} pins.toml [[pins]] #{i + 1}: missing {e}") from e
        if not out:
            raise AdapterDataError(f"{self.package} pins.toml: no [[pins]]")
        return tuple(out)

    @property
    def default_version(self) -> str:
        """The pin an unversioned plan is built for (``pins.toml`` ``default``)."""
        return str(self.data.get("default", self.pins[-1].version))

    def pin(self, version: str) -> Pin | None:
        """The pin spelled ``version`` (``0.11.0`` == ``v0.11.0``), or None."""
        for p in self.pins:
            if p.version == version or _vkey(p.version) == _vkey(version):
                return p
        return None

    def choose(self, version: str | None) -> PinChoice:
        """The pin a plan naming ``version`` (None: unversioned) is built for.

        An unpinned release gets the nearest pin (the newest pin not newer than it, else the
        oldest), with a note saying so; the checks warn about it (SN4040).
        """
        if version is None:
            p = self.pin(self.default_version) or self.pins[-1]
            return PinChoice(p, None, True, f"no engine version given: sncc's default pin {self.label} {p.version}")
        p = self.pin(version)
        if p is not None:
            return PinChoice(p, version, True)
        return PinChoice(self.nearest(version), version, False,
                         f"{self.label} {version} is not pinned by sncc (pins: {', '.join(x.version for x in self.pins)}); "
                         f"launch files follow {self.nearest(version).version}")

    def nearest(self, version: str) -> Pin:
        """The newest pin not newer than ``version``; the oldest pin when all are newer or the
        version does not parse."""
        key = _vkey(version)
        if key is None:
            return self.pins[0]
        older = [p for p in self.pins if (_vkey(p.version) or ()) <= key]
        return older[-1] if older else self.pins[0]

    def manifest(self, version: str) -> Manifest | None:
        """The argument manifest of pinned ``version`` (``data/<version>.json``), or None when the
        conformance extractor has not written it.  Raises :class:`AdapterDataError` when malformed."""
        return _load_manifest(self.package, tuple(dict.fromkeys(_manifest_names(version))))

    def vllm_manifest(self, version: str) -> Manifest | None:
        """The manifest of the vLLM release the pin runs (vLLM's own arguments), or None."""
        from sncc.engines.registry import adapter_for

        pin = self.pin(version)
        if pin is None:
            return None
        return adapter_for("vllm").manifest(pin.vllm) if self.kind != "vllm" else self.manifest(version)

    # ------------------------------------------------------------------ connectors
    def connector(self, cid: str) -> ConnectorSpec | None:
        """The connector ``cid`` (catalog id, ``mooncake``) as this engine spells it, or None
        when the engine's data has no launch facts for it."""
        d = self.data.get("connectors", {}).get(cid)
        if d is None:
            return None
        return ConnectorSpec(id=cid, class_name=d["class_name"], module_path=d.get("module_path", ""),
                             kv_role=d.get("kv_role", ""), port_rule=d.get("port_rule", "kv_port+rank"),
                             port_env=d.get("port_env", ""), host_env=d.get("host_env", ""),
                             engine_id=d.get("engine_id", "per-node"), rank_table_env=d.get("rank_table_env", ""),
                             min_kv_port=MappingProxyType(dict(d.get("min_kv_port", {}))),
                             extra=MappingProxyType(dict(d.get("extra", {}))),
                             source=tuple(d.get("source", ())), notes=d.get("notes", ""))

    def default_connector_id(self) -> str | None:
        """Connector of a disaggregated plan that names none (``software.toml [default_kv_connector]``)."""
        from sncc import catalog

        return catalog.default_kv_connector(self.kind)

    # ------------------------------------------------------------------ questions checks ask
    def supports_component(self, name: str) -> bool:
        """True when the engine has ``optimize { <name> }`` (``omni_attn``, ``omni_proxy``,
        ``omni_placement``) or ``scheduler = ascend`` (``ascend_scheduler``)."""
        return name in self.data.get("components", ())

    def component_reason(self, name: str) -> str:
        """Why a component belongs to other engines (for the diagnostic)."""
        return str(self.data.get("component_reasons", {}).get(name, f"`{name}` is not an option of {self.label}"))

    def release_options(self, plan, resolved) -> tuple:
        """Release-specific spellings of the plan's options (vllm-ascend only; () elsewhere)."""
        return ()

    def torchair_mode(self, plan) -> bool:
        """True when the plan runs TorchAir graphs through ``torchair_graph_config`` (vllm-ascend
        v0.9.x-v0.11.x only)."""
        return False

    @property
    def capture_grid_engine(self) -> str | None:
        """Catalog key of the default cudagraph capture grid (``software.toml [[capture_grid]]``);
        None: the engine captures by its own gear list."""
        return self.data.get("capture_grid")

    @property
    def has_decode_gears(self) -> bool:
        """True when the engine compiles graphs per ``decode_gear_list`` (Omni-Infer)."""
        return bool(self.data.get("decode_gears", False))

    @property
    def kv_admission(self) -> str:
        """How the engine admits a request's KV: ``on-demand`` (vLLM's block manager) or
        ``reserve-max-tokens`` (Omni-Infer, fitted to seed 000)."""
        return str(self.data.get("kv_admission", "on-demand"))

    def paired_software(self, version: str | None) -> tuple[str, str | None, str | None, str | None] | None:
        """(label, vLLM, torch, torch_npu) the release ``version`` pins, or None when unknown."""
        return None

    def vllm_version(self, version: str | None) -> str:
        """The vLLM release engine ``version`` runs: the pin's for a pinned (or no) version; for
        another release what the adapter knows of it (:meth:`_unpinned_vllm`), else the nearest pin's."""
        choice = self.choose(version)
        if choice.exact or version is None:
            return choice.pin.vllm
        return self._unpinned_vllm(version) or choice.pin.vllm

    def _unpinned_vllm(self, version: str) -> str | None:
        """The vLLM of an unpinned release, when known (None: unknown)."""
        return None

    def eplb_version(self, plan) -> str | None:
        """The release whose ``[[eplb]]`` keys the plan gets: ``engine.version`` when it is a
        version, else the pin it is built for."""
        v = plan.engine.version
        if v and _vkey(v) is not None:
            return v
        return self.choose(None if not v else v).pin.version

    def eplb_lowering(self, plan, facts, rf):
        """:func:`sncc.engines.eplb.lower_eplb` of role ``rf``: the release's keys for the role's
        ``eplb`` settings, and the settings it cannot take (:class:`~sncc.engines.eplb.EplbLowering`)."""
        from sncc.engines.eplb import lower_eplb

        return lower_eplb(self, self.eplb_version(plan), rf, from_component=self.supports_component("omni_placement"))

    def launch_mode(self, disaggregated: bool) -> str:
        """``internal``, ``external`` or ``per-rank-env`` data parallelism for a role's servers
        (see :mod:`sncc.lowering.launch` and the class attributes)."""
        return self.launch_disaggregated if disaggregated else self.launch_aggregated

    # ------------------------------------------------------------------ lowering hooks (defaults: nothing extra)
    def role_extra_args(self, ctx, rs) -> list:
        """Engine-specific role-level arguments (``additional-config``), after the generic ones."""
        return []

    def role_files(self, ctx, rs) -> dict:
        """Engine-specific per-role files as ``{name: object}``."""
        return {}

    def runtime_env(self, ctx) -> list:
        """Engine variables every server gets (:class:`~sncc.lowering.deployment.EnvVar` list)."""
        return []

    def role_env(self, ctx, rs, instance: int) -> list:
        """Variables of every server of role ``rs`` (instance ``instance``)."""
        return []

    def rank_env(self, ctx, rs, dp_rank: int, master, rpc: int) -> list:
        """Variables of one DP rank's server (``per-rank-env`` launches)."""
        return []

    def required_vars(self, ctx, rs) -> list:
        """Variables the caller must set for every server of role ``rs`` (:class:`~sncc.lowering.deployment.Required`)."""
        return []

    def kv_connector_extra(self, ctx, conn, rs) -> dict:
        """``kv_connector_extra_config`` of connector ``conn`` for role ``rs`` ({} = none)."""
        return {}

    def extra_files(self, ctx, dep) -> dict:
        """Engine-specific top-level files of the deployment as ``{name: object}``."""
        return {}

    def proxy_policy(self, plan) -> tuple[str, str]:
        """(the global proxy's policy, why); engines without a global proxy: ("", "")."""
        return "", ""


def _vkey(v: str) -> tuple[int, ...] | None:
    from sncc import catalog

    s = v.split("@")[0]
    if s.startswith("release_"):
        s = s[len("release_"):]
    try:
        return catalog.parse_version(s)
    except ValueError:
        return None


def _manifest_names(version: str) -> list[str]:
    v = version.split("@")[0]
    return [f"{v}.json", f"{v.lstrip('v')}.json", f"v{v.lstrip('v')}.json"]


_MANIFESTS: dict[tuple[str, tuple[str, ...]], Manifest | None] = {}


def _load_manifest(package: str, names: tuple[str, ...]) -> Manifest | None:
    key = (package, names)
    if key not in _MANIFESTS:
        found = None
        for n in names:
            p = files(package) / "data" / n
            try:
                text = p.read_text(encoding="utf-8")
            except (FileNotFoundError, OSError):
                continue
            try:
                found = manifest_from_json(json.loads(text), f"{package}/data/{n}")
            except ValueError as e:
                raise AdapterDataError(f"{package}/data/{n}: {e}") from e
            break
        _MANIFESTS[key] = found
    return _MANIFESTS[key]

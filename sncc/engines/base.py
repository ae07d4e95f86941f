"""What every engine adapter answers, and the data it answers from.

An adapter (:class:`EngineAdapter`) is the one place that knows an engine target: which
releases sncc pins (:class:`Pin`, read from the adapter's ``data/pins.toml``), the argument
manifest of each pinned release (``data/<version>.json``, extracted from the tagged sources by
``tools/extract_*.py``, read by :mod:`sncc.engines.manifest`), the KV connectors it ships with their port rules
(:class:`ConnectorSpec`), how a role's servers are launched (internal or external data
parallelism), and the engine-specific questions checks, lowering and the simulator ask
(``supports_component``, ``release_options``, ``torchair_mode``, ...).  Code outside
``sncc/engines/`` never compares ``engine.kind`` with a name: it asks
:func:`sncc.engines.registry.adapter_for` and then the adapter.

Every fact in ``pins.toml`` carries its source (a tagged file of the engine's repository).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib.resources import files
from types import MappingProxyType
from typing import Any, Mapping

from sncc.cache import package_toml


#: speculative methods whose drafter is a separate checkpoint: vLLM raises "num_speculative_tokens
#: was provided but without speculative model" without ``speculative_config.model``
#: (vllm/config/speculative.py, SpeculativeConfig.__post_init__); dflash drafts with its own
#: checkpoint too (catalog/data/engine_rules.toml)
DRAFT_CHECKPOINT_METHODS = ("draft_model", "eagle", "eagle3", "dflash")
#: speculative methods that propose by lookup on the host, with no draft model on the device: n-gram
#: (prompt lookup) and suffix decoding (vLLM SuffixDecodingProposer; vllm-ascend v0.23.0
#: vllm_ascend/spec_decode/__init__.py L39-40; "runs entirely on the CPU", vllm-ascend v0.23.0
#: docs/source/tutorials/features/suffix_speculative_decoding.md L5): their draft costs no device step
HOST_DRAFT_METHODS = ("ngram", "suffix")


@lru_cache(maxsize=1)
def _speculative_data() -> Mapping[str, Any]:
    """``sncc/engines/data/speculative.toml`` (vLLM's speculative method names by release)."""
    return package_toml("sncc.engines", "data/speculative.toml")


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
class All2AllRelease:
    """How one engine release chooses its MoE all-to-all (EP dispatch/combine) implementation.

    ``where`` is ``env`` (the environment variable ``name``, which a plan's ``env { }`` sets) or
    ``argument`` (the ``vllm serve`` argument ``name``, which sncc does not write: the default
    runs); ``default`` the backend with nothing set; ``choices`` the values the release accepts;
    ``source`` where it was read (``pins.toml [[all2all]]``, the manifest for an argument)."""

    version: str
    where: str
    name: str
    default: str
    choices: tuple[str, ...]
    source: tuple[str, ...] = ()


@dataclass(frozen=True)
class ConnectorOffer:
    """What :meth:`EngineAdapter.connector_offer` answers: ``release`` (``vllm 0.23.0``), the
    connector ids sncc ``built`` launch files for and those the release has but sncc has no
    launch facts for (``unbuilt``), for a plan that is ``aggregated`` (one ``serve`` role) or not."""

    release: str
    built: tuple[str, ...]
    unbuilt: tuple[str, ...]
    aggregated: bool = False

    def help(self) -> str:
        """``connectors sncc builds for vllm 0.23.0: `nixl`; no launch facts in sncc for ...``."""
        where = f"a `serve` role of {self.release}" if self.aggregated else self.release
        out = f"connectors sncc builds for {where}: " + (", ".join(f"`{c}`" for c in self.built) or "none")
        if self.unbuilt:
            out += ("; the release also has " + ", ".join(f"`{c}`" for c in self.unbuilt)
                    + ", which sncc has no launch facts for (`sncc build` refuses them, SN4042)")
        return out


@dataclass(frozen=True)
class ConnectorSpec:
    """A KV connector as one engine release spells it.

    ``class_name`` is ``kv_connector``; ``module_path`` the ``kv_connector_module_path`` when the
    connector is not registered by name; ``kv_role`` overrides the producer/consumer role
    (NIXL runs ``kv_both``); ``port_rule`` how the connector derives its listening ports:
    ``"kv_port+rank"`` (each DP rank listens on ``kv_port + dp_rank × tp × pp + local rank``, so
    one instance needs ``devices`` consecutive ports from ``kv_port``), ``"env"`` (the port base is
    the environment variable ``port_env``), ``"llmdatadist"`` (Omni-Infer: rank tables and
    ``LLMDATADIST_*`` environment), ``"none"`` (no listening port: a KV offload connector);
    ``roles`` the plan roles sncc launches it for (``prefill``/``decode``: a P/D transfer
    connector; ``serve``: one on an aggregated server); ``engine_id``: ``"per-node"`` (a unique id per process; vLLM
    appends ``_dp<local rank>``), ``"kv-rank"`` (Omni-Infer: the instance's kv_rank) or ``"none"``
    (not written: a connector with no peer to tell engines apart);
    ``rank_table_env`` the variable naming a rank table the connector needs (its path is the
    caller's: rank tables hold the NPUs' own addresses); ``min_kv_port`` the lowest port clear of
    ranges the transport takes for itself, by devices per node; ``listen`` the ``(since vLLM
    version, ports)`` rows of an ``env`` connector's ``[[connectors.<id>.listen]]`` table, read by
    :meth:`listen_ports`.
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
    listen: tuple[tuple[str, str], ...] = ()
    roles: tuple[str, ...] = ("prefill", "decode")

    def listen_ports(self, vllm_version: str) -> str:
        """How each DP rank of an ``env`` connector's instance listens from the instance's port base
        under vLLM ``vllm_version``: ``"tp-rank"`` (``base + dp_rank × tp + tp_rank``, one port per
        TP rank) or ``"dp-rank"`` (``base + dp_rank``).  The row with the highest ``since`` at or
        below the version wins; before every row (or with none) ``"tp-rank"``, the wider range.
        Raises nothing: an unparsable version reads as the newest row."""
        from sncc import catalog

        rule = "tp-rank"
        try:
            v = catalog.parse_version(vllm_version)
        except ValueError:
            return self.listen[-1][1] if self.listen else rule
        for since, ports in sorted(self.listen, key=lambda r: catalog.parse_version(r[0])):
            if catalog.parse_version(since) <= v:
                rule = ports
        return rule


@dataclass(frozen=True)
class QuantArg:
    """How one engine takes a catalog weight format (:meth:`EngineAdapter.quantization`):
    ``method`` the ``--quantization`` value (None: nothing written, the engine reads the method
    from the checkpoint's ``config.json`` ``quantization_config`` or runs unquantized); ``note``
    the YAML comment of the argument; ``refused`` why sncc writes no working config for the format
    on this engine (empty: it does; the checks report SN4002); ``source`` where that was read."""

    method: str | None
    note: str = ""
    refused: str = ""
    source: tuple[str, ...] = ()


@dataclass(frozen=True)
class QuantMethod:
    """What :meth:`EngineAdapter.quants_of` answers for one ``--quantization`` value (None: no
    flag): ``quants`` the catalog weight formats this engine writes that value for (the build
    direction, :meth:`EngineAdapter.quantization`, read backwards; catalog order); ``format``
    non-empty when the value names a checkpoint format that holds several weight formats, so the
    flag does not say which (the reason, with ``source``): the checkpoint's config.json does."""

    method: str | None
    quants: tuple[str, ...]
    format: str = ""
    source: tuple[str, ...] = ()


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
            return package_toml(self.package, "data/pins.toml")
        except (FileNotFoundError, ModuleNotFoundError) as e:
            raise AdapterDataError(f"{self.package}: no data/pins.toml") from e

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

    def image_release(self, word: str) -> str | None:
        """The release a container image word of this engine names (``pins.toml [image]``:
        ``quay.io/ascend/vllm-ascend:v0.11.0rc0-a3`` → ``v0.11.0rc0``, any registry prefix, the
        variants stripped from the tag); ``""`` for the engine's image with a tag that names no
        release (none, ``latest``, ``main``, a digest); None for any other image, or an engine
        without ``[image]``."""
        img = self.data.get("image")
        if not isinstance(img, Mapping) or not img.get("repository"):
            return None
        m = re.fullmatch(r"(?:[\w.-]+(?::\d+)?/)*" + re.escape(str(img["repository"]))
                         + r"(?::(?P<tag>[\w.-]+))?(?P<digest>@[\w:]+)?", word)
        if m is None:
            return None
        tag = m.group("tag") or ""
        variants = tuple("-" + str(v) for v in img.get("variants", ()))
        while tag.endswith(variants):
            tag = tag[:tag.rindex("-")]
        return tag if tag[:1] in ("v", *"0123456789") and _vkey(tag) is not None else ""

    def image_system(self, word: str) -> str | None:
        """The catalog system the variant suffixes of this engine's image tag are built for
        (``pins.toml [image] variant_systems``: ``quay.io/ascend/vllm-ascend:v0.13.0-a3`` →
        ``atlas-800i-a3``); None for a tag with no such variant, another image, or an engine
        without ``[image]``."""
        if self.image_release(word) is None:
            return None
        img = self.data["image"]
        systems = img.get("variant_systems") or {}
        tag = word.rsplit("@", 1)[0]
        tag = tag.rsplit(":", 1)[1] if ":" in tag.rsplit("/", 1)[-1] else ""
        for part in reversed(tag.split("-")[1:]):
            if part in systems:
                return str(systems[part])
        return None

    def manifest(self, version: str):
        """The manifest (:class:`sncc.engines.manifest.Manifest`) of the engine at ``version``: the
        release's own key tables, extracted from its tagged source; None when there is none."""
        from sncc.engines.manifest import ManifestError, load

        try:
            return load(self.kind, version)
        except ManifestError:
            return None

    def vllm_manifest(self, version: str):
        """The manifest of the vLLM release that pinned ``version`` runs (vLLM's own arguments), or None."""
        from sncc.engines.manifest import ManifestError, load

        pin = self.pin(version)
        if pin is None:
            return None
        try:
            return load("vllm", pin.vllm)
        except ManifestError:
            return None

    def switch_absent(self, version: str, name: str, value: bool) -> str | None:
        """Why the vLLM that release ``version`` runs cannot take switch ``--name`` with ``value``
        (``--name`` for true, its ``--no-`` form for false), read in that vLLM's manifest; None when it
        can.  The build writes an as-written role switch (``plan_keys.toml`` ``build = "as-written"``)
        only when this is None; the checks report the reason (SN4041).  A release without a manifest
        is not judged (None)."""
        pin = self.choose(version).pin   # the launch files follow the pin
        manifest = self.vllm_manifest(pin.version)
        if manifest is None:
            return None
        label = f"vLLM {manifest.version}" + ("" if manifest.version == pin.version else f" ({self.label} {pin.version})")
        if not manifest.has_arg(name):
            return f"{label} has no `--{name}`"
        arg = manifest.arg(name)
        if value is False and not (arg.boolean and arg.negative):
            return f"{label} has `--{name}` but no `--no-{name}`"
        return None

    def kv_dtype_run(self, plan_dtype: str) -> tuple[str, str]:
        """(dtype, note): the KV-cache dtype the servers run for a plan's ``kv_cache.dtype`` (``auto``
        = the model's, BF16).  An engine whose ``pins.toml [kv_cache_dtype]`` ``ignores`` the plan's
        value runs its ``runs`` instead (Omni-Infer release_v0.3.0 has no INT8 KV switch, SN4041), and
        ``note`` says so with the source; otherwise the plan's dtype and an empty note."""
        row = self.data.get("kv_cache_dtype") or {}
        dtype = plan_dtype
        note = ""
        if plan_dtype in tuple(row.get("ignores", ())):
            dtype = str(row["runs"])
            note = (f"kv_cache.dtype = {plan_dtype} is not read by {self.label} (SN4041): its servers run "
                    f"{dtype}; sources: {'; '.join(row.get('source', ()))}")
        return ("bf16" if dtype == "auto" else dtype), note

    def all2all_release(self, version: str | None) -> All2AllRelease | None:
        """The all-to-all backend rule of the release a plan naming ``version`` runs (its vLLM
        release's row of ``pins.toml [[all2all]]``, the newest whose ``since`` is not newer);
        None when the engine has no such choice (vllm-ascend and Omni-Infer run their own fused
        MoE communication: no ``[[all2all]]`` rows).  Raises :class:`AdapterDataError` for a row
        the data cannot answer (an ``argument`` row whose manifest lacks the argument)."""
        from sncc import catalog

        rows = self.data.get("all2all") or ()
        if not rows:
            return None
        vllm = self.vllm_version(version)
        try:
            v = catalog.parse_version(vllm)
        except ValueError:
            return None
        fit = [r for r in rows if catalog.parse_version(r["since"]) <= v]
        if not fit:
            return None
        row = fit[-1]
        src = tuple(row.get("source", ()))
        if row["where"] == "env":
            return All2AllRelease(vllm, "env", row["env"], row["default"], tuple(row["choices"]), src)
        from sncc.engines.manifest import ManifestError, load

        try:
            arg = load("vllm", vllm).arguments.get(row["argument"])
        except ManifestError:
            arg = None
        if arg is None:
            pinned = self.nearest(vllm).vllm
            try:
                arg = load("vllm", pinned).arguments.get(row["argument"])
            except ManifestError:
                arg = None
        if arg is None:
            raise AdapterDataError(f"{self.package} pins.toml [[all2all]] since {row['since']}: "
                                   f"no --{row['argument']} in the vLLM {vllm} manifest")
        return All2AllRelease(vllm, "argument", row["argument"], str(arg.default), tuple(arg.choices or ()), src)

    # ------------------------------------------------------------------ quantization
    def quantization(self, quant: str, checkpoint_file: str | None = None) -> QuantArg:
        """How this engine takes catalog weight format ``quant`` (``quant.toml``), read from
        ``checkpoint_file`` (the file the checkpoint's format was read from, when known).

        The catalog's ``vllm_quantization`` is the method vllm-ascend registers (``ascend`` for
        every msModelSlim format); an engine whose ``data/pins.toml [quantization]`` table says
        otherwise answers from it: ``[quantization.quants.<quant>]`` replaces the catalog's method
        (``method = ""``: write none), a catalog method listed in ``unregistered`` is one the
        engine's vLLM has no ``--quantization`` for, so the format is ``refused``, and so is a
        checkpoint whose format file is one of ``foreign_checkpoints`` (msModelSlim's description:
        only the ``ascend`` method loads it).  An unknown ``quant`` gets ``QuantArg(None)``
        (resolution reports it)."""
        import os

        from sncc import catalog

        try:
            q = catalog.quant(quant)
        except KeyError:
            return QuantArg(None)
        table = self.data.get("quantization") or {}
        foreign = (table.get("foreign_checkpoints") or {}).get(os.path.basename(checkpoint_file or ""))
        if foreign:
            return QuantArg(None, "", str(foreign["reason"]).format(quant=quant, engine=self.label,
                                                                    file=checkpoint_file),
                            tuple(foreign.get("source", ())))
        row = (table.get("quants") or {}).get(quant)
        if row is not None:
            method = str(row.get("method", "")) or None
            note = str(row.get("note", "")) or (f"catalog quant {quant} → {self.label} --quantization" if method else "")
            return QuantArg(method, note, str(row.get("refused", "")), tuple(row.get("source", ())))
        method = q.vllm_quantization
        if method and method in tuple(table.get("unregistered", ())):
            return QuantArg(None, "", str(table.get("unregistered_reason", "")).format(method=method, quant=quant,
                                                                                       engine=self.label),
                            tuple(table.get("source", ())))
        return QuantArg(method, f"catalog quant {quant} → vLLM --quantization" if method else "")

    def quants_of(self, method: str | None) -> QuantMethod:
        """The catalog weight formats a ``--quantization method`` (None: none given) is read back
        to: those :meth:`quantization` writes ``method`` for and does not refuse, so that import and
        build read one table (``data/pins.toml [quantization]`` over quant.toml's
        ``vllm_quantization``).  ``format`` is the reason from
        ``[quantization.checkpoint_formats.<method>]`` when ``method`` is a checkpoint format
        (``compressed-tensors``: INT8 W8A8, FP8, W4A16 ... alike)."""
        from sncc import catalog

        quants = []
        for q in catalog.quant_formats():
            qa = self.quantization(q)
            if qa.method == method and not qa.refused:
                quants.append(q)
        row = ((self.data.get("quantization") or {}).get("checkpoint_formats") or {}).get(method or "")
        if row is None:
            return QuantMethod(method, tuple(quants))
        return QuantMethod(method, tuple(quants), str(row["reason"]).format(method=method),
                           tuple(row.get("source", ())))

    def auto_detected_method(self, version: str | None) -> str | None:
        """The ``--quantization`` method release ``version`` applies by itself when none is given
        and the checkpoint carries the method's signature file (``pins.toml
        [quantization.auto_detect]``: vllm-ascend from v0.17.0rc1 reads a ModelSlim
        ``quant_model_description.json`` as ``ascend``), or None."""
        from sncc import catalog

        row = (self.data.get("quantization") or {}).get("auto_detect")
        if not row or version is None:
            return None
        try:
            return str(row["method"]) if catalog.parse_version(version) >= catalog.parse_version(str(row["since"])) else None
        except (ValueError, TypeError):
            return None

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
                             source=tuple(d.get("source", ())), notes=d.get("notes", ""),
                             listen=tuple((str(r["since"]), str(r["ports"])) for r in d.get("listen", ())),
                             roles=tuple(d.get("roles", ("prefill", "decode"))))

    def connector_offer(self, version: str, aggregated: bool) -> "ConnectorOffer":
        """The KV connectors a plan of this engine at release ``version`` (the plan's
        :attr:`sncc.facts.Facts.engine_version`: written, else the default pin) can
        name for its roles (``aggregated``: one ``serve`` role; else prefill + decode): the catalog's
        connectors of the engine (``software.toml [[kv_connectors]] engines``; for a ``serve`` role
        only those marked ``aggregated``) that the release has not removed, split into ``built``
        (this adapter's ``[connectors.<id>]`` launch facts cover the roles) and ``unbuilt`` (sncc has
        none: ``sncc build`` refuses them, SN4042).  The one list the connector help and "did you
        mean" read (through :attr:`sncc.facts.Facts.kv_connector_offer`)."""
        from sncc import catalog

        v = version
        role = "serve" if aggregated else "prefill"
        built, unbuilt = [], []
        for c in catalog.kv_connectors().values():
            if not catalog.connector_runs_on(c, self.kind) or (aggregated and not c.aggregated):
                continue
            gone = c.removed_in.get(self.kind)
            try:
                if gone and catalog.parse_version(v) >= catalog.parse_version(gone):
                    continue
            except ValueError:
                pass
            spec = self.connector(c.id)
            (built if spec is not None and role in spec.roles else unbuilt).append(c.id)
        return ConnectorOffer(f"{self.kind} {v}", tuple(built), tuple(unbuilt), aggregated)

    def default_connector_id(self) -> str | None:
        """Connector of a disaggregated plan that names none (``software.toml [default_kv_connector]``)."""
        from sncc import catalog

        return catalog.default_kv_connector(self.kind)

    # ------------------------------------------------------------------ questions checks ask
    def option_roles(self, option: str) -> tuple[str, ...] | None:
        """The roles (``prefill``, ``decode``, ``serve``) whose launch files carry ``optimize.<option>``
        when the engine writes it per role (Omni-Infer's ``[[knobs]] roles``: ``enable_prefill_micro_batch``
        on prefill instances only), or None when it has no per-role rule.  Read through
        :attr:`sncc.facts.Facts.optimize_roles`."""
        for row in self.data.get("knobs", ()):
            if row.get("option") == f"optimize.{option}" and "roles" in row:
                return tuple(row["roles"])
        return None

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

    def catalog_releases(self) -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
        """The catalog's release rows of this engine, newest first, for hover text and listings:
        ``(version, pairing, status, source)`` with ``pairing`` a short "vLLM …, CANN …" phrase.
        Empty when the catalog holds no release rows for the engine (plain vLLM)."""
        return ()

    def newest_known_release(self) -> str:
        """The newest release sncc has facts for: its pins, its manifests (``data/*.json``) and the
        catalog's release rows (:meth:`catalog_releases`).  The rules stop there: a newer release is
        one no table has read (SN4040 says so)."""
        from sncc.engines.manifest import ManifestError, versions

        names = [p.version for p in self.pins] + [r[0] for r in self.catalog_releases()]
        try:
            names += list(versions(self.kind))
        except ManifestError:
            pass
        known = [(k, n) for n in names if (k := _vkey(n)) is not None]
        return max(known)[1] if known else self.pins[-1].version

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

    def speculative_method(self, method: str, vllm_version: str, model_type: str | None) -> tuple[str, str]:
        """``(name, note)``: the plan's speculative ``method`` as the vLLM release ``vllm_version``
        spells it for a checkpoint of HF ``model_type`` (``data/speculative.toml``).  The generic
        ``mtp`` exists from vLLM 0.11.0; before, a model with its own MTP method (DeepSeek-V3:
        ``deepseek_mtp``) gets that name.  Anything else is written as the plan spells it (whether
        the release has it is SN4020's); ``note`` is empty then."""
        from sncc import catalog

        data = _speculative_data()
        generic = data.get("generic", {}).get(method)
        try:
            v = catalog.parse_version(vllm_version)
            absent = generic is not None and v <= catalog.parse_version(generic["missing_through"])
        except (ValueError, KeyError):
            absent = False
        if not absent:
            return method, ""
        for row in data.get("model_mtp", ()):
            if model_type in row.get("model_types", ()) and v >= catalog.parse_version(row["first"]):
                return row["method"], (f"vLLM {vllm_version} has no generic `{method}` (from {generic['first']}); "
                                       f"{model_type} drafts as `{row['method']}`")
        return method, ""

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

        arch = getattr(facts, "arch", None)
        return lower_eplb(self, self.eplb_version(plan), rf, from_component=self.supports_component("omni_placement"),
                          model_type=getattr(arch, "model_type", None) if arch is not None else None)

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

    try:
        return catalog.parse_version(v.split("@")[0])
    except ValueError:
        return None

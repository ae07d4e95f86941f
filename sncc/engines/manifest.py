"""The engines' own key tables, extracted from their released code and kept as data.

One manifest per engine release (``sncc/engines/<engine>/data/<version>.json``), written by the
scripts in ``tools/`` (each manifest's ``generated_by`` is the command that regenerates it), plus the
hand-kept ``sncc/engines/cann_env.json`` of the variables CANN, torch_npu and the communication
libraries read.  The JSON shape is described in ``sncc/engines/README.md`` ("Manifests").

    >>> m = load("vllm", "0.11.0")
    >>> m.has_arg("--tensor-parallel-size"), m.arg("-tp").name
    (True, 'tensor-parallel-size')

Loading is pure (no engine is imported) and cached per ``(engine, version)``.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

#: the manifest format this loader reads (``"format"`` in every manifest; tools/_manifest_io.py)
FORMAT = 1

#: engine name (as plans and adapters spell it) → the package directory holding its ``data/``
ENGINE_DIRS: Mapping[str, str] = {"vllm": "vllm", "vllm-ascend": "vllm_ascend", "omni-infer": "omni_infer"}

_HERE = Path(__file__).resolve().parent
RUNTIME_ENV_FILE = _HERE / "cann_env.json"


class ManifestError(LookupError):
    """No manifest for an engine release, or a manifest of another format."""


@dataclass(frozen=True)
class Argument:
    """One ``vllm serve`` option of a release.

    ``name`` is the dashed long name without ``--`` (``tensor-parallel-size``); ``aliases`` the other
    option strings (``-tp``); ``negative`` the ``--no-X`` form of a ``BooleanOptionalAction``;
    ``type`` one of ``int``, ``float``, ``str``, ``bool``, ``json``, ``json_or_str``,
    ``human_readable_int`` or the name of the type function; ``json`` whether the value is JSON;
    ``json_fields`` the fields (``{name: {"type", "default", "choices"?}}``) of the config dataclass
    a JSON argument is validated against, when it has one."""

    name: str
    dest: str
    type: str
    aliases: tuple[str, ...] = ()
    choices: tuple[Any, ...] | None = None
    default: Any = None
    nargs: int | str | None = None
    boolean: bool = False
    negative: str | None = None
    flag: bool = False
    json: bool = False
    json_fields: Mapping[str, Any] = field(default_factory=dict)
    deprecated: bool = False
    group: str = ""

    @classmethod
    def from_row(cls, name: str, row: Mapping[str, Any]) -> "Argument":
        """From one ``arguments`` row of a vLLM manifest."""
        choices = row.get("choices")
        return cls(
            name=name, dest=row.get("dest", name.replace("-", "_")), type=row.get("type", "str"),
            aliases=tuple(row.get("aliases", ())), choices=None if choices is None else tuple(choices),
            default=row.get("default"), nargs=row.get("nargs"), boolean=bool(row.get("boolean")),
            negative=row.get("negative"), flag=bool(row.get("flag")), json=bool(row.get("json")),
            json_fields=row.get("json_fields") or {}, deprecated=bool(row.get("deprecated")),
            group=row.get("group", ""),
        )

    @property
    def option_strings(self) -> tuple[str, ...]:
        """Every spelling the parser accepts: ``--name``, the aliases and the ``--no-`` form."""
        return ("--" + self.name, *self.aliases, *((self.negative,) if self.negative else ()))


def _norm_option(option: str) -> str:
    """``--max-num-seqs`` / ``max_num_seqs`` / ``max-num-seqs`` → ``max-num-seqs`` (the YAML key form).
    A single-dash alias (``-tp``) keeps its dash."""
    if option.startswith("--"):
        option = option[2:]
    elif option.startswith("-"):
        return option
    return option.replace("_", "-")


@dataclass(frozen=True)
class Manifest:
    """The key tables of one engine release (``engine`` ∈ ``vllm``, ``vllm-ascend``, ``omni-infer``,
    ``runtime`` for cann_env.json).  ``data`` is the whole JSON document."""

    engine: str
    version: str
    data: Mapping[str, Any]
    path: Path

    # ------------------------------------------------------------------ provenance
    @property
    def source(self) -> Mapping[str, Any]:
        """``{"repo", "tag" | "rev", "commit", "files", ...}``: where the tables were read."""
        return self.data.get("source", {})

    @property
    def generated_by(self) -> str:
        """The command that regenerates this manifest."""
        return self.data.get("generated_by", "")

    # ------------------------------------------------------------------ vllm serve arguments
    @functools.cached_property
    def arguments(self) -> Mapping[str, Argument]:
        """``vllm serve`` options by dashed name (empty for manifests without a parser)."""
        return {name: Argument.from_row(name, row) for name, row in self.data.get("arguments", {}).items()}

    @functools.cached_property
    def _option_index(self) -> Mapping[str, str]:
        index: dict[str, str] = {}
        for name, a in self.arguments.items():
            index[name] = name
            index[a.dest.replace("_", "-")] = name
            for alias in a.aliases:
                index[_norm_option(alias)] = name
            if a.negative:
                index[_norm_option(a.negative)] = name
        return index

    def has_arg(self, option: str) -> bool:
        """Whether the release's ``vllm serve`` accepts ``option`` (``--x``, ``x``, ``x_y``, an alias or
        the ``--no-x`` form of a boolean switch)."""
        return _norm_option(option) in self._option_index

    def arg(self, option: str) -> Argument:
        """The :class:`Argument` for ``option`` (any spelling :meth:`has_arg` accepts); ``KeyError``
        when the release has no such option."""
        key = _norm_option(option)
        if key not in self._option_index:
            raise KeyError(f"vLLM {self.version} `vllm serve` has no option --{key}")
        return self.arguments[self._option_index[key]]

    @property
    def config_file_rules(self) -> Mapping[str, str]:
        """How this release's ``--config`` YAML loader turns values into arguments:
        ``{"true": "flag", "false": "dropped" | "no-flag", "list": ..., "nested_map": "json" | "python-str"}``."""
        return self.data.get("config_file", {}).get("rules", {})

    # ------------------------------------------------------------------ additional_config
    @property
    def additional_config(self) -> Mapping[str, Mapping[str, Any]]:
        """``--additional-config`` keys (dotted for nested dicts) → ``{"default", "read_in", ...}``."""
        return self.data.get("additional_config", {})

    @functools.cached_property
    def additional_config_keys(self) -> frozenset[str]:
        """Every dotted ``additional_config`` key the release reads."""
        return frozenset(self.additional_config)

    def has_additional_config_key(self, dotted: str) -> bool:
        """Whether ``dotted`` (``torchair_graph_config.enabled``) is read by the release: listed, or
        below a key the release reads as an open dict (it iterates over that dict's items)."""
        if dotted in self.additional_config:
            return True
        parts = dotted.split(".")
        for i in range(len(parts) - 1, 0, -1):
            row = self.additional_config.get(".".join(parts[:i]))
            if row is not None:
                return bool(row.get("open"))
        return bool(self.data.get("additional_config_root_open"))

    # ------------------------------------------------------------------ environment
    @functools.cached_property
    def env_vars(self) -> frozenset[str]:
        """Environment variables the release reads: its ``envs.py`` table and, for vllm-ascend and
        Omni-Infer, literal reads elsewhere in its code."""
        return frozenset(self.data.get("env", {})) | frozenset(self.data.get("env_read_elsewhere", {}))

    def env_default(self, name: str) -> Any:
        """The default of ``name`` in the release's ``envs.py`` table (``KeyError`` when not there)."""
        return self.data["env"][name]["default"]

    # ------------------------------------------------------------------ other tables
    @functools.cached_property
    def model_extra_config_keys(self) -> frozenset[str]:
        """Omni-Infer: ``section.field`` keys of the model extra config JSON (closed: an unknown
        field is fatal at load time)."""
        out = set()
        for section, row in self.data.get("model_extra_config", {}).items():
            out.add(section)
            out.update(f"{section}.{f}" for f in row.get("fields", {}))
        return frozenset(out)

    @property
    def model_extra_config_sections(self) -> tuple[str, ...]:
        """Omni-Infer: the required top-level keys of the model extra config JSON."""
        return tuple(sorted(s for s, row in self.data.get("model_extra_config", {}).items() if row.get("required")))

    @functools.cached_property
    def omni_placement_keys(self) -> frozenset[str]:
        """Omni-Infer: OmniPlacement ``config.yaml`` top-level keys (set by the shipped file or read by the planner)."""
        return frozenset(self.data.get("omni_placement", {}))

    @property
    def lb_policies(self) -> tuple[str, ...]:
        """Omni-Infer: the global proxy's load-balancing policies (``--prefill-lb-sdk`` / ``--decode-lb-sdk``)."""
        return tuple(self.data.get("global_proxy", {}).get("lb_policies", ()))

    @property
    def quantization_methods(self) -> tuple[Any, ...]:
        """The platform's supported quantization methods (vllm-ascend, Omni-Infer)."""
        return tuple(self.data.get("quantization_methods", ()))

    @property
    def parser_choices_added(self) -> Mapping[str, tuple[Any, ...]]:
        """Choices the engine's platform appends to vLLM's parser before parsing (vllm-ascend,
        Omni-Infer: ``{"--quantization": ("ascend",)}``); empty for vLLM itself."""
        return {k: tuple(v) for k, v in self.data.get("parser_choices_added", {}).items()}

    @property
    def kv_connectors(self) -> frozenset[str]:
        """KV connectors the release registers (vLLM's own factory, or a plugin's ``register_connector``)."""
        return frozenset(self.data.get("kv_connectors", {}))

    @property
    def attention_backends(self) -> tuple[str, ...]:
        """Attention backend classes the platform selects from (vllm-ascend)."""
        return tuple(self.data.get("attention_backends", ()))

    @property
    def graph_modes(self) -> Mapping[str, tuple[str, ...]]:
        """Graph / compilation mode members the platform refers to (vllm-ascend)."""
        return {k: tuple(v) for k, v in self.data.get("graph_modes", {}).items()}


def data_dir(engine: str) -> Path:
    """``sncc/engines/<dir>/data`` of ``engine``; ``ManifestError`` for an unknown engine."""
    if engine not in ENGINE_DIRS:
        raise ManifestError(f"no manifests for engine {engine!r}; known: {', '.join(sorted(ENGINE_DIRS))}")
    return _HERE / ENGINE_DIRS[engine] / "data"


def _version_key(version: str) -> tuple:
    """Sort key of a release name: ``0.9.0`` < ``0.11.0``, ``v0.12.0rc1`` < ``v0.12.0``;
    a leading word (``v``, ``release_v``) is ignored; a name without numbers sorts last."""
    m = re.search(r"(\d+(?:\.\d+)*)(?:rc(\d+))?", version)
    if m is None:
        return ((), (2, 0), version)
    nums = tuple(int(n) for n in m.group(1).split("."))
    pre = (0, int(m.group(2))) if m.group(2) else (1, 0)
    return (nums, pre, version)


def versions(engine: str) -> tuple[str, ...]:
    """The releases of ``engine`` that have a manifest, oldest first (numbers compare as numbers)."""
    return tuple(sorted((p.stem for p in data_dir(engine).glob("*.json")), key=_version_key))


def _read(path: Path, engine: str, version: str) -> Manifest:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"no manifest for {engine} {version} ({path.name}); have: "
                            f"{', '.join(versions(engine)) if engine in ENGINE_DIRS else '-'}") from None
    if data.get("format") != FORMAT:
        raise ManifestError(f"{path}: manifest format {data.get('format')!r}, this sncc reads {FORMAT}")
    return Manifest(engine=data.get("engine", engine), version=data.get("version", version), data=data, path=path)


@functools.lru_cache(maxsize=None)
def load(engine: str, version: str) -> Manifest:
    """The manifest of ``engine`` (``vllm``, ``vllm-ascend``, ``omni-infer``) at ``version``
    (``0.11.0``, ``v0.11.0``, ``release_v0.3.0``).  Raises :class:`ManifestError` when there is none."""
    return _read(data_dir(engine) / f"{version}.json", engine, version)


@functools.lru_cache(maxsize=None)
def runtime_env() -> Manifest:
    """The hand-kept table of variables CANN, torch_npu, HCCL and the communication libraries read
    (``sncc/engines/cann_env.json``; each row has its ``source`` URL)."""
    return _read(RUNTIME_ENV_FILE, "runtime", "hand-kept")

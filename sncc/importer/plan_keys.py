"""The reverse table (``sncc/engines/data/plan_keys.toml``): engine argument → plan key, and the
readers that turn one argument's value into plan values.

:func:`rows` is the table; :func:`plan_values` maps one :class:`~sncc.importer.vllm_command.Option`
to ``[(plan path, value)]`` (a path is a tuple such as ``("role", "tp")``), or raises
:class:`Unrepresented` with the reason when the plan language has no key for that value.
"""

from __future__ import annotations

import os
import re

from sncc.engines.plan_keys import rows  # noqa: F401 - the table, re-exported for the importer
from sncc.engines.plan_keys import table as _table


class Unrepresented(ValueError):
    """The value has no plan key (the message says why); it is kept as a comment (SN8004)."""


def speculative_defaults() -> dict:
    """The ``[speculative]`` table: ``mtp_suffix``, ``acceptance_when_unstated`` (ratio), its source and
    ``acceptance_methods``, the plan methods that figure is written for (others are left unset)."""
    return dict(_table().get("speculative", {}))


def engine_defaults(vendor: str, chip) -> dict[str, tuple[int, str]]:
    """``{plan key: (value, why)}`` of what vLLM takes when the script leaves ``max_num_seqs``,
    ``max_num_batched_tokens`` and ``block_size`` unset on ``chip`` (a catalog Chip, or None:
    the small batch values) of ``vendor`` (``[engine_defaults]`` of plan_keys.toml)."""
    t = _table()["engine_defaults"]
    gib = (getattr(chip, "hbm_bytes", 0) or 0) / 2**30
    cid = str(getattr(chip, "id", ""))
    large = gib >= t["large_device_gib"] and t["large_excluded_chip"] not in cid
    batch = t["large" if large else "small"]
    why = (f"device >= {t['large_device_gib']} GiB, not {t['large_excluded_chip'].upper()}" if large
           else f"device below {t['large_device_gib']} GiB or an {t['large_excluded_chip'].upper()}")
    out = {k: (int(v), why) for k, v in batch.items()}
    out["block_size"] = (int(t["block_size"][vendor]), f"{vendor} platform default")
    return out


def _path(row: dict) -> tuple[str, ...]:
    return tuple(row["plan"].split("."))


class Undecided(ValueError):
    """The argument has a plan key but its value does not decide the key's value (the message says
    why): the key is left unset for the user to write (``# quant = ?``, SN8014)."""


def quant_of(method: str, model_text: str, adapter, checkpoint=None,
             built: tuple[str, str] | None = None) -> tuple[str, str]:
    """The catalog quant for ``--quantization method`` and a note, read back through ``adapter``'s
    own table (:meth:`~sncc.engines.base.EngineAdapter.quants_of`: the quants the build writes
    ``method`` for).  Several quants sharing a method (``ascend``: every msModelSlim format) are
    told apart by the model path's own spelling (``W8A8``), else the first in catalog order is
    taken, said in the note.  A method that is a checkpoint format (CUDA's ``compressed-tensors``:
    INT8 W8A8, FP8, W4A16 ... alike) says nothing: the checkpoint's config.json decides when
    ``checkpoint()`` reads one (a :class:`~sncc.catalog.hf_config.CheckpointInfo` or None), else
    :class:`Undecided` is raised.  ``built`` is (quant, manifest path) of the tree ``sncc build``
    wrote the command into: its quant decides first when the build writes ``method`` for it."""
    got = adapter.quants_of(method)
    if built is not None and built[0] in got.quants:
        return built[0], f"--quantization {method}, `{built[0]}` from the {os.path.basename(built[1])} of the build"
    if got.format:
        from sncc.catalog import CatalogError

        try:
            ck = checkpoint() if checkpoint is not None else None
        except CatalogError as e:
            raise Undecided(f"{got.format}; the checkpoint's config.json cannot be read: {e}") from e
        qc = (getattr(ck, "raw", None) or {}).get("quantization_config") if ck is not None else None
        qm = str(qc.get("quant_method", "")).strip().lower() if isinstance(qc, dict) else ""
        if ck is not None and qm == method:
            shown = os.path.join(model_text, os.path.basename(ck.quant_source_file))   # as the script names it
            return ck.quant, f"--quantization {method}, `{ck.quant}` from {shown} quantization_config"
        said = (f"; the checkpoint's config.json says quant_method `{qm or 'none'}`, not {method}" if ck is not None
                else "; sncc reads no checkpoint config.json for it (the model argument is no local folder "
                     "holding one)")
        raise Undecided(got.format + said)
    cands = list(got.quants)
    if not cands:
        raise Unrepresented(f"`--quantization {method}` is no quantization {adapter.label} takes for a format in "
                            "sncc's catalog (quant.toml, the engine's pins.toml [quantization])")
    low = model_text.lower()
    # a ModelSlim quant type spelled in the name (`-w4a4-mxfp4` = W4A4_MXFP4, quant.toml modelslim_names)
    # names the format whole; the longest such type wins over its parts (`w4a4` alone is INT4 W4A4)
    from sncc import catalog

    flat = re.sub(r"[-_]", "_", os.path.basename(low.rstrip("/")))
    typed = sorted(((len(n), q, n) for q in cands for n in catalog.quant_formats()[q].modelslim_names
                    if re.search(r"(?:^|_)" + re.escape(n.lower()) + r"(?:_|$)", flat)), reverse=True)
    named = [q for q in cands if q in low]
    if typed and (not named or typed[0][1] != named[0]):
        _, q, n = typed[0]
        return q, f"--quantization {method}, `{q}` from the model name (ModelSlim type {n})"
    if named:
        return named[0], f"--quantization {method}, `{named[0]}` from the model name"
    if len(cands) == 1:
        return cands[0], f"--quantization {method}"
    return cands[0], (f"--quantization {method} is any of {', '.join(cands)}; the model name does not say, "
                      f"{cands[0]} assumed")


def _rope(value) -> float:
    if not isinstance(value, dict):
        raise Unrepresented("--hf-overrides is not a JSON object")
    rest = {k: v for k, v in value.items() if k not in ("rope_scaling", "rope_parameters")}
    rope = value.get("rope_parameters") or value.get("rope_scaling")
    if rest or not isinstance(rope, dict):
        raise Unrepresented(f"--hf-overrides keys {', '.join(sorted(rest)) or '(none)'} have no plan key "
                            "(only YaRN rope scaling does: model.rope_scaling)")
    if rope.get("rope_type", rope.get("type")) != "yarn" or "factor" not in rope:
        raise Unrepresented("only YaRN rope scaling (rope_type yarn with a factor) has a plan key")
    return float(rope["factor"])


class Partial(list):
    """Plan values of a JSON argument some of whose keys have no plan key: ``dropped`` names them
    (SN8004 each, the rest imported)."""

    def __init__(self, items, dropped: list[str]):
        super().__init__(items)
        self.dropped = dropped


def _json_block(value, fields: dict[str, str], what: str) -> Partial:
    if not isinstance(value, dict):
        raise Unrepresented(f"{what} is not a JSON object")
    extra = sorted(set(value) - set(fields))
    if extra and len(extra) == len(value):
        raise Unrepresented(f"{what} keys {', '.join(extra)} have no plan key")
    return Partial([((fields[k],), v) for k, v in value.items() if k in fields], extra)


def _graph_value(key: str, x) -> tuple:
    """(plan value, note) of one ``--compilation-config`` key: the mode in the plan's lower case;
    a capture-size list with repeats de-duplicated and sorted, as vLLM does itself
    (``VllmConfig``: ``dedup_sizes = list(set(cudagraph_capture_sizes))``, then sorted; a published
    vllm-ascend nightly config, Qwen3.5-122B-A10B-W8A8-A3.yaml, lists 7 sizes twice and runs),
    where the plan's ``graph.capture_sizes`` takes each size once."""
    if key == "cudagraph_mode" and isinstance(x, str):
        return x.lower(), ""
    if key == "capture_sizes" and isinstance(x, list) and all(isinstance(n, int) for n in x) and len(set(x)) < len(x):
        rep = sorted({n for n in x if x.count(n) > 1})
        return sorted(set(x)), (f"de-duplicated as vLLM does (it captures each size once): "
                                f"{', '.join(map(str, rep))} listed more than once")
    return x, ""


def _method_alias(method: str) -> str:
    """A model-specific MTP method name (``qwen3_5_mtp``) → ``mtp`` (plan_keys.toml
    ``[speculative]`` ``mtp_suffix``: vLLM replaces them with ``mtp``)."""
    suffix = _table().get("speculative", {}).get("mtp_suffix")
    return "mtp" if suffix and method.endswith(suffix) else method


def _require_names(got, keys: tuple[str, ...], what: str) -> None:
    """Raise :class:`Unrepresented` when a JSON key in ``keys`` holds something other than a
    string (``{"method": 1}``): the plan key takes a name."""
    for (k, *_), x in got:
        if k in keys and not isinstance(x, str):
            raise Unrepresented(f"{what} `{k}` = {x!r} is not a name")


#: ``--kv-transfer-config`` keys ``sncc build`` writes per server process (sncc/lowering/launch.py
#: kv_transfer): read as the connector's, not as plan keys
_KV_PER_SERVER = frozenset({"engine_id", "kv_port", "kv_rank", "kv_parallel_size", "kv_ip"})


def _kv_transfer(v, connectors: dict) -> Partial:
    """``kv_transfer.connector`` of a ``--kv-transfer-config`` object: the connector whose
    ``class_name`` is ``kv_connector`` (``connectors``: class name → ConnectorSpec of the adapter)
    and that sncc launches on a ``serve`` role (the role the import writes)."""
    if not isinstance(v, dict):
        raise Unrepresented("--kv-transfer-config is not a JSON object")
    cls = v.get("kv_connector")
    spec = connectors.get(cls) if isinstance(cls, str) else None
    if spec is None:
        raise Unrepresented(f"`kv_connector` {cls!r} is no connector sncc has launch facts for "
                            f"({', '.join(sorted(connectors)) or 'none'})")
    if "serve" not in spec.roles:
        raise Unrepresented(f"`{cls}` is a prefill/decode transfer connector; the import writes one `serve` role")
    own = {"kv_connector": cls, "kv_connector_module_path": spec.module_path, **dict(spec.extra)}
    if spec.kv_role:
        own["kv_role"] = spec.kv_role
    dropped = sorted(k for k, x in v.items() if k not in _KV_PER_SERVER and own.get(k, object()) != x)
    return Partial([(("connector",), spec.id, f"--kv-transfer-config kv_connector {cls}")], dropped)


def plan_values(opt, model_text: str, speculative_methods: dict[str, str],
                connectors: dict | None = None, *, adapter,
                checkpoint=None, built_quant: tuple[str, str] | None = None) -> list[tuple[tuple[str, ...], object, str]]:
    """``[(plan path, value, note)]`` for option ``opt``; [] for arguments sncc sets itself or
    ignores.  Raises :class:`Unrepresented` (SN8004) for an argument or value without a plan key,
    :class:`Undecided` (SN8014) for one whose value does not say the key's.

    ``speculative_methods`` is the adapter's plan method → engine method table (read backwards);
    ``connectors`` its KV connectors by ``kv_connector`` class name (ConnectorSpec); ``adapter`` the
    engine adapter the command is read for (``--quantization``, :func:`quant_of`);
    ``checkpoint()`` the checkpoint the model argument names, or None; ``built_quant`` (quant,
    manifest path) of the tree ``sncc build`` wrote, or None."""
    row = rows().get(opt.name)
    if row is None:
        raise Unrepresented(f"`--{opt.name}` has no plan key")
    how, v = row["how"], opt.value
    if how in ("ignore", "derived"):
        return []
    if how == "launch":
        return [(_path(row), v, "")] if row.get("plan") else []
    path = _path(row)
    if how == "value":
        if opt.name == "max-model-len" and v == "auto":
            return [(path, "auto", "")]
        if opt.name == "max-num-batched-tokens" or opt.name == "long-prefill-token-threshold":
            if opt.name == "long-prefill-token-threshold" and v == 0:
                return []   # vLLM's 0 = no per-request cap: chunks are the step budget
        if isinstance(v, list) and len(v) == 1:
            v = v[0]
        if isinstance(v, list):
            raise Unrepresented(f"`--{opt.name}` with {len(v)} values: the plan key takes one")
        return [(path, v, "")]
    if how == "bool":
        if opt.name == "enable-chunked-prefill":
            return [(path, "on" if v else "off", "")]
        return [(path, bool(v), "")]
    if how == "negated":
        return [(path, not v, f"--{opt.name}")]
    if how == "quant":
        q, note = quant_of(str(v), model_text, adapter, checkpoint, built_quant)
        return [(path, q, note)]
    if how == "kv-dtype":
        if v == "auto":
            return []
        if str(v).startswith("fp8"):
            return [(path, "fp8", f"--kv-cache-dtype {v}")]
        raise Unrepresented(f"--kv-cache-dtype {v} has no plan value")
    if how == "rope":
        return [(path, _rope(v), "")]
    if how == "spec":
        back = {eng: plan for plan, eng in speculative_methods.items()}
        window = _table().get("speculative", {}).get("lookup_window", {}).get("keys", {})
        got = _json_block(v, {"method": "method", "num_speculative_tokens": "draft_tokens", "model": "model",
                              **{eng: plan for plan, eng in window.items()}}, "--speculative-config")
        _require_names(got, ("method",), "--speculative-config")
        return Partial([(path + (k,), _method_alias(back.get(x, x)) if k == "method" else x,
                         f"--speculative-config method {x}" if k == "method" and _method_alias(back.get(x, x)) != x else "")
                        for (k,), x in got], got.dropped)
    if how == "graph":
        got = _json_block(v, {"cudagraph_mode": "cudagraph_mode", "cudagraph_capture_sizes": "capture_sizes"},
                          "--compilation-config")
        _require_names(got, ("cudagraph_mode",), "--compilation-config")
        return Partial([(path + (k,), *_graph_value(k, x)) for (k,), x in got], got.dropped)
    if how == "eplb":
        got = _json_block(v, {"num_redundant_experts": "redundant_experts", "step_interval": "interval",
                              "window_size": "window"}, "--eplb-config")
        return Partial([(path + k, x, "") for k, x in got], got.dropped)
    if how == "kv-transfer":
        got = _kv_transfer(v, connectors or {})
        return Partial([(path[:-1] + k, x, note) for k, x, note in got], got.dropped)
    if how == "model":
        return [(path, v, "")]
    raise Unrepresented(f"plan_keys.toml: unknown how `{how}`")

"""Environment variables read below the engines, and the network-interface variables per vendor.

The variables CANN, torch_npu, HCCL, NCCL, gloo and the device runtimes read are the hand-kept
``sncc/engines/cann_env.json`` (each with its reader and source; :func:`sncc.engines.manifest.runtime_env`);
which interface variables a multi-node deployment exports per vendor is ``data/nic.toml``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping

from sncc.cache import package_toml

#: words of a ``cann_env.json`` reader that tie a variable to one vendor's stack
_VENDOR_READERS = {"ascend": ("CANN", "HCCL", "torch_npu", "torchair", "HCCN", "LCCL"), "nvidia": ("NCCL", "CUDA")}


@lru_cache(maxsize=1)
def _nic() -> Mapping[str, Any]:
    return package_toml("sncc.engines", "data/nic.toml")


def cann_setup_scripts(install_path: str | None) -> tuple[tuple[str, str, str], ...]:
    """``(path, what, source)`` of each CANN script an Ascend server sources before it starts
    (``data/cann_setup.toml``): ``path`` under ``install_path`` (the plan's
    ``software.install_path``), else under the file's ``default_root`` (``/usr/local/Ascend``)
    with that root's source appended to ``source``."""
    data = package_toml("sncc.engines", "data/cann_setup.toml")
    root = (install_path or data["default_root"]).rstrip("/") or "/"
    why = "plan software.install_path" if install_path else data["default_root_source"]
    return tuple((f"{root}/{s['path']}", s["what"], f"{s['source']}; root {root}: {why}") for s in data["script"])


def nic_vars(vendor: str) -> tuple[str, ...]:
    """The interface variables every node of a multi-node deployment on ``vendor`` (``ascend`` /
    ``nvidia``) exports."""
    return tuple(_nic()["nic"].get(vendor, ()))


def _vendor_of(reader: str) -> str | None:
    for vendor, words in _VENDOR_READERS.items():
        if any(w in reader for w in words):
            return vendor
    return None


def runtime_vars(vendor: str) -> frozenset[str]:
    """Names of the ``cann_env.json`` variables ``vendor``'s stack reads (those of the other
    vendor's libraries left out; vendor-neutral readers such as gloo or OpenMP kept)."""
    from sncc.engines.manifest import runtime_env

    return frozenset(n for n, row in runtime_env().data["env"].items()
                     if _vendor_of(str(row.get("reader", ""))) in (None, vendor))


def reader(name: str) -> str | None:
    """Who reads variable ``name`` (``CANN HCCL``, ``NCCL`` ...), or None when not listed."""
    from sncc.engines.manifest import runtime_env

    row = runtime_env().data["env"].get(name)
    return str(row.get("reader")) if row is not None else None


def written_variables(dep) -> dict[str, str]:
    """``{name: where}`` of every variable the deployment's env files export that sncc chose
    (``where`` the first process or ``env/common.sh``); the plan's own ``env`` entries are left
    out: they are the user's."""
    out: dict[str, str] = {}
    for v in dep.common_env:
        if v.note != "from plan env" and v.section != "plan env":
            out.setdefault(v.name, "env/common.sh")
    for n in dep.nodes:
        for v in n.env:
            out.setdefault(v.name, f"env (node {n.index})")
    for p in dep.processes:
        for v in p.env:
            if not v.section.endswith(" env"):   # the role's own env { } block
                out.setdefault(v.name, f"env/{p.name}.sh")
    return out


def unread_variables(dep, manifests) -> list[str] | None:
    """Names of variables sncc writes for ``dep`` that no reader knows: not in the engine's
    manifest, not in the manifest of the vLLM it runs, not in :func:`runtime_vars`.
    ``manifests`` lists :class:`sncc.engines.manifest.Manifest` objects (None entries allowed);
    None is returned when none is available (nothing to check against)."""
    found = [m for m in manifests if m is not None]
    if not found:
        return None
    known = set(runtime_vars(dep.vendor))
    for m in found:
        known |= set(m.env_vars)
    return sorted(n for n in written_variables(dep) if n not in known)


def readers_of(adapter, version: str | None, vendor: str):
    """``(known, label)`` for a plan built for ``adapter``'s pin of ``version``: the names of every
    variable the pinned release, the vLLM it runs and ``vendor``'s stack (:func:`runtime_vars`)
    read, and a label naming those readers (``vLLM 0.23.0, vllm-ascend v0.23.0 nor CANN``);
    None when neither manifest is available (nothing to judge against)."""
    pin = adapter.choose(version).pin
    found = [(m, lab) for m, lab in ((adapter.vllm_manifest(pin.version), f"vLLM {pin.vllm}"),
                                     (adapter.manifest(pin.version), f"{adapter.label} {pin.version}"))
             if m is not None]
    if not found:
        return None
    known = set(runtime_vars(vendor))
    labels = []
    for m, lab in found:
        known |= set(m.env_vars)
        if lab not in labels:
            labels.append(lab)
    stack = "CANN" if vendor == "ascend" else "NCCL/CUDA"
    return frozenset(known), ", ".join(labels) + f" nor {stack}"


def unread_plan_variables(adapter, version: str | None, vendor: str, names) -> dict[str, str]:
    """``{name: readers label}`` of the plan ``env`` entries in ``names`` that nothing of the
    pinned release reads (see :func:`readers_of`); empty when there is nothing to judge against.
    sncc does not export them (the env files carry only variables with a reader) and SN4044 says so."""
    got = readers_of(adapter, version, vendor)
    if got is None:
        return {}
    known, label = got
    return {n: label for n in sorted(set(names)) if n not in known}



def last_read(adapter, version: str | None, name: str) -> tuple[str, str] | None:
    """``(release label, manifest path)`` of the newest release older than the pin of ``version``
    whose manifest reads ``name``: the engine's own releases and those of vLLM it runs are looked at
    (``vLLM 0.11.0`` for ``VLLM_RPC_TIMEOUT`` on vllm-ascend v0.23.0, which runs vLLM 0.23.0); of two
    hits the engine's own release is named.  None when no older manifest reads it (a misspelling, or a
    variable nothing ever read).  Only releases sncc has a manifest for are known, so a release between
    two of them may have read it later."""
    from sncc.engines.manifest import ENGINE_DIRS, ManifestError, _version_key, load, versions

    pin = adapter.choose(version).pin
    found = None
    for engine, label, current in (("vllm", "vLLM", pin.vllm), (adapter.kind, adapter.label, pin.version)):
        if engine not in ENGINE_DIRS or (engine == "vllm" and found and adapter.kind == "vllm"):
            continue
        for v in reversed([v for v in versions(engine) if _version_key(v) < _version_key(current)]):
            try:
                m = load(engine, v)
            except ManifestError:
                continue
            if name in m.env_vars:
                found = (f"{label} {v}", f"sncc/engines/{ENGINE_DIRS[engine]}/data/{v}.json")
                break
    return found


#: how many unread names get a spelling hint (each costs a fuzzy match against the readers' names)
SPELLING_HINTS = 100


def close_spellings(names, adapter, version: str | None, vendor: str) -> dict[str, str]:
    """``{name: spelling}`` for each of ``names`` with a variable the pinned release reads whose
    name is close (a likely intended spelling, e.g. ``VLLM_ASCEND_ENABLE_FLASHCOMM1`` for
    ``VLLM_ASCEND_ENABLE_FLASHCOMM``, ``HCCL_BUFFSIZE`` for ``hccl_buffsize``: names are compared
    in upper case).  Candidates share the name's first underscore-separated
    word and differ in length by at most 2; only the first :data:`SPELLING_HINTS` names (in name
    order) are looked at, so a plan with thousands of entries stays fast."""
    import difflib

    got = readers_of(adapter, version, vendor)
    if got is None:
        return {}
    by_word: dict[str, list[str]] = {}
    for k in sorted(got[0]):
        by_word.setdefault(k.split("_", 1)[0], []).append(k)
    out = {}
    for name in sorted(names)[:SPELLING_HINTS]:
        upper = name.upper()   # variable names are case-sensitive: `hccl_buffsize` is not HCCL_BUFFSIZE
        if upper != name and upper in got[0]:
            out[name] = upper
            continue
        cands = [k for k in by_word.get(upper.split("_", 1)[0], ()) if abs(len(k) - len(name)) <= 2]
        match = difflib.get_close_matches(upper, cands, n=1, cutoff=0.9) if cands else []
        if match:
            out[name] = match[0]
    return out

"""``sncc import``: launch scripts and vLLM ``--config`` YAML files → a plan, never executing them.

:func:`import_sources` reads the scripts (:mod:`~sncc.importer.shell`), finds the engine command
and parses its arguments against the pinned release's manifest (:mod:`~sncc.importer.vllm_command`),
merges the ``--config`` YAML under the command line (vLLM's rule: the command line wins), maps
each argument to its plan key through ``sncc/engines/data/plan_keys.toml``
(:mod:`~sncc.importer.plan_keys`) and writes the plan with each value's origin
(:mod:`~sncc.importer.writer`).  Every problem is a located diagnostic in the input file
(SN8001–SN8010).  See README.md "Import" and sncc/importer/README.md.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from sncc.diagnostics import codes
from sncc.diagnostics.model import Diagnostic, diag
from sncc.diagnostics.secrets import looks_like_secret
from sncc.importer.shell import Word, read_script
from sncc.importer.vllm_command import (CONTAINER_RUNNERS, VLLM_IMAGE, VLLM_PROGRAM, Option, Problem, container_devices,
                                       container_env, container_env_files, engine_argv, env_file_assignments, image_tag,
                                       is_container, parse_args, passes_host_value)
from sncc.importer.writer import NOT_COPIED, UNRESOLVED, Value, plan_text
from sncc.source import SourceFile

#: the device-visibility variables: read by the driver runtime (CANN / CUDA), not by an engine, so
#: imported into `env` without SN8003; the plan's mask is what `sncc build` slices per server and
#: what SN3007 / SN3020 judge against the roles' devices
DEVICE_VARS = ("ASCEND_RT_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")
#: prefixes that mark an Ascend script (CANN, HCCL, torch_npu, vllm-ascend variables)
ASCEND_PREFIXES = ("ASCEND_", "HCCL_", "VLLM_ASCEND_", "PYTORCH_NPU_", "TASK_QUEUE_ENABLE", "HCCN_", "LCCL_")
#: the hardware assumed when the script names none (SN8008 says so): one catalog system per vendor
DEFAULT_SYSTEM = {"ascend": "atlas-800-a2", "nvidia": "hgx-h100"}
#: the workload written when the script gives none: `vllm bench serve`'s random-dataset defaults
#: (--random-input-len 1024, --random-output-len 128; vllm/benchmarks/datasets.py, vLLM 0.11.0)
BENCH_RANDOM_INPUT, BENCH_RANDOM_OUTPUT = 1024, 128
#: a variable reference `$NAME` / `${NAME...}` in a command's text
_VAR_REF = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


@dataclass
class ImportResult:
    """The imported plan ``text``, the ``diagnostics`` located in the input files, the input
    ``sources`` by name, the engine ``options`` read (after the YAML merge, for the round trip),
    the ``engine`` kind and ``version`` the arguments were read against."""

    text: str
    diagnostics: list[Diagnostic]
    sources: dict[str, SourceFile]
    options: list[Option] = field(default_factory=list)
    engine: str = ""
    version: str = ""

    @property
    def has_errors(self) -> bool:
        """True when a diagnostic is an error."""
        return any(d.is_error for d in self.diagnostics)


def _origin(src: SourceFile, offset: int) -> str:
    return f"from {os.path.basename(src.name)}:{src.line_col(offset)[0]}"


#: arguments that differ per node of one data-parallel instance (the rest must agree)
PER_NODE = frozenset({"headless", "data-parallel-start-rank", "data-parallel-rank", "data-parallel-address",
                      "data-parallel-size-local", "host", "port", "data-parallel-rpc-port"})


def same_instance(first: list[Option], other: list[Option]) -> bool:
    """Whether ``other`` (a command's options) is a further node of ``first``'s data-parallel
    instance: the same model and ``--data-parallel-size``, and ``--headless`` or a start rank."""
    a = {o.name: o.value for o in first}
    b = {o.name: o.value for o in other}
    return (a.get("model") == b.get("model") and a.get("data-parallel-size", 1) == b.get("data-parallel-size", 1) != 1
            and ("headless" in b or "data-parallel-start-rank" in b))


def _as_written(src: SourceFile, o: Option) -> str:
    """The option and its value as the input file spells them, on one line (for a kept comment)."""
    text = src.text[o.key[0]:max(o.key[1], o.value_at[1])]
    return " ".join(text.replace("\\\n", " ").split())


def _shown(v) -> str:
    import json

    return json.dumps(v, separators=(",", ":")) if isinstance(v, (dict, list)) else str(v).lower() if isinstance(v, bool) else str(v)


def node_differences(first: list[Option], other: list[Option], src: SourceFile, srcs) -> list[Diagnostic]:
    """SN8011 for each role-level argument a further node's command gives differently (or only one
    of the two gives): vLLM would run the node with it, the plan has one value for the role."""
    a = {o.name: o for o in first if o.name not in PER_NODE}
    b = {o.name: o for o in other if o.name not in PER_NODE}
    out = []
    for name in sorted(set(a) | set(b)):
        x, y = a.get(name), b.get(name)
        if x is not None and y is not None and x.value == y.value:
            continue
        where = y or x
        wsrc = src if y is not None else srcs.get(x.file, src)
        said = f"`--{name} {_shown(y.value)}`" if y is not None else f"no `--{name}`"
        out.append(diag(codes.IMPORT_NODE_DIFFERS, f"this node's command has {said} where the first node's "
                        + (f"has `{_shown(x.value)}`" if x is not None else "has none"), wsrc.span(*where.key),
                        help="one plan has one value per role: make the nodes' commands agree"))
    return out


def _node_container(src: SourceFile, cmd, node_exports: list, reader, srcs) -> tuple[list, list, list]:
    """A further node's ``docker run`` read by the rules of the first node's (container.toml
    [environment], [ascend]): ``(env, host_only, diagnostics)``, ``env`` the ``(file, name, word)``
    the container gets (``--env-file`` lines, then ``-e``; ``-e NAME`` takes the host's value; the
    mask in host NPU ids, :func:`_container_mask`), ``host_only`` what reaches the docker client only
    (the exports in force at the command and ``NAME=v docker run``)."""
    host_only = node_exports + [(src, n, w) for n, w in cmd.inline_env]
    inline, diags = [(src, n, w) for n, w in container_env(cmd)], []
    from_files: list = []
    for fw in container_env_files(cmd):
        got = _read_config(fw.text, os.path.dirname(src.name), reader) if not fw.unresolved else None
        if got is None:
            diags.append(diag(codes.IMPORT_UNRESOLVED, f"`--env-file {fw.text}`: "
                              + (fw.unresolved or "no such file next to the script"), src.span(fw.start, fw.end),
                              help="pass the env file's variables as `-e NAME=value`, or put the file next to the script"))
            continue
        srcs[got.name] = got
        from_files += [(got, n, w) for n, w in env_file_assignments(got.text)]
    host_env = {n: (s_, w) for s_, n, w in host_only if not w.unresolved}
    inline = [(*host_env[n][:1], n, host_env[n][1]) if passes_host_value(n, w) and n in host_env else (s_, n, w)
              for s_, n, w in from_files + inline]
    inline, devices, mask_probs = _container_mask(src, inline, container_devices(cmd))
    return [(s_, n, w) for s_, n, w, _ in devices] + inline, host_only, diags + mask_probs


def _final_mask(env: list):
    """The device mask in force in ``env`` (``(file, name, word)``, the last assignment wins), as
    ``(file, name, word)``, or None."""
    got = [(s_, n, w) for s_, n, w in env if n in DEVICE_VARS and not w.unresolved]
    return got[-1] if got else None


def _model_candidates(text: str) -> list[str]:
    """Names to look ``text`` up by in the catalog: as written, its last path part, then that part
    without trailing ``-SUFFIX`` words one by one (``DeepSeek-R1-FP4`` → ``DeepSeek-R1``), since
    quantized uploads append the format to the base model's name."""
    base = os.path.basename(text.rstrip("/"))
    out = [text, base] if text else []
    parts = base.split("-")
    out += ["-".join(parts[:k]) for k in range(len(parts) - 1, 0, -1)]
    return [c for c in out if c]


def _container_mask(msrc: SourceFile, inline: list, devices: list) -> tuple[list, list, list]:
    """The device mask of a container, in host NPU ids (container.toml [ascend]): the NPUs it is
    given (``--device /dev/davinciN``, the Ascend Docker Runtime's ``-e ASCEND_VISIBLE_DEVICES``),
    and an ``-e ASCEND_RT_VISIBLE_DEVICES`` in it picking among them by their number in the
    container (0, 1, ... in host order).  ``inline`` is the passed environment ``(file, name,
    word)``, ``devices`` :func:`container_devices`'s masks; returns ``(inline, devices, diagnostics)``
    with ``devices`` as ``(file, name, word, how)``: the runtime's mount list leaves the environment,
    a mask in the container becomes the host NPUs it names, one past the given NPUs is SN8009."""
    from sncc.cache import package_toml

    facts = package_toml("sncc.engines", "data/container.toml")["ascend"]
    mount_var, mask_var = facts["mount_variable"], facts["mask_variable"]
    out = [(msrc, n, w, how) for n, w, how in devices]
    given = next((w for n, w, _ in devices if n == mask_var), None)
    mounted = set(int(x) for x in given.text.split(",")) if given is not None else set()
    how_given = "`--device /dev/davinciN`" if given is not None else ""
    mount = [(s, n, w) for s, n, w in inline if n == mount_var and not w.unresolved]
    if mount:
        ids = [x.strip() for x in mount[-1][2].text.split(",")]
        if all(x.isdigit() for x in ids):
            mounted |= {int(x) for x in ids}
            how_given = " and ".join(filter(None, [how_given, f"`{mount_var}` (the Ascend Docker Runtime's mount list)"]))
            inline = [x for x in inline if not (x[1] == mount_var and not x[2].unresolved)]
            s, _, w = mount[-1]
            if given is None:
                out.append((s, mask_var, Word(",".join(map(str, sorted(mounted))), w.start, w.end),
                            f"the NPUs {how_given} gives the container"))
            else:
                out = [(s_, n, Word(",".join(map(str, sorted(mounted))), w_.start, w_.end), how)
                       if n == mask_var else (s_, n, w_, how) for s_, n, w_, how in out]
    order = sorted(mounted)
    diags, kept = [], []
    for s, n, w in inline:
        if n != mask_var or w.unresolved or not order:
            kept.append((s, n, w))
            continue
        ids = [x.strip() for x in w.text.split(",")]
        if not all(x.isdigit() for x in ids):
            kept.append((s, n, w))
            continue
        past = [x for x in ids if int(x) >= len(order)]
        if past:
            diags.append(diag(codes.IMPORT_BAD_VALUE, f"`{n}={w.text}` names device {past[0]} of a container given "
                              f"{len(order)} NPU{'s' if len(order) != 1 else ''} ({how_given}: host NPUs "
                              f"{','.join(map(str, order))}, numbered 0-{len(order) - 1} in the container): the "
                              "engine cannot open it; not imported", s.span(w.start, w.end),
                              help=f"number the container's NPUs from 0 (host NPU {order[0]} is 0), or give the "
                                   "container the NPU with `--device`"))
            continue
        host = ",".join(str(order[int(x)]) for x in ids)
        out.append((s, n, Word(host, w.start, w.end),
                    f"container devices {w.text} of the NPUs {how_given} gives the container: host NPUs {host}"))
    return kept, out, diags


def _mask_size(text: str) -> int | None:
    """How many devices a device mask ``0,1,2`` names (ranges ``0-3`` count too), None when it is no list."""
    n = 0
    for part in text.split(","):
        part = part.strip()
        if re.fullmatch(r"\d+", part):
            n += 1
        elif re.fullmatch(r"\d+-\d+", part):
            a, b = map(int, part.split("-"))
            n += b - a + 1
        else:
            return None
    return n


def _name_dtype(text: str) -> tuple[str, str] | None:
    """(word, quant) when the repository name ``text`` ends in a dtype word of
    ``plan_keys.toml [checkpoint_name_dtype]`` (``zai-org/GLM-4.7-FP8`` → ("FP8", "fp8")), else None."""
    from sncc.cache import package_toml

    words = package_toml("sncc.engines", "data/plan_keys.toml").get("checkpoint_name_dtype", {}).get("words", {})
    last = re.split(r"[-_]", os.path.basename(text.rstrip("/")))[-1] if text else ""
    got = next((k for k in words if k.lower() == last.lower()), None)
    return (last, words[got]) if got is not None else None


def _serve_form(cmd, argv: list[Word]) -> bool:
    """The engine command ``cmd`` (arguments ``argv``) is spelled ``vllm serve ...`` (also as a container's command)."""
    ws = list(cmd.words)
    at = len(ws) - len(argv)
    return at >= 2 and ws[at - 2].text.rsplit("/", 1)[-1] == VLLM_PROGRAM and ws[at - 1].text == "serve"


def _model_arguments(src: SourceFile, cmd, argv: list[Word], opts: list[Option], vlabel: str,
                     vllm_version: str) -> list[Diagnostic]:
    """The command's model arguments: none (vLLM serves its default model), `--model` where the
    release's `vllm serve` refuses it (``data/vllm_serve.toml [model_option]``), two different models."""
    from sncc.cache import package_toml

    models = [o for o in opts if o.name == "model"]
    serve = _serve_form(cmd, argv)
    start = cmd.words[0].start
    end = (argv[-1].end if argv else cmd.words[-1].end)
    if not models:
        return []   # no model at all: reported with the plan's model (a --config YAML may name it)
    out = []
    positional = next((o for o in models if not o.written.startswith("-")), None)
    flag = next((o for o in models if o.written == "--model"), None)
    rules = package_toml("sncc.engines", "data/vllm_serve.toml").get("model_option", {})
    if serve and flag is not None and vllm_version in rules.get("refused", ()):
        also = f" (the command also names the positional model `{positional.value}`)" if positional else ""
        out.append(diag(codes.IMPORT_UNKNOWN_ARGUMENT, f"`--model {flag.value}`: `vllm serve` of {vlabel} refuses the "
                        "`--model` option (\"provide the model as a positional argument or in a config file\")" + also,
                        src.span(*flag.key),
                        help=(f"keep one model: remove `--model {flag.value}`, or write it in place of the positional"
                              if positional else f"write the model after `vllm serve`: `vllm serve {flag.value} ...`")))
        return out
    other = next((o for o in models if o is not positional and o.value != (positional.value if positional else o.value)), None)
    if positional is not None and other is not None:
        out.append(diag(codes.IMPORT_BAD_VALUE, f"two models: the positional `{positional.value}` and "
                        f"`{other.written.split('=')[0]} {other.value}`; vLLM serves `{positional.value}` and ignores "
                        f"`{other.written.split('=')[0]}`", src.span(other.key[0], other.value_at[1]),
                        help="keep one model argument"))
    return out


def _vendor(names: list[str], argv: list[Word]) -> str:
    if any(n.startswith(ASCEND_PREFIXES) for n in names):
        return "ascend"
    texts = [w.text for w in argv]
    if "--additional-config" in texts or any(t.startswith("--additional-config=") for t in texts):
        return "ascend"
    if "ascend" in texts:
        return "ascend"
    return "nvidia"


def _chip_vendor(vendor: str) -> str:
    """A catalog chip vendor (chips.toml ``vendor``) in the importer's words: ``nvidia`` or ``ascend``
    (the rule of sncc/facts/catalog_facts.py)."""
    return "nvidia" if vendor == "nvidia" else "ascend"


def _system_vendor(system: str | None) -> str | None:
    """The vendor of catalog system ``system``'s chip, or None (no system, or one sncc does not know)."""
    from sncc import catalog

    if not system:
        return None
    try:
        return _chip_vendor(catalog.chip(catalog.system(system).chip).vendor)
    except (KeyError, LookupError):
        return None


def _assumed_system(vendor: str, env: dict, image: tuple[str, str] | None = None) -> tuple[str, str]:
    """(catalog system id, why) the import assumes when the script names no hardware: the
    system the engine image's variant is built for (``image`` = (system, image word), from
    :meth:`~sncc.engines.base.EngineAdapter.image_system`: an ``-a3`` image → ``atlas-800i-a3``),
    else the vendor's default (:data:`DEFAULT_SYSTEM`); unless the device mask in the command's
    environment (``ASCEND_RT_VISIBLE_DEVICES`` / ``CUDA_VISIBLE_DEVICES``) names more devices than
    its nodes hold; then the vendor's catalog system with the fewest devices per node that holds
    them (16 visible NPUs: an Atlas A3 node, 16 dies, not the 8-device A2).  ``why`` is "" for the
    vendor's default."""
    from sncc import catalog

    default = DEFAULT_SYSTEM[vendor]
    why_default = ""
    if image is not None and image[0] and _system_vendor(image[0]) == vendor:
        default, why_default = image[0], f"the image {image[1]} is built for {image[0]}"
    ids = []
    for n in DEVICE_VARS:
        ids += [x.strip() for x in str(env.get(n, "")).split(",") if x.strip().isdigit()]
    need = max([len(ids)] + [int(x) + 1 for x in ids]) if ids else 0
    try:
        if need <= catalog.system(default).devices_per_node:
            return default, why_default
        fits = [(sy.devices_per_node, sid) for sid, sy in catalog.systems().items()
                if sy.devices_per_node >= need and _system_vendor(sid) == vendor]
    except (KeyError, LookupError, AttributeError):
        return default, ""
    if not fits:
        return default, ""
    per, sid = min(fits, key=lambda t: t[0])
    return sid, f"its device mask names {need} devices, more than {default}'s nodes hold; {sid} has {per} per node"


def _image_engine(word: str) -> tuple[str | None, str | None]:
    """(engine kind, release) of a container image word that is an engine's published image
    (:meth:`~sncc.engines.base.EngineAdapter.image_release`, ``pins.toml [image]``): the release its
    tag names, ``""`` when it names none; (None, None) for any other image."""
    from sncc.engines.registry import KINDS, adapter_for

    for k in KINDS:
        rel = adapter_for(k).image_release(word)
        if rel is not None:
            return k, rel
    return None, None


def _image_pin(adapter, release: str) -> tuple[str, str]:
    """(pinned version, note) a plan imported from the image of ``release`` names: the release
    itself when pinned (note ""); else the pin running the same vLLM as the release's row of the
    catalog's release table (software.toml ``[[vllm_ascend]]``: v0.23.0rc1 runs vLLM v0.23.0, as the
    pin v0.23.0), else the nearest pin (v0.11.0rc0, on vLLM v0.11.0rc3: the pin v0.11.0) (:meth:`~sncc.engines.base.EngineAdapter.nearest`).  Never fails."""
    pin = adapter.pin(release)
    if pin is not None:
        return pin.version, ""
    row = adapter.paired_software(release)
    vllm = str(row[1]).lstrip("v") if row and row[1] else ""
    same = [p for p in adapter.pins if vllm and p.vllm.lstrip("v") == vllm]
    if same:
        p = same[-1]
        return p.version, (f"{adapter.label} {release} is not pinned by sncc; it runs vLLM {vllm}, as the pin "
                           f"{p.version} does (its release matrix)")
    p = adapter.nearest(release)
    known = "is not pinned by sncc" if row else "is a release sncc does not know"
    return p.version, f"{adapter.label} {release} {known}; nearest pinned release {p.version}"


def _image_assumed(adapter, word: str, release: str | None, version: str, tag_note: str):
    """``(warning, version note, version, tag note)`` for an engine image ``word`` whose tag names
    no release sncc pins: no tag, a moving tag (``container.toml [moving_tags]``: ``latest``,
    ``nightly``), a digest, or a release tag without a pin (the nearest pin is taken, as for
    vllm-ascend's images: :func:`_image_pin`).  ``release`` is the release the tag names (None or
    ``""`` for none), ``version`` / ``tag_note`` the choice so far; the warning is None when the tag
    names a pinned release, or the release was already matched to a pin with its note."""
    from sncc.cache import package_toml

    if release and adapter.pin(release) is not None:
        return None, None, version, tag_note
    if release and tag_note:   # vllm-ascend's image of an unpinned release: its pin chosen, with its note
        return None, None, version, tag_note
    if release:
        near = adapter.nearest(release).version
        note = f"{adapter.label} {release} is not pinned by sncc; nearest pinned release {near}"
        return (f"the image `{word}` runs {note}: sncc read the arguments and wrote the plan for {adapter.label} "
                f"{near}", f"the image tag {word}: {note}", near, note)
    moving = package_toml("sncc.engines", "data/container.toml").get("moving_tags", {})
    name = word.rsplit("/", 1)[-1]
    raw = name.partition("@")[0].partition(":")[2]
    if "@" in name:
        what = "a digest, which names no release"
    elif not raw:
        what = f"has no tag: docker pulls `latest`, {moving.get('latest', 'the newest image')}"
    elif raw in moving and raw != "source":
        what = f"`{raw}` is {moving[raw]}"
    else:
        what = f"`{raw}` names no release"
    return (f"the image `{word}` names no {adapter.label} release ({what}): sncc read the arguments and wrote the "
            f"plan for {adapter.label} {version}, its default pin",
            f"assumed for the image {word}, whose tag names no release: sncc's default pin", version, tag_note)


def _engine_vendor(engine: str | None) -> str | None:
    """The one vendor engine kind ``engine`` runs on (engines.toml ``[engine_hardware.<kind>]``
    ``vendors``: vllm-ascend on huawei, vllm on nvidia), or None when it names none or several."""
    from sncc.catalog.engine_defaults import engine_defaults

    row = engine_defaults().get("engine_hardware", {}).get(engine or "")
    vendors = {_chip_vendor(v) for v in (row or {}).get("vendors", ())}
    return vendors.pop() if len(vendors) == 1 else None


def _read_config(path: str, base: str, reader) -> SourceFile | None:
    for cand in (os.path.join(base, path), path):
        try:
            return SourceFile(cand, reader(cand))
        except OSError:
            continue
    return None


def _inventory_of(text: str):
    """The ``all`` key node of an Ansible inventory YAML (a top-level ``all`` mapping holding
    ``hosts`` or ``children``), else None (also for text that is not YAML)."""
    import yaml

    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return None
    if not isinstance(root, yaml.MappingNode):
        return None
    for knode, vnode in root.value:
        if str(knode.value) == "all" and isinstance(vnode, yaml.MappingNode) and any(
                str(k.value) in ("hosts", "children") for k, _ in vnode.value):
            return knode
    return None


def _yaml_options(src: SourceFile, manifest, label: str) -> tuple[list[Option], list[Problem]]:
    """Options of a vLLM ``--config`` YAML (flat dashed keys): true → the flag, false → dropped
    (the release's ``config_file`` rules), lists and maps as values; each at its key's offset."""
    import yaml

    from sncc.importer.vllm_command import ValueRefused, _suggest, typed

    try:
        root = yaml.compose(src.text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = (mark.index, mark.index + 1) if mark is not None else (0, 0)
        return [], [Problem("bad-value", at, f"not a YAML file: {getattr(e, 'problem', e)}", file=src.name)]
    if root is None:
        return [], []
    if not isinstance(root, yaml.MappingNode):
        return [], [Problem("bad-value", (0, 0), "a vLLM --config file is a mapping of option → value", file=src.name)]
    opts, probs = [], []
    rules = manifest.config_file_rules
    for knode, vnode in root.value:
        key = str(knode.value)
        at = (knode.start_mark.index, knode.end_mark.index)
        vat = (vnode.start_mark.index, vnode.end_mark.index)
        if not manifest.has_arg(key):
            hint = _suggest(manifest, "--" + key)
            probs.append(Problem("unknown", at, f"`{key}` is no `vllm serve` option of {label}",
                                 hint or "remove it", src.name))
            continue
        arg = manifest.arg(key)
        value = yaml.safe_load(src.text[vat[0]:vat[1]]) if isinstance(vnode, yaml.ScalarNode) else \
            yaml.safe_load(yaml.serialize(vnode))
        if value is False and rules.get("false") == "dropped":
            probs.append(Problem("dropped", at, f"`{key}: false` is dropped by vLLM's --config loader (the default stays)",
                                 f"write `--no-{arg.name}` on the command line", src.name))
            continue
        try:
            if isinstance(value, (str, int, float)) and not isinstance(value, bool) and not arg.boolean:
                value = typed(arg, str(value))
        except ValueError as e:
            probs.append(Problem("bad-value", vat, f"`{key}` {e}" if isinstance(e, ValueRefused) else f"`{key}`: {e}",
                                 file=src.name))
            continue
        if key.startswith("no-") and value is True and arg.negative:
            value = False
        first = next((o for o in opts if o.name == arg.name), None)
        if first is not None:   # PyYAML, as vLLM loads the file, keeps the last value of a repeated key
            line = src.line_col(first.key[0])[0]
            probs.append(Problem("repeated", at, f"`{key}` is given again (first on line {line}): vLLM keeps this "
                                 f"value, `{_shown_yaml(value)}`, and drops `{_shown_yaml(first.value)}`",
                                 "keep one of the two", src.name))
            opts.remove(first)
        opts.append(Option(arg.name, value, at, vat, src.name, key))
    return opts, probs


#: the first comment lines of a --config YAML `sncc build` wrote (sncc/emit/role_yaml.py):
#: ``# <engine> <version> (vLLM <x>) on <system>, <role> role; generated by sncc …`` (trees built
#: before the system was written have no `` on <system>``)
_SNCC_YAML_HEADER = re.compile(r"^# (\S+) (\S+) \(vLLM [^)]*\)(?: on (\S+))?, \S+ role; generated by sncc ", re.M)


def _sncc_header_pin(configs: list[SourceFile]) -> tuple[str, str, str, str] | None:
    """(engine kind, version, system id or "", file name) an sncc-built --config YAML names in its
    header, or None."""
    for src in configs:
        m = _SNCC_YAML_HEADER.search(src.text[:2000])
        if m is not None:
            return m.group(1), m.group(2), m.group(3) or "", os.path.basename(src.name)
    return None


def _built_quant(configs: list[SourceFile], reader) -> tuple[str, str] | None:
    """(quant, manifest path) from :func:`_built_deployment`, when it records a catalog quant."""
    from sncc import catalog

    got = _built_deployment(configs, reader)
    if got is None:
        return None
    q = got[0].get("quantization")
    return (q, got[1]) if isinstance(q, str) and q in catalog.quant_formats() else None


def _kv_dtype_known(dtype: str) -> bool:
    """Whether ``dtype`` is a KV-cache dtype of the catalog (quant.toml [kv_dtypes])."""
    from sncc import catalog

    try:
        catalog.kv_dtype_bytes(dtype)
    except KeyError:
        return False
    return True


def _built_deployment(configs: list[SourceFile], reader) -> tuple[dict, str] | None:
    """(deployment, manifest path) of a tree ``sncc build`` wrote: the ``deployment`` its
    ``manifest.json`` (beside the role YAML, :mod:`sncc.emit.writer`) records, when one of
    ``configs`` has sncc's header and the manifest lists it unchanged (its sha256); else None.  The
    build writes no ``--quantization`` where the engine reads the method from the checkpoint
    (``w8a8`` on CUDA vLLM), so the manifest is where the plan's quant is kept."""
    import json

    from sncc.emit.writer import MANIFEST, sha256_hex

    for src in configs:
        if _SNCC_YAML_HEADER.search(src.text[:2000]) is None:
            continue
        path = os.path.join(os.path.dirname(src.name), MANIFEST)
        try:
            doc = json.loads(reader(path))
        except (OSError, ValueError):
            continue
        if not isinstance(doc, dict) or doc.get("generator") != "sncc":
            continue
        files = doc.get("files") if isinstance(doc.get("files"), dict) else {}
        if files.get(os.path.basename(src.name)) != sha256_hex(src.text):
            continue    # the YAML was edited after the build: the manifest no longer describes it
        deployment = doc.get("deployment") if isinstance(doc.get("deployment"), dict) else {}
        return deployment, path
    return None


def _checkpoint_reader(model_text: str, base: str):
    """A function reading the checkpoint the script's model argument names: the
    :class:`~sncc.catalog.hf_config.CheckpointInfo` of a local folder holding config.json
    (relative to ``base``, the script's folder), None for anything else (a repository id); it
    raises CatalogError for a config.json sncc cannot read.  Read once, on first call."""
    got: list = []

    def read():
        if not got:
            from sncc.catalog.hf_config import CONFIG_FILE, read_weights_dir

            folder = model_text if os.path.isabs(model_text) else os.path.join(base, model_text)
            ok = bool(model_text) and os.path.isfile(os.path.join(folder, CONFIG_FILE))
            got.append(read_weights_dir(folder) if ok else None)
        return got[0]
    return read


def _unknown_choices(system: str | None, model: str | None, model_text: str, base: str) -> list[Diagnostic]:
    """SN2008 for a ``--system`` or ``--model`` id sncc's catalog does not know, with the closest
    known id (no location: the id is a command-line option).  An uncatalogued ``--model`` is
    accepted when the script's model argument ``model_text`` is a local checkpoint folder holding
    config.json (the plan's rule: the model's shape is read from there; relative to ``base``)."""
    import dataclasses

    from sncc import catalog
    from sncc.facts.catalog_facts import unknown_entry

    out = []
    if system is not None:
        try:
            catalog.system(system)
        except (KeyError, LookupError):
            d = unknown_entry("system", system, None, list(catalog.systems()))
            out.append(dataclasses.replace(d, message=d.message + " (given with --system)", path=("hardware", "system")))
    if model is not None:
        try:
            catalog.model(model)
        except (KeyError, LookupError):
            folder = model_text if os.path.isabs(model_text) else os.path.join(base, model_text)
            if not (model_text and os.path.isfile(os.path.join(folder, "config.json"))):
                d = unknown_entry("model", model, None, list(catalog.models()))
                out.append(dataclasses.replace(
                    d, message=d.message + " (given with --model)", path=("model", "id"),
                    help=(d.help + " " if d.help else "") + "(an uncatalogued model imports only when the "
                         "script's model argument is a local checkpoint folder holding its config.json)"))
    return out


def _guarded_source(text: str, at: int, path: str) -> bool:
    """True when the ``source``/``.`` of ``path`` at offset ``at`` is guarded by a file test of the
    same path earlier on its line (``[ -f PATH ]``, ``[ -e PATH ]``, ``[ -r PATH ]``, ``test -f
    PATH``): the build's ``env/common.sh`` sources the CANN ``set_env.sh`` scripts so, and a
    machine without CANN must not make every re-import warn about them."""
    import re

    line = text[text.rfind("\n", 0, at) + 1: at]
    q = re.escape(path)
    return re.search(rf"(?:\[\[?|\btest)\s+-[efr]\s+[\"']?{q}[\"']?(?:\s|\])", line) is not None


def _cut_off(cmd) -> bool:
    """True when ``cmd`` (a command the reader split off) starts with an option word (``--x``,
    ``-x``): no program is named so, it is the continuation of the command above that the line
    before did not continue (SN8015)."""
    first = cmd.words[0].text
    return len(first) > 1 and first.startswith("-") and not cmd.inline_env


def _unread_line(src: SourceFile, cmd) -> Diagnostic:
    """SN8015 for ``cmd``, a line of options the shell runs as a command of its own, located at its
    words, saying how the line before ends (``\\`` then spaces, or no ``\\``)."""
    line = src.line_col(cmd.words[0].start)[0]
    before = src.line_text(line - 1) if line > 1 else ""
    stripped = before.rstrip(" \t")
    if stripped.endswith("\\") and stripped != before:
        why = (f"line {line - 1} ends with `\\` followed by {len(before) - len(stripped)} blank(s): "
               "the backslash escapes that, not the line break")
        fix = f"delete the blanks after the `\\` at the end of line {line - 1}"
    else:
        why = f"line {line - 1} does not end with `\\`"
        fix = f"end line {line - 1} with ` \\` to continue the command"
    shown = " ".join(w.text for w in cmd.words)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return diag(codes.IMPORT_UNREAD_LINE, f"`{shown}` is not part of the engine command above: {why}, so the shell "
                f"runs this line as a command of its own and the engine never gets these options",
                src.span(cmd.words[0].start, cmd.words[-1].end), help=fix)


def _refused_name(src: SourceFile, w: Word, builtin: str) -> Diagnostic:
    """SN8016 for ``w``, a word of ``export`` (``readonly``, ...) whose name bash refuses
    (``HCCL-BUFFSIZE=200``): bash says "not a valid identifier" and sets nothing."""
    name = w.text.partition("=")[0]
    fixed = re.sub(r"[^A-Za-z0-9_]", "_", name)
    fixed = "_" + fixed if fixed[:1].isdigit() else fixed
    shown = f"`{name}`" if name else "the empty name"
    return diag(codes.IMPORT_INVALID_NAME, f"`{builtin} {w.text}`: bash refuses {shown} as a variable name "
                f"(`{builtin}: '{w.text}': not a valid identifier`), so the variable is not set and the script "
                "goes on without it", src.span(w.start, w.end),
                help="a name is letters, digits and underscores, not starting with a digit"
                     + (f": did you mean `{fixed}`?" if fixed.strip("_") else ""))


def _shown_yaml(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


_PROBLEM_CODES = {"unknown": codes.IMPORT_UNKNOWN_ARGUMENT, "bad-value": codes.IMPORT_BAD_VALUE,
                  "unresolved": codes.IMPORT_UNRESOLVED, "dropped": codes.IMPORT_UNREPRESENTED,
                  "repeated": codes.IMPORT_REPEATED_OPTION}


def import_sources(sources: list[SourceFile], *, system: str | None = None, engine: str | None = None,
                   engine_version: str | None = None, model: str | None = None, name: str | None = None,
                   reader=None, _version_note: str = "", _system_note: str = "",
                   _header: bool = False) -> ImportResult:
    """Import ``sources`` (shell scripts / command lines; ``.yaml`` / ``.yml`` files are vLLM
    ``--config`` files merged under the command line) into one plan.

    ``system`` (catalog id), ``engine`` (``vllm`` / ``vllm-ascend``), ``engine_version`` and
    ``model`` (catalog id, for a script whose model is a local path or a placeholder) override
    what the importer would assume.  ``reader(path) -> str`` reads ``--config`` files (default:
    UTF-8 from disk).  Never raises for bad input: problems are diagnostics."""
    from sncc import catalog
    from sncc.engines.registry import UnknownEngine, adapter_for
    from sncc.engines.runtime_env import last_read, nic_vars, runtime_vars
    from sncc.importer.plan_keys import Undecided, Unrepresented, plan_values

    reader = reader or (lambda p: open(p, encoding="utf-8").read())
    srcs = {s.name: s for s in sources}
    diags: list[Diagnostic] = []
    scripts = [s for s in sources if not s.name.endswith((".yaml", ".yml"))]
    configs = [s for s in sources if s.name.endswith((".yaml", ".yml"))]
    for c in list(configs):     # an Ansible inventory is no vLLM --config file: said once, not read
        knode = _inventory_of(c.text)
        if knode is not None:
            configs.remove(c)
            diags.append(diag(codes.IMPORT_NO_ENGINE_COMMAND, "an Ansible inventory (`all:` with `hosts`/`children`, "
                              "as Omni-Infer deploys with), not a launch script or a vLLM --config file: sncc import "
                              "does not read inventories", c.span(knode.start_mark.index, knode.end_mark.index),
                              help="import the launch script each host runs, or write the plan's `hosts` block by hand"))
    if not scripts and not configs:
        return ImportResult("", diags, srcs)

    def at(src: SourceFile, span: tuple[int, int]):
        return src.span(span[0], span[1])

    # every export with the file it is written in, the top-level script and its place there (a
    # sourced file's exports take the place of the `source` command): the plan's env is the one in
    # force at the imported command
    all_exports: list[tuple[SourceFile, str, Word, str, int]] = []
    commands = []

    def collect(sc, fsrc: SourceFile, top: SourceFile, place: int | None) -> None:
        for w, builtin in sc.refused:
            diags.append(_refused_name(fsrc, w, builtin))
        items = [(w.start, 0, (n, w)) for n, w, exported in sc.assignments if exported]
        items += [(s.word.start, 1, s) for s in sc.sourced]
        for at_, kind_, item in sorted(items, key=lambda x: x[0]):
            pos = at_ if place is None else place
            if kind_ == 0:
                all_exports.append((fsrc, item[0], item[1], top.name, pos))
                continue
            if item.script is None:
                if _guarded_source(fsrc.text, item.word.start, item.word.text):
                    continue        # `if [ -f X ]; then . X; ...`: the script itself handles X's absence
                diags.append(diag(codes.IMPORT_UNRESOLVED, f"`{item.word.text}` is sourced here but not read "
                                  f"({item.why}): its exports are not imported", fsrc.span(item.word.start, item.word.end),
                                  help="import with the sourced file next to the script, or export its variables "
                                       "in the script"))
                continue
            sub = srcs.get(item.name) or SourceFile(item.name, item.text)
            srcs.setdefault(item.name, sub)
            collect(item.script, sub, top, pos)

    for src in scripts:
        base = os.path.dirname(src.name)

        def source(path: str, base: str = base) -> tuple[str, str]:
            full = os.path.normpath(path if os.path.isabs(path) else os.path.join(base, path))
            return full, reader(full)

        sc = read_script(src.text, source)
        collect(sc, src, src, None)
        after_engine = False
        for c in sc.commands:
            found = engine_argv(c)
            if found is not None:
                commands.append((src, c, found[0], found[1]))
                after_engine = True
            elif after_engine and _cut_off(c):
                diags.append(_unread_line(src, c))
            else:
                after_engine = False
        if sc.conditionals:
            w = sc.conditionals[0]
            diags.append(diag(codes.IMPORT_CONDITIONAL, f"`{w.text}` is not evaluated: the assignments of every branch "
                              "apply in order, the last one wins", src.span(w.start, w.end),
                              help="check that the imported values are those of the branch you deploy"))
    if not commands and not configs:
        where = scripts[0] if scripts else None
        if where is not None:
            boxed = next((c for c in (c for sc in map(read_script, [where.text]) for c in sc.commands)
                          if len(c.words) > 1 and c.words[0].text.rsplit("/", 1)[-1] in CONTAINER_RUNNERS
                          and c.words[1].text == "run"), None)
            hint = ("sncc reads `vllm serve ...`, `python -m vllm.entrypoints.openai.api_server ...` and "
                    "`docker run ... vllm/vllm-openai[:TAG] ARGS` (the image's entry point is vLLM's server)")
            if boxed is not None:
                hint = ("this container runs no vLLM image sncc knows (vllm/vllm-openai); " + hint
                        + "; for another image, import the command its entry point runs")
            diags.append(diag(codes.IMPORT_NO_ENGINE_COMMAND, "no `vllm serve` or `python -m vllm.entrypoints.openai.api_server` "
                              "command in this file",
                              where.span(boxed.words[0].start, boxed.words[-1].end) if boxed else where.span(0, 0),
                              help=hint))
        return ImportResult("", diags, srcs)
    main = commands[0] if commands else None
    msrc = main[0] if main else configs[0]
    # the environment in force at the imported command: the exports before it in its file, and
    # those of the files given before it that run no engine command (an env file imported with it)
    with_command = {c[0].name for c in commands}
    order = [s.name for s in scripts]
    main_at = min([main[1].words[0].start] + [w.start for _, w in main[1].inline_env]) if main else 0

    def in_force(top: str, pos: int) -> bool:
        if main is None:
            return True
        if top == msrc.name:
            return pos < main_at
        return top not in with_command and order.index(top) < order.index(msrc.name)

    exports = [(s, n, w) for s, n, w, top, pos in all_exports if in_force(top, pos)]
    force_env = {n: w.text for _, n, w in exports}

    def not_in_force(node_files: set[str]) -> None:
        """SN8010 (info) at each export elsewhere that differs from the imported command's
        environment; a further node's own file (``node_files``) sets that node's environment."""
        for s, n, w, top, pos in all_exports:
            if in_force(top, pos) or force_env.get(n) == w.text or top in node_files:
                continue
            had = f"`{force_env[n]}`" if n in force_env else "no value"
            cmd_line = msrc.line_col(main_at)[0]
            diags.append(diag(codes.IMPORT_MORE_COMMANDS, f"`{n}={w.text}` is not in the environment of the imported "
                              f"command ({os.path.basename(msrc.name)}:{cmd_line}, where `{n}` has {had}): not imported "
                              "into the plan's env", s.span(w.start, w.end), severity="info",
                              help="the plan's env is the environment the imported command runs with; import the "
                                   "command this export is for on its own"))
    argv = main[2] if main else []
    # `NAME=v vllm serve …` and `docker run -e NAME=v … vllm/vllm-openai …` set the engine's environment;
    # a container's is only what `docker run` passes it (container.toml [environment]): the host's
    # exports (and `NAME=v docker run`) reach the docker client, and the container through `-e NAME`
    boxed = main is not None and is_container(main[1])
    host_only: list = []
    if boxed:
        host_only = exports + [(msrc, n, w) for n, w in main[1].inline_env]
        exports = []
        inline = [(msrc, n, w) for n, w in container_env(main[1])]
    else:
        inline = [(msrc, n, w) for n, w in main[1].inline_env] if main else []
    # `docker run --env-file F`: F's assignments, located in F (docker applies them before any -e)
    env_file_probs: list[Problem] = []
    from_files: list = []
    for fw in (container_env_files(main[1]) if main else []):
        got = _read_config(fw.text, os.path.dirname(msrc.name), reader) if not fw.unresolved else None
        if got is None:
            env_file_probs.append(Problem("unresolved", (fw.start, fw.end),
                                          f"`--env-file {fw.text}`: " + (fw.unresolved or "no such file next to the script"),
                                          "pass the env file's variables as `-e NAME=value`, or put the file next "
                                          "to the script", msrc.name))
            continue
        srcs[got.name] = got
        from_files += [(got, n, w) for n, w in env_file_assignments(got.text)]
    # in order: a later file overrides an earlier one, and any -e overrides them all (the last wins)
    # the devices the container is given (`--device /dev/davinciN`, `--gpus`) are its device mask; a
    # mask the container is given by name (`-e ASCEND_RT_VISIBLE_DEVICES=...`) comes after it and wins
    inline = from_files + inline
    if boxed:   # `-e NAME` / a `NAME` line: the host's value, located at its export
        host_env = {n: (s_, w) for s_, n, w in host_only if not w.unresolved}
        inline = [(*host_env[n][:1], n, host_env[n][1]) if passes_host_value(n, w) and n in host_env else (s_, n, w)
                  for s_, n, w in inline]
    devices = container_devices(main[1]) if main else []
    inline, devices, mask_probs = _container_mask(msrc, inline, devices) if boxed else (inline, devices, [])
    diags += mask_probs
    mask_how = {(src_.name, n, w.start): how for src_, n, w, how in devices}
    inline = [(src_, n, w) for src_, n, w, _ in devices] + inline
    names = [n for _, n, _ in host_only + exports + inline]

    image = main is not None and VLLM_IMAGE.match(main[3].text) is not None   # vLLM's CUDA image: vLLM on NVIDIA
    # another engine's published image (pins.toml [image]: quay.io/ascend/vllm-ascend:TAG) and the release its tag names
    image_kind, image_release = _image_engine(main[3].text) if main and not image else (None, None)
    # the hardware decides the vendor, else the engine (vllm-ascend runs on Ascend only), else the script
    vendor = (_system_vendor(system) or _engine_vendor(engine) or ("nvidia" if image else None)
              or _engine_vendor(image_kind) or _vendor(names, argv))
    if image_kind is not None and _engine_vendor(image_kind) != vendor:
        image_kind, image_release = None, None   # --system of another vendor: not this image's engine
    kind = engine or image_kind or ("vllm-ascend" if vendor == "ascend" else "vllm")
    image_system = adapter_for(image_kind).image_system(main[3].text) if image_kind is not None else None
    guessed_system, guessed_why = _assumed_system(vendor, {n: w.text for _, n, w in exports + inline},
                                                  (image_system, main[3].text) if image_system else None)
    adapter = adapter_for(kind)
    tag = image_tag(main[3].text) if main else None
    version = engine_version or (tag if tag and adapter.pin(tag) else None) or adapter.default_version
    tag_note = ""
    if engine_version is None and image_release and kind == image_kind:
        version, tag_note = _image_pin(adapter, image_release)
        tag = version
    # an engine image whose tag names no pinned release (`vllm/vllm-openai:latest`, `:nightly`, none,
    # `:v0.30.0`): the container runs another vLLM than the one sncc reads the arguments against
    image_assumed, image_vnote = None, None
    if engine_version is None and main is not None and (image or (image_kind is not None and kind == image_kind)):
        image_assumed, image_vnote, version, tag_note = _image_assumed(adapter, main[3].text, tag if image else
                                                                       image_release, version, tag_note)
        if image_assumed is not None:
            diags.append(diag(codes.IMPORT_ASSUMED, image_assumed, msrc.span(main[3].start, main[3].end),
                              severity="warning",
                              help=f"pin the image to the release it runs (a `:vX.Y.Z` tag), or name it with "
                                   f"`sncc import --engine-version V` (pins: {', '.join(p.version for p in adapter.pins)})"))
    pin_note = f"{adapter.label} {version}"
    vman = adapter.vllm_manifest(version) if adapter.pin(version) else None
    eman = adapter.manifest(version)
    read_as = version   # the pin whose vLLM parser the arguments are read with
    unpinned_note = ""
    if vman is None:
        # a release sncc does not pin (`--engine-version v0.25.1rc1`): the plan keeps it (the checks judge that
        # release, SN4040 says the launch files follow a pin), the arguments are read with the pin running the
        # same vLLM, else the nearest pin (as an image tag's release is, _image_pin)
        pins = ", ".join(p.version for p in adapter.pins)
        read_as, why = _image_pin(adapter, version)
        diags.append(diag(codes.IMPORT_ASSUMED, f"{adapter.label} {version} is not pinned by sncc (pins: {pins}); "
                          f"arguments read against {read_as}" + (f" ({why})" if why else ""), msrc.span(0, 0)))
        unpinned_note = f"not pinned by sncc: arguments read against {read_as}"
        vman = adapter.vllm_manifest(read_as)
        eman = eman or adapter.manifest(read_as)
        if engine_version is None:
            version = read_as
    plugin = eman is not None and eman.engine != vman.engine   # a platform plugin over vLLM (vllm-ascend)
    vlabel = f"vLLM {adapter.pin(read_as).vllm}" + (f" ({pin_note})" if plugin else "")
    extra_choices = eman.parser_choices_added if plugin else {}
    assumed = []
    if engine is None and not image and image_kind is None:
        assumed.append(f"engine {kind}" + (" (Ascend variables or options in the script)" if vendor == "ascend" else ""))
    if image_assumed is not None:
        pass   # said at the image word
    elif engine_version is None and not (tag and version == tag):
        assumed.append(f"release {version} (sncc's default pin of {adapter.label})")
    elif engine_version is None and tag_note:
        assumed.append(f"release {version} (the image tag {main[3].text}: {tag_note})")
    if system is None:
        assumed.append(f"system {guessed_system}" + (f" ({guessed_why})" if guessed_why else ""))

    # --- engine arguments: --config YAML under the command line --------------------------------
    doubled = ""
    if image and len(argv) >= 2 and argv[0].text.rsplit("/", 1)[-1] == VLLM_PROGRAM and argv[1].text == "serve":
        doubled = (f"the entry point of {main[3].text} already is vLLM's server, so the container runs it with "
                   "`vllm serve ...` as its arguments: write only the arguments after the image")
    opts, probs = parse_args(argv, vman, msrc.name, vlabel, extra_choices, doubled) if main else ([], [])
    if main:
        diags += _model_arguments(msrc, main[1], argv, opts, vlabel, adapter.pin(read_as).vllm)
    merged_nodes = 1
    node_files: set[str] = set()
    node_hosts: list = []   # (host-only exports, names its container gets) of each further node's docker run
    first_mask = _final_mask(inline) if boxed else None
    for src, c, words, prog in commands[1:]:
        others, _ = parse_args(words, vman, src.name, vlabel, extra_choices)
        if same_instance(opts, others):
            merged_nodes += 1
            if src.name != msrc.name:
                node_files.add(src.name)
            diags += node_differences(opts, others, src, srcs)
            if boxed and is_container(c):   # the container rules and the device mapping, as for the first node
                at_cmd = min([c.words[0].start] + [w.start for _, w in c.inline_env])
                mine = [(s_, n, w) for s_, n, w, top, pos in all_exports if top == src.name and pos < at_cmd]
                nenv, nhost, nprobs = _node_container(src, c, mine, reader, srcs)
                diags += nprobs
                node_hosts.append((nhost, {n for _, n, _ in nenv}))
                mask = _final_mask(nenv)
                if not nprobs and first_mask is not None and (mask is None or mask[2].text != first_mask[2].text):
                    fsrc, fn, fw = first_mask
                    said = f"host NPUs {mask[2].text}" if mask is not None else "no device mask"
                    diags.append(diag(codes.IMPORT_NODE_DIFFERS, f"this node's container runs on {said} where the "
                                      f"first node's runs on host NPUs {fw.text} (`{fn}`, "
                                      f"{_origin(srcs.get(fsrc.name, fsrc), fw.start)}): the plan has one device mask",
                                      mask[0].span(mask[2].start, mask[2].end) if mask is not None
                                      else src.span(prog.start, c.words[-1].end),
                                      help="one plan has one value per role: give every node's container the same NPUs"))
        else:
            diags.append(diag(codes.IMPORT_MORE_COMMANDS, "a further engine command, not a node of the first one's "
                              "data-parallel instance: not merged into the plan (the first command is imported)",
                              src.span(prog.start, c.words[-1].end)))
    not_in_force(node_files)
    probs += env_file_probs
    prob_src = {msrc.name: msrc}
    yaml_opts: list[Option] = []
    config_srcs: list[SourceFile] = []

    def _same_file(a: str, b: str) -> bool:
        try:
            return a == b or os.path.realpath(a) == os.path.realpath(b)
        except (OSError, ValueError):
            return False

    for c in configs:   # a file given twice (`f.yaml ./f.yaml`) is read once
        if not any(_same_file(c.name, x.name) for x in config_srcs):
            config_srcs.append(c)
    for o in [o for o in opts if o.name == "config"]:
        got = _read_config(str(o.value), os.path.dirname(msrc.name), reader)
        if got is not None and any(_same_file(got.name, c.name) for c in config_srcs):
            continue   # the --config file the user also gave: read once, under the name given
        if got is None:
            probs.append(Problem("unresolved", o.value_at, f"`--config {o.value}`: no such file next to the script",
                                 "pass the YAML file to `sncc import` as well", msrc.name))
        else:
            config_srcs.append(got)
    header = None if _header else _sncc_header_pin(config_srcs)
    if header is not None:   # a tree `sncc build` wrote: its --config YAML names what it was built for
        h_engine, h_version, h_system, h_file = header
        said = f"from the sncc header of {h_file}"
        try:
            pinned = adapter_for(h_engine).pin(h_version) is not None
        except UnknownEngine:
            pinned = False
        take_version = (pinned and engine_version is None and not (tag and version == tag)
                        and (engine is None or engine == h_engine))
        take_system = system is None and _system_vendor(h_system) is not None
        if take_version or take_system:
            return import_sources(sources, system=h_system if take_system else system,
                                  engine=h_engine if take_version else engine,
                                  engine_version=h_version if take_version else engine_version, model=model,
                                  name=name, reader=reader, _version_note=said if take_version else _version_note,
                                  _system_note=said if take_system else "", _header=True)
    for csrc in config_srcs:
        srcs[csrc.name] = csrc
        prob_src[csrc.name] = csrc
        o2, p2 = _yaml_options(csrc, vman, vlabel)
        yaml_opts += o2
        probs += p2
    cli_names = {o.name for o in opts}
    merged = [o for o in yaml_opts if o.name not in cli_names] + opts
    from sncc.importer.plan_keys import rows as _key_rows

    _UNRESOLVED = "unresolved"        # the Problem kind of a value only the running shell knows
    unresolved_keys: dict[tuple[str, ...], str] = {}
    for p in probs:
        src = prob_src.get(p.file, msrc)
        row = _key_rows().get(p.option) if p.kind == _UNRESOLVED and p.option else None
        if row is not None and row.get("how") == "value":
            # an unresolved value never becomes a number: the key is left for the user (`# tp = ?`)
            key = row["plan"].split(".")[-1]
            unresolved_keys[tuple(row["plan"].split("."))] = f"unresolved: {p.message.split(': ', 1)[-1]} ({_origin(src, p.at[0])}); write it"
            p = Problem(p.kind, p.at, p.message, f"the plan leaves `{key}` unset (`# {key} = ?`) for you to write, "
                        "and the device count with it when it is a parallel size", p.file, p.option)
        diags.append(diag(_PROBLEM_CODES[p.kind], p.message, at(src, p.at), help=p.help or None))

    # --- plan values ---------------------------------------------------------------------------
    blocks: dict[str, dict] = {}

    def put(path: tuple[str, ...], value, comment: str) -> None:
        block, *rest = path
        block = "serve" if block == "role" else block
        d = blocks.setdefault(block, {})
        for k in rest[:-1]:
            d = d.setdefault(k, {})
        d[rest[-1]] = Value(value, comment)

    for path, why in unresolved_keys.items():
        put(path, UNRESOLVED, why)
    # the positional model, else `--model` (vLLM's serve overrides `--model` with the positional)
    model_opt = next((o for o in merged if o.name == "model" and not o.written.startswith("-")),
                     next((o for o in merged if o.name == "model"), None))
    model_text = str(model_opt.value) if model_opt else ""
    unknown = _unknown_choices(system, model, model_text, os.path.dirname(msrc.name))
    if unknown:   # an id the catalog does not know: no plan is written for it (SN2008, as `check` says it)
        return ImportResult("", diags + unknown, srcs)
    kept: list[str] = []
    built_quant = _built_quant(config_srcs, reader)
    checkpoint = _checkpoint_reader(model_text, os.path.dirname(msrc.name))
    spec_methods = dict(adapter.data.get("speculative_methods", {}))
    connectors = {c.class_name: c for c in map(adapter.connector, adapter.data.get("connectors", {})) if c is not None}
    by_name: dict[str, tuple[Option, list]] = {}
    for o in merged:
        src = srcs.get(o.file, msrc)
        if looks_like_secret(_shown(o.value)):   # SN2007's rule: a credential never enters the plan
            spelled = o.written.split("=")[0] or "--" + o.name
            kept.append(f"{spelled} <value not copied: a credential>  # {_origin(src, o.key[0])}")
            diags.append(diag(codes.IMPORT_SECRET_NOT_COPIED, f"`{spelled}` holds a credential: its value is not "
                              "copied into the plan", at(src, o.value_at),
                              help="pass it to the servers from their environment, never from the plan"))
            continue
        try:
            vals = plan_values(o, model_text, spec_methods, connectors, adapter=adapter, checkpoint=checkpoint,
                               built_quant=built_quant)
        except Undecided as e:
            path = tuple(_key_rows()[o.name]["plan"].split("."))
            spelled = o.written.split("=")[0] or "--" + o.name
            put(path, UNRESOLVED, f"{_origin(src, o.key[0])}: {spelled} {o.value} does not say which format; write it")
            diags.append(diag(codes.IMPORT_QUANT_UNDECIDED, f"`{spelled} {o.value}` does not say the weight format: "
                              f"`{path[-1]}` left unset (`# {path[-1]} = ?`)",
                              at(src, (o.key[0], max(o.key[1], o.value_at[1]))),
                              help=f"write `{path[-1]} = ...` in the plan's model block (the format the checkpoint's "
                                   "config.json quantization_config holds), or import a local checkpoint folder",
                              notes=[str(e)], path=path))
            continue
        except Unrepresented as e:
            spelled = o.written.split("=")[0] or "--" + o.name
            kept.append(f"{_as_written(src, o)}  # {_origin(src, o.key[0])}")
            diags.append(diag(codes.IMPORT_UNREPRESENTED, f"`{spelled}` not imported: {e}", at(src, o.key),
                              help="kept as a comment in the plan; `sncc build` will not write it"))
            continue
        by_name[o.name] = (o, vals)
        for key in getattr(vals, "dropped", ()):
            kept.append(f"{o.written.split('=')[0] or '--' + o.name} {key}: {_shown(o.value.get(key))}  # {_origin(src, o.key[0])}")
            diags.append(diag(codes.IMPORT_UNREPRESENTED, f"`--{o.name}` key `{key}` not imported: no plan key",
                              at(src, o.value_at), help="kept as a comment in the plan; `sncc build` will not write it"))
        for path, v, note in vals:
            if path == ("model", "id"):
                continue
            put(path, v, _origin(src, o.key[0]) + (f" ({note})" if note else ""))

    # model: a catalog alias, else a local path (weights), else the text as written
    mblock: dict = {}
    if model is not None:
        mid, mnote = model, "given with --model"
    else:
        mid, mnote = model_text or "unknown", ""
        for cand in _model_candidates(model_text):
            try:
                arch = catalog.model(cand)
            except (KeyError, LookupError):
                continue
            # a repository id the catalog lists (`Qwen/Qwen3-32B`) stays as written: it is what the
            # script's engine loads and, without --served-model-name, the name its clients send
            mid = model_text if cand == model_text and "/" in model_text else arch.id
            mnote = (f"catalog model `{arch.id}`" if mid != arch.id else f"catalog model for `{model_text}`") + (", " + _origin(srcs.get(model_opt.file, msrc), model_opt.key[0])
                                                            if model_opt else "")
            break
        else:
            where = srcs.get(model_opt.file, msrc) if model_opt else msrc
            if not model_text:
                default = getattr(vman.arg("--model"), "default", None) if vman.has_arg("--model") else None
                serves = f"its default model `{default}`" if default else "its default model"
                cmd_span = (msrc.span(main[1].words[0].start, main[2][-1].end if main[2] else main[1].words[-1].end)
                            if main else msrc.span(0, 0))
                diags.append(diag(codes.IMPORT_ASSUMED, f"no model given: the command names no model, so {vlabel} "
                                  f"serves {serves}; the plan's model is `unknown`", cmd_span,
                                  help="write the model after `vllm serve` (or `--model` of the api_server), or "
                                       "name the catalog model with `sncc import --model ID`", severity="warning"))
            else:
                diags.append(diag(codes.IMPORT_ASSUMED, f"`{model_text}` is no model in sncc's catalog: written as it is",
                                  where.span(*model_opt.key) if model_opt else msrc.span(0, 0),
                                  help="name the catalog model with `--model ID`, or set `weights` to the checkpoint directory"))
    mblock[""] = Value(mid, mnote)
    if model_text.startswith(("/", "./", "../", "~")):
        mblock["weights"] = Value(model_text, _origin(srcs.get(model_opt.file, msrc), model_opt.key[0]))
    elif model_opt is not None and "/" in model_text and mid != model_text:
        # a repository the catalog knows by its base model's name (`vllm-ascend/DeepSeek-V3.2-W8A8` →
        # deepseek-v3.2), or any repository under a `--model` id: the servers load that repository, not
        # the catalog model's own, and without --served-model-name vLLM registers the model argument
        # (`served_model_name` defaults to `model`)
        origin = _origin(srcs.get(model_opt.file, msrc), model_opt.key[0])
        mblock["weights"] = Value(model_text, origin + " (the repository the script loads)")
        mblock["served_name"] = Value(model_text, "engine default of " + vlabel + ": the model argument (no --served-model-name)")
    mblock.update(blocks.pop("model", {}))
    if "max_model_len" not in mblock:
        mblock["max_model_len"] = Value("auto", f"engine default of {vlabel}: from config.json "
                                                "(max_position_embeddings × rope factor)")
        where = main[3] if main else None
        span = msrc.span(where.start, main[2][-1].end if main and main[2] else where.end) if where else msrc.span(0, 0)
        diags.append(diag(codes.IMPORT_DEFAULT_MAX_MODEL_LEN, "no `--max-model-len`: the engine derives it from config.json",
                          span, help="add `--max-model-len N` with the longest request you serve"))
    blocks["model"] = mblock
    try:
        arch = catalog.model(mid)
    except (KeyError, LookupError):
        arch = None
    if "quant" not in mblock and built_quant is not None and not any(o.name == "quantization" for o in merged):
        # no --quantization: the build wrote none for the plan's quant (CUDA W8A8 is read from the
        # checkpoint), which its manifest records; a quant the model runs unquantized anyway is left out
        q, mpath = built_quant
        native = (getattr(arch, "checkpoint_dtype", None) or "bf16") if arch is not None else "bf16"
        if q != native and q in adapter.quants_of(None).quants:
            mblock["quant"] = Value(q, f"from the {os.path.basename(mpath)} of the build: {adapter.label} takes "
                                       "no --quantization for it (the method is read from the checkpoint)")

    auto = adapter.auto_detected_method(version)
    if "quant" not in mblock and auto is not None and not any(o.name == "quantization" for o in merged):
        # no --quantization on a release that detects a ModelSlim checkpoint itself: the servers
        # run it quantized; the model path's spelling says which format (as for `--quantization ascend`)
        # ModelSlim's own spelling only (`-W8A8`, upper case after a dash or underscore): an
        # llm-compressor repository (`...-quantized.w4a8`) is compressed-tensors, read from its
        # config.json, and takes no `--quantization ascend`
        import re

        spelled = {m.lower() for m in re.findall(r"(?<=[-_])(W\d+A\d+)(?![A-Za-z0-9])", model_text)}
        named = [q for q in adapter.quants_of(auto).quants if q in spelled]
        if named:
            mblock["quant"] = Value(named[0], f"no --quantization: {adapter.label} {version} applies `{auto}` "
                                              "itself to a ModelSlim checkpoint (quant_model_description.json); "
                                              f"`{named[0]}` from the model name")

    if "quant" not in mblock and arch is not None and not any(o.name == "quantization" for o in merged):
        named_dtype = _name_dtype(model_text)
        if named_dtype is not None and named_dtype[1] != (getattr(arch, "checkpoint_dtype", None) or "bf16"):
            mblock["quant"] = Value(named_dtype[1], f"no --quantization: the checkpoint `{model_text}` is "
                                                    f"`{named_dtype[0]}` by its name (the catalog model's own "
                                                    f"checkpoint is {getattr(arch, 'checkpoint_dtype', None) or 'bf16'})")

    built = _built_deployment(config_srcs, reader)
    kvo = next((o for o in merged if o.name == "kv-cache-dtype"), None)
    kvd = built[0].get("kv_cache_dtype") if built is not None else None
    if (isinstance(kvd, str) and "dtype" not in blocks.get("kv_cache", {}) and (kvo is None or kvo.value == "auto")
            and _kv_dtype_known(kvd)):
        # `--kv-cache-dtype auto` (the build writes `auto` where the checkpoint's dtype is the plan's,
        # an INT8 KV cache of W8A8 weights on Ascend): the manifest records the plan's dtype
        native = (getattr(arch, "checkpoint_dtype", None) or "bf16") if arch is not None else "bf16"
        if kvd != native:
            blocks.setdefault("kv_cache", {})["dtype"] = Value(kvd, f"from the {os.path.basename(built[1])} of the build "
                                                                 "(the build writes `kv-cache-dtype: auto` for it)")

    serve = blocks.setdefault("serve", {})
    tp = serve.get("tp", Value(1)).value
    dp = serve.get("dp", Value(1)).value
    pp = serve.get("pp", Value(1)).value
    unknown = [k for k, v in (("tp", tp), ("dp", dp), ("pp", pp)) if v is UNRESOLVED]
    if unknown:
        devices = None
        role: dict = {"devices": Value(UNRESOLVED, f"tp × dp × pp, unknown while {' and '.join(unknown)} "
                                                   f"{'is' if len(unknown) == 1 else 'are'} unresolved; write it")}
    else:
        devices = int(tp) * int(dp) * int(pp)
        role = {"devices": Value(devices, f"tp × dp × pp = {tp} × {dp} × {pp}")}
    role.update(serve)
    moe = arch is None or bool(getattr(arch, "n_routed_experts", 0))
    if "expert_parallel" not in role and moe and devices is not None and devices > 1:
        role["expert_parallel"] = Value(False, f"engine default of {vlabel}: no --enable-expert-parallel")
    spec = role.get("speculative")
    if isinstance(spec, dict) and "acceptance" not in spec:
        from sncc.importer.plan_keys import speculative_defaults

        sd = speculative_defaults()
        o = by_name["speculative-config"][0]
        method = spec.get("method", Value("mtp")).value
        if method in sd.get("acceptance_methods", ()):
            spec["acceptance"] = Value(sd["acceptance_when_unstated"], f"assumed, measure it: {sd['acceptance_source']}")
            diags.append(diag(codes.IMPORT_ASSUMED, f"no measured acceptance rate in the script: "
                              f"`acceptance = {sd['acceptance_when_unstated']}` assumed ({sd['acceptance_source']})",
                              at(srcs.get(o.file, msrc), o.key), help="replace it with the acceptance your drafts reach"))
        else:   # no sourced default for this drafter (ngram): left for the user, `check` asks for it (SN2005)
            why = f"no sourced default for `method = {method}`"
            spec["acceptance"] = Value(UNRESOLVED, f"{why}: measure it and write it")
            diags.append(diag(codes.IMPORT_ASSUMED, f"no measured acceptance rate in the script, and sncc has {why}: "
                              "`acceptance` left unset (`# acceptance = ?`)", at(srcs.get(o.file, msrc), o.key),
                              help="write the acceptance your drafts reach (measure it with `vllm bench serve`); "
                                   "the plan needs it"))
    from sncc.importer.plan_keys import engine_defaults

    sysid = system or guessed_system
    try:
        chip = catalog.chip(catalog.system(sysid).chip)
    except (KeyError, LookupError):
        chip = None
    defaults = engine_defaults(vendor, chip)
    cp = role.get("chunked_prefill")
    mml = mblock.get("max_model_len")
    if cp is not None and cp.value == "off" and "max_num_batched_tokens" not in role:
        # vLLM without chunked prefill: the step budget is max(max_model_len, the usage default), at most
        # max_num_seqs × max_model_len (EngineArgs._set_default_max_num_seqs_and_batched_tokens_args);
        # max_model_len `auto` is the length the engine derives from the model's positions
        if isinstance(mml.value, int):
            n, how = mml.value, "max_model_len"
        else:
            from sncc.facts.lengths import engine_default_max_model_len

            rope = mblock.get("rope_scaling")
            n, how = engine_default_max_model_len(arch, None, rope.value if rope is not None else None) \
                if arch is not None else (0, "")
            how = f"max_model_len {n} ({how})"
        if n:
            usage, _ = defaults["max_num_batched_tokens"]
            seqs = role["max_num_seqs"].value if "max_num_seqs" in role else defaults["max_num_seqs"][0]
            budget = max(n, usage)
            if isinstance(seqs, int):
                budget = min(seqs * n, budget)
            role["max_num_batched_tokens"] = Value(budget, f"engine default of {vlabel} without chunked prefill: "
                                                           + (how if budget == n else f"the usage default {usage}, "
                                                              f"above {how}" if budget == usage else
                                                              f"max_num_seqs × max_model_len"))
    for key in ("max_num_seqs", "max_num_batched_tokens"):
        if key not in role:
            v, why = defaults[key]
            role[key] = Value(v, f"engine default of {vlabel} on {sysid} ({why})")
    if cp is not None and cp.value == "on":
        role["chunked_prefill"] = Value(role["max_num_batched_tokens"].value, cp.comment + " (chunks up to the step budget)")
    if "block_size" not in blocks.get("kv_cache", {}):
        v, why = defaults["block_size"]
        blocks.setdefault("kv_cache", {})["block_size"] = Value(v, f"engine default of {vlabel} ({why})")
    if "chunked_prefill" not in role:
        budget = role["max_num_batched_tokens"].value
        role["chunked_prefill"] = Value(budget, f"engine default of {vlabel}: chunked prefill on (vLLM V1), "
                                                "chunks up to the step budget")
    if "memory_utilization" not in role:
        mu = vman.arg("gpu-memory-utilization").default if vman.has_arg("gpu-memory-utilization") else None
        if mu is not None:
            role["memory_utilization"] = Value(mu, f"engine default of {vlabel}")
    blocks["serve"] = role
    vnote = image_vnote or (_version_note if engine_version else f"the image tag {main[3].text}"
                            + (f": {tag_note}" if tag_note else "")
                            if tag and version == tag else "assumed: sncc's default pin")
    blocks["engine"] = {"": Value(kind), "version": Value(version, unpinned_note or vnote)}
    blocks["hardware"] = {"system": Value(system or guessed_system, _system_note if system
                                          else "assumed: the script names no hardware"
                                          + (f"; {guessed_why}" if guessed_why else ""))}
    if merged_nodes > 1:
        blocks["hardware"]["nodes"] = Value(merged_nodes, f"{merged_nodes} commands of one data-parallel instance")
    dpl = by_name.get("data-parallel-size-local") if merged_nodes == 1 else None
    if dpl is not None and dp is not UNRESOLVED and isinstance(dpl[0].value, int) and 0 < dpl[0].value < int(dp):
        nodes = -(-int(dp) // dpl[0].value)
        blocks["hardware"]["nodes"] = Value(nodes, f"dp {dp} / {dpl[0].value} local ranks per node, "
                                                   + _origin(srcs.get(dpl[0].file, msrc), dpl[0].key[0]))

    # --- environment ---------------------------------------------------------------------------
    known = set(runtime_vars(vendor))
    for m in (vman, eman):
        if m is not None:
            known |= set(m.env_vars)
    nics = set(nic_vars(vendor))
    env: dict = {}
    sourced_names = set(srcs) - {s.name for s in sources} - {s.name for s, _, _ in from_files}
    # `--data-parallel-rank R`: vLLM runs this one DP rank in the process (external load balancing,
    # data_parallel_size_local = 1), so a device mask of tp × pp devices is that rank's slice, not the
    # node's devices the plan's mask stands for (`sncc build` gives each rank its slice itself)
    ext_rank = next((o for o in merged if o.name == "data-parallel-rank"), None)
    per_rank = (int(tp) * int(pp) if ext_rank is not None and UNRESOLVED not in (tp, dp, pp) and int(dp) > 1
                else None)
    # variables the engine commands expand themselves (`--port $SERVER_PORT`): script variables, exported or not
    expanded = {m.group(1) for csrc, c, cw, _ in commands if c.words
                for m in _VAR_REF.finditer(csrc.text[c.words[0].start:(cw[-1].end if cw else c.words[-1].end)])}
    passed = {n for _, n, _ in inline}
    further = [(h, got) for hs, got in node_hosts for h in hs]   # a further node's docker run: its own host side
    for (src, n, w), passed_to in [(h, passed) for h in host_only] + further:   # exported on the host, never passed
        if n in passed_to or n in expanded or (n not in known and n not in DEVICE_VARS):
            continue
        diags.append(diag(codes.IMPORT_HOST_ENV_NOT_PASSED, f"`{n}={w.text}` is set in the shell that runs "
                          f"`{main[1].words[0].text} run`, but the container does not get it (no `-e {n}`): "
                          "the engine runs without it; not imported into the plan's env", src.span(w.start, w.end),
                          help=f"pass it with `-e {n}` (or `-e {n}=...`) before the image, or remove the export"))
    for src, n, w in exports + inline:
        how = mask_how.get((src.name, n, w.start))
        if per_rank is not None and n in DEVICE_VARS and not w.unresolved and _mask_size(w.text) == per_rank:
            diags.append(diag(codes.IMPORT_ASSUMED, f"`{n}={w.text}` is the device slice of this one server: "
                              f"`--data-parallel-rank {ext_rank.value}` runs one DP rank per process (external DP, "
                              f"tp × pp = {per_rank} devices of dp {dp}); the plan's mask names a node's devices and "
                              "`sncc build` gives each rank its slice: not imported", src.span(w.start, w.end),
                              help="to pin the node's devices, write `env { " + n + " = \"...\" }` with all of them"))
            continue
        origin = _origin(src, w.start) + (f" ({how})" if how else "")
        if w.unresolved and src.name in sourced_names:
            continue   # a sourced file's per-node address (`sncc build`'s `${NODE_0_IP}`): set at run time
        if not w.unresolved and len(w.text) > 2 and w.text[0] == "<" and w.text[-1] == ">":
            w = Word(w.text, w.start, w.end, f"`{w.text}` is a placeholder of the source")
        if not w.unresolved and n not in DEVICE_VARS and looks_like_secret(w.text):   # SN2007's rule: never copied into the plan
            diags.append(diag(codes.IMPORT_SECRET_NOT_COPIED, f"`{n}` holds a credential: its value is not copied "
                              "into the plan", src.span(w.start, w.end),
                              help=f"export `{n}` in the shell that starts the servers (the launch scripts "
                                   "inherit it); the plan names it in a comment only", path=("env", n)))
            env[n] = Value(NOT_COPIED, origin)
            continue
        if n not in known and n not in DEVICE_VARS and n in expanded:
            continue   # the script's own variable (`--port $SERVER_PORT`): its value is in the argument it gives
        if n not in known and n not in DEVICE_VARS:   # one diagnostic per option: no SN8005 for its value as well
            older = last_read(adapter, version, n)   # an older release's variable, still in old recipes
            diags.append(diag(codes.IMPORT_UNREAD_VARIABLE, f"`{n}` is read by no engine or runtime library sncc knows "
                              f"({vlabel}, CANN/HCCL/NCCL, huggingface_hub: sncc/engines/cann_env.json)"
                              + (f"; last read by {older[0]} of the releases sncc has manifests for ({older[1]})"
                                 if older else ""),
                              src.span(w.start, w.start + len(n)),
                              help="remove it: the pinned release reads it no more" if older
                              else "remove it, or check its spelling", path=("env", n)))
        elif w.unresolved:
            why, hint = w.unresolved, None
            if why == f"`${n}` is not set before this line":
                # `X=/lib/a.so:$X`: the script adds to what the shell that runs it holds, not a missing assignment
                why = (f"extends the value `{n}` inherits from the shell that runs the script (`${n}`), which "
                       "the import cannot know: not imported")
                hint = f"write the value the servers need in the plan's `env {{ {n} = \"...\" }}`"
            diags.append(diag(codes.IMPORT_UNRESOLVED, f"`{n}`: {why}", src.span(w.start, w.end), help=hint))
        if w.unresolved:
            continue
        if n in nics:
            blocks.setdefault("hosts", {})["nic"] = Value(w.text, f"{n}, {origin}")
            continue
        env[n] = Value(w.text, origin)
    if env:
        blocks["env"] = env
    w_in, w_out, fitted = BENCH_RANDOM_INPUT, BENCH_RANDOM_OUTPUT, ""
    mml_v = mblock.get("max_model_len")
    mml_v = mml_v.value if mml_v is not None else None
    if isinstance(mml_v, int) and not isinstance(mml_v, bool) and 1 < mml_v < w_in + w_out:
        # the assumed requests must fit the script's own length (else SN5008 blames the deployment)
        w_out = min(w_out, mml_v // 2)
        w_in = mml_v - w_out
        fitted = f", shortened to {w_in} in to fit max_model_len {mml_v}" if w_out == BENCH_RANDOM_OUTPUT else \
            f", shortened to {w_in} in, {w_out} out to fit max_model_len {mml_v}"
    blocks["workload"] = {
        "input": {"mean": Value(w_in), "max": Value(w_in), "dist": Value("fixed")},
        "output": {"mean": Value(w_out), "max": Value(w_out), "dist": Value("fixed")},
    }
    if assumed:
        diags.append(diag(codes.IMPORT_ASSUMED, "the script does not say: assumed " + ", ".join(assumed),
                          msrc.span(main[3].start, main[3].end) if main else msrc.span(0, 0),
                          help="choose with `sncc import --system ID --engine KIND --engine-version V`"))
    files = ", ".join(dict.fromkeys(os.path.basename(s.name) for s in list(scripts) + config_srcs))
    header = [f"imported by `sncc import` from {files} (never executed)",
              "workload: not in a launch script; `vllm bench serve` random-dataset defaults (1024 in, 128 out)"
              + fitted]
    plan_name = name or os.path.splitext(os.path.basename(msrc.name))[0] or "imported"
    text = plan_text(plan_name, blocks, header, kept)
    from sncc.fmt import FormatRefused, format_source

    try:
        text = format_source(SourceFile(plan_name + ".sn", text))
    except FormatRefused:   # a value the grammar refuses: keep the raw text, `check` reports it
        pass
    diags.sort(key=Diagnostic.sort_key)
    return ImportResult(text, diags, srcs, merged, kind, version)


def import_files(paths: list[str], **kw) -> ImportResult:
    """:func:`import_sources` of files on disk (UTF-8), ``-`` being stdin (named ``<stdin>``; the
    files it names are read relative to the current folder).  Raises OSError when a file cannot
    be read."""
    import sys

    from sncc.source import MAX_FILE_BYTES, read_bytes_limited

    def read(p: str) -> SourceFile:
        if p == "-":
            data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
            if len(data) > MAX_FILE_BYTES:
                import errno

                raise OSError(errno.EFBIG, f"larger than {MAX_FILE_BYTES / 2**20:g} MiB, the most sncc reads", "<stdin>")
            return SourceFile("<stdin>", data.decode("utf-8", errors="replace"))
        return SourceFile(p, read_bytes_limited(p).decode("utf-8", errors="replace"))

    return import_sources([read(p) for p in paths], **kw)

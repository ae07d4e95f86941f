"""Find the engine command in a script and parse its arguments against a release's manifest.

Engine commands: ``vllm serve [MODEL] ...``, ``python[3] -m vllm.entrypoints.openai.api_server
... --model MODEL``, and ``docker run [OPTIONS] vllm/vllm-openai[:TAG] ARGS...`` (also ``podman``):
the image's entry point is vLLM's OpenAI server (``ENTRYPOINT ["python3", "-m",
"vllm.entrypoints.openai.api_server"]`` in vLLM's ``docker/Dockerfile``, ``vllm-openai`` stage,
read at 0000977e; ``vllm serve`` in later images), so the words after the image are its
arguments; with ``--entrypoint``, the entry point and those words are read as a command.  Arguments are resolved through :class:`sncc.engines.manifest.Manifest` (every
spelling: ``--x v``, ``--x=v``, aliases such as ``-tp``, ``--no-x``); their values are typed by the
manifest's ``type`` and checked against its ``choices``.

Shapes: :class:`Option` = the canonical dashed name, the typed value, the span of the option word
(``key_span``) and of its value (``value_span``), as (start, end) offsets of the input file.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass

from sncc.importer.shell import Command, Word

#: the program of ``vllm serve`` (a command name, not an engine kind)
VLLM_PROGRAM = "vllm"
#: module paths of vLLM's OpenAI server entry point (``python -m ...``)
API_SERVER_MODULES = ("vllm.entrypoints.openai.api_server",)


@dataclass(frozen=True)
class Option:
    """One engine argument as the script gives it: ``name`` (manifest's dashed name), ``value``
    (typed: bool, int, float, str, list, dict), ``key`` / ``value_at`` its (start, end) offsets,
    ``file`` the input file it was read in, ``line`` its 1-based line there."""

    name: str
    value: object
    key: tuple[int, int]
    value_at: tuple[int, int]
    file: str
    written: str = ""


@dataclass(frozen=True)
class Problem:
    """A located problem found while parsing: ``kind`` ∈ ``unknown``, ``bad-value``, ``unresolved``;
    ``at`` (start, end) offsets; ``message`` and ``help`` for the diagnostic."""

    kind: str
    at: tuple[int, int]
    message: str
    help: str = ""
    file: str = ""
    #: the manifest's dashed name of the argument whose value it is about ("" when none)
    option: str = ""


#: container runners whose ``run`` starts an image (``docker run``, ``podman run``)
CONTAINER_RUNNERS = ("docker", "podman")
#: vLLM's OpenAI server image, with any registry prefix, tag or digest (``vllm/vllm-openai:v0.11.0``)
VLLM_IMAGE = re.compile(r"^(?:[\w.-]+(?::\d+)?/)*vllm/vllm-openai(?:[:@][\w.:-]+)?$")


def image_tag(word: str) -> str | None:
    """The vLLM release an image word names (``vllm/vllm-openai:v0.11.0`` -> ``0.11.0``), or None
    (no tag, ``latest``, a digest, or not vLLM's image)."""
    if not VLLM_IMAGE.match(word) or "@" in word:
        return None
    tag = word.rsplit("/", 1)[-1].partition(":")[2]
    return tag[1:] if tag[:1] == "v" and tag[1:2].isdigit() else tag if tag[:1].isdigit() else None


def _is_engine_command(ws: list[Word]) -> bool:
    """``ws`` starts with ``vllm serve`` or ``python[3] -m vllm.entrypoints.openai.api_server``."""
    if len(ws) >= 2 and ws[0].text.rsplit("/", 1)[-1] == VLLM_PROGRAM and ws[1].text == "serve":
        return True
    return (len(ws) >= 3 and ws[0].text.rsplit("/", 1)[-1].startswith("python") and ws[1].text == "-m"
            and ws[2].text in API_SERVER_MODULES)


def _image_index(ws: list[Word]) -> int | None:
    """The index of the image word of ``docker run [OPTIONS] IMAGE [COMMAND...]`` (also ``podman``):
    vLLM's OpenAI image, else the word right before an explicit engine command (``docker run ...
    quay.io/ascend/vllm-ascend:v0.11.0 vllm serve MODEL ...``: the container's command replaces the
    image's own ``CMD``); None for any other command."""
    if len(ws) < 3 or ws[0].text.rsplit("/", 1)[-1] not in CONTAINER_RUNNERS or ws[1].text != "run":
        return None
    for i, w in enumerate(ws[2:], start=2):
        if VLLM_IMAGE.match(w.text):
            return i
        if not w.text.startswith("-") and _is_engine_command(ws[i + 1:]):
            return i
    return None


def _container_argv(ws: list[Word]) -> tuple[list[Word], Word] | None:
    """``docker run ... vllm/vllm-openai ARGS`` or ``docker run ... IMAGE vllm serve ARGS``: (ARGS,
    the image word), or None."""
    at = _image_index(ws)
    if at is None:
        return None
    w = ws[at]
    entry = None
    for i in range(2, at):
        if ws[i].text.startswith("--entrypoint"):
            entry = ws[i].text.partition("=")[2] or (ws[i + 1].text if i + 1 < len(ws) else "")
    if not VLLM_IMAGE.match(w.text):           # another image: its command is the engine command
        found = engine_argv(Command(tuple(ws[at + 1:]), ()))
        return found if found is None else (found[0], w)
    if entry is not None:        # the image's entry point replaced: read ENTRY ARGS as a command
        found = engine_argv(Command((Word(entry, w.start, w.end),) + tuple(ws[at + 1:]), ()))
        return found if found is None else (found[0], w)
    return ws[at + 1:], w


#: ``docker run`` / ``podman run`` options that set one variable in the container (``-e NAME=value``,
#: ``--env NAME=value``, ``--env=NAME=value``; Docker's ``docker container run`` reference)
ENV_OPTIONS = ("-e", "--env")


def container_env(cmd: Command) -> list[tuple[str, Word]]:
    """The ``(NAME, value word)`` pairs a ``docker run … vllm/vllm-openai`` command sets with ``-e`` /
    ``--env`` before the image, in order; ``[]`` for any other command.  ``-e NAME`` with no value
    passes the host's value through: its word is unresolved, with that reason.  ``--env-file`` names
    a separate file: :func:`container_env_files` gives its words, :func:`env_file_assignments` reads it."""
    ws = list(cmd.words)
    if _container_argv(ws) is None:
        return []
    out: list[tuple[str, Word]] = []
    i, image = 2, _image_index(ws)
    while i < image:
        w, text = ws[i], ws[i].text
        item = None
        if text in ENV_OPTIONS and i + 1 < len(ws):
            item, i = ws[i + 1], i + 1
        elif text.startswith("--env=") or (text.startswith("-e") and not text.startswith("--") and len(text) > 2):
            val = text.partition("=")[2] if text.startswith("--env=") else text[2:]
            item = Word(val, w.start, w.end, w.unresolved)
        if item is not None:
            name, eq, val = item.text.partition("=")
            if name and eq:
                out.append((name, Word(val, item.start, item.end, item.unresolved)))
            elif name:
                out.append((name, Word("", item.start, item.end, f"`-e {name}` " + _host_value(name))))
        i += 1
    return out


def is_container(cmd: Command) -> bool:
    """``cmd`` runs the engine in a container (``docker run … IMAGE [vllm serve] ARGS``): its
    environment is what the command passes the container, not the shell's exports."""
    return _container_argv(list(cmd.words)) is not None


def passes_host_value(name: str, w: Word) -> bool:
    """``w`` is the value of ``-e NAME`` (or a ``NAME`` line of an env file) with no value: the
    docker client's own ``NAME`` passed into the container (:func:`container_env`)."""
    return w.unresolved.endswith(_host_value(name))


def _host_value(name: str) -> str:
    return f"passes the host's `{name}` into the container"


def container_env_files(cmd: Command) -> list[Word]:
    """The path words of a ``docker run … vllm/vllm-openai`` command's ``--env-file PATH`` /
    ``--env-file=PATH`` options before the image, in order; ``[]`` for any other command."""
    ws = list(cmd.words)
    if _container_argv(ws) is None:
        return []
    out: list[Word] = []
    i, image = 2, _image_index(ws)
    while i < image:
        w = ws[i]
        if w.text == "--env-file" and i + 1 < len(ws):
            out.append(ws[i + 1])
            i += 1
        elif w.text.startswith("--env-file="):
            path = w.text.partition("=")[2]
            out.append(Word(path, w.end - len(path), w.end, w.unresolved))
        i += 1
    return out


#: an Ascend NPU's device file (``/dev/davinci<N>``; the control devices ``/dev/davinci_manager``,
#: ``/dev/devmm_svm``, ``/dev/hisi_hdc`` are no NPU), as vllm-ascend's docker commands pass them
#: (https://docs.vllm.ai/projects/ascend/en/v0.11.0/tutorials/multi_npu_moge.html)
_NPU_DEVICE = re.compile(r"/dev/davinci(\d+)")


def _gpu_ids(value: str) -> list[str] | None:
    """The GPU indices a ``--gpus`` value exposes, or None for all of them or ids that are no index
    (UUIDs).  Docker reads the value as one CSV record (docker/cli opts/gpus.go): ``all``, a count
    ``N`` / ``count=N`` (the first N, ``0,...,N-1``: moby daemon/nvidia_linux.go countToDevices),
    ``device=0,2`` (quoted ``'"device=0,2"'`` to keep the comma in the field); no count and no
    device is one GPU."""
    import csv

    try:
        fields = next(csv.reader([value]))
    except (csv.Error, StopIteration):
        return None
    count, ids = 1, None
    for f in fields:
        key, eq, val = f.partition("=")
        if not eq or key == "count":
            c = val if eq else key
            if c == "all":
                return None
            if not c.isdigit():
                return None
            count = int(c)
        elif key == "device":
            ids = [x.strip() for x in val.split(",") if x.strip()]
    if ids is not None:
        return ids if all(x.isdigit() for x in ids) else None
    return [str(i) for i in range(count)]


def container_devices(cmd: Command) -> list[tuple[str, Word, str]]:
    """The device masks a ``docker run`` engine command gives its container before the image, as
    ``(variable, mask word, how)``: ``ASCEND_RT_VISIBLE_DEVICES`` for its ``--device /dev/davinciN``
    options (the host's NPU ids, ``--device HOST[:CONTAINER[:PERMS]]``), ``CUDA_VISIBLE_DEVICES``
    for ``--gpus`` (:func:`_gpu_ids`); the word spans the options, ``how`` names them.  ``[]`` for
    any other command, or when the options give every device (``--gpus all``) or no index."""
    ws = list(cmd.words)
    if _container_argv(ws) is None:
        return []
    npus: list[tuple[int, Word]] = []
    gpus: list[tuple[list[str] | None, Word]] = []
    i, image = 2, _image_index(ws)
    while i < image:
        w, text = ws[i], ws[i].text
        opt, eq, val = text.partition("=")
        if opt in ("--device", "--gpus") and not w.unresolved:
            vw = w if eq else (ws[i + 1] if i + 1 < image else None)
            i += 0 if eq else 1
            if vw is not None and not vw.unresolved:
                val = val if eq else vw.text
                if opt == "--device":
                    m = _NPU_DEVICE.fullmatch(val.split(":")[0])
                    if m:
                        npus.append((int(m.group(1)), Word("", w.start, vw.end)))
                else:
                    gpus.append((_gpu_ids(val), Word("", w.start, vw.end)))
        i += 1
    out = []
    if npus:
        ids = sorted({n for n, _ in npus})
        out.append(("ASCEND_RT_VISIBLE_DEVICES", Word(",".join(map(str, ids)), npus[0][1].start, npus[-1][1].end),
                    "the NPUs `docker run --device /dev/davinciN` gives the container"))
    if gpus and all(g is not None for g, _ in gpus):
        ids = sorted({x for g, _ in gpus for x in g}, key=int)
        out.append(("CUDA_VISIBLE_DEVICES", Word(",".join(ids), gpus[0][1].start, gpus[-1][1].end),
                    "the GPUs `docker run --gpus` gives the container"))
    return out


def env_file_assignments(text: str) -> list[tuple[str, Word]]:
    """``(NAME, value word)`` of a ``docker run --env-file`` file, in order, each word at its offsets
    in ``text``.  Docker's format: one ``NAME=value`` per line, the value verbatim to the end of the
    line (no quote removal, no expansion); blank lines and lines starting with ``#`` are skipped; a
    line ``NAME`` alone passes the host's value through (an unresolved word with that reason)
    (https://docs.docker.com/reference/cli/docker/container/run/#env)."""
    out: list[tuple[str, Word]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        start = pos
        pos += len(line)
        body = line.rstrip("\r\n")
        lead = len(body) - len(body.lstrip())
        stripped = body.strip()
        if not stripped or stripped.startswith("#"):
            continue
        name, eq, val = body[lead:].partition("=")
        name = name.strip()
        if not name:
            continue
        if eq:
            v0 = start + lead + len(body[lead:]) - len(val)
            out.append((name, Word(val, v0, v0 + len(val))))
        else:
            out.append((name, Word("", start + lead, start + len(body),
                                   f"`{name}` alone in an env file " + _host_value(name))))
    return out


def engine_argv(cmd: Command) -> tuple[list[Word], Word] | None:
    """The argument words after the engine program and the program's first word (for a container,
    the image word), or None when ``cmd`` is not an engine command."""
    ws = list(cmd.words)
    boxed = _container_argv(ws)
    if boxed is not None:
        return boxed
    if len(ws) >= 2 and ws[0].text.rsplit("/", 1)[-1] == VLLM_PROGRAM and ws[1].text == "serve":
        return ws[2:], ws[0]
    if ws and ws[0].text.rsplit("/", 1)[-1].startswith("python"):
        for i, w in enumerate(ws[1:-1], start=1):
            if w.text == "-m" and ws[i + 1].text in API_SERVER_MODULES:
                return ws[i + 2:], ws[0]
    return None


#: what each manifest type takes, in words (the messages of a value it refuses)
_TYPE_NOUN = {"int": "a whole number", "float": "a number", "human_readable_int": "a whole number (`16384`, `16k`)",
              "human_readable_int_or_auto": "a whole number (`16384`, `16k`) or `auto`"}


class ValueRefused(ValueError):
    """A value the manifest's type refuses; ``str()`` is the whole message (``takes a whole
    number: `1e2` is not one``), without Python's exception text."""


def typed(arg, text: str):
    """``text`` as the manifest types argument ``arg``; raises ValueError with the reason
    (:class:`ValueRefused` for a number type: the message says what the option takes)."""
    t = arg.type
    try:
        if t == "int":
            return int(text)
        if t == "float":
            return float(text)
        if t.startswith("human_readable_int"):
            if t.endswith("_or_auto") and text == "auto":
                return "auto"
            s = text.strip()
            mult = {"k": 1000, "K": 1024, "m": 10**6, "M": 2**20, "g": 10**9, "G": 2**30}
            if s and s[-1] in mult:
                return int(float(s[:-1]) * mult[s[-1]])
            return int(s)
    except ValueError:
        raise ValueRefused(f"takes {_TYPE_NOUN.get(t, t)}: `{text}` is not one") from None
    if t == "json" or arg.json:
        return json.loads(text)
    if t == "json_or_str":
        try:
            return json.loads(text)
        except ValueError:
            return text
    if t == "bool":
        low = text.lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
        raise ValueError(f"`{text}` is not a boolean")
    return text


def _suggest(manifest, option: str) -> str:
    names = ["--" + n for n in manifest.arguments]
    close = difflib.get_close_matches(option.split("=", 1)[0], names, n=1, cutoff=0.8)
    return f"did you mean `{close[0]}`?" if close else ""


def parse_args(words: list[Word], manifest, file: str, version_label: str,
               extra_choices=None, extra_help: str = "") -> tuple[list[Option], list[Problem]]:
    """Parse engine argument ``words`` against ``manifest``: (options in order, problems).

    ``extra_choices`` (``{"--quantization": ["ascend"]}``) are the values a platform plugin adds to
    vLLM's parser (the plugin manifest's ``parser_choices_added``).  The positional model becomes an option named ``model``;
    a second positional is an ``unknown`` problem (``extra_help`` its help when given).  A value word that is unresolved
    (:attr:`Word.unresolved`) gives an ``unresolved`` problem and no option."""
    opts: list[Option] = []
    probs: list[Problem] = []
    dotted: dict[str, list] = {}    # JSON option name -> [object, first key word, last value word, text]
    positional = False
    i = 0
    while i < len(words):
        w = words[i]
        text = w.text
        if not text.startswith("-") or text == "-":
            if positional and w.unresolved:
                # a word the shell makes at run time (an array the reader did not see, `$@`): it may
                # be options, not a second positional; what it holds is not imported
                probs.append(Problem("unresolved", (w.start, w.end),
                                     f"`{text}`: {w.unresolved}; the words it stands for are not imported", file=file))
            elif positional:
                # `vllm serve` takes one positional (the model): argparse exits on any further one
                probs.append(Problem("unknown", (w.start, w.end),
                                     f"`{text}` is an extra positional argument: `vllm serve` of {version_label} "
                                     "takes one (the model) and exits with `unrecognized arguments`",
                                     extra_help or "remove it, or give it the option it is the value of", file))
            elif w.unresolved:
                positional = True
                probs.append(Problem("unresolved", (w.start, w.end), f"the model: {w.unresolved}", file=file))
            else:
                positional = True
                opts.append(Option("model", text, (w.start, w.end), (w.start, w.end), file, text))
            i += 1
            continue
        key, eq, inline = text.partition("=")
        head = key.split(".", 1)[0]
        if "." in key and key.startswith("-") and manifest.has_arg(head) and manifest.arg(head).json \
                and manifest.version in _dotted_releases():
            # `--speculative-config.method mtp`, `-cc.pass_config.x=1` (an alias): vLLM gathers the dotted
            # keys of a JSON option into one object, any `-...` word holding a dot, and passes it after
            # the other arguments (FlexibleArgumentParser.parse_args)
            if eq:
                vword, i = Word(inline, w.start + len(key) + 1, w.end, w.unresolved), i + 1
            elif i + 1 < len(words):
                vword, i = words[i + 1], i + 2
            else:
                probs.append(Problem("bad-value", (w.start, w.end), f"`{key}` needs a value", file=file))
                i += 1
                continue
            if vword.unresolved:
                probs.append(Problem("unresolved", (vword.start, vword.end), f"`{key}`: {vword.unresolved}",
                                     "assign the variable before the command, or write the value", file,
                                     manifest.arg(head).name))
                continue
            name = manifest.arg(head).name
            path = key[len(head) + 1:]
            got = dotted.setdefault(name, [{}, w, vword, text])
            got[2] = vword
            _dotted_put(got[0], path, vword.text)
            continue
        if not manifest.has_arg(key):
            hint = _suggest(manifest, key)
            probs.append(Problem("unknown", (w.start, w.start + len(key)),
                                 f"`{key}` is no `vllm serve` option of {version_label}",
                                 hint or "remove it, or pick the engine release it belongs to (--engine-version)", file))
            i += 1
            if not eq and i < len(words) and not words[i].text.startswith("-") and any(o.name == "model" for o in opts):
                i += 1   # its value, as far as one can tell without the option's arity
            continue
        arg = manifest.arg(key)
        negative = arg.negative is not None and key == arg.negative
        if arg.boolean or arg.flag or arg.nargs == 0:
            if eq:
                try:
                    val = typed(type("B", (), {"type": "bool", "json": False})(), inline)
                except ValueError as e:
                    probs.append(Problem("bad-value", (w.start, w.end), f"`{key}`: {e}", file=file))
                    i += 1
                    continue
            else:
                val = True
            opts.append(Option(arg.name, (not val) if negative else val, (w.start, w.start + len(key)),
                               (w.start, w.end), file, text))
            i += 1
            continue
        if eq:
            vals = [Word(inline, w.start + len(key) + 1, w.end, w.unresolved)]
            i += 1
        else:
            vals = []
            i += 1
            many = arg.nargs in ("+", "*") or isinstance(arg.nargs, int) and arg.nargs > 1
            while i < len(words) and not words[i].text.startswith("--"):
                vals.append(words[i])
                i += 1
                if not many:
                    break
        if not vals:
            probs.append(Problem("bad-value", (w.start, w.end), f"`{key}` needs a value", file=file))
            continue
        for v in vals:
            if not v.unresolved and len(v.text) > 2 and v.text[0] == "<" and v.text[-1] == ">":
                vals[vals.index(v)] = Word(v.text, v.start, v.end, f"`{v.text}` is a placeholder of the source")
        bad = next((v for v in vals if v.unresolved), None)
        if bad is not None:
            probs.append(Problem("unresolved", (bad.start, bad.end), f"`{key}`: {bad.unresolved}",
                                 "assign the variable before the command, or write the value", file, arg.name))
            continue
        try:
            parsed = [typed(arg, v.text) for v in vals]
        except ValueRefused as e:
            probs.append(Problem("bad-value", (vals[0].start, vals[-1].end), f"`{key}` {e}", file=file))
            continue
        except ValueError as e:
            probs.append(Problem("bad-value", (vals[0].start, vals[-1].end),
                                 f"`{key}` takes {arg.type}: `{' '.join(v.text for v in vals)}` ({e})", file=file))
            continue
        choices = None if arg.choices is None else tuple(arg.choices) + tuple((extra_choices or {}).get("--" + arg.name, ()))
        if choices is not None and any(p not in choices for p in parsed):
            probs.append(Problem("bad-value", (vals[0].start, vals[-1].end),
                                 f"`{key}` takes one of {', '.join(map(str, choices))}, not `{vals[0].text}`", file=file))
            continue
        value = parsed if len(parsed) > 1 or arg.nargs in ("+", "*") else parsed[0]
        opts.append(Option(arg.name, value, (w.start, w.start + len(key)), (vals[0].start, vals[-1].end), file, text))
    for name, (obj, first, last, text) in dotted.items():
        opts.append(Option(name, obj, (first.start, first.start + len(text.split("=", 1)[0])),
                           (first.start, last.end), file, text))
    return opts, probs


def _dotted_releases() -> tuple[str, ...]:
    """vLLM releases whose `vllm serve` takes a JSON option's keys one by one (``data/vllm_serve.toml``)."""
    from sncc.cache import package_toml

    return tuple(package_toml("sncc.engines", "data/vllm_serve.toml").get("json_dotted_keys", {}).get("releases", ()))


def _dotted_put(obj: dict, path: str, text: str) -> None:
    """Put ``text`` at dotted ``path`` of ``obj`` as vLLM's FlexibleArgumentParser does: a JSON value,
    else a human-readable integer (``80g``), else the string; ``key+`` appends comma-separated items."""
    append = path.endswith("+")
    keys = (path[:-1] if append else path).split(".")
    if append:
        value = text.split(",")
    else:
        try:
            value = json.loads(text)
        except ValueError:
            try:
                value = typed(type("H", (), {"type": "human_readable_int", "json": False})(), text)
            except ValueError:
                value = text
    for k in keys[:-1]:
        if not isinstance(obj.get(k), dict):
            obj[k] = {}
        obj = obj[k]
    last = keys[-1]
    if append and isinstance(obj.get(last), list):
        obj[last] += value
    else:
        obj[last] = value

"""Fuzz inputs for ``sncc check``, drawn from a :class:`random.Random` (fast enough for a
million-input campaign; the suite wraps them as hypothesis strategies, tests/test_fuzz.py).

Three families, each aware of the language:

* :func:`grammar_text` — random derivations of ``grammar/sncc.lark`` itself (the compiled
  rules of sncc's Lark parser), depth-bounded; terminals come from pools of the plan model's
  keys, block names and enum choices (:mod:`sncc.plan.model`), the catalog's ids and versions,
  units (:data:`sncc.units.KIND_UNITS`), extreme numbers and credential shapes; separators mix
  spaces, ``;``, comments and every line break (``\\n``, ``\\r\\n``, ``\\r``);
* :func:`model_plan` — plans built from the plan model's blocks and fields, each value drawn
  for the field's *kind* (mostly valid, sometimes of the wrong kind or out of range), so
  that most reach the constraint passes;
* :func:`mutate` — the examples (or a generated plan) after one to four mutations: grammar
  tokens deleted, duplicated, swapped or replaced by a freshly generated terminal, numbers
  made extreme, bytes and invalid UTF-8 inserted, truncation, deep nesting, long lines, many
  lines, line-break changes, BOM and NUL.

:func:`any_input` picks a family.  Every function is deterministic for a given generator state.
"""

from __future__ import annotations

import functools
import pathlib
import random
import re
import typing

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.sn")) + sorted((ROOT / "examples" / "broken").glob("*.sn"))

#: replacements for a number: huge, negative, zero, malformed, around int32 and 2^53
EXTREME_NUMBERS = [
    "0", "-5", "-0", "1e400", "1E400", "99999999999999999999k", "9" * 400, "9" * 5000, "9" * 5000 + "k",
    "0." + "0" * 500 + "1", "1" + "0" * 30 + "GiB", "9007199254740991", "9007199254740992", "18446744073709551617",
    "-99999999999999999999", "1_000_000_000", "0k", "0s", "-1s", "1.5", "0.0000001", "100000000000%", "1e-400",
    "4294967296", "2147483647", "2147483648", "65536", "0x10", "1..2", "+7", "100000001", "1" + "0" * 305,
]
INVALID_UTF8 = [b"\xff", b"\xfe", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80\x80"]
SECRETS = ["sk-live-4f9a8b7c6d5e4f3a2b1c", "prefix_sk-abcdefghijklmnop", "ghp_" + "a1B2" * 6, "AKIAIOSFODNN7EXAMPLE",
           "hf_" + "x" * 34, "https://alice:s3cret@host/v1", "Bearer abcdefghijklmnopqrstuvwx"]
ENV_NAMES = ["HCCL_BUFFSIZE", "HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT", "ASCEND_RT_VISIBLE_DEVICES",
             "CUDA_VISIBLE_DEVICES", "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "OMP_NUM_THREADS", "GATEWAY_API_KEY"]
_BREAKS = ["\n", "\r\n", "\r"]


# --------------------------------------------------------------------------- vocabulary


def _kind(info) -> str:
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    return extra.get("kind", "string")


def _choices(info) -> list[str]:
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    return list(extra.get("choices", []))


def submodel(info):
    """The plan-model class a field holds (unwrapping Optional), or None."""
    from sncc.plan import model as m

    for a in typing.get_args(info.annotation) or (info.annotation,):
        if isinstance(a, type) and issubclass(a, m.Node):
            return a
    return None


@functools.lru_cache(maxsize=1)
def vocabulary() -> dict[str, list[str]]:
    """Pools of terminal texts: ``names`` (keys, block names, enum choices, identifiers),
    ``strings`` (catalog ids, versions, paths, URLs, credentials, unicode), and catalog pools
    by the plan field that names them."""
    from sncc import catalog
    from sncc.plan import model as m

    names: set[str] = {"plan", "slo", "env", "true", "false", "on", "off", "none", "env", "import"}
    names |= set(m.SLO_METRICS) | set(m.SLO_STATS) | set(ENV_NAMES)
    todo, seen = [m.Plan], set()
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        for fname, info in cls.model_fields.items():
            names.add(fname)
            names.update(_choices(info))
            sub = submodel(info)
            if sub is not None:
                todo.append(sub)
    rel = list(catalog.vllm_ascend_releases())
    pick = lambda attr: sorted({str(getattr(r, attr)) for r in rel if getattr(r, attr, None)})  # noqa: E731
    pools = {
        "id": list(catalog.models()), "system": list(catalog.systems()), "chip": list(catalog.chips()),
        "cann": pick("cann") + ["8.2.RC1", "8.3.RC2", "7.0.0", "9.0.1", "9.1.0", "99.0"],
        "version": pick("version") + ["v0.0.1", "latest", "v0.25.1rc1", "0.11.0"],
        "vllm": pick("vllm"), "torch": pick("torch"), "torch_npu": pick("torch_npu"),
        "triton_ascend": pick("triton_ascend"),
        "served_name": list(catalog.models()) + ["my-model"], "model_id": list(catalog.models()) + ["other-model"],
        "base_url": ["https://gateway.example.com/v1", "api.example.com", "http://", "ftp://x"],
        "local_endpoint": ["http://localhost:8000/v1", "localhost:8000"],
    }
    strings = sorted({s for v in pools.values() for s in v}) + [
        "", "x", "/data/models/DeepSeek-R1", "héllo ünïcode 模型", "a\\\"b", "\\n\\t", "trace.csv", "/proc/self/environ",
        "/dev/stdin", "x.sn", "../x.sn", "a" * 300, *SECRETS]
    return {"names": sorted(names), "strings": strings, **pools}


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'


def _number(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.5:
        return str(rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256]))
    if r < 0.8:
        return str(rng.randint(-3, 5000))
    if r < 0.9:
        return f"0.{rng.randint(0, 99):02d}"
    return rng.choice([n for n in EXTREME_NUMBERS if re.fullmatch(r"[+-]?\d[\d_]*(\.\d+)?", n)])


def _unit(rng: random.Random) -> str:
    from sncc.units import KIND_UNITS

    if rng.random() < 0.05:
        return rng.choice(["sec", "Gib", "x", "tok", "GB/min", "%%"])
    return rng.choice(rng.choice(list(KIND_UNITS.values())))


def terminal(rng: random.Random, name: str) -> str:
    """Text of one grammar terminal ``name`` (NAME, STRING, NUMBER, QUANTITY, COMPARE, or a
    literal one such as LBRACE); raises KeyError for a terminal this module does not know,
    so a grammar change is noticed here."""
    lit = _literals().get(name)
    if lit is not None:
        return lit
    v = vocabulary()
    if name == "NAME":
        if rng.random() < 0.9:
            return rng.choice(v["names"])
        return rng.choice("abcxyz_") + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789_-") for _ in range(rng.randint(0, 12)))
    if name == "STRING":
        if rng.random() < 0.9:
            return _quote(rng.choice(v["strings"]))
        return _quote("".join(chr(rng.choice([rng.randint(32, 126), rng.randint(0xA0, 0x2FFF), 0x1F600])) for _ in range(rng.randint(0, 20))))
    if name == "NUMBER":
        return _number(rng)
    if name == "QUANTITY":
        num = _number(rng).lstrip("+-") if rng.random() < 0.9 else rng.choice(["99999999999999999999", "0", "1.5"])
        return num + _unit(rng)
    if name == "COMPARE":
        return rng.choice(["<", "<=", ">", ">=", "=="])
    raise KeyError(f"grammar terminal {name} has no generator in tests/fuzzgen.py")


@functools.lru_cache(maxsize=1)
def _literals() -> dict[str, str]:
    """Terminals whose pattern is a fixed string (``{``, ``=``, ``import``, ...)."""
    from sncc.syntax.parser import get_parser

    out = {}
    for t in get_parser().terminals:
        if t.pattern.type == "str":
            out[t.name] = t.pattern.value
    # the grammar spells these as one-character regexes; their text is fixed all the same
    out.update({"LBRACE": "{", "RBRACE": "}", "LPAR": "(", "RPAR": ")", "LSQB": "[", "RSQB": "]",
                "EQUAL": "=", "DOT": ".", "COMMA": ",", "_SEP": ";", "IMPORT": "import"})
    return out


# --------------------------------------------------------------------------- grammar derivations


@functools.lru_cache(maxsize=1)
def _rules() -> tuple[dict[str, list[tuple[str, ...]]], dict[str, int]]:
    """The parser's compiled rules, ``nonterminal → [expansion]``, and each nonterminal's
    shortest derivation height (to close derivations once the depth budget is spent)."""
    from sncc.syntax.parser import get_parser

    rules: dict[str, list[tuple[str, ...]]] = {}
    for r in get_parser().rules:
        rules.setdefault(r.origin.name, []).append(tuple(s.name for s in r.expansion))
    height = {n: 10**9 for n in rules}
    for _ in range(len(rules) + 1):
        for n, exps in rules.items():
            for e in exps:
                h = 1 + max((height.get(s, 0) for s in e), default=0)
                height[n] = min(height[n], h)
    return rules, height


def _separator(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.7:
        return " "
    if r < 0.85:
        return rng.choice(_BREAKS)
    if r < 0.95:
        return "  # comment" + rng.choice(_BREAKS)
    return rng.choice(["\t", "  ", "\ufeff", "\f"])


def derive(rng: random.Random, symbol: str, budget: int) -> list[str]:
    """Tokens of a random derivation of ``symbol`` (a nonterminal or terminal of the compiled
    grammar) with about ``budget`` levels of nesting before it takes the shortest expansions."""
    rules, height = _rules()
    out: list[str] = []
    stack: list[tuple[str, int]] = [(symbol, budget)]
    while stack:
        sym, b = stack.pop()
        if sym not in rules:
            out.append(terminal(rng, sym))
            continue
        exps = rules[sym]
        if b <= 0:
            best = min(max((height.get(s, 0) for s in e), default=0) for e in exps)
            exps = [e for e in exps if max((height.get(s, 0) for s in e), default=0) == best]
        exp = rng.choice(exps)
        stack.extend((s, b - 1) for s in reversed(exp))
    return out


def grammar_text(rng: random.Random) -> str:
    """A random sentence of the grammar: from ``start``, or (half the time) a ``plan`` block
    whose items are derivations of ``item`` (so that the plan builder sees them)."""
    if rng.random() < 0.5:
        toks = derive(rng, "start", rng.randint(3, 9))
    else:
        items = [t for _ in range(rng.randint(1, 8)) for t in derive(rng, "item", rng.randint(2, 7))]
        toks = ["plan", _quote(rng.choice(["fuzz", "p"])), "{", *items, "}"]
    return "".join(t + _separator(rng) for t in toks)


# --------------------------------------------------------------------------- plan-model plans

_POW2 = [1, 2, 4, 8, 16, 32, 64, 128]


def _int_text(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.5:
        return str(rng.choice(_POW2))
    if r < 0.85:
        return str(rng.randint(-3, 5000))
    return rng.choice(["0", "2147483647", "2147483648", "9007199254740991", "9007199254740992", "10" * 20,
                       "100000001", "4294967296", str(rng.randint(-(2**70), 2**70))])


#: the keyword each kind accepts besides its literals (sncc.plan.build convert)
KEYWORDS = {"tokens-or-off": "off", "tokens-or-auto": "auto"}


def value_text(rng: random.Random, kind: str, field: str, choices: list[str]) -> str:
    """Source text of a value for a field of ``kind`` (mostly well-formed for the kind)."""
    if kind in ("count", "int"):
        return _int_text(rng)
    if kind in ("tokens", "tokens-or-off", "tokens-or-auto"):
        if kind in KEYWORDS and rng.random() < 0.2:
            return KEYWORDS[kind]
        r = rng.random()
        return _int_text(rng) if r < 0.4 else f"{rng.randint(1, 256)}k" if r < 0.85 else rng.choice(
            ["3.5k", "1.2k", "1M", "0k", "-4k", "0.5k", "99999999999999999999k", "1_000"])
    if kind in ("duration", "duration-or-none"):
        if kind == "duration-or-none" and rng.random() < 0.2:
            return rng.choice(["none", "off"])
        return f"{rng.choice([rng.randint(0, 10**6), '0.5', '1.25', '1' + '0' * 30])}{rng.choice(['ms', 's', 'min', 'h'])}"
    if kind == "bytes":
        return f"{rng.randint(0, 10**6)}{rng.choice(['B', 'KB', 'MB', 'GB', 'GiB', 'TiB'])}"
    if kind == "bandwidth":
        return f"{rng.randint(0, 10**4)}{rng.choice(['MB/s', 'GB/s', 'TB/s', 'GiB/s'])}"
    if kind in ("ratio", "float"):
        if kind == "ratio" and rng.random() < 0.3:
            return f"{rng.randint(0, 150)}%"
        return rng.choice([f"0.{rng.randint(0, 99):02d}", str(rng.randint(0, 10)), "1.5", "-1", "0." + "0" * 400 + "1"])
    if kind == "bool":
        return rng.choice(["true", "false", "on", "off"])
    if kind == "enum":
        c = rng.choice(choices or ["x"])
        return c.upper() if rng.random() < 0.1 else c
    if kind == "secret":
        return rng.choice(['env("GATEWAY_API_KEY")', 'env("SNCC_FUZZ_KEY")', 'env("1bad")', "env()", f'env("{SECRETS[2]}")',
                           f'"{SECRETS[0]}"'])
    if kind == "int-list":
        return "[" + ", ".join(_int_text(rng) for _ in range(rng.randint(0, 8))) + "]"
    if kind == "address-list":
        pool = ['"10.0.0.1"', '"node-2.cluster.local"', '"fe80::1"', 'env("NODE1_IP")', 'env("1bad")', '""',
                f'"{SECRETS[0]}"', '"' + "a" * 300 + '"', "7"]
        return "[" + ", ".join(rng.choice(pool) if rng.random() < 0.3 else rng.choice(pool[:4])
                               for _ in range(rng.randint(0, 6))) + "]"
    pool = vocabulary().get(field)
    if pool and rng.random() < 0.8:
        return _quote(rng.choice(pool))
    return _quote(rng.choice(vocabulary()["strings"]))


#: a value of any kind, for a field that gets the wrong kind
ANY_VALUES = ["1", "-5", "0", "2s", "16k", "64GiB", "90%", "true", "ident", '"s"', "[1, 2]", 'env("X")', "[]",
              "f(1)", "1e400", "99999999999999999999k"]


def block_text(rng: random.Random, cls, name: str, label: str | None = None, fixed: dict | None = None,
               depth: int = 0) -> str:
    """A block of plan-model class ``cls``: a random subset of its fields, nested blocks, in
    random order; ``fixed`` gives the text (or None: absent) of some fields."""
    fixed = dict(fixed or {})
    items: list[str] = []
    for fname, info in cls.model_fields.items():
        if fname == getattr(cls, "label_field", None) or fname in ("slo", "env"):
            continue
        if fname in fixed:
            if fixed[fname] is not None:
                items.append(fixed[fname])
            continue
        sub = submodel(info)
        if sub is not None:
            if depth < 3 and rng.random() < 0.5:
                items.append(block_text(rng, sub, fname, depth=depth + 1))
            continue
        if not info.is_required() and rng.random() < 0.67:
            continue
        val = rng.choice(ANY_VALUES) if rng.random() < 0.05 else value_text(rng, _kind(info), fname, _choices(info))
        items.append(f"{fname} = {val}")
    rng.shuffle(items)
    head = f"{name} {_quote(label)} {{" if label is not None else f"{name} {{"
    seps = [" ", "\n    ", "; ", "  # c\n    ", "\r\n    ", "\r    "]
    return head + " " + "".join((rng.choice(seps) if i else "") + it for i, it in enumerate(items)) + " }"


def _role(rng: random.Random, name: str) -> str:
    from sncc.plan import model as m

    tp, ep, pp = rng.choice(_POW2), rng.choice(_POW2), rng.choice([1, 1, 1, 2])
    devices = tp * ep * pp if rng.random() < 0.8 else _int_text(rng)
    fixed = {"devices": f"devices = {devices}", "tp": f"tp = {tp}", "ep": f"ep = {ep}", "pp": f"pp = {pp}",
             "instances": f"instances = {rng.randint(1, 8)}"}
    return block_text(rng, m.Role, name, fixed=fixed)


def model_plan(rng: random.Random) -> str:
    """A plan with the model's blocks and keys and catalog values: required blocks always
    there, roles disaggregated or aggregated with ``tp × ep × pp = devices`` most of the time,
    every other block of :class:`~sncc.plan.model.Plan` with a random subset of its fields."""
    from sncc.plan import model as m

    v = vocabulary()
    model = block_text(rng, m.Model, "model", label=rng.choice(v["id"]))
    hw = block_text(rng, m.Hardware, "hardware", fixed={
        "system": f"system = {_quote(rng.choice(v['system']))}", "nodes": f"nodes = {rng.randint(1, 64)}",
        "chip": None if rng.random() < 0.75 else f"chip = {_quote(rng.choice(v['chip']))}"})
    engine = block_text(rng, m.Engine, "engine", label=rng.choice(_choices(m.Engine.model_fields["kind"])),
                        fixed={"version": f"version = {_quote(rng.choice(v['version']))}"})
    roles = [_role(rng, "serve")] if rng.random() < 0.5 else [_role(rng, "prefill"), _role(rng, "decode")]

    def length(name: str) -> str:
        return block_text(rng, m.LengthDist, name, fixed={
            "mean": f"mean = {rng.choice(['512', '2k', '3.5k', '1.2k'])}",
            "max": f"max = {rng.choice(['4k', '16k', '32k', '128k', '1M'])}"})

    workload = block_text(rng, m.Workload, "workload", fixed={"input": length("input"), "output": length("output"),
                                                              "trace": None})
    blocks = [model, hw, engine, *roles, workload]
    done = {"model", "hardware", "engine", "prefill", "decode", "serve", "workload", "slo", "env"}
    for fname, info in m.Plan.model_fields.items():
        sub = submodel(info)
        if sub is not None and fname not in done and rng.random() < 0.5:
            blocks.append(block_text(rng, sub, fname))
    if rng.random() < 0.5:
        slo = [f"{rng.choice(list(m.SLO_METRICS))}{rng.choice(['', '.p50', '.p99'])} {rng.choice(['<', '<=', '>='])} "
               f"{rng.choice(['2s', '50ms', '600', '0', '1.5', '50', '99999999999999999999s'])}" for _ in range(rng.randint(0, 4))]
        blocks.append("slo { " + "  ".join(slo) + " }")
    if rng.random() < 0.5:
        vals = ['"0,1,2,3"', '"0,1,2,3,4,5,6,7"', '""', '"a,b"', '"0,,1"', '"0 1 2"', "200", "1.5", "2s", _int_text(rng),
                _quote(SECRETS[0])]
        env = {rng.choice(ENV_NAMES): rng.choice(vals) for _ in range(rng.randint(0, 4))}
        blocks.append("env { " + "  ".join(f"{k} = {x}" for k, x in env.items()) + " }")
    rest = blocks[1:]
    rng.shuffle(rest)
    body = "\n  ".join([blocks[0], *rest])
    return f'# generated by tests/fuzzgen.py\nplan "{rng.choice(["fuzz", "p-1", "x"])}" {{\n  {body}\n}}\n'


# --------------------------------------------------------------------------- mutations

_TOKEN = re.compile(r'"[^"\\\r\n]*(?:\\[^\r\n][^"\\\r\n]*)*"?|#[^\r\n]*|[A-Za-z_][\w\-]*|[+-]?\d[\d_]*(?:\.\d+)?[A-Za-z%/]*|\s+|.', re.S)
_NUMBER_TOKEN = re.compile(r"[+-]?\d[\d_]*(?:\.\d+)?[A-Za-z%/]*")
_GRAMMAR_TERMINALS = ("NAME", "STRING", "NUMBER", "QUANTITY", "COMPARE", "LBRACE", "RBRACE", "EQUAL", "LSQB", "RSQB",
                      "LPAR", "RPAR", "COMMA", "DOT", "_SEP")
MUTATIONS = ("delete", "duplicate", "swap", "number", "terminal", "subtree", "bytes", "utf8", "truncate", "nest",
             "long", "lines", "newlines", "bom", "nul")


#: relative frequency of each mutation: the costly ones (300 kB lines, 200,000 line breaks)
#: are rarer, so that a million-input campaign fits in an hour on two cores
_WEIGHTS = {"long": 0.25, "lines": 0.25, "nest": 0.5}


def mutate_once(rng: random.Random, data: bytes) -> bytes:
    """``data`` after one mutation (see :data:`MUTATIONS`)."""
    op = rng.choices(MUTATIONS, weights=[_WEIGHTS.get(o, 1.0) for o in MUTATIONS])[0]
    if op in ("delete", "duplicate", "swap", "number", "terminal", "subtree"):
        toks = _TOKEN.findall(data.decode("utf-8", errors="surrogateescape"))
        if not toks:
            return data + b"}"
        i = rng.randrange(len(toks))
        if op == "number":
            idx = [k for k, t in enumerate(toks) if _NUMBER_TOKEN.fullmatch(t)]
            if idx:
                toks[rng.choice(idx)] = rng.choice(EXTREME_NUMBERS)
        elif op == "delete":
            del toks[i:i + rng.randint(1, 3)]
        elif op == "duplicate":
            toks.insert(i, toks[i] * rng.randint(1, 3))
        elif op == "swap":
            j = rng.randrange(len(toks))
            toks[i], toks[j] = toks[j], toks[i]
        elif op == "terminal":
            toks[i] = terminal(rng, rng.choice(_GRAMMAR_TERMINALS))
        else:  # a derivation of an item or value dropped in
            toks.insert(i, " " + " ".join(derive(rng, rng.choice(["item", "value", "block"]), rng.randint(1, 5))) + " ")
        return "".join(toks).encode("utf-8", errors="surrogateescape")
    pos = rng.randint(0, len(data))
    if op == "bytes":
        return data[:pos] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))) + data[pos + rng.randint(0, 4):]
    if op == "utf8":
        return data[:pos] + rng.choice(INVALID_UTF8) + data[pos:]
    if op == "truncate":
        return data[:pos]
    if op == "nest":
        depth = rng.choice([2, 5, 40, 49, 50, 200, 1000, 5000])
        piece = rng.choice(["x { " * depth + "}" * depth, "k = " + "[" * depth + "]" * depth,
                            "k = " + "f(" * depth + ")" * depth, "{ " * depth, "} " * depth])
        return data[:pos] + piece.encode() + data[pos:]
    if op == "long":
        size = rng.choice([1000, 70_000, 300_000])
        piece = rng.choice(["# " + "x" * size + "\n", 'k = "' + "a" * size + '"', "a" * size, "1" * size,
                            "{" + " " * size + "}", "é" * size, " ; " * (size // 3)])
        return data[:pos] + piece.encode() + data[pos:]
    if op == "lines":  # many line breaks (the line index once was quadratic)
        return data[:pos] + rng.choice(["\n", "\r", "\r\n", "#\r"]).encode() * rng.choice([1000, 50_000, 200_000]) + data[pos:]
    if op == "newlines":
        return data.replace(b"\n", rng.choice([b"\r\n", b"\r", b"\n\n", b""]))
    if op == "bom":
        return b"\xef\xbb\xbf" + data
    return data[:pos] + b"\x00" + data[pos:]


@functools.lru_cache(maxsize=1)
def _corpus() -> tuple[bytes, ...]:
    return tuple(p.read_bytes() for p in EXAMPLES)


def mutate(rng: random.Random, data: bytes | None = None) -> bytes:
    """An example (or ``data``) after one to four :func:`mutate_once` steps."""
    if data is None:
        data = rng.choice(_corpus())
    for _ in range(rng.randint(1, 4)):
        data = mutate_once(rng, data)
    return data


#: families of :func:`any_input` and their weights (mutations of model plans count as "mutated")
FAMILIES = {"grammar": 0.5, "model": 0.2, "mutated": 0.3}


def any_input(rng: random.Random) -> tuple[str, bytes]:
    """``(family, bytes)`` of one input of a family picked by :data:`FAMILIES`' weights."""
    r = rng.random()
    if r < FAMILIES["grammar"]:
        return "grammar", grammar_text(rng).encode("utf-8", errors="surrogatepass")
    if r < FAMILIES["grammar"] + FAMILIES["model"]:
        return "model", model_plan(rng).encode("utf-8")
    base = model_plan(rng).encode("utf-8") if rng.random() < 0.3 else None
    return "mutated", mutate(rng, base)

"""Fuzzing ``sncc check`` (issue 5 §4): it never raises, never reports an internal
error (SN9001), finishes a plan under 1 MB within 2 s, and gives every
diagnostic, related location and fix edit a range inside the file.

Two input families, both hypothesis strategies:

* :func:`valid_plans` — grammar-driven plans built from the plan model's own
  fields (:mod:`sncc.plan.model`: each field's ``kind`` and ``choices``) and the
  catalog's ids and release versions, so that most of them get through parsing
  and plan building and reach the resolution and the constraint passes; some
  values are deliberately of the wrong kind or out of range;
* :func:`mutated_examples` — every ``examples/*.sn`` and ``examples/broken/*.sn``
  with tokens deleted, duplicated or swapped, numbers replaced by huge, negative
  and zero values, random bytes and invalid UTF-8, deep nesting, very long lines.

The bounded run here is derandomized (same inputs on every CI run, about 250 in
all); ``bench/fuzz.py N`` runs a longer random campaign with the same
strategies and property (:func:`check_input`).
"""

from __future__ import annotations

import json
import pathlib
import re
import signal
import sys
import tempfile
import time
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.sn")) + sorted((ROOT / "examples" / "broken").glob("*.sn"))

#: issue 5 §4: `sncc check` on a plan under 1 MB finishes within 2 s
TIME_LIMIT_S = 2.0
SMALL_INPUT = 1_000_000
#: an input still running after this long is reported as a hang (the process is not stuck)
HANG_S = 30.0


# --------------------------------------------------------------------------- property


class _Hang(Exception):
    """Raised by the alarm when one input runs longer than :data:`HANG_S`."""


@contextmanager
def _alarm(seconds: float):
    """Raise :class:`_Hang` in the main thread after ``seconds`` (POSIX; a no-op elsewhere)."""
    if not hasattr(signal, "setitimer") or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None):
        yield
        return

    def on_alarm(signum, frame):
        raise _Hang(f"still running after {seconds:g} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _spans(d):
    yield "span", d.span
    for r in d.related:
        yield "related span", r.span
    for f in d.fixes:
        for e in f.edits:
            yield "fix edit", e.span


def check_input(data: bytes, workdir: pathlib.Path, name: str = "fuzz.sn") -> list[str]:
    """Run ``sncc check``'s in-process path on ``data`` and list the properties it violates.

    The path is the CLI's: the bytes are written to ``workdir/name`` and read
    back with :func:`sncc.cli.read_source`, compiled with
    :func:`sncc.compiler.compile_file` (every phase: parse, plan, resolve,
    checks), then rendered as text and as JSON.  Returns an empty list when
    every property holds; otherwise one line per violation (an exception is
    reported with its last frames, not raised).
    """
    import traceback

    from sncc.cli import read_source
    from sncc.compiler import compile_file
    from sncc.diagnostics import render_json, render_text

    path = workdir / name
    path.write_bytes(data)
    problems: list[str] = []
    t0 = time.perf_counter()
    try:
        with _alarm(HANG_S):
            src, pre = read_source(str(path))
            comp = compile_file(src)
            diags = list(pre) + list(comp.diagnostics)
            sources = dict(getattr(comp, "sources", None) or {})
            sources.setdefault(src.name, src)
            text_out = render_text.render(diags, sources, 1, color=False)
            json_out = render_json.render(diags, sources, 1)
    except (_Hang, Exception, RecursionError) as exc:  # noqa: BLE001 - the property under test
        frames = traceback.extract_tb(exc.__traceback__)[-4:]
        where = " <- ".join(f"{pathlib.Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(frames))
        return [f"raised {type(exc).__name__}: {str(exc)[:300]} [{where}]"]
    elapsed = time.perf_counter() - t0
    if len(data) < SMALL_INPUT and elapsed > TIME_LIMIT_S:
        problems.append(f"took {elapsed:.2f} s on a {len(data)}-byte input (limit {TIME_LIMIT_S} s)")
    for d in diags:
        if d.code.code == "SN9001":
            problems.append(f"internal error SN9001: {d.message[:300]}")
        for what, span in _spans(d):
            if span is None:
                if what == "span":
                    problems.append(f"{d.code.code} has no location: {d.message[:120]}")
                continue
            owner = sources.get(span.file)
            if owner is None:
                problems.append(f"{d.code.code} {what} names unknown file {span.file!r}")
            elif not 0 <= span.start <= span.end <= len(owner.text):
                problems.append(f"{d.code.code} {what} [{span.start}, {span.end}) outside the file "
                                f"(length {len(owner.text)}): {d.message[:120]}")
    if not isinstance(text_out, str):
        problems.append("text rendering is not a string")
    try:
        doc = json.loads(json_out)
    except ValueError as exc:
        problems.append(f"JSON output does not parse: {exc}")
    else:
        if len(doc.get("diagnostics", ())) != len(diags):
            problems.append("JSON output lost diagnostics")
    return problems


# --------------------------------------------------------------------------- valid plans


def _kind(info) -> str:
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    return extra.get("kind", "string")


def _choices(info) -> list[str]:
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    return list(extra.get("choices", []))


def _submodel(info):
    import typing

    from sncc.plan import model as m

    for a in typing.get_args(info.annotation) or (info.annotation,):
        if isinstance(a, type) and issubclass(a, m.Node):
            return a
    return None


def _pools() -> dict[str, list[str]]:
    """Catalog ids and release versions, by the plan field that names them."""
    from sncc import catalog

    rel = list(catalog.vllm_ascend_releases())
    pick = lambda attr: sorted({str(getattr(r, attr)) for r in rel if getattr(r, attr, None)})  # noqa: E731
    return {
        "id": list(catalog.models()), "system": list(catalog.systems()), "chip": list(catalog.chips()),
        "cann": pick("cann") + ["8.2.RC1", "8.3.RC2", "7.0.0", "99.0"],
        "version": pick("version") + ["v0.0.1", "latest"],
        "vllm": pick("vllm"), "torch": pick("torch"), "torch_npu": pick("torch_npu"),
        "triton_ascend": pick("triton_ascend"),
        "served_name": list(catalog.models()) + ["my-model"],
        "model_id": list(catalog.models()) + ["other-model"],
    }


_POOLS: dict[str, list[str]] | None = None


def pools() -> dict[str, list[str]]:
    """:func:`_pools`, computed once."""
    global _POOLS
    if _POOLS is None:
        _POOLS = _pools()
    return _POOLS


#: plain strings: ordinary, empty, unicode, quotes and backslashes, credential-like
_STRINGS = st.one_of(
    st.sampled_from(["", "x", "/data/models/DeepSeek-R1", "https://gateway.example.com/api", "héllo ünïcode 模型",
                     "sk-abcdefghijklmnopqrstuvwxyz", "ghp_" + "a" * 24, "AKIAABCDEFGHIJKLMNOP", "a\\\"b", "\\n\\t"]),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters='"\\\n\r'), max_size=40),
)
_POW2 = st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128])
_INTS = st.one_of(_POW2, st.integers(-3, 5000), st.integers(-(2**70), 2**70),
                  st.sampled_from([0, 2**53 - 1, 2**53, 10**20, 10**400]))


def _num(x) -> str:
    return str(x)


def _decimal() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(0, 100).map(lambda i: f"0.{i:02d}"),
        st.decimals(min_value=-10**6, max_value=10**6, places=3, allow_nan=False, allow_infinity=False).map(str),
        st.sampled_from(["0", "1", "0.5", "1.5", "-1", "0." + "0" * 400 + "1", "9" * 30 + ".5"]),
    )


def value_text(kind: str, field: str, choices: list[str]) -> st.SearchStrategy[str]:
    """Source text of a value for a field of ``kind`` (mostly well-formed for the kind)."""
    if kind in ("count", "int"):
        return _INTS.map(_num)
    if kind in ("tokens", "tokens-or-off"):
        s = st.one_of(
            _INTS.map(_num),
            st.integers(1, 256).map(lambda n: f"{n}k"),
            st.sampled_from(["3.5k", "1.2k", "1M", "0k", "-4k", "0.5k", "99999999999999999999k", "1_000"]),
        )
        return st.one_of(s, st.just("off")) if kind == "tokens-or-off" else s
    if kind in ("duration", "duration-or-none"):
        s = st.builds(lambda n, u: f"{n}{u}", st.one_of(st.integers(0, 10**6), st.sampled_from(["0.5", "1.25", "1" + "0" * 30])),
                      st.sampled_from(["ms", "s", "min", "h"]))
        return st.one_of(s, st.sampled_from(["none", "off"])) if kind == "duration-or-none" else s
    if kind == "bytes":
        return st.builds(lambda n, u: f"{n}{u}", st.integers(0, 10**6), st.sampled_from(["B", "KB", "MB", "GB", "GiB", "TiB"]))
    if kind == "bandwidth":
        return st.builds(lambda n, u: f"{n}{u}", st.integers(0, 10**4), st.sampled_from(["MB/s", "GB/s", "TB/s", "GiB/s"]))
    if kind == "ratio":
        return st.one_of(_decimal(), st.integers(0, 150).map(lambda i: f"{i}%"))
    if kind == "float":
        return _decimal()
    if kind == "bool":
        return st.sampled_from(["true", "false", "on", "off"])
    if kind == "enum":
        return st.one_of(st.sampled_from(choices or ["x"]), st.sampled_from([c.upper() for c in choices] or ["x"]))
    if kind == "secret":
        return st.sampled_from(['env("GATEWAY_API_KEY")', 'env("SNCC_FUZZ_KEY")', 'env("1bad")', 'env()'])
    if kind == "int-list":
        return st.lists(_INTS.map(_num), max_size=8).map(lambda xs: "[" + ", ".join(xs) + "]")
    pool = pools().get(field)
    s = _STRINGS if pool is None else st.one_of(st.sampled_from(pool), _STRINGS)
    return s.map(lambda t: '"' + t + '"')


#: a value of any kind: what a field receives when the strategy picks the wrong kind
ANY_VALUE = st.one_of(
    st.sampled_from(["1", "-5", "0", "2s", "16k", "64GiB", "90%", "true", "ident", '"s"', "[1, 2]", 'env("X")', "[]",
                     "f(1)", "1e400", "99999999999999999999k"]),
)

#: between items: blanks, new lines, `;` (the grammar's optional `_SEP`), comments
_SEP = st.sampled_from([" ", "\n", "  ", "; ", ";", "\n  ", "  # comment\n", "\r\n"])
_WS = st.sampled_from([" ", "\n", "  ", "  # comment\n", "\r\n"])


@st.composite
def block_text(draw, cls, name: str, label: str | None = None, fixed: dict | None = None, depth: int = 0) -> str:
    """Text of a block of plan-model class ``cls``: some of its fields, nested blocks, in random order."""
    fixed = dict(fixed or {})
    items: list[str] = []
    for fname, info in cls.model_fields.items():
        if fname == getattr(cls, "label_field", None) or fname in ("slo", "env"):
            continue
        if fname in fixed:
            if fixed[fname] is not None:
                items.append(fixed[fname])
            continue
        sub = _submodel(info)
        if sub is not None:
            if depth < 3 and draw(st.booleans()):
                items.append(draw(block_text(sub, fname, depth=depth + 1)))
            continue
        if not info.is_required() and not draw(st.integers(0, 2)) == 0:
            continue
        wrong = draw(st.integers(0, 19)) == 0
        val = draw(ANY_VALUE if wrong else value_text(_kind(info), fname, _choices(info)))
        items.append(f"{fname} = {val}")
    items = draw(st.permutations(items)) if len(items) > 1 else items
    head = f"{name} \"{label}\" {{" if label is not None else f"{name} {{"
    out = head + draw(_WS)
    for i, it in enumerate(items):
        out += (draw(_SEP) if i else "") + it
    return out + draw(st.sampled_from([" ", "\n", "; "]) if items else _WS) + "}"


def _role(draw, name: str) -> str:
    from sncc.plan import model as m

    tp, ep, pp = draw(_POW2), draw(_POW2), draw(st.sampled_from([1, 1, 1, 2]))
    devices = tp * ep * pp if draw(st.integers(0, 4)) else draw(_INTS)
    fixed = {"devices": f"devices = {devices}", "tp": f"tp = {tp}", "ep": f"ep = {ep}", "pp": f"pp = {pp}",
             "instances": f"instances = {draw(st.integers(1, 8))}"}
    return draw(block_text(m.Role, name, fixed=fixed))


@st.composite
def valid_plans(draw) -> str:
    """A plan that follows the grammar, with the model's blocks and keys and catalog values.

    Required blocks and keys are always there; roles are disaggregated or
    aggregated with ``tp × ep × pp = devices`` most of the time; every other
    block of :class:`~sncc.plan.model.Plan` appears with a random subset of
    its fields.
    """
    from sncc.plan import model as m

    p = pools()
    model = draw(block_text(m.Model, "model", label=draw(st.sampled_from(p["id"]))))
    system = draw(st.sampled_from(p["system"]))
    hw_fixed = {"system": f'system = "{system}"', "nodes": f"nodes = {draw(st.integers(1, 64))}",
                "chip": None if draw(st.integers(0, 3)) else f'chip = "{draw(st.sampled_from(p["chip"]))}"'}
    hardware = draw(block_text(m.Hardware, "hardware", fixed=hw_fixed))
    engine = draw(block_text(m.Engine, "engine", label=draw(st.sampled_from(_choices(m.Engine.model_fields["kind"]))),
                             fixed={"version": f'version = "{draw(st.sampled_from(p["version"]))}"'}))
    roles = [_role(draw, "serve")] if draw(st.booleans()) else [_role(draw, "prefill"), _role(draw, "decode")]
    length = lambda name: draw(block_text(m.LengthDist, name, fixed={  # noqa: E731
        "mean": f"mean = {draw(st.sampled_from(['512', '2k', '3.5k', '1.2k']))}",
        "max": f"max = {draw(st.sampled_from(['4k', '16k', '32k', '128k', '1M']))}"}))
    workload = draw(block_text(m.Workload, "workload", fixed={"input": length("input"), "output": length("output")}))
    blocks = [model, hardware, engine, *roles, workload]
    done = {"model", "hardware", "engine", "prefill", "decode", "serve", "workload", "slo", "env"}
    for fname, info in m.Plan.model_fields.items():
        sub = _submodel(info)
        if sub is not None and fname not in done and draw(st.booleans()):
            blocks.append(draw(block_text(sub, fname)))
    if draw(st.booleans()):
        metrics = list(m.SLO_METRICS)
        slo = draw(st.lists(st.tuples(st.sampled_from(metrics), st.sampled_from(["", ".p50", ".p99"]),
                                      st.sampled_from(["<", "<=", ">="]),
                                      st.sampled_from(["2s", "50ms", "600", "0", "1.5", "99999999999999999999s"])),
                            max_size=4))
        blocks.append("slo { " + "  ".join(f"{k}{s} {op} {v}" for k, s, op, v in slo) + " }")
    if draw(st.booleans()):
        names = ["HCCL_BUFFSIZE", "HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT", "ASCEND_RT_VISIBLE_DEVICES",
                 "CUDA_VISIBLE_DEVICES", "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "OMP_NUM_THREADS"]
        vals = st.one_of(_INTS.map(_num), st.sampled_from(['"0,1,2,3"', '"0,1,2,3,4,5,6,7"', '""', '"a,b"', '"0,,1"',
                                                            '"0 1 2"', "200", "1.5", "2s"]))
        env = draw(st.dictionaries(st.sampled_from(names), vals, max_size=4))
        blocks.append("env { " + "  ".join(f"{k} = {v}" for k, v in env.items()) + " }")
    order = [blocks[0]] + list(draw(st.permutations(blocks[1:])))
    body = "\n  ".join(order)
    return f'# generated by tests/test_fuzz.py\nplan "{draw(st.sampled_from(["fuzz", "p-1", "x"]))}" {{\n  {body}\n}}\n'


# --------------------------------------------------------------------------- mutations

_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"?|#[^\n]*|[A-Za-z_][\w\-]*|[+-]?\d[\d_]*(?:\.\d+)?[A-Za-z%/]*|\s+|.', re.S)
_NUMBER_TOKEN = re.compile(r"[+-]?\d[\d_]*(?:\.\d+)?[A-Za-z%/]*")

#: replacements for a number: huge, negative, zero, malformed
EXTREME_NUMBERS = [
    "0", "-5", "-0", "1e400", "1E400", "99999999999999999999k", "9" * 400, "9" * 5000, "9" * 5000 + "k",
    "0." + "0" * 500 + "1", "1" + "0" * 30 + "GiB", "9007199254740991", "9007199254740992", "18446744073709551617",
    "-99999999999999999999", "1_000_000_000", "0k", "0s", "-1s", "1.5", "0.0000001", "100000000000%", "1e-400",
    "4294967296", "2147483648", "65536", "0x10", "1..2", "+7",
]
_INVALID_UTF8 = [b"\xff", b"\xfe", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80\x80"]
_KEYS = ["tp", "ep", "pp", "devices", "instances", "nodes", "plan", "model", "serve", "prefill", "decode", "slo", "env",
         "max_num_seqs", "max_num_batched_tokens", "chunked_prefill", "weights", "quant", "system", "workload", "input",
         "output", "mean", "max", "api_key", "timeout", "gateway", "speculative", "acceptance", "HCCL_BUFFSIZE"]


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


@st.composite
def _mutate_once(draw, data: bytes) -> bytes:
    op = draw(st.sampled_from(["delete", "duplicate", "swap", "number", "bytes", "utf8", "truncate", "nest", "long",
                               "key", "unicode", "newlines", "bom", "nul"]))
    text = data.decode("utf-8", errors="surrogateescape")
    toks = _tokens(text)
    n = len(toks)
    if op in ("delete", "duplicate", "swap", "key", "number") and n:
        if op == "number":
            idx = [i for i, t in enumerate(toks) if _NUMBER_TOKEN.fullmatch(t)]
            if idx:
                i = draw(st.sampled_from(idx))
                toks[i] = draw(st.one_of(st.sampled_from(EXTREME_NUMBERS), st.integers().map(str)))
        else:
            i = draw(st.integers(0, n - 1))
            if op == "delete":
                span = draw(st.integers(1, 3))
                del toks[i:i + span]
            elif op == "duplicate":
                toks.insert(i, toks[i] * draw(st.integers(1, 3)))
            elif op == "swap":
                j = draw(st.integers(0, n - 1))
                toks[i], toks[j] = toks[j], toks[i]
            else:
                toks[i] = draw(st.sampled_from(_KEYS))
        return "".join(toks).encode("utf-8", errors="surrogateescape")
    pos = draw(st.integers(0, len(data)))
    if op == "bytes":
        return data[:pos] + draw(st.binary(min_size=1, max_size=16)) + data[pos + draw(st.integers(0, 4)):]
    if op == "utf8":
        return data[:pos] + draw(st.sampled_from(_INVALID_UTF8)) + data[pos:]
    if op == "truncate":
        return data[:pos]
    if op == "nest":
        depth = draw(st.sampled_from([2, 5, 40, 49, 50, 200, 1000, 5000]))
        shape = draw(st.sampled_from(["block", "list", "call", "open", "close"]))
        piece = {"block": "x { " * depth + "}" * depth, "list": "k = " + "[" * depth + "]" * depth,
                 "call": "k = " + "f(" * depth + ")" * depth, "open": "{ " * depth, "close": "} " * depth}[shape]
        return data[:pos] + piece.encode() + data[pos:]
    if op == "long":
        size = draw(st.sampled_from([1000, 70_000, 300_000]))
        piece = draw(st.sampled_from(["# " + "x" * size + "\n", 'k = "' + "a" * size + '"', "a" * size, "1" * size,
                                      "{" + " " * size + "}", "é" * size, " ; " * (size // 3)]))
        return data[:pos] + piece.encode() + data[pos:]
    if op == "unicode":
        return data[:pos] + draw(st.text(min_size=1, max_size=8)).encode("utf-8", errors="surrogatepass") + data[pos:]
    if op == "newlines":
        return data.replace(b"\n", draw(st.sampled_from([b"\r\n", b"\r", b"\n\n", b""])))
    if op == "bom":
        return b"\xef\xbb\xbf" + data
    return data[:pos] + b"\x00" + data[pos:]


@st.composite
def mutated_examples(draw) -> bytes:
    """One of ``examples/*.sn`` or ``examples/broken/*.sn`` after one to four mutations."""
    data = draw(st.sampled_from(EXAMPLES)).read_bytes()
    for _ in range(draw(st.integers(1, 4))):
        data = draw(_mutate_once(data))
    return data


# --------------------------------------------------------------------------- tests

_BOUNDED = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])


@pytest.fixture(scope="module")
def workdir():
    """A scratch folder; the first compile (catalog, parser) happens here, outside any timing."""
    with tempfile.TemporaryDirectory(prefix="sncc-fuzz-") as d:
        p = pathlib.Path(d)
        assert check_input(EXAMPLES[0].read_bytes(), p) == []
        yield p


def test_examples_exist():
    """The mutation corpus is the examples folder: it must not be empty."""
    assert len(EXAMPLES) >= 10


@settings(max_examples=110, **_BOUNDED)
@given(text=valid_plans())
def test_valid_plans_never_crash(workdir, text):
    """Grammar-driven plans: every property of :func:`check_input` holds."""
    assert check_input(text.encode("utf-8"), workdir) == []


@settings(max_examples=130, **_BOUNDED)
@given(data=mutated_examples())
def test_mutated_examples_never_crash(workdir, data):
    """Mutated examples: every property of :func:`check_input` holds."""
    assert check_input(data, workdir) == []


def test_valid_plans_reach_the_checks():
    """The generator is useful: most generated plans build a typed plan (so the checks run)."""
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    reached = []

    @settings(max_examples=40, **_BOUNDED)
    @given(text=valid_plans())
    def probe(text):
        reached.append(compile_file(SourceFile("p.sn", text)).plan is not None)

    probe()
    assert len(reached) >= 30 and sum(reached) >= len(reached) // 2, f"{sum(reached)} of {len(reached)} built a plan"


_SEED = "deepseek-r1-a3-7p1d.sn"
_HUGE = [  # (text in examples/deepseek-r1-a3-7p1d.sn, replacement value)
    ("devices = 16", "9" * 500), ("nodes  = 11", "9" * 5000), ("max_num_seqs = 48", "99999999999999999999"),
    ("max = 32k", "99999999999999999999k"), ("max = 16k", "9" * 5000 + "k"), ("timeout = 30min", "9" * 500 + "min"),
    ("redundant_experts = 2", "9" * 500), ("ttft < 2s", "9" * 500 + "s"), ("qpm >= 600", "9" * 400),
    ("block_size = 128", "9007199254740992"), ("compress_ratio = 0.5", "9" * 30 + "%"),
]


@pytest.mark.parametrize("old,value", _HUGE, ids=[o.split()[0] for o, _ in _HUGE])
def test_huge_numbers_are_out_of_range(workdir, old, value):
    """Huge numbers (which once overflowed float conversions or hit Python's int-to-str digit
    limit inside the checks) are SN2009 on the value itself."""
    base = (ROOT / "examples" / _SEED).read_text(encoding="utf-8")
    key, op, _ = old.split()
    assert base.count(old) == 1, old
    text = base.replace(old, f"{key} {op} {value}")
    assert check_input(text.encode(), workdir) == []
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    diags = compile_file(SourceFile("p.sn", text)).diagnostics
    at = text.index(f"{key} {op} {value}") + len(f"{key} {op} ")
    assert any(d.code.code == "SN2009" and d.span.start == at for d in diags), [(d.code.code, d.message) for d in diags]


@pytest.mark.parametrize("old,new", [("tp = 1 ", "tp = 9007199254740991 "), ("ep = 64", "ep = 9007199254740991"),
                                     ("tp = 8", "tp = 4503599627370496")], ids=["decode-tp", "decode-ep", "prefill-tp"])
def test_huge_parallel_sizes_stay_fast(workdir, old, new):
    """tp × ep near 2^53 once made the expert-placement search loop 2 × tp × ep times (a hang):
    it must be checked within the time limit, with SN3001 on the mismatch."""
    base = (ROOT / "examples" / _SEED).read_text(encoding="utf-8")
    text = base.replace(old, new, 1)
    assert check_input(text.encode(), workdir) == []
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    assert "SN3001" in {d.code.code for d in compile_file(SourceFile("p.sn", text)).diagnostics}


def test_largest_exact_integer_is_accepted():
    """2^53 - 1 itself is in range; 2^53 is not (on a count without a tighter bound)."""
    from sncc.compiler import compile_file
    from sncc.source import SourceFile

    base = (ROOT / "examples" / "deepseek-r1-a3-7p1d.sn").read_text(encoding="utf-8")
    ok = compile_file(SourceFile("p.sn", base.replace("redundant_experts = 2", "redundant_experts = 9007199254740991"))).diagnostics
    assert not any(d.code.code == "SN2009" for d in ok)
    bad = compile_file(SourceFile("p.sn", base.replace("redundant_experts = 2", "redundant_experts = 9007199254740992"))).diagnostics
    assert [d.code.code for d in bad if d.code.code == "SN2009"] == ["SN2009"]


@pytest.mark.parametrize("piece", [
    "x { " * 100_000 + "}" * 100_000, "k = " + "[" * 100_000 + "]" * 100_000, "k = " + "f(" * 50_000 + ")" * 50_000,
    "{ " * 100_000, "[" * 100_000,
], ids=["blocks", "lists", "calls", "open-braces", "open-brackets"])
def test_deep_nesting(workdir, piece):
    """Nesting far beyond any plan is a syntax error with a location, not a RecursionError."""
    data = ('plan "deep" { ' + piece + " }\n").encode()
    assert check_input(data, workdir) == []


def test_very_long_line(workdir):
    """A 900 kB single-line plan (one huge string, then a huge comment) is checked within the limit."""
    base = (ROOT / "examples" / "deepseek-r1-a3-7p1d.sn").read_text(encoding="utf-8")
    text = base.replace('cann   = "8.2.RC1"', 'cann = "' + "8" * 450_000 + '"').replace("\n", " ; ", 3)
    text += "#" + "y" * 450_000
    assert check_input(text.encode(), workdir) == []


def test_five_megabyte_file(workdir):
    """A 5 MB plan (a real plan plus 5 MB of comments and env entries) does not crash, and its
    diagnostics stay inside the file; the 2 s limit applies only under 1 MB, but it must not hang."""
    base = (ROOT / "examples" / "deepseek-r1-a3-7p1d.sn").read_text(encoding="utf-8")
    env = "".join(f"  SNCC_FILL_{i} = {i}\n" for i in range(100_000))
    filler = ("# " + "z" * 96 + "\n") * 30_000
    text = base.replace("env { HCCL_BUFFSIZE = 1000 }", "env {\n  HCCL_BUFFSIZE = 1000\n" + env + "}") + filler
    data = text.encode()
    assert len(data) > 5_000_000
    t0 = time.perf_counter()
    assert check_input(data, workdir) == []
    assert time.perf_counter() - t0 < 20


def test_invalid_utf8_everywhere(workdir):
    """Invalid UTF-8 at the start, middle and end: SN1004 at the byte's character offset."""
    base = (ROOT / "examples" / "deepseek-r1-a3-7p1d.sn").read_bytes()
    for pos in (0, len(base) // 2, len(base)):
        for bad in _INVALID_UTF8:
            data = base[:pos] + bad + base[pos:]
            assert check_input(data, workdir) == [], (pos, bad)


def test_empty_and_whitespace_inputs(workdir):
    """Nothing, a BOM, blank lines, only a comment, a lone brace."""
    for data in (b"", b"\xef\xbb\xbf", b"\n\n\n", b"# only\n", b"{", b"}", b'"', b"plan", b"\x00", b"\r", b"\r\n" * 3):
        assert check_input(data, workdir) == [], data


@settings(max_examples=12, **_BOUNDED)
@given(data=st.one_of(mutated_examples(), valid_plans().map(str.encode)))
def test_cli_check_on_stdin(data):
    """Through click (`sncc check - --format json`): exit 0 or 1, one JSON document, no traceback."""
    from click.testing import CliRunner

    from sncc.cli import main

    res = CliRunner().invoke(main, ["check", "-", "--format", "json"], input=data)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exc_info
    assert res.exit_code in (0, 1), res.output
    doc = json.loads(res.stdout)
    assert doc["summary"]["files"] == 1
    assert "Traceback" not in res.output


def test_cli_check_text_on_mutations(tmp_path):
    """Text output through click on a few fixed mutations of every example: exit 0 or 1."""
    from click.testing import CliRunner

    from sncc.cli import main

    runner = CliRunner()
    for i, ex in enumerate(EXAMPLES):
        data = ex.read_bytes()
        for j, mutant in enumerate((data[: len(data) // 2], data.replace(b"=", b"", 1), data + b"\xff}")):
            p = tmp_path / f"m{i}-{j}.sn"
            p.write_bytes(mutant)
            res = runner.invoke(main, ["check", str(p)])
            assert res.exit_code in (0, 1), (ex.name, j, res.output, res.exc_info)
            assert "Traceback" not in res.output


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))

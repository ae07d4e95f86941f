"""The measurements file of ``sncc calibrate``, checked into located diagnostics.

:func:`check_measurements` reads a measurements file (the format is in
:mod:`sncc.sim.calibration.fit`'s docstring and README "sncc calibrate") and reports every
problem it finds at once, each a :class:`~sncc.diagnostics.model.Diagnostic` at the key or value
it is about (positions from :mod:`sncc.sim.calibration.keymap`), before a fit that can take
minutes:

* SN1080 the file is not valid TOML / JSON (nothing else is checked then) or not a table;
* SN2080 an unknown key, at the top level or in a point (the closest known key suggested);
* SN2081 a value of the wrong type or out of range (metrics numbers > 0, ``requests`` >= 1,
  ``fit`` constants the simulator reads);
* SN2082 something the fit needs is missing: no point, a point without ``plan`` or without a
  measurement, no ``fit`` where the default constants outnumber the measured values;
* SN2083 ``point`` and ``points``, or a metric given and also read from ``bench_result``;
* SN2084 a file the measurements name cannot be used: a plan that is missing or has errors, a
  bench result that is not one, a base profile that does not load;
* SN2085 a point's benchmark ran another load than its plan states, or its chip is of another
  generation than the base profile's;
* SN4080 / SN5083 a point's plan the simulator cannot model (a chip fact the catalog lacks, a
  combination the cost model refuses): the diagnostic ``sncc simulate`` gives, at the plan (its
  file joins ``sources``), with the point's ``plan`` as related location.

The plan checks (SN2084 for a plan with errors, SN2085) compile each plan and run only once the
file itself is clean.  A diagnostic's ``path`` is the key path in the file, array indexes 0-based
(``("point", 0, "ttft_s")``).
"""
from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from sncc.diagnostics import codes
from sncc.diagnostics.model import Diagnostic, Related, diag
from sncc.sim.calibration import keymap
from sncc.sim.calibration.fit import (METRIC_UNITS, METRICS, POINT_KEYS, TOP_KEYS, CalibrationError, Point,
                                      _get, _is_number, _kind_of, bench_mismatch, chip_problem, fit_keys_for,
                                      read_bench_result)
from sncc.source import BOM, SourceFile

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover
    import tomli as _toml


@dataclass
class Measurements:
    """A checked measurements file: ``file`` as given, ``base`` profile (id or resolved path),
    constants to fit (``keys``; empty: the defaults, :func:`sncc.sim.calibration.fit.fit`), the
    ``points``, ``residual_floor`` and each point's simulation spec (``specs``, same order)."""

    file: str
    base: str
    keys: List[str]
    points: List[Point]
    residual_floor: bool = True
    specs: List[Any] = field(default_factory=list)


def file_kind(path: str) -> str:
    """``"JSON"`` for a ``.json`` name, else ``"TOML"`` (the rule of the measurements file)."""
    return "JSON" if path.endswith(".json") else "TOML"


def shown(v: Any) -> str:
    """A value as a measurements file writes it, for messages: ``"fast"``, ``true``, ``inf``, an
    array, a table."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        text = json.dumps(v, ensure_ascii=False)
        return text if len(text) <= 60 else text[:50] + "…\""
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "a table"
    if v is None:
        return "null"
    import datetime

    if isinstance(v, datetime.datetime):
        return "a date and time"
    return "a date" if isinstance(v, datetime.date) else "a time" if isinstance(v, datetime.time) else "a value"


def _named(path: Tuple) -> str:
    """A key path for messages: ``point 2: `ttft_s` `` for ``("point", 1, "ttft_s")``, else the dotted key."""
    if len(path) >= 2 and path[0] in ("point", "points") and isinstance(path[1], int):
        rest = ".".join(map(str, path[2:]))
        return f"point {path[1] + 1}" + (f": `{rest}`" if rest else "")
    return "`" + ".".join(map(str, path)) + "`"


def _suggest(name: str, known: Sequence[str]) -> Optional[str]:
    if len(name) > 64:
        return None
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return close[0] if close else None


def parse(src: SourceFile) -> Tuple[Any, keymap.KeyMap, List[Diagnostic]]:
    """(data, key map, [SN1080]) of a measurements file's text; data None when it does not parse."""
    kind = file_kind(src.name)
    # a byte-order mark is whitespace to both readers (editors on Windows write one); replacing it
    # by a space keeps every offset
    text = " " + src.text[1:] if src.text.startswith(BOM) else src.text
    try:
        data = json.loads(text) if kind == "JSON" else _toml.loads(text)
    except RecursionError:
        return None, {}, [diag(codes.MEASUREMENTS_SYNTAX_ERROR, f"not valid {kind}: nested too deeply to read",
                               src.span(0, 0), help="a measurements file is a table of points, a few levels deep")]
    except ValueError as e:          # json.JSONDecodeError and tomllib.TOMLDecodeError
        msg, at = keymap.syntax_error_offset(text, e)
        msg = msg[:1].lower() + msg[1:]
        twice = keymap.toml_written_twice(text) if kind == "TOML" and msg.startswith("cannot ") else None
        if twice is not None:
            path, first, second = twice
            return None, {}, [diag(codes.MEASUREMENTS_SYNTAX_ERROR, f"not valid TOML: {_named(path)} is given twice",
                                   src.span(*(second.key or second.value)), path=path,
                                   related=[Related(src.span(*(first.key or first.value)), "first given here")],
                                   help="keep one of the two")]
        empty = kind == "JSON" and not text.strip()
        return None, {}, [diag(codes.MEASUREMENTS_SYNTAX_ERROR,
                               f"not valid {kind}: " + ("the file is empty" if empty else msg),
                               src.span(at, at + 1),
                               help=(f"write a {kind} measurements file (README \"sncc calibrate\"); "
                                     + ("a .json file is read as JSON, any other name as TOML" if kind == "JSON"
                                        else "a file whose name ends in .json is read as JSON")))]
    return data, keymap.key_map(text, kind), []


class _Checker:
    def __init__(self, src: SourceFile, km: keymap.KeyMap) -> None:
        self.src, self.km = src, km
        self.diags: List[Diagnostic] = []
        self.sources: Dict[str, SourceFile] = {}      # plan files a diagnostic is located in

    def span(self, path: Tuple, key: bool = False):
        """The span of ``path``'s value (its key with ``key``); for ``()``, the whole file, the
        start of the file (one caret at 1:1)."""
        s, e = keymap.locate(self.km, path, key=key) if path else (0, 0)
        return self.src.span(s, e)

    def error(self, code, message: str, path: Tuple, *, key: bool = False, help: Optional[str] = None,
              related: Sequence[Related] = (), notes: Sequence[str] = ()) -> None:
        self.diags.append(diag(code, message, self.span(path, key), help=help, related=tuple(related),
                               notes=tuple(notes), path=path))

    def first(self, *paths: Tuple) -> Tuple:
        """The path, of ``paths``, written first in the file."""
        return min(paths, key=lambda p: keymap.locate(self.km, p, key=True))


def check_measurements(src: SourceFile, *, plans: bool = True, sources: Optional[Dict[str, SourceFile]] = None
                       ) -> Tuple[Optional[Measurements], List[Diagnostic]]:
    """Check the measurements file ``src`` (its name is the path as given: relative paths inside
    are read from its folder); returns (measurements, diagnostics), measurements None when any
    diagnostic is an error.  With ``plans`` (default) a clean file's plans are also compiled and
    checked against their benchmark and the base profile (SN2084, SN2085, SN4080, SN5083, the
    default fit).  ``sources``, when given, receives the plan files a diagnostic is located in
    (to render them)."""
    from sncc.cost import profile as P

    data, km, diags = parse(src)
    if data is None:
        return None, diags
    c = _Checker(src, km)
    if not isinstance(data, dict):
        c.diags.append(diag(codes.MEASUREMENTS_SYNTAX_ERROR, f"a measurements file is a table with keys "
                            f"{', '.join(TOP_KEYS[:4])}, not {shown(data)}", src.span(*keymap.locate(km, ())),
                            help='write {"point": [{"plan": "plan.sn", "tpot_ms": 47}]}'))
        return None, c.diags
    here = os.path.dirname(os.path.abspath(src.name))

    for k in data:
        if k not in TOP_KEYS:
            if k in POINT_KEYS:
                help_ = f"`{k}` is a key of a point: write it under its `[[point]]`"
            else:
                near = _suggest(k, TOP_KEYS[:4])
                help_ = (f"did you mean `{near}`? " if near else "") + \
                    f"a measurements file takes {', '.join(TOP_KEYS[:4])} (a point's metrics go under [[point]])"
            c.error(codes.MEASUREMENTS_UNKNOWN_KEY, f"unknown key `{k}`", (k,), key=True, help=help_)
    list_key = "point"
    if "point" in data and "points" in data:
        first = c.first(("point",), ("points",))
        second = ("points",) if first == ("point",) else ("point",)
        c.error(codes.MEASUREMENTS_CONFLICTING_KEYS, "`point` and `points` are both given", second, key=True,
                help="they are two spellings of one list: give every point in one of them",
                related=[Related(c.span(first, key=True), f"`{first[0]}` given here")])
    elif "points" in data:
        list_key = "points"

    # profile
    base = data.get("profile", "ascend-a3")
    raw = None
    if not isinstance(base, str) or not base:
        c.error(codes.MEASUREMENTS_INVALID_VALUE, f"`profile` must be a profile id or a .toml path, got {shown(base)}",
                ("profile",), help=f"e.g. profile = \"ascend-a3\" (profiles: {', '.join(P.available_profiles())})")
    else:
        if P.profile_path(base) == base and not os.path.isabs(base):
            base = os.path.join(here, base)
        try:
            raw = P._load_raw(base)
        except P.ProfileError as e:
            c.error(codes.MEASUREMENTS_FILE_UNUSABLE, f"`profile`: {e}", ("profile",),
                    help=f"give a profile id ({', '.join(P.available_profiles())}) or the path of a .toml profile, "
                         "relative to this file")

    # fit
    fit_keys: List[str] = []
    fit_ok = True
    given = data.get("fit", [])
    if not isinstance(given, list):
        fit_ok = False
        c.error(codes.MEASUREMENTS_INVALID_VALUE, f"`fit` must be a list of constant names, got {shown(given)}",
                ("fit",), help='e.g. fit = ["compute.eta_m"]')
        given = []
    for i, k in enumerate(given):
        where = ("fit", i)
        if not isinstance(k, str):
            fit_ok = False
            c.error(codes.MEASUREMENTS_INVALID_VALUE, f"`fit` lists constant names, not {shown(k)}", where,
                    help='e.g. fit = ["compute.eta_m"]')
            continue
        if k in given[:i]:
            fit_ok = False
            c.error(codes.MEASUREMENTS_INVALID_VALUE, f"`fit`: `{k}` is listed twice", where,
                    help="name each constant once",
                    related=[Related(c.span(("fit", given.index(k))), "first listed here")])
            continue
        problem = _fit_key_diag(raw, k)
        if problem:
            fit_ok = False
            c.error(codes.MEASUREMENTS_INVALID_VALUE, problem[0], where, help=problem[1])
            continue
        fit_keys.append(k)

    floor = data.get("residual_floor", True)
    if not isinstance(floor, bool):
        c.error(codes.MEASUREMENTS_INVALID_VALUE, f"`residual_floor` must be true or false, got {shown(floor)}",
                ("residual_floor",), help="true keeps the base profile's residuals as a floor; false writes only "
                                          "the in-sample residuals")
        floor = True

    # points
    pts = data.get(list_key, [])
    points: List[Tuple[int, Point]] = []
    if not isinstance(pts, list):
        c.error(codes.MEASUREMENTS_INVALID_VALUE, f"`{list_key}` must be a list of tables ([[point]] in TOML), "
                f"got {shown(pts)}", (list_key,), help='write each point as a [[point]] table with `plan = "..."` '
                "and its measured metrics")
        pts = None
    elif not pts:
        c.error(codes.MEASUREMENTS_MISSING_KEY, "no `[[point]]`: the file measures nothing",
                (list_key,) if list_key in data else (),
                help="add a [[point]] with `plan` and a measured metric (ttft_s, tpot_ms, qpm) or a `bench_result`")
    for idx, p in enumerate(pts or []):
        pt = _check_point(c, p, (list_key, idx), idx + 1, here, src.name)
        if pt is not None:
            points.append((idx, pt))

    errors = any(d.is_error for d in c.diags)
    if errors or not plans:
        return (None if errors else Measurements(src.name, base, fit_keys, [p for _, p in points], floor)), c.diags

    # the plans (compiled), their benchmarks and the base profile's chips; the default fit
    prof = P.load_profile(base)
    specs = []
    for idx, pt in points:
        spec = _check_plan(c, pt, (list_key, idx), base, prof)
        specs.append(spec)
    if fit_ok and not fit_keys:
        _, problem = fit_keys_for(raw, [], [p for _, p in points])
        if problem:
            c.error(codes.MEASUREMENTS_MISSING_KEY, problem[0], ("fit",) if "fit" in data else (),
                    help=problem[1])
    if sources is not None:
        sources.update(c.sources)
    if any(d.is_error for d in c.diags):
        return None, c.diags
    return Measurements(src.name, base, fit_keys, [p for _, p in points], floor, specs), c.diags


def _fit_key_diag(raw: Optional[Dict[str, Any]], key: str) -> Optional[Tuple[str, str]]:
    """(message, help) when constant ``key`` of base profile ``raw`` cannot be fitted, else None
    (the rule of :func:`sncc.sim.calibration.fit._fit_key_problem`)."""
    from sncc.cost.profile import CONSTANTS

    if _kind_of(key) is None:
        names = [k for k in CONSTANTS if _kind_of(k)] + ["comm.ep_link_efficiency"]
        near = _suggest(key, names)
        return (f"`fit`: `{key}` is not a numeric constant the simulator reads",
                f"did you mean `{near}`?" if near else f"fittable: {', '.join(names)}")
    if raw is None:
        return None             # the base profile did not load (reported at `profile`)
    try:
        v = _get(raw, key)["value"]
    except CalibrationError as e:
        return f"`fit`: the base {e}", "fit a constant the base profile has, or another base profile"
    if not v > 0:
        return (f"`fit`: `{key}` is {v} in the base profile",
                "the fit scales a constant by factors of its base value: start from a copy of the profile "
                "with a positive value")
    return None


def _check_point(c: _Checker, p: Any, path: Tuple, n: int, here: str, file: str) -> Optional[Point]:
    """One point's diagnostics; its :class:`Point` when it has none."""
    before = len(c.diags)
    if not isinstance(p, dict):
        c.error(codes.MEASUREMENTS_INVALID_VALUE, f"point {n} must be a table, got {shown(p)}", path,
                help='write each point as a [[point]] table (a JSON object) with `plan` and its metrics')
        return None
    for k in p:
        if k not in POINT_KEYS:
            near = _suggest(k, POINT_KEYS)
            top = f"`{k}` is a top-level key: write it before the first [[point]]; " if k in TOP_KEYS else ""
            c.error(codes.MEASUREMENTS_UNKNOWN_KEY, f"point {n}: unknown key `{k}`", path + (k,), key=True,
                    help=top + (f"did you mean `{near}`? " if near and not top else "")
                    + f"a point takes {', '.join(POINT_KEYS)}")
    plan = None
    if "plan" not in p:
        c.error(codes.MEASUREMENTS_MISSING_KEY, f"point {n} has no `plan`", path,
                help='add `plan = "path/to/plan.sn"` (relative to the measurements file): the plan the figures '
                     "were measured on")
    elif not isinstance(p["plan"], str) or not p["plan"]:
        c.error(codes.MEASUREMENTS_INVALID_VALUE, f"point {n}: `plan` must be the path of a .sn file, "
                f"got {shown(p['plan'])}", path + ("plan",), help='e.g. plan = "plans/deepseek-r1.sn"')
    else:
        from sncc.syntax.imports import not_a_regular_input

        plan = p["plan"] if os.path.isabs(p["plan"]) else os.path.join(here, p["plan"])
        why = not_a_regular_input(plan)
        if why is None and not os.path.isfile(plan):
            why = "not found"
        if why:
            c.error(codes.MEASUREMENTS_FILE_UNUSABLE, f"point {n}: plan {plan} {why}", path + ("plan",),
                    help=f"a plan path is relative to the measurements file's folder ({here})")
    meas: Dict[str, float] = {}
    for k in METRICS:
        if k in p:
            v = p[k]
            if not (_is_number(v) and v > 0):
                c.error(codes.MEASUREMENTS_INVALID_VALUE, f"point {n}: `{k}` must be a number > 0 "
                        f"({METRIC_UNITS[k]}), got {shown(v)}", path + (k,),
                        help=f"write the measured value as a bare number in {METRIC_UNITS[k]}, e.g. {k} = "
                             + {"ttft_s": "1.93", "tpot_ms": "47", "qpm": "608"}.get(k, "12.5"))
            else:
                meas[k] = float(v)
    bench = None
    bench_failed = False
    if "bench_result" in p:
        where = f"point {n}"
        try:
            got, bench = read_bench_result(p["bench_result"], here, where)
        except CalibrationError as e:
            bench_failed = True
            c.error(codes.MEASUREMENTS_FILE_UNUSABLE, str(e), path + ("bench_result",),
                    help="bench_result names the `vllm bench serve --save-result` JSON of the run (bench.sh writes "
                         "bench-result.json), or the list of every client's file, relative to this file")
        else:
            for k, v in got.items():
                if k in p:
                    c.error(codes.MEASUREMENTS_CONFLICTING_KEYS, f"point {n}: `{k}` is given and also read from "
                            "`bench_result`", path + (k,), key=True,
                            help=f"remove `{k}`, or bench_result",
                            related=[Related(c.span(path + ("bench_result",)), f"gives {k}")])
                meas[k] = v
    if not meas and not bench_failed and not any(k in p for k in METRICS):
        c.error(codes.MEASUREMENTS_MISSING_KEY, f"point {n} has none of {', '.join(METRICS)} and no bench_result",
                path, help="give what was measured on the plan, e.g. tpot_ms = 47, or bench_result = "
                           '"bench-result.json"')
    req = p.get("requests")
    if req is not None and not (isinstance(req, int) and not isinstance(req, bool) and req >= 1):
        c.error(codes.MEASUREMENTS_INVALID_VALUE, f"point {n}: `requests` must be a whole number >= 1, "
                f"got {shown(req)}", path + ("requests",), help="the number of requests of a shorter run while "
                                                                  "fitting, e.g. requests = 500; or leave it out")
        req = None
    if len(c.diags) > before or plan is None:
        return None
    if req is None and bench and bench.get("requests"):
        req = int(bench["requests"])            # the run-level metrics are the benchmark's run
    return Point(plan, meas, req, n, file, bench)


def _check_plan(c: _Checker, pt: Point, path: Tuple, base: str, prof: Any) -> Any:
    """Compile a point's plan and check it against its benchmark and the base profile; its
    simulation spec, or None after a diagnostic."""
    from sncc.compiler import compile_file
    from sncc.sim.from_plan import spec_from_plan

    n = pt.n
    try:
        with open(pt.plan, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as e:
        c.error(codes.MEASUREMENTS_FILE_UNUSABLE, f"point {n}: plan: cannot read {pt.plan}: "
                f"{getattr(e, 'strerror', None) or e}", path + ("plan",), help="`sncc check` the plan file")
        return None
    comp = compile_file(SourceFile(pt.plan, text))
    errs = [d for d in comp.diagnostics if d.is_error] if comp is not None else []
    if comp is None or errs or comp.plan is None:
        what = (f"has {len(errs)} error{'s' if len(errs) != 1 else ''}" if errs else "holds no plan")
        c.error(codes.MEASUREMENTS_FILE_UNUSABLE, f"point {n}: plan {pt.plan} {what}", path + ("plan",),
                help=f"run `sncc check {pt.plan}` and fix it, or point at the plan the figures were measured on")
        return None
    try:
        spec = spec_from_plan(comp.plan, comp.resolved, profile=base)
    except ValueError as e:
        # a chip fact the catalog lacks (SN4080) or a combination the cost model refuses (SN5083):
        # the diagnostic `sncc simulate` gives, at the plan, the point's `plan` as related location
        from sncc.sim.command import missing_chip_fact_diagnostic, not_simulable_diagnostic
        from sncc.sim.from_plan import MissingChipFact

        d = (missing_chip_fact_diagnostic(comp.plan, e) if isinstance(e, MissingChipFact)
             else not_simulable_diagnostic(comp, e))
        c.sources.update(comp.sources)
        c.diags.append(replace(d, related=d.related + (Related(c.span(path + ("plan",)), f"point {n}'s plan"),)))
        return None
    if pt.requests:
        wl = spec.workload
        conc = min(wl.concurrency, pt.requests) if wl.concurrency else None
        spec = replace(spec, workload=replace(wl, requests=pt.requests, concurrency=conc))
    bad = False
    why = bench_mismatch(pt, spec)
    if why:
        bad = True
        c.error(codes.MEASUREMENTS_POINT_MISMATCH, f"point {n}: {why}", path + ("bench_result",),
                help="simulate the load the benchmark ran: the plan `sncc build` wrote bench.sh from")
    why = chip_problem(prof, spec)
    if why:
        bad = True
        msg, _, hint = why.partition("; ")
        c.error(codes.MEASUREMENTS_POINT_MISMATCH, f"point {n}: plan {os.path.basename(pt.plan)} {msg}",
                path + ("plan",), help=hint or None)
    return None if bad else spec

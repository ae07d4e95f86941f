"""Workload trace files: ``workload { trace = "trace.csv" }``.

Format (CSV, read with the standard ``csv`` module): one request per row,
``input_len, output_len[, arrival_s]``; lengths are positive integers [tokens], ``arrival_s``
the request's arrival [s from the start of the run], non-decreasing.  Either every row has an
arrival or none does.  Blank lines, ``#`` comment lines and one header row (first row whose
first cell is not a number) are skipped.  The path is relative to the file that names it.

Errors are :class:`TraceError` with the trace file's line and column; :func:`check_trace`
turns them into ``SN2015`` diagnostics at the plan's ``trace`` value (a check of
:data:`sncc.checks.CHECKS`), so ``sncc check`` reports a malformed trace before any run.

A trace path gets the guards of an import (:func:`sncc.syntax.imports.not_a_regular_input`):
regular files only, nothing under ``/proc``, ``/sys`` or ``/dev`` (a FIFO would block every
command, ``/proc/self/environ`` holds secrets), at most :data:`MAX_TRACE_BYTES`, read with the
bounded reader (:func:`sncc.source.read_bytes_limited`).  A cell quoted in an error is cut to
:data:`MAX_CELL_CHARS` characters.
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from typing import Iterable, List, Optional, Tuple

Row = Tuple[int, int, Optional[float]]

#: largest trace file read [B]: 16 MiB, about a million rows (more requests cycle the rows)
MAX_TRACE_BYTES = 16 * 2**20
#: longest cell text an error message quotes [characters]
MAX_CELL_CHARS = 24
#: separators a trace written for another tool may use instead of ``,`` (named in the error)
OTHER_SEPARATORS = ((";", "`;`"), ("\t", "a tab"), ("|", "`|`"), (" ", "a space"))


def _limits() -> Tuple[int, int]:
    """(longest length [tokens], largest arrival_s [s]): the bounds a plan's own numbers get,
    ``INT32_MAX`` for token counts (the engines' 32-bit counts, :mod:`sncc.plan.model`) and
    ``MAX_MAGNITUDE`` (2^53 - 1 in the base unit, SN2009, :mod:`sncc.plan.build`) for a time."""
    from sncc.plan.build import MAX_MAGNITUDE
    from sncc.plan.model import INT32_MAX

    return INT32_MAX, MAX_MAGNITUDE


def _separator_found(line: str) -> Optional[str]:
    """The name of the separator ``line`` (a row read as one cell) uses instead of ``,`` when
    splitting it there gives 2 or 3 numeric cells, else None."""
    for sep, name in OTHER_SEPARATORS:
        parts = [p for p in line.strip().split(sep) if p.strip() or sep != " "]
        if len(parts) in (2, 3):
            try:
                for p in parts:
                    float(p)
            except ValueError:
                continue
            return name
    return None


def _separator_error(path: str, line: int, cells: List[str]) -> Optional["TraceError"]:
    """A :class:`TraceError` at ``line``:1 when the row's one cell holds another separator's cells."""
    if len(cells) != 1:
        return None
    name = _separator_found(cells[0])
    if name is None:
        return None
    return TraceError(path, line, 1, f"malformed row {_cell(cells[0])}: its cells are separated by {name}, "
                                     "but a trace is comma-separated (`input_len,output_len[,arrival_s]`)")


def _cell(text: str) -> str:
    """``text`` stripped and cut to :data:`MAX_CELL_CHARS` characters, quoted (``repr``)."""
    t = text.strip()
    return repr(t) if len(t) <= MAX_CELL_CHARS else repr(t[:MAX_CELL_CHARS]) + f"… ({len(t)} characters)"


@dataclass
class TraceError(ValueError):
    """A malformed trace: ``path``, 1-based ``line`` and ``col`` (0 = whole file), ``message``."""

    path: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}:{self.col}" if self.line else self.path
        return f"{where}: {self.message}"


def trace_path(trace: str, plan_file: Optional[str]) -> str:
    """``trace`` resolved against the folder of ``plan_file`` (unless absolute)."""
    if os.path.isabs(trace) or not plan_file or plan_file.startswith("<"):
        return trace
    return os.path.normpath(os.path.join(os.path.dirname(plan_file), trace))


def _int(cell: str, path: str, line: int, col: int, what: str, cap: Optional[int]) -> int:
    try:
        v = float(cell)
    except ValueError:
        raise TraceError(path, line, col, f"{what} {_cell(cell)} is not a number") from None
    if not v == v or v in (float("inf"), float("-inf")) or v != int(v) or v < 1:
        raise TraceError(path, line, col, f"{what} must be a positive whole number of tokens, got {_cell(cell)}")
    if cap is not None and v > cap:
        raise TraceError(path, line, col, f"{what} {int(v)} exceeds the workload's max {cap}")
    most = _limits()[0]
    if v > most:
        raise TraceError(path, line, col, f"{what} {_cell(cell)} is too large: token counts are limited to "
                                          f"{most:,} (2^31 - 1, the engines' 32-bit counts)")
    return int(v)


def read_trace(path: str, *, max_input: Optional[int] = None, max_output: Optional[int] = None) -> List[Row]:
    """Rows ``(input_len, output_len, arrival_s or None)`` of the trace at ``path``.

    Raises :class:`TraceError` (a special file or one under /proc, /sys, /dev, a file larger than
    :data:`MAX_TRACE_BYTES`, unreadable file, no rows, a wrong cell count (a row of another
    separator, ``100;10``, named as such), a non-numeric or non-positive length, a length above
    ``max_input``/``max_output`` or 2^31 - 1, a negative or decreasing arrival or one above
    2^53 - 1 s, arrivals on some rows only)."""
    from sncc.source import read_bytes_limited
    from sncc.syntax.imports import not_a_regular_input

    why = not_a_regular_input(path)
    if why:
        raise TraceError(path, 0, 0, f"cannot read the trace: it {why}; a trace is a regular CSV file")
    try:
        text = read_bytes_limited(path, MAX_TRACE_BYTES, regular_only=True).decode("utf-8")
    except UnicodeDecodeError:
        raise TraceError(path, 0, 0, "the trace is not UTF-8 text") from None
    except (OSError, ValueError) as e:  # ValueError: a NUL byte in the path
        raise TraceError(path, 0, 0, f"cannot read the trace: {getattr(e, 'strerror', None) or e}") from None
    rows: List[Row] = []
    has_arrival: Optional[bool] = None
    last = 0.0
    header_ok = True
    for n, cells in enumerate(csv.reader(text.splitlines()), 1):
        if not cells or not "".join(cells).strip() or cells[0].lstrip().startswith("#"):
            continue
        cols, pos = [], 1
        for c in cells:          # column (1-based) where each cell starts
            cols.append(pos)
            pos += len(c) + 1
        if header_ok:
            header_ok = False
            try:
                float(cells[0])
            except ValueError:
                err = _separator_error(path, n, cells)
                if err is not None:   # `100;10`: a row of another separator, not a header
                    raise err from None
                continue          # one header row
        if len(cells) not in (2, 3):
            raise _separator_error(path, n, cells) or TraceError(
                path, n, 1, f"expected 2 or 3 columns (input_len, output_len[, arrival_s]), got {len(cells)}")
        inp = _int(cells[0], path, n, cols[0], "input_len", max_input)
        out = _int(cells[1], path, n, cols[1], "output_len", max_output)
        arr: Optional[float] = None
        if len(cells) == 3 and cells[2].strip():
            try:
                arr = float(cells[2])
            except ValueError:
                raise TraceError(path, n, cols[2], f"arrival_s {_cell(cells[2])} is not a number") from None
            if not arr >= 0 or arr == float("inf"):
                raise TraceError(path, n, cols[2], f"arrival_s must be a finite time >= 0 s, got {_cell(cells[2])}")
            latest = _limits()[1]
            if arr > latest:
                raise TraceError(path, n, cols[2], f"arrival_s {_cell(cells[2])} is too large: times are limited "
                                                   f"to 2^53 - 1 s ({latest:,} s), as a plan's numbers are (SN2009)")
            if arr < last:
                raise TraceError(path, n, cols[2], f"arrival_s {arr:g} is before the previous row's {last:g} (rows must be in arrival order)")
            last = arr
        if has_arrival is None:
            has_arrival = arr is not None
        elif has_arrival != (arr is not None):
            raise TraceError(path, n, 1, "either every row has an arrival_s or none does")
        rows.append((inp, out, arr))
    if not rows:
        raise TraceError(path, 0, 0, "the trace has no request rows")
    return rows


#: how far a workload `input`/`output` mean may be from the trace's mean length before SN5082
#: says bench.sh (which sends the block's mean, not the trace) measures another workload: a
#: tolerance of this check, not a fact about an engine
MEAN_TOLERANCE = 0.10


def check_trace(plan, resolved) -> Iterable:
    """SN2015 when the plan's workload trace cannot be read or is malformed; SN2016 when its
    rows carry arrival times and the workload also sets ``rate`` or ``concurrency``; the note
    SN5081 when a written ``requests`` is not the row count (honoured: the first rows, or the rows
    cycled); SN5082 when an ``input``/``output`` mean is more than :data:`MEAN_TOLERANCE` away from
    the trace's mean (``bench.sh`` sends the block's lengths).  The rows are the facts'
    (:mod:`sncc.facts.workload`), read once."""
    from sncc.diagnostics import codes
    from sncc.diagnostics.model import diag

    wl = getattr(plan, "workload", None)
    if wl is None or not wl.trace:
        return
    span = wl.span_of("trace")
    rows, err = getattr(resolved, "trace", None), getattr(resolved, "trace_error", None)
    if rows is None and err is None:    # facts derived without the trace (a hand-built Facts)
        try:
            rows = read_trace(trace_path(wl.trace, span.file if span is not None else None),
                              max_input=wl.input.max, max_output=wl.output.max)
        except TraceError as e:
            err = e
    if err is not None:
        yield diag(codes.TRACE_INVALID, f"workload trace: {err}", span,
                   help="rows are `input_len, output_len[, arrival_s]`; see `sncc explain SN2015`")
        return
    from sncc.diagnostics.model import Related

    mode = "rate" if wl.rate is not None else "concurrency" if wl.concurrency is not None else None
    if mode and rows[0][2] is not None:
        yield diag(codes.CONFLICTING_KEYS,
                   f"the workload trace gives every request's arrival time (arrival_s), which replaces "
                   f"`{mode}`; a workload has one arrival mode",
                   wl.span_of(mode), related=[Related(span, "trace with arrival times given here")],
                   help=f"remove `{mode}` to replay the trace's arrivals, or drop the trace's arrival_s "
                        f"column to keep its lengths at this `{mode}`",
                   path=("workload", mode))
    from sncc.units import format_count

    n = len(rows)
    if not wl.is_default("requests") and wl.requests != n:
        how = (f"the first {wl.requests} rows are replayed" if wl.requests < n else
               f"the rows are cycled {wl.requests / n:.3g} times" + (" (arrival times shifted by the trace's span)"
                                                                      if rows[0][2] is not None else ""))
        yield diag(codes.TRACE_REQUESTS_DIFFER,
                   f"`requests = {wl.requests}`, but the trace has {format_count(n, 'row')}: {how}",
                   wl.span_of("requests"), related=[Related(span, "the trace")],
                   help="remove `requests` to replay each row once", path=("workload", "requests"))
    for block, col in (("input", 0), ("output", 1)):
        lengths = wl.input if block == "input" else wl.output
        mean = sum(r[col] for r in rows) / n
        if abs(lengths.mean - mean) > MEAN_TOLERANCE * mean:
            yield diag(codes.TRACE_LENGTHS_DISAGREE,
                       f"`{block}.mean = {lengths.mean}` tokens, but the trace's {block} lengths average "
                       f"{mean:.0f}: `sncc simulate` replays the trace, `bench.sh` sends the block's lengths",
                       lengths.span_of("mean") or lengths.block_span, related=[Related(span, "the trace")],
                       notes=(f"with a trace, `{block}` sets the rows' bound (`max`), the default max_model_len "
                              "and bench.sh's random dataset (vllm bench serve does not replay the trace)",),
                       help=f"write `mean = {round(mean)}` so the benchmark measures the simulated workload",
                       path=("workload", block, "mean"))

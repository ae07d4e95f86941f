"""The ``sncc import`` command and the ``check --import`` step (click), kept out of ``cli.py``.

``sncc import FILE... [-o plan.sn]`` prints (or writes) the imported plan and reports the import's
diagnostics on stderr, located in the input files; exit 1 when one is an error.
:func:`check_imported` imports and compiles in one step for ``sncc check --import FILE``: the
plan's diagnostics are moved onto the script line their value came from (the plan line's
``# from run.sh:12`` comment), so that every diagnostic points into the script where it can.
"""

from __future__ import annotations

import dataclasses
import re
import sys

import click

from sncc.import_options import import_options

_ORIGIN = re.compile(r"# .*?from (?P<file>[^\s:]+):(?P<line>\d+)")


def run_import(files, system, engine, engine_version, model):
    """:func:`sncc.importer.import_files`; a file that cannot be read raises
    :class:`sncc.cli.ReadFailure` (SN1060 on that file, exit 2, as `sncc check` reports it)."""
    from sncc.cli import ReadFailure
    from sncc.importer import import_files

    try:
        return import_files(list(files), system=system, engine=engine, engine_version=engine_version, model=model)
    except OSError as e:
        raise ReadFailure(e.filename or (files[0] if files else "-"), e.strerror or str(e)) from None


@click.command("import")
@click.argument("files", nargs=-1, required=True)
@click.option("-o", "--output", "output", default=None, help="write the plan here (default: stdout)")
@import_options
def import_command(files, output, system, engine, engine_version, model) -> None:
    """Import launch scripts / command lines (`vllm serve ...`) and vLLM --config YAML files
    into a plan, without running them; each value keeps its origin (`# from run.sh:12`)."""
    from sncc.atomic_file import write_atomically
    from sncc.diagnostics import render_text

    from sncc.cli import IMPORT_READ_HELP, ReadFailure, _unique_paths, _unreadable

    given = _unique_paths(tuple(files))   # check --import's rule: each file the user gave, once
    try:
        res = run_import(given, system, engine, engine_version, model)
    except ReadFailure as e:
        click.echo(render_text.render([_unreadable(e, IMPORT_READ_HELP)], {}, 1, color=False), nl=False, err=True)
        sys.exit(2)
    if res.diagnostics:
        # the files given (not a --config YAML or --env-file a script names), as `check --import` counts
        click.echo(render_text.render(res.diagnostics, res.sources, len(given), color=False), nl=False, err=True)
    if res.text:
        if output:
            write_atomically(output, res.text)
        else:
            click.echo(res.text, nl=False)
    sys.exit(1 if res.has_errors or not res.text else 0)


def _origin_line(span, plan_src, sources):
    """(source, 1-based line) of the script line the imported plan's value at ``span`` came from
    (its line's ``# from run.sh:12`` comment), or (None, 0)."""
    if span is None or span.file != plan_src.name:
        return None, 0
    m = _ORIGIN.search(plan_src.line_text(plan_src.line_col(span.start)[0]))
    if not m:
        return None, 0
    target = next((s for name, s in sources.items() if name.endswith(m.group("file"))), None)
    n = int(m.group("line"))
    return (target, n) if target is not None and 1 <= n <= target.line_count else (None, 0)


def _line_span(target, n):
    """The span of script line ``n`` of ``target`` without its indentation and continuation."""
    text = target.line_text(n)
    base = target.offset_of_lsp(n - 1, 0)
    return target.span(base + (len(text) - len(text.lstrip())), base + len(text.rstrip(" \\")))


def relocate(d, plan_src, sources):
    """Diagnostic ``d`` of the imported plan moved onto the script line its value came from (the
    origin comment of the plan line it points at), the plan location kept as a related note; ``d``
    unchanged when that line names no origin.  Its related locations in the imported plan move
    onto their values' script lines the same way (the imported plan is not on disk)."""
    from sncc.diagnostics.model import Related

    if d.span is None or d.span.file != plan_src.name:
        return d
    moved = []
    for r in d.related:
        src, k = _origin_line(r.span, plan_src, sources)
        moved.append(Related(_line_span(src, k), r.message) if src is not None else r)
    d = dataclasses.replace(d, related=tuple(moved))
    line = plan_src.line_col(d.span.start)[0]
    target, n = _origin_line(d.span, plan_src, sources)
    if target is None:
        # a value the script does not set (an engine default, a catalog fact): the command line
        # it would go on, with the imported plan's line as a note (that file is not on disk)
        target, n = _command_line(sources, plan_src.name)
        if target is None:
            return d
        note = f"imported plan line {line}: `{plan_src.line_text(line).strip()}` (not set in the script)"
        d = dataclasses.replace(d, notes=tuple(d.notes) + (note,))
    return dataclasses.replace(d, span=_line_span(target, n),
                               related=d.related + (Related(d.span, "as imported into the plan"),))


_COMMAND = re.compile(r"\bvllm\s+serve\b|vllm\.entrypoints\.openai\.api_server")


def _command_line(sources, plan_name):
    """(source, 1-based line) of the first ``vllm serve`` / api_server command among the imported
    files (``sources`` minus the virtual plan ``plan_name``), else their first line; (None, 0)
    when no file was read."""
    files = [s for name, s in sources.items() if name != plan_name]
    for src in files:
        for n in range(1, src.line_count + 1):
            if _COMMAND.search(src.line_text(n)):
                return src, n
    return (files[0], 1) if files and files[0].line_count else (None, 0)


def check_imported(files, system=None, engine=None, engine_version=None, model=None):
    """(diagnostics, sources) of importing ``files`` and checking the plan: the import's own
    (SN80xx) and the plan's, relocated into the script (:func:`relocate`)."""
    from sncc.compiler import compile_file
    from sncc.diagnostics import codes
    from sncc.source import SourceFile

    res = run_import(files, system, engine, engine_version, model)
    sources = dict(res.sources)
    if not res.text:
        return list(res.diagnostics), sources
    plan_src = SourceFile(f"{files[0]}.imported.sn", res.text)
    comp = compile_file(plan_src)
    sources.update(comp.sources)
    # a variable the import already reported as read by nothing (SN8002) is not reported again
    # by the plan's check (SN4044): one diagnostic per option of the script
    unread = {d.path[-1] for d in res.diagnostics if d.code is codes.IMPORT_UNREAD_VARIABLE and d.path}
    plan_diags = [d for d in comp.diagnostics
                  if not (d.code is codes.ENV_VARIABLE_UNREAD and d.path and d.path[-1] in unread)]
    return list(res.diagnostics) + [relocate(d, plan_src, sources) for d in plan_diags], sources

"""The ``sncc`` command line (click).

Exit codes: 0 no errors; 1 errors found (or an SLO missed in ``simulate``);
2 sncc could not run (usage, unreadable file, output folder problem,
internal error).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sncc import __version__

EXIT_OK, EXIT_PROBLEMS, EXIT_FAILURE = 0, 1, 2


class ReadFailure(Exception):
    """A plan file could not be read at all (exit 2)."""


def read_source(path: str, stdin_name: str | None = None):
    """Read a plan file (``-`` for stdin) as UTF-8.

    Returns ``(SourceFile, [diagnostics])``; invalid UTF-8 becomes an SN1004
    diagnostic on a file decoded with replacement characters.  Raises
    :class:`ReadFailure` when the file cannot be read.
    """
    from sncc.diagnostics import codes
    from sncc.diagnostics.model import diag
    from sncc.source import SourceFile

    if path == "-":
        data = sys.stdin.buffer.read()
        name = stdin_name or "<stdin>"
    else:
        p = Path(path)
        try:
            data = p.read_bytes()
        except IsADirectoryError:
            raise ReadFailure(f"{path}: is a directory") from None
        except OSError as e:
            raise ReadFailure(f"{path}: {e.strerror or e}") from None
        name = path
    try:
        return SourceFile(name, data.decode("utf-8")), []
    except UnicodeDecodeError as e:
        text = data.decode("utf-8", errors="replace")
        offset = len(data[: e.start].decode("utf-8", errors="replace"))
        src = SourceFile(name, text)
        return src, [diag(codes.INVALID_ENCODING, f"invalid UTF-8 byte 0x{data[e.start]:02x}", src.span(offset, offset + 1),
                          help="save the file as UTF-8")]


def _compile(path: str, stdin_name: str | None = None):
    """Read and compile one file; returns (compilation, source, extra diagnostics)."""
    from sncc.compiler import compile_file, internal_error

    src, pre = read_source(path, stdin_name)
    comp = compile_file(src)
    if pre:
        return None, src, pre
    try:
        comp.diagnostics  # noqa: B018 - run every phase now, inside the guard
    except RecursionError as exc:
        return None, src, [internal_error(src, exc)]
    except Exception as exc:  # noqa: BLE001 - never a traceback for the user
        return None, src, [internal_error(src, exc)]
    return comp, src, []


def _emit_diagnostics(diags, sources, nfiles, fmt: str, color: bool) -> None:
    if fmt == "json":
        from sncc.diagnostics import render_json

        click.echo(render_json.render(diags, sources, nfiles), nl=False)
    else:
        from sncc.diagnostics import render_text

        out = render_text.render(diags, sources, nfiles, color=color)
        click.echo(out, nl=False, err=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sncc")
def main() -> None:
    """sncc, the supernode configuration compiler: check, build and simulate serving plans."""


@main.command()
@click.argument("plans", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="output format of the diagnostics")
@click.option("--stdin-filename", default=None, help="name to report for a plan read from `-`")
@click.option("--color/--no-color", default=None, help="colour the text output (default: when stdout is a terminal)")
def check(plans: tuple[str, ...], fmt: str, stdin_filename: str | None, color: bool | None) -> None:
    """Check PLANS and report every problem found.

    Exit 0 when no errors, 1 when errors were found, 2 when a file cannot be read.
    """
    all_diags, sources = [], {}
    failed = False
    for path in plans:
        try:
            comp, src, extra = _compile(path, stdin_filename)
        except ReadFailure as e:
            click.echo(f"sncc: error: {e}", err=True)
            failed = True
            continue
        sources.update(comp.sources if comp is not None else {src.name: src})
        all_diags += extra + (comp.diagnostics if comp is not None else [])
    if color is None:
        color = sys.stdout.isatty()
    _emit_diagnostics(all_diags, sources, len(sources), fmt, color)
    internal = any(d.code.code == "SN9001" for d in all_diags)
    if failed or internal:
        sys.exit(EXIT_FAILURE)
    sys.exit(EXIT_PROBLEMS if any(d.is_error for d in all_diags) else EXIT_OK)


@main.command()
@click.argument("plan")
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="output folder (replaced atomically)")
@click.option("--force", is_flag=True, help="replace a non-empty folder that sncc did not create")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def build(plan: str, out_dir: Path, force: bool, fmt: str) -> None:
    """Lower PLAN to engine configs and env scripts in OUT_DIR.

    Refuses to write when the plan has errors; the folder is then left as it was.
    """
    try:
        comp, src, extra = _compile(plan)
    except ReadFailure as e:
        click.echo(f"sncc: error: {e}", err=True)
        sys.exit(EXIT_FAILURE)
    diags = extra + (comp.diagnostics if comp is not None else [])
    if comp is None or any(d.is_error for d in diags):
        _emit_diagnostics(diags, comp.sources if comp is not None else {src.name: src}, 1, fmt, sys.stdout.isatty())
        if any(d.code.code == "SN9001" for d in diags):
            sys.exit(EXIT_FAILURE)
        click.echo(f"sncc: not writing {out_dir}: the plan has errors", err=True)
        sys.exit(EXIT_PROBLEMS)
    from sncc.emit import emit_all
    from sncc.emit.validate import validate_output
    from sncc.emit.writer import OutputError, write_outputs

    try:
        files = emit_all(comp.plan, comp.resolved)
        for name, text in files.items():
            problems = validate_output(name, text)
            if problems:
                raise RuntimeError(f"{name} does not match its schema: {problems[0]}")
    except Exception as exc:  # noqa: BLE001
        from sncc.compiler import internal_error

        _emit_diagnostics([internal_error(src, exc)], {src.name: src}, 1, fmt, False)
        sys.exit(EXIT_FAILURE)
    try:
        written = write_outputs(files, out_dir, force=force, plan_source=src.text)
    except OutputError as e:
        click.echo(f"sncc: error: {e}", err=True)
        sys.exit(EXIT_FAILURE)
    warnings = [d for d in diags if not d.is_error]
    if warnings:
        _emit_diagnostics(warnings, comp.sources, 1, "text", sys.stdout.isatty())
    for p in written:
        click.echo(f"wrote {p}")
    sys.exit(EXIT_OK)


@main.command()
@click.argument("plan")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--seed", default=0, show_default=True, type=int, help="random seed of the workload")
def simulate(plan: str, fmt: str, seed: int) -> None:
    """Simulate PLAN serving its workload and compare with its SLOs.

    Exit 0 when every SLO is met, 1 when one is missed or the plan has errors.
    """
    try:
        comp, src, extra = _compile(plan)
    except ReadFailure as e:
        click.echo(f"sncc: error: {e}", err=True)
        sys.exit(EXIT_FAILURE)
    diags = extra + (comp.diagnostics if comp is not None else [])
    if comp is None or any(d.is_error for d in diags):
        _emit_diagnostics(diags, comp.sources if comp is not None else {src.name: src}, 1, "text", sys.stdout.isatty())
        sys.exit(EXIT_FAILURE if any(d.code.code == "SN9001" for d in diags) else EXIT_PROBLEMS)
    from sncc.sim import run_plan
    from sncc.sim.render import render_json, render_text

    try:
        result = run_plan(comp.plan, comp.resolved, seed=seed)
    except Exception as exc:  # noqa: BLE001
        click.echo(f"sncc: internal error in the simulator: {type(exc).__name__}: {exc}", err=True)
        sys.exit(EXIT_FAILURE)
    click.echo(render_json(result) if fmt == "json" else render_text(result, comp.plan), nl=False)
    sys.exit(EXIT_OK if all(s["met"] for s in result.to_dict()["slo"]) else EXIT_PROBLEMS)


@main.command()
@click.argument("code")
def explain(code: str) -> None:
    """Explain an error CODE (``SN3001``) or name (``parallel-size-mismatch``)."""
    from sncc.diagnostics.codes import REGISTRY, lookup

    ec = lookup(code)
    if ec is None:
        click.echo(f"sncc: error: unknown code `{code}`; codes are SN1001 … {max(REGISTRY)}", err=True)
        sys.exit(EXIT_FAILURE)
    click.echo(f"{ec.code} ({ec.name}), default severity {ec.severity}\n")
    click.echo(f"{ec.summary}.\n")
    click.echo(ec.explanation + "\n")
    click.echo("Failing example:\n")
    click.echo("\n".join("    " + ln for ln in ec.bad.splitlines()) + "\n")
    click.echo("Fixed:\n")
    click.echo("\n".join("    " + ln for ln in ec.good.splitlines()) + "\n")
    click.echo(f"See {ec.url}")


if __name__ == "__main__":  # pragma: no cover
    main()

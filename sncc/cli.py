"""The ``sncc`` command line (click).

Exit codes: 0 no errors; 1 errors found (or an SLO missed in ``simulate``);
2 sncc could not run (usage, unreadable file, output folder problem,
internal error).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from sncc import __version__
from sncc.import_options import import_options

# sncc's plan models use no pydantic plugin; pydantic looks plugins up (importlib.metadata
# entry points) when it builds the first model, ~25 ms of every start (issue 14 item 16).
# Only the sncc process is affected; set PYDANTIC_DISABLE_PLUGINS yourself to override.
# pydantic's plugin loader still imports importlib.metadata at its module level (about 20 ms
# CPU per start, measured with bench/bench_check.py's phases): no setting avoids that.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

EXIT_OK, EXIT_PROBLEMS, EXIT_FAILURE = 0, 1, 2
EXIT_INTERRUPTED = 130   # Ctrl-C (128 + SIGINT), every command


class ReadFailure(Exception):
    """A plan file could not be read at all (exit 2): ``path`` as given and ``reason``."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


def read_source(path: str, stdin_name: str | None = None):
    """Read a plan file (``-`` for stdin) as UTF-8.

    Returns ``(SourceFile, [diagnostics])``; invalid UTF-8 becomes an SN1004
    diagnostic on a file decoded with replacement characters.  Raises
    :class:`ReadFailure` when the file cannot be read: it does not exist, is not a
    regular file (a directory, a FIFO, which would block, a device), lies under
    ``/proc``, ``/sys`` or ``/dev``, or is larger than
    :data:`sncc.source.MAX_FILE_BYTES`.  A pipe is read through ``-``.
    """
    from sncc.source import MAX_FILE_BYTES, read_bytes_limited

    if path == "-":
        data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ReadFailure(stdin_name or "<stdin>", f"larger than {MAX_FILE_BYTES / 2**20:g} MiB, the most sncc reads")
        name = stdin_name or "<stdin>"
    else:
        from sncc.syntax.imports import pseudo_root

        root = pseudo_root(path)
        if root is not None:
            raise ReadFailure(path, f"is under {root}, a folder of kernel pseudo-files and devices; "
                                    "pipe a plan through stdin with `-`")
        try:
            data = read_bytes_limited(path, regular_only=True)
        except IsADirectoryError:
            raise ReadFailure(path, "is a directory") from None
        except OSError as e:
            reason = e.strerror or str(e)
            if reason == "not a regular file":
                import stat

                try:
                    fifo = stat.S_ISFIFO(os.stat(path).st_mode)
                except OSError:
                    fifo = False
                reason = ("is a FIFO (named pipe)" if fifo else "is not a regular file") + \
                    "; pipe a plan through stdin with `-`"
            raise ReadFailure(path, reason) from None
        except ValueError:
            raise ReadFailure(path.replace("\x00", "\\x00"), "the path holds a NUL byte") from None
        name = path
    return source_from_bytes(name, data)


def source_from_bytes(name: str, data: bytes):
    """``(SourceFile, [diagnostics])`` of plan bytes read from ``name``: UTF-8 text, or an
    SN1004 diagnostic at the first invalid byte on the text decoded with replacement characters."""
    from sncc.diagnostics import codes
    from sncc.diagnostics.model import diag
    from sncc.source import SourceFile, Span, foreign_encoding

    enc = foreign_encoding(data)
    if enc is not None:
        # no text to show: decoded as UTF-8 the file is NUL bytes and replacement characters, so
        # the diagnostic names the file alone (its source is not shown, :func:`_shown_sources`)
        return SourceFile(name, ""), [diag(
            codes.INVALID_ENCODING, f"the file is {enc} text (it starts with a {enc.split()[0]} byte-order mark); "
            "plan files must be UTF-8", Span(name, 0, 0),
            help=f"save the file as UTF-8, e.g. `iconv -f {enc.split()[0]} -t UTF-8 {name} > plan-utf8.sn`")]
    try:
        return SourceFile(name, data.decode("utf-8")), []
    except UnicodeDecodeError as e:
        text = data.decode("utf-8", errors="replace")
        offset = len(data[: e.start].decode("utf-8", errors="replace"))
        src = SourceFile(name, text)
        from sncc.syntax.paths import with_paths

        return src, with_paths([diag(codes.INVALID_ENCODING, f"invalid UTF-8 byte 0x{data[e.start]:02x}",
                                     src.span(offset, offset + 1), help="save the file as UTF-8")], {name: src})


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


def _suppressed_any(all_diags: list, shown: list) -> bool:
    """Whether a suppression comment removed any of ``all_diags`` from ``shown`` (only then can a
    suppressed error block the build; `check` imports :mod:`sncc.build` only then)."""
    kept = {id(d) for d in shown}
    return any(id(d) not in kept for d in all_diags)


def _shown_sources(src, pre: list) -> dict:
    """``{name: src}`` for rendering the diagnostics of a file that did not compile; {} for a file
    not decoded at all (a UTF-16/32 byte-order mark, :func:`source_from_bytes`): its diagnostic
    names the file alone, as SN1060 does, never a snippet of undecoded bytes."""
    from sncc.diagnostics import codes

    if not src.text and any(d.code is codes.INVALID_ENCODING for d in pre):
        return {}
    return {src.name: src}


def _diagnostics(comp, src, extra) -> tuple[list, dict]:
    """The diagnostics of one compiled file after inline suppressions, and its sources."""
    from sncc.diagnostics.filters import apply_suppressions

    sources = comp.sources if comp is not None else _shown_sources(src, extra)
    diags = extra + (comp.diagnostics if comp is not None else [])
    complete = comp is not None and comp.plan is not None
    return apply_suppressions(diags, sources, report_unused=complete), sources


DIAGNOSTIC_FORMATS = ["text", "concise", "json", "sarif", "github"]


def _emit_diagnostics(diags, sources, nfiles, fmt: str, color: bool) -> None:
    if fmt in ("json", "concise", "sarif", "github"):
        import importlib

        renderer = importlib.import_module(f"sncc.diagnostics.render_{fmt}")
        click.echo(renderer.render(diags, sources, nfiles), nl=False)
    else:
        from sncc.diagnostics import render_text

        out = render_text.render(diags, sources, nfiles, color=color)
        click.echo(out, nl=False, err=False)


class _Commands(click.Group):
    """The command group, with commands defined outside this module imported only when run
    (or listed by ``--help``): ``sncc check`` imports neither the importer nor the search."""

    #: command name → "module:attribute"
    LAZY = {"import": "sncc.importer.command:import_command", "search": "sncc.search.command:search_command"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx: click.Context, name: str):
        if name not in self.commands and name in self.LAZY:
            import importlib

            module, attr = self.LAZY[name].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return super().get_command(ctx, name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["sncc.argv"] = list(args)   # the words after `sncc`, for :meth:`invoke`
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        """Run the subcommand; a usage error (a bad option value, a missing argument, an empty
        ``--select``) under ``--format json`` also prints the diagnostics document with no
        diagnostics and its message in ``error`` (under ``--format sarif``, a SARIF log whose
        invocation failed), then click reports it on stderr and exits 2 as usual.  Raises what
        the subcommand raises, except Ctrl-C: ``KeyboardInterrupt`` (click's "Aborted!", exit 1,
        the code of "errors found") is said on stderr and exits 130, the shell's code for SIGINT,
        as ``sncc search`` does after printing its partial report."""
        args = ctx.meta.get("sncc.argv", [])
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            name = " ".join(filter(None, ["sncc", ctx.invoked_subcommand]))
            click.echo(f"{name}: interrupted (Ctrl-C); exit {EXIT_INTERRUPTED}", err=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
        except click.UsageError as e:
            fmt = _requested_format(args)
            if fmt == "json":
                _echo_json(_json_doc([], {}, 0, error=e.format_message()))
            elif fmt == "sarif":
                from sncc.diagnostics.render_sarif import document

                _echo_json(document([], {}, error=e.format_message()))
            raise


def _requested_format(args: list[str]) -> str | None:
    """The value of the last ``--format X`` / ``--format=X`` in a command line's words (before
    ``--``), or None.  Never raises."""
    fmt = None
    for i, a in enumerate(args):
        if a == "--":
            break
        if a == "--format" and i + 1 < len(args):
            fmt = args[i + 1]
        elif a.startswith("--format="):
            fmt = a.partition("=")[2]
    return fmt


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sncc")
def main() -> None:
    """sncc, the supernode configuration compiler: check, build, simulate and search serving plans."""


@main.command()
@click.argument("plans", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(DIAGNOSTIC_FORMATS), default="text", show_default=True,
              help="output format of the diagnostics")
@click.option("--stdin-filename", default=None, help="name to report for a plan read from `-`")
@click.option("--color/--no-color", default=None, help="colour the text output (default: when stdout is a terminal)")
@click.option("--select", "selects", multiple=True, metavar="CODES",
              help="report only these codes, code prefixes (SN4) or names; comma-separated, repeatable")
@click.option("--ignore", "ignores", multiple=True, metavar="CODES",
              help="do not report these codes, code prefixes or names; comma-separated, repeatable")
@click.option("--strict", is_flag=True, help="warnings fail the check too (exit 1)")
@click.option("--exit-zero", is_flag=True, help="exit 0 even when problems are found (2 still means sncc could not run)")
@click.option("--import", "imported", is_flag=True,
              help="PLANS are launch scripts / vLLM --config files: import them (`sncc import`) and check the plan")
@import_options
def check(plans: tuple[str, ...], fmt: str, stdin_filename: str | None, color: bool | None,
          selects: tuple[str, ...], ignores: tuple[str, ...], strict: bool, exit_zero: bool, imported: bool,
          **import_kw) -> None:
    """Check PLANS and report every problem found.

    Exit 0 when no errors, 1 when errors were found (or warnings, with
    --strict), 2 when a file cannot be read or sncc fails.  A comment
    `# sncc: ignore[CODE] reason` suppresses CODE on its line (or, alone on a
    line, on the next one); an error that makes the deployment impossible (which
    `build` refuses) is still reported, with a note that the suppression cannot
    make the plan buildable.
    """
    from sncc.diagnostics.filters import SelectorError, parse_selectors, select

    if strict and exit_zero:
        raise click.UsageError("--strict and --exit-zero contradict each other")
    try:
        selected = parse_selectors(selects) if selects else None
        ignored = parse_selectors(ignores)
    except SelectorError as e:
        raise click.BadParameter(str(e), param_hint="--select/--ignore") from None
    all_diags, sources = [], {}
    failed = False
    unread = 0
    for path in ([] if imported else _unique_paths(plans)):
        try:
            comp, src, extra = _compile(path, stdin_filename)
        except ReadFailure as e:
            # a located error in every format (the file, no line): JSON `valid: false`,
            # a GitHub annotation on the file, a SARIF result; exit 2 all the same
            all_diags.append(_unreadable(e))
            unread += 1
            failed = True
            continue
        diags, srcs = _diagnostics(comp, src, extra)
        if not srcs:   # a file not decoded (UTF-16/32): counted, though no source is shown
            unread += 1
        if comp is not None and _suppressed_any(comp.diagnostics, diags):
            from sncc.build import still_blocking

            # a suppressed error that makes the deployment impossible keeps `check` failing, as `build` refuses it
            diags = sorted(diags + still_blocking(comp, diags), key=lambda d: d.sort_key())
        sources.update(srcs)
        all_diags += select(diags, selected, ignored)
    if imported:
        from sncc.importer.command import check_imported

        given = _unique_paths(plans)
        try:
            diags, srcs = check_imported(given, **import_kw)
        except ReadFailure as e:   # SN1060 on the file, exit 2, as for a plan that cannot be read
            diags, srcs, failed = [_unreadable(e, IMPORT_READ_HELP)], {}, True
        sources.update(srcs)
        all_diags += select(diags, selected, ignored)
    all_diags = _once_per_run(all_diags)
    if color is None:
        color = sys.stdout.isatty()
    # with --import, the files the user gave (not the plan made of them, nor a --config YAML a script names)
    _emit_diagnostics(all_diags, sources, (len(given) if imported else len(sources)) + unread, fmt, color)
    internal = any(d.code.code == "SN9001" for d in all_diags)
    if failed or internal:
        sys.exit(EXIT_FAILURE)
    problems = any(d.is_error or (strict and d.severity == "warning") for d in all_diags)
    sys.exit(EXIT_PROBLEMS if problems and not exit_zero else EXIT_OK)


#: SN1060's help for a file given to `sncc import` / `check --import`
IMPORT_READ_HELP = "give the path of a launch script (`vllm serve ...`) or of a vLLM --config YAML file"


def _unreadable(e: ReadFailure, help: str = "give the path of a plan file (`.sn`), or `-` to read one from stdin"):
    """SN1060 on the file ``e.path`` (a span with no text behind it: renderers print the
    file alone) saying why it cannot be read."""
    from sncc.diagnostics import codes
    from sncc.diagnostics.model import diag
    from sncc.source import Span

    return diag(codes.UNREADABLE_FILE, f"cannot read `{e.path}`: {e.reason}", Span(e.path, 0, 0), help=help)


def _unreadable_exit(e: ReadFailure, fmt: str) -> None:
    """A plan file that cannot be read (simulate, search): SN1060 in the command's format, as
    ``sncc check`` reports it (the JSON document also carries ``error``, as when sncc cannot run),
    then exit 2."""
    if fmt == "json":
        _echo_json(_json_doc([_unreadable(e)], {}, 1, error=str(e)))
    else:
        _emit_diagnostics([_unreadable(e)], {}, 1, fmt, sys.stdout.isatty())
    sys.exit(EXIT_FAILURE)


def _once_per_run(diags: list) -> list:
    """``diags`` with each problem once: a diagnostic at the same file, position, code and
    message as an earlier one is dropped.  A shared definitions file checked with plans that
    import it (``sncc check shared/hw.sn a.sn b.sn``) is reported on once, not once per importer
    (the first report kept, with its "imported here" chain if it has one).  Files are compared
    by their real path (``shared/hw.sn`` and ``./shared/hw.sn`` are one file)."""
    real: dict[str, str] = {}

    def key(d) -> tuple:
        if d.span is None:
            return ("", -1, -1, d.code.code, d.message)
        f = d.span.file
        if f not in real:
            try:
                real[f] = f if f in ("-", "<stdin>") else os.path.realpath(f)
            except (OSError, ValueError):
                real[f] = f
        return (real[f], d.span.start, d.span.end, d.code.code, d.message)

    seen: set[tuple] = set()
    out = []
    for d in diags:
        k = key(d)
        if k not in seen:
            seen.add(k)
            out.append(d)
    return out


def _unique_paths(plans: tuple[str, ...]) -> list[str]:
    """``plans`` without repeats: a file named twice (``E E``, ``E ./E``, a symlink to it)
    is checked once, under the first name given; ``-`` (stdin) is kept once."""
    seen: set[str] = set()
    out = []
    for path in plans:
        try:
            key = path if path == "-" else os.path.realpath(path)
        except (OSError, ValueError):
            key = path
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


def conventional_out_dir(plan: str) -> Path:
    """The output folder ``build --check`` compares without ``-o``: ``x.sn`` → ``x.out`` beside it."""
    p = Path(plan)
    return p.with_suffix(".out") if p.suffix == ".sn" else p.with_name(p.name + ".out")


@main.command()
@click.argument("plans", nargs=-1, required=True, metavar="PLAN...")
@click.option("-o", "--output", "out_dir", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="output folder (replaced atomically); required unless --check")
@click.option("--force", is_flag=True, help="replace a non-empty folder that sncc did not create, or an sncc "
              "folder holding files its manifest.json does not list (they are deleted)")
@click.option("--check", "check_only", is_flag=True,
              help="write nothing; exit 1 when the output folder differs from what the build would write "
                   "(without -o, each PLAN x.sn is compared with x.out/ beside it, when that folder exists)")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def build(plans: tuple[str, ...], out_dir: Path | None, force: bool, check_only: bool, fmt: str) -> None:
    """Lower PLAN to engine configs and env scripts in OUT_DIR.

    Refuses to write when the plan has errors; the folder is then left as it was.
    With --check, compares instead of writing (manifest included): exit 0 when
    current, 1 when stale or the plan has errors.
    """
    if out_dir is None and not check_only:
        raise click.UsageError("missing option -o/--output")
    if (out_dir is not None or "-" in plans) and len(plans) != 1:
        raise click.UsageError("give one PLAN with -o (several plans only with --check and no -o)")
    if out_dir is not None:
        targets = [(plans[0], out_dir)]
    elif plans == ("-",):
        raise click.UsageError("a plan read from stdin needs -o")
    else:
        targets = []
        for plan in plans:
            d = conventional_out_dir(plan)
            # a PLAN that is no readable file (a folder, a missing path) is SN1060, exit 2, not
            # "nothing to compare"
            if d.is_dir() or not os.path.isfile(plan):
                targets.append((plan, d))
            else:
                click.echo(f"sncc: {plan}: no {d}{os.sep} beside it; nothing to compare", err=True)
    if fmt != "json":
        sys.exit(max([_build_one(plan, d, force, fmt, check_only) for plan, d in targets], default=EXIT_OK))
    # --format json: stdout is one diagnostics document over every plan, with a `build`
    # entry per plan (schemas/diagnostics.schema.json); human messages go to stderr
    runs: list[dict] = []
    code = max([_build_one(plan, d, force, fmt, check_only, runs) for plan, d in targets], default=EXIT_OK)
    diags = [d for r in runs for d in r.pop("diags")]
    sources = {k: v for r in runs for k, v in r.pop("sources").items()}
    _echo_json(_json_doc(sorted(diags, key=lambda d: d.sort_key()), sources, len(runs), build=runs))
    sys.exit(code)


def _no_plan(comp, src, diags, verb: str) -> list:
    """[SN2005 "the file holds no plan"] for a definitions file given to ``build`` or
    ``simulate`` (it checks clean on its own, but there is nothing to build or simulate);
    [] otherwise."""
    if comp is None or comp.plan is not None or any(d.is_error for d in diags):
        return []
    from sncc.diagnostics import codes
    from sncc.diagnostics.model import diag

    return [diag(codes.MISSING_KEY, f"the file holds no plan: nothing to {verb}", src.span(0, 0),
                 help=f"this is a definitions file (top-level blocks without `plan`); {verb} a "
                      "plan file that imports it")]


def _build_one(plan: str, out_dir: Path, force: bool, fmt: str, check_only: bool,
               runs: list | None = None) -> int:
    """Build (or with ``check_only`` compare) one plan (:func:`sncc.build.build_one`) and render
    the result; returns the exit code.

    With ``runs`` (``--format json``) nothing goes to stdout: the plan's diagnostics,
    sources and result (``plan``, ``output``, ``status``, ``written``, ``stale``, ``error``)
    are appended to ``runs`` for one document; human messages go to stderr."""
    from sncc.build import build_one

    as_json = runs is not None
    run = {"plan": plan, "output": str(out_dir), "status": "failed", "written": [], "diags": [], "sources": {}}
    if as_json:
        runs.append(run)

    def say(text: str) -> None:
        click.echo(text, err=as_json)

    try:
        comp, src, extra = _compile(plan)
    except ReadFailure as e:
        # one SN1060 diagnostic: in the JSON document's diagnostics[] (valid: false), else on stderr
        if as_json:
            run["diags"] = [_unreadable(e)]
        else:
            from sncc.diagnostics import render_text

            click.echo(render_text.render([_unreadable(e)], {}, 1, color=sys.stderr.isatty()), nl=False, err=True)
        run["error"] = str(e)
        return EXIT_FAILURE
    diags, sources = _diagnostics(comp, src, extra)
    diags = diags + _no_plan(comp, src, diags, "build")
    res = build_one(comp, src, diags, sources, out_dir, force=force, check_only=check_only)
    run.update({"plan": plan, "status": res.status, "written": res.written, "diags": res.diags + res.blocked,
                "sources": res.sources})
    if res.stale:
        run["stale"] = res.stale
    if res.error:
        run["error"] = res.error
    if res.status in ("errors", "failed") and (any(d.is_error for d in res.diags) or res.blocked):
        if not as_json:
            _emit_diagnostics(res.diags + res.blocked if res.blocked else res.diags, sources, 1, fmt,
                              sys.stdout.isatty())
        if res.blocked:
            from sncc.build import suppression_hint

            click.echo(f"sncc: not writing {out_dir}: {res.error} ({suppression_hint(res.blocked)})", err=True)
        elif res.status == "errors":
            click.echo(f"sncc: not {'checking' if check_only else 'writing'} {out_dir}: the plan has errors", err=True)
        return res.exit_code
    if res.status == "failed":
        click.echo(f"sncc: error: {res.error}", err=True)
        return res.exit_code
    if res.status == "stale":
        say(f"sncc: {out_dir} is stale for {plan}: " + "; ".join(res.stale))
        foreign = any(r.endswith(" is not written by the build") for r in res.stale)
        # a folder holding files the build does not write is refused without --force (sncc.emit.writer)
        say(f"  run `sncc build {plan} -o {out_dir}{' --force' if foreign else ''}` to update it"
            + (" (it holds files sncc does not write: move those you keep first; --force replaces the folder)"
               if foreign else ""))
        return res.exit_code
    if res.status == "up-to-date" and check_only:
        say(f"{out_dir} is up to date with {plan}")
        return res.exit_code
    warnings = [d for d in res.diags if not d.is_error]
    if warnings and not as_json:
        _emit_diagnostics(warnings, sources, 1, "text", sys.stdout.isatty())
    if res.status == "up-to-date":
        say(f"{out_dir} is up to date with {plan}: nothing written")
    elif as_json:
        for p in res.written:
            say(f"wrote {p}")
    else:
        from sncc.units import format_count

        say(f"wrote {format_count(len(res.written), 'file')} into {out_dir} (manifest.json lists them with their sha256)")
    if res.nodes:
        if res.required:
            say("each script checks the variables it needs first: " + ", ".join(res.required))
        say("start each node:")
        for k, script, servers in res.nodes:
            say(f"  node {k}: bash {out_dir / script}   ({len(servers)} server{'s' if len(servers) != 1 else ''})")
        if res.proxy:
            say(f"  then the proxy: bash {out_dir / res.proxy}")
        if res.bench:
            say(f"  measure: bash {out_dir / res.bench}")
    return res.exit_code


@main.command()
@click.argument("plan")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--seed", default=0, show_default=True, type=int, help="random seed of the workload")
@click.option("--profile", "profile", default=None, metavar="ID|FILE.toml",
              help="calibration profile (an id under sncc/catalog/data/profiles or a file from `sncc calibrate`)")
@click.option("--goodput", is_flag=True, help="also search the highest Poisson rate meeting every latency SLO")
@click.option("--plot", "plot", default=None, metavar="FILE.png",
              help="write queue depth, batch, KV use and TTFT/TPOT distributions (needs sncc[plot])")
@click.option("--strict", is_flag=True, help="count an UNCERTAIN SLO verdict as not met (exit 1)")
@click.option("--no-what-if", "no_what_if", is_flag=True,
              help="skip the re-simulated what-ifs (cheapest changes) for missed SLOs")
def simulate(plan: str, fmt: str, seed: int, profile: str | None, goodput: bool, plot: str | None,
             strict: bool, no_what_if: bool) -> None:
    """Simulate PLAN serving its workload and compare with its SLOs.

    Exit 0 when no SLO is missed (an UNCERTAIN verdict, a prediction that meets its target
    with a calibration interval straddling it, exits 0 unless --strict), 1 when a prediction
    misses its target (whatever the interval) or the plan has errors (a definitions file without
    a `plan` is one, and so are suppressed errors that make the deployment impossible, as
    `build` refuses them), 2 when sncc could not run.
    The plan's warnings are summarised in one line on stderr (`sncc check PLAN` prints them in
    full, so `build && simulate` shows each diagnostic once); they do not change the exit code.
    """
    try:
        comp, src, extra = _compile(plan)
    except ReadFailure as e:
        _unreadable_exit(e, fmt)
    diags, sources = _diagnostics(comp, src, extra)
    diags = diags + _no_plan(comp, src, diags, "simulate")
    if comp is None or any(d.is_error for d in diags):
        _emit_diagnostics(diags, sources, 1, fmt, sys.stdout.isatty())
        sys.exit(EXIT_FAILURE if any(d.code.code == "SN9001" for d in diags) else EXIT_PROBLEMS)
    _refuse_impossible(comp, diags, sources, fmt, "simulating")
    if diags:                # warnings that explain the numbers (SN4008 KV at full context, ...)
        def _at(d) -> str:
            src = sources.get(d.span.file) if d.span is not None else None
            if src is None:
                return ""
            line, col = src.line_col(d.span.start)
            return f" at {d.span.file}:{line}:{col}"
        where = "; ".join(f"{d.code.code} {d.code.name}{_at(d)}" for d in diags[:3]) + ("; ..." if len(diags) > 3 else "")
        n_warn = sum(1 for d in diags if d.severity == "warning")
        n_other = len(diags) - n_warn
        counted = " and ".join(p for p in (f"{n_warn} warning{'s' if n_warn != 1 else ''}" if n_warn else "",
                                            f"{n_other} note{'s' if n_other != 1 else ''}" if n_other else "") if p)
        click.echo(f"sncc simulate: note: the plan has {counted} ({where}); "
                   f"`sncc check {plan}` prints {'them' if len(diags) != 1 else 'it'}", err=True)
    from sncc.sim.command import CommandError, simulate_plan

    try:
        text, code = simulate_plan(comp, seed=seed, fmt=fmt, profile=profile, goodput=goodput, plot=plot,
                                   strict=strict, what_if=not no_what_if, diagnostics=diags)
    except CommandError as e:
        _fail(str(e), fmt, sources, diags=diags)
    except Exception as exc:  # noqa: BLE001
        _fail(f"{type(exc).__name__}: {exc}", fmt, sources, prefix="sncc: internal error in the simulator: ",
              diags=diags)
    click.echo(text, nl=False)
    sys.exit(code)


def _refuse_impossible(comp, diags: list, sources: dict, fmt: str, verb: str) -> None:
    """Exit 1, as ``build`` refuses to write, when suppressed errors make the deployment
    impossible (:func:`sncc.build.impossible_despite_suppression`): the diagnostics shown plus the
    suppressed blocking errors in ``fmt``, and in text the reason on stderr.  Returns otherwise."""
    from sncc.build import impossible_despite_suppression, suppression_hint

    blocked, reason = impossible_despite_suppression(comp, diags)
    if not blocked:
        return
    _emit_diagnostics(sorted(diags + blocked, key=lambda d: d.sort_key()), sources, 1, fmt, sys.stdout.isatty())
    click.echo(f"sncc: not {verb} {comp.source.name}: {reason} ({suppression_hint(blocked)})", err=True)
    sys.exit(EXIT_PROBLEMS)


def _fail(message: str, fmt: str, sources: dict | None = None, prefix: str = "sncc: error: ",
          diags: list | tuple = ()) -> None:
    """sncc could not run (exit 2): ``message`` on stderr; with ``--format json`` stdout also
    gets a diagnostics document whose ``error`` field holds ``message``, carrying (and counting)
    ``diags``, the plan's diagnostics found before the failure (after suppressions)."""
    click.echo(f"{prefix}{message}", err=True)
    if fmt == "json":
        _echo_json(_json_doc(sorted(diags, key=lambda d: d.sort_key()), sources or {}, len(sources or {}),
                             error=message))
    sys.exit(EXIT_FAILURE)


def _json_doc(diags, sources, nfiles: int, **extra) -> dict:
    """The diagnostics document (schemas/diagnostics.schema.json) with ``extra`` top-level fields."""
    from sncc.diagnostics.render_json import document

    doc = document(diags, sources, nfiles)
    doc.update(extra)
    if extra.get("error"):   # sncc could not run: the document is not a clean bill
        doc["summary"]["valid"] = False
    return doc


def _echo_json(doc: dict) -> None:
    import json

    click.echo(json.dumps(doc, indent=2, ensure_ascii=False))


#: SN1060's help for a measurements file given to `sncc calibrate`
MEASUREMENTS_READ_HELP = ("give the path of a measurements file (TOML, or JSON for a .json name; "
                          "README \"sncc calibrate\")")


@main.command()
@click.argument("measurements")
@click.option("-o", "--output", "out", required=True, metavar="PROFILE.toml", help="profile file to write")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: stdout is one diagnostics document (with `calibrate`, the fit, when the profile is "
                   "written); the report goes to stderr")
def calibrate(measurements: str, out: str, fmt: str) -> None:
    """Fit a simulator profile's constants to MEASUREMENTS (TOML/JSON of plan + measured
    ttft_s / tpot_ms / qpm points, format in README) by bounded least squares; write PROFILE.toml.

    Every problem of the measurements file (its syntax, keys and values, the plans, bench results
    and profile it names) is reported at once, located at its key or value as `sncc check`
    reports a plan's: exit 1, nothing written.  Exit 0 when the profile is written; 2 when sncc
    could not run: the file cannot be read (SN1060), -o is unusable, or the fit is refused with one
    line saying why (underdetermined, a constant that moves nothing, a fit that ends on a bound or
    misses its own data by more than 2x); no profile is written then."""
    from sncc.sim.calibration.fit import CalibrationError, check_output
    from sncc.sim.command import CommandError
    from sncc.sim.command import calibrate as run_calibrate

    if measurements == "-":
        raise click.UsageError("MEASUREMENTS must be a file: the plans and bench results it names are read "
                               "from its folder (`-`, stdin, is not supported)")
    try:
        check_output(out)           # before reading plans and a fit that can take minutes
    except CalibrationError as e:
        _fail(str(e), fmt)
    try:
        src, diags = read_source(measurements)
    except ReadFailure as e:
        d = _unreadable(e, MEASUREMENTS_READ_HELP)
        if fmt == "json":
            _echo_json(_json_doc([d], {}, 1, error=str(e)))
        else:
            _emit_diagnostics([d], {}, 1, fmt, sys.stdout.isatty())
        sys.exit(EXIT_FAILURE)
    sources = {src.name: src}
    m = None
    if diags:                       # SN1004: not UTF-8 (its path is a plan's; this file has none)
        from dataclasses import replace

        diags = [replace(d, path=()) for d in diags]
    else:
        from sncc.sim.calibration.measurements import check_measurements

        try:
            m, diags = check_measurements(src, sources=sources)
        except Exception as exc:  # noqa: BLE001 - never a traceback for the user
            from sncc.compiler import internal_error

            m, diags = None, [internal_error(src, exc)]
    if m is None or any(d.is_error for d in diags):
        _emit_diagnostics(sorted(diags, key=lambda d: d.sort_key()), sources, len(sources), fmt,
                          sys.stdout.isatty())
        sys.exit(EXIT_FAILURE if any(d.code.code == "SN9001" for d in diags) else EXIT_PROBLEMS)
    try:
        text, result = run_calibrate(m, out)
    except (CommandError, CalibrationError) as e:
        _fail(str(e), fmt, sources)
    except Exception as exc:  # noqa: BLE001
        _fail(f"{type(exc).__name__}: {exc}", fmt, sources, prefix="sncc: internal error in calibrate: ")
    if fmt == "json":
        click.echo(text, nl=False, err=True)
        _echo_json(_json_doc(diags, sources, 1, calibrate=result))
    else:
        click.echo(text, nl=False)
    sys.exit(EXIT_OK)


@main.command()
@click.argument("code", required=False)
def explain(code: str | None) -> None:
    """Explain an error CODE (``SN3001``) or name (``parallel-size-mismatch``); without CODE,
    list every code."""
    from sncc.diagnostics.codes import REGISTRY, lookup

    if code is None:
        width = max(len(ec.name) for ec in REGISTRY.values())
        click.echo("\n".join(f"{c}  {ec.name:<{width}}  {ec.severity:<7}  {ec.summary}"
                              for c, ec in sorted(REGISTRY.items())))
        return
    ec = lookup(code) or (lookup("SN" + code) if code.isdigit() else None)
    if ec is None:
        click.echo(f"sncc: error: unknown code `{code}`; codes are SN1001 … {max(REGISTRY)} "
                   "(`sncc explain` lists them)", err=True)
        sys.exit(EXIT_FAILURE)
    from sncc.listing import explain_page, show

    show(*explain_page(ec))


@main.command()
def lsp() -> None:
    """Run the language server over stdio (needs the `lsp` extra: pip install 'sncc[lsp]')."""
    try:
        from sncc.lsp.server import main as serve
    except ImportError as e:
        click.echo(f"sncc: error: `sncc lsp` needs pygls ({e}); install it with: pip install 'sncc[lsp]'", err=True)
        sys.exit(EXIT_FAILURE)
    serve()


@main.command()
@click.argument("name", required=False)
def schema(name: str | None) -> None:
    """Print the JSON Schema NAME shipped with sncc (without NAME: list the names).

    Exit 2 for an unknown NAME.
    """
    from sncc.resources import schema_names, schema_path

    names = schema_names()
    if name is None:
        click.echo("\n".join(names))
        return
    if name.endswith(".schema.json"):
        name = name[: -len(".schema.json")]
    if name not in names:
        click.echo(f"sncc: error: unknown schema `{name}`; schemas: {', '.join(names)}", err=True)
        sys.exit(EXIT_FAILURE)
    click.echo(schema_path(name).read_text(encoding="utf-8"), nl=False)


@main.command("fmt")
@click.argument("plans", nargs=-1, required=True, metavar="PLAN...")
@click.option("--check", "check_only", is_flag=True, help="write nothing; exit 1 when a file would change")
@click.option("--diff", "show_diff", is_flag=True, help="write nothing; print a unified diff of the changes")
@click.option("--stdin-filename", default=None, help="name to report for a plan read from `-`")
def fmt_command(plans: tuple[str, ...], check_only: bool, show_diff: bool, stdin_filename: str | None) -> None:
    """Format PLANs canonically, in place (`-`: stdin to stdout), keeping every comment.

    Exit 0 when done (or, with --check, when nothing would change), 1 when a
    file would change under --check or does not parse (it is then left
    alone), 2 when a file cannot be read or written.
    """
    from sncc.fmt import FormatRefused, format_source, unified_diff, write_atomically

    code = EXIT_OK
    changed = unchanged = 0
    failed = {"could not be read": 0, "could not be parsed": 0, "could not be written": 0}
    for path in plans:
        try:
            src, pre = read_source(path, stdin_filename)
        except ReadFailure as e:
            click.echo(f"sncc: error: {e}", err=True)
            code = EXIT_FAILURE
            failed["could not be read"] += 1
            continue
        try:
            if pre:
                raise FormatRefused(pre)
            new = format_source(src)
        except FormatRefused as e:
            from sncc.diagnostics import render_text

            click.echo(render_text.render(e.diagnostics, _shown_sources(src, pre), 1), err=True, nl=False)
            click.echo(f"sncc: not formatting {src.name}: it does not parse", err=True)
            code = max(code, EXIT_PROBLEMS)
            failed["could not be parsed"] += 1
            continue
        if path == "-" and not (check_only or show_diff):
            click.echo(new, nl=False)
            continue
        if new == src.text:
            unchanged += 1
            continue
        changed += 1
        if show_diff:
            click.echo(unified_diff(src.name, src.text, new), nl=False)
        if check_only:
            click.echo(f"would reformat {src.name}", err=True)
            code = max(code, EXIT_PROBLEMS)
        elif not show_diff:
            try:
                write_atomically(Path(path), new)
            except OSError as e:
                click.echo(f"sncc: error: cannot write {path}: {e.strerror or e}", err=True)
                code = EXIT_FAILURE
                changed -= 1
                failed["could not be written"] += 1
                continue
            click.echo(f"reformatted {src.name}", err=True)
    if all(p == "-" for p in plans) and not (check_only or show_diff):
        sys.exit(code)      # stdin formatted to stdout: no files to count
    verb = "would be reformatted" if (check_only or show_diff) else "reformatted"
    # every file given is counted once: formatted, unchanged, or the step it failed at
    tail = "".join(f", {n} file{'s' if n != 1 else ''} {what}" for what, n in failed.items() if n)
    click.echo(f"{changed} file{'s' if changed != 1 else ''} {verb}, {unchanged} left unchanged{tail}", err=True)
    sys.exit(code)


@main.command("catalog")
@click.argument("kind", type=click.Choice(["systems", "chips", "models", "releases", "connectors"]), default="systems")
def catalog_cmd(kind: str) -> None:
    """List the catalog ids a plan can name (systems, chips, models, releases, connectors), with their sources."""
    from sncc.listing import catalog_table, show

    show(catalog_table(kind))


if __name__ == "__main__":  # pragma: no cover
    main()

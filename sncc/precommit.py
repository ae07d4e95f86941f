"""The ``sncc-check`` and ``sncc-build-check`` pre-commit hooks (``.pre-commit-hooks.yaml``):
``python -m sncc.precommit check [ARGS] FILE...`` and ``python -m sncc.precommit build-check FILE...``.

Both add the plans that import a changed ``.sn`` file (transitively): pre-commit passes only
the changed files, and a shared definitions file checked alone runs no whole-plan check
(device counts, memory fit), while what it holds changes what its importers build.  The
importers are the repository's ``.sn`` files (``git ls-files``, untracked ones included; a
walk of the current folder outside git) whose imports reach a changed file.

pre-commit passes the changed files: plans (``x.sn``) and, since a hand edit of a generated
file must fail the check too, files inside an output folder (``x.out/...``).  Each is mapped
to its plan (``x.out/vllm/serve.yaml`` → ``x.sn``, the ``x.sn`` → ``x.out/`` convention of
``sncc build --check``), duplicates dropped, and the plans that have an output folder are
compared with ``sncc build --check``.  A plan without one, or an output file without its
plan, is reported as skipped (pre-commit shows the hook's output: ``verbose: true``), never
silently passed.  With ``-o`` in the arguments (another layout, ``pass_filenames: false``)
the arguments go to ``sncc build --check`` unchanged.

Exit status: that of ``sncc build --check`` (0 current, 1 stale or errors, 2 usage), 0 when
everything was skipped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def plan_of(path: str) -> Path | None:
    """The plan a changed file belongs to: itself for ``x.sn``; ``x.sn`` for a file under an
    ``x.out/`` folder (the nearest such folder); None for anything else."""
    p = Path(path)
    if p.suffix == ".sn":
        return p
    for parent in p.parents:
        if parent.suffix == ".out":
            return parent.with_suffix(".sn")
    return None


def _repository_plans() -> list[str]:
    """The ``.sn`` files of the repository the hook runs in (the current folder): tracked and
    untracked, git's ignores honoured; outside git, a walk that skips hidden and ``x.out/``
    folders."""
    try:
        r = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "*.sn"],
                           capture_output=True, check=True, timeout=60)
        return sorted(dict.fromkeys(n for n in r.stdout.decode("utf-8", "surrogateescape").split("\0") if n))
    except (OSError, subprocess.SubprocessError):
        out = []
        for top, dirs, files in os.walk("."):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not d.endswith(".out"))
            out += [os.path.normpath(os.path.join(top, f)) for f in sorted(files) if f.endswith(".sn")]
        return out


def _imports_of(path: str) -> list[str]:
    """Real paths of the files ``path`` imports directly ([] when it cannot be read or parsed)."""
    from sncc.source import SourceFile
    from sncc.syntax.imports import _real, read_bounded
    from sncc.syntax.parser import parse

    try:
        text = read_bounded(path, 64 * 1024 * 1024)
    except (OSError, UnicodeDecodeError, ValueError):
        return []
    if "import" not in text:
        return []
    module, _ = parse(SourceFile(path, text))
    if module is None:
        return []
    base = os.path.dirname(path)
    return [_real(os.path.join(base, imp.path.value)) for imp in module.imports]


def importers(changed: list[str], candidates: list[str] | None = None) -> dict[str, str]:
    """The plans among ``candidates`` (default: the repository's) that import one of the
    ``changed`` files, directly or through other files, mapped to the changed file they reach
    (as given); the changed files themselves are left out."""
    from sncc.syntax.imports import _real

    targets = {_real(c): c for c in changed if c.endswith(".sn")}
    if not targets:
        return {}
    candidates = _repository_plans() if candidates is None else candidates
    edges = {_real(c): (c, _imports_of(c)) for c in candidates}
    reaches: dict[str, str] = {}   # real path -> the changed file it reaches

    def reach(real: str, seen: frozenset) -> str | None:
        if real in targets:
            return targets[real]
        if real in reaches:
            return reaches[real] or None
        if real in seen or real not in edges:
            return None
        found = next((t for t in (reach(i, seen | {real}) for i in edges[real][1]) if t), None)
        reaches[real] = found or ""
        return found

    out = {}
    for real, (name, _) in edges.items():
        if real not in targets:
            t = reach(real, frozenset())
            if t:
                out[name] = t
    return out


def check(args: list[str]) -> int:
    """``sncc check`` on ``args`` (a hook's ``args:`` then the changed files) and on the
    repository's plans that import a changed file."""
    from sncc.cli import main

    extra = importers([a for a in args if a.endswith(".sn") and os.path.isfile(a)])
    for plan, changed in extra.items():
        print(f"also checking {plan} (imports {changed})")
    return _run(main, ["check", *args, *extra])


def build_check(args: list[str]) -> int:
    """Run the hook on ``args`` (file names, or ``sncc build --check`` arguments with ``-o``)."""
    from sncc.cli import conventional_out_dir, main

    if "-o" in args or "--output" in args:
        return _run(main, ["build", "--check", *args])
    plans: list[str] = []
    skipped: list[str] = []
    for name in args:
        plan = plan_of(name)
        if plan is None:
            skipped.append(f"{name}: not a plan or a file of an x.out/ folder")
        elif not plan.is_file():
            skipped.append(f"{name}: no plan {plan} for this output folder")
        elif not conventional_out_dir(str(plan)).is_dir():
            skipped.append(f"{plan}: no {conventional_out_dir(str(plan))}/ beside it, nothing to compare")
        elif str(plan) not in plans:
            plans.append(str(plan))
    for plan, changed in importers([a for a in args if a.endswith(".sn") and os.path.isfile(a)]).items():
        if conventional_out_dir(plan).is_dir() and plan not in plans:
            print(f"also comparing {plan} (imports {changed})")
            plans.append(plan)
    for line in dict.fromkeys(skipped):
        print(f"skipped {line}")
    code = _run(main, ["build", "--check", *plans]) if plans else 0
    from sncc.units import format_count

    print(f"sncc build --check: {format_count(len(plans), 'plan')} compared, {len(dict.fromkeys(skipped))} skipped")
    return code


def _run(main, argv: list[str]) -> int:
    try:
        # a click.exceptions.Exit (Ctrl-C: 130) is returned as the code without standalone mode
        return int(main.main(args=argv, prog_name="sncc", standalone_mode=False) or 0)
    except SystemExit as e:
        return int(e.code or 0)
    except Exception as e:  # click usage errors
        from click import ClickException

        if isinstance(e, ClickException):
            e.show()
            return e.exit_code
        raise


def main(argv: list[str] | None = None) -> int:
    """``python -m sncc.precommit check|build-check FILE...``."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("check", "build-check"):
        print("usage: python -m sncc.precommit check|build-check FILE...", file=sys.stderr)
        return 2
    return (check if argv[0] == "check" else build_check)(argv[1:])


if __name__ == "__main__":
    sys.exit(main())

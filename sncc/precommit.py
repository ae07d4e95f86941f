"""The ``sncc-build-check`` pre-commit hook (``.pre-commit-hooks.yaml``):
``python -m sncc.precommit build-check FILE...``.

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
    for line in dict.fromkeys(skipped):
        print(f"skipped {line}")
    code = _run(main, ["build", "--check", *plans]) if plans else 0
    from sncc.units import format_count

    print(f"sncc build --check: {format_count(len(plans), 'plan')} compared, {len(dict.fromkeys(skipped))} skipped")
    return code


def _run(main, argv: list[str]) -> int:
    try:
        main.main(args=argv, prog_name="sncc", standalone_mode=False)
    except SystemExit as e:
        return int(e.code or 0)
    except Exception as e:  # click usage errors
        from click import ClickException

        if isinstance(e, ClickException):
            e.show()
            return e.exit_code
        raise
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m sncc.precommit build-check FILE...``."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "build-check":
        print("usage: python -m sncc.precommit build-check FILE...", file=sys.stderr)
        return 2
    return build_check(argv[1:])


if __name__ == "__main__":
    sys.exit(main())

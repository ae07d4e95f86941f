"""``sncc build``: one plan through ``Compilation.outputs`` into an output folder.

:func:`build_one` runs the pipeline (diagnostics → deployment → outputs → schema validation →
atomic write, or with ``check_only`` a comparison) and returns a :class:`BuildRun` saying what
happened; the CLI only renders it.  The rules:

* a plan with errors writes nothing (exit 1), and so does a plan whose *suppressed* errors make
  the deployment impossible (:data:`BUILD_BLOCKING`: device counts, the plan-size limit, memory fit,
  chip and release support, start-up refusals of the engine, lowering): ``# sncc: ignore[...]``
  cannot make such a plan buildable, so ``check`` still reports them as errors
  (:func:`still_blocking`, with a note saying so) and ``build`` refuses to write;
* every plan input (the plan and its imports, the weights folder, the workload trace) must lie
  outside the output folder, which is replaced as a whole (exit 2 otherwise);
* the folder is replaced atomically (:mod:`sncc.emit.writer`): it is the old tree or the new one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

EXIT_OK, EXIT_PROBLEMS, EXIT_FAILURE = 0, 1, 2

#: error codes that make a deployment impossible: a suppression comment cannot hide them
#: (``check`` still reports them, ``build`` refuses to write while they hold; README, ``sncc explain``)
BUILD_BLOCKING = frozenset({
    "SN3001",  # parallel-size-mismatch: tp × dp × pp is not the instance's device count
    "SN3002",  # devices-exceed-hardware
    "SN3004",  # heads-not-divisible-by-tp: vLLM refuses (ModelConfig.verify_with_parallel_config, QKVParallelLinear)
    "SN3060",  # plan-too-large: lowering and the simulator would run for minutes
    "SN4002",  # quant-unsupported-on-chip
    "SN4003",  # kv-dtype-unsupported-on-chip
    "SN4004",  # kv-cache-does-not-fit
    "SN4005",  # cann-unsupported-chip
    "SN4006",  # cann-engine-mismatch
    "SN4007",  # engine-unsupported-chip
    "SN4023",  # model-not-in-release: the server stops at start-up (no model class for the architecture)
    "SN5002",  # batch-tokens-below-max-model-len: vLLM raises at start-up (SchedulerConfig.verify_max_model_len)
    "SN4042",  # deployment-impossible (lowering)
    "SN2040",  # hosts-addresses-mismatch (lowering: a node without an address; the hosts check: one given twice)
    "SN4043",  # port-conflict (lowering: two listeners on one port of a node)
    "SN4047",  # port-out-of-range (lowering: a port counted up from its base past 65535)
})

#: (code, plan path) pairs that block like :data:`BUILD_BLOCKING` where the code as a whole does
#: not: SN2009 out-of-range only for ``hardware { nodes | devices }`` beyond the system's
#: ``max_nodes`` (a machine that does not exist), not for every value out of its range
BUILD_BLOCKING_AT = frozenset({
    ("SN2009", ("hardware", "nodes")),
    ("SN2009", ("hardware", "devices")),
})


def blocks_build(d) -> bool:
    """Whether diagnostic ``d`` makes the deployment impossible (:data:`BUILD_BLOCKING`,
    :data:`BUILD_BLOCKING_AT`): an error ``build`` and ``simulate`` refuse even when suppressed."""
    if not d.is_error:
        return False
    code = d.code.code
    return code in BUILD_BLOCKING or (code, tuple(d.path or ())) in BUILD_BLOCKING_AT


@dataclass
class BuildRun:
    """What one ``build`` of one plan did.

    ``status``: ``written``, ``up-to-date`` (``--check``, or a build whose folder already holds
    exactly these files: nothing rewritten), ``stale``, ``errors`` (the plan has errors) or
    ``failed`` (sncc could not run: unreadable file, output-folder problem, internal error);
    ``diags`` are the diagnostics to show (after suppressions), ``blocked`` the suppressed ones
    that still stop the build, ``written`` the paths written, ``stale`` why ``--check`` failed,
    ``error`` a one-line message, ``nodes`` (node index, its start script, its server scripts)
    for the start-up summary.
    """

    plan: str
    output: str
    status: str = "failed"
    exit_code: int = EXIT_FAILURE
    diags: list = field(default_factory=list)
    blocked: list = field(default_factory=list)
    sources: dict = field(default_factory=dict)
    written: list = field(default_factory=list)
    stale: list = field(default_factory=list)
    error: str | None = None
    nodes: list = field(default_factory=list)
    required: list = field(default_factory=list)
    proxy: str | None = None
    bench: str | None = None


def inputs_inside(out_dir: Path, comp) -> str | None:
    """The first plan input (the plan and its imports, the weights folder, the workload trace,
    each resolved against the file that names it) that lies inside ``out_dir`` or is it; None."""
    try:
        root = os.path.realpath(out_dir)
    except (OSError, ValueError):
        return None
    inputs = [name for name in comp.sources if name not in ("<stdin>", "-")]
    plan = comp.plan
    if plan is not None:
        for node, key in ((plan.model, "weights"), (plan.workload, "trace")):
            value = getattr(node, key, None)
            if not value:
                continue
            where = node.span_of(key)
            origin = where.file if where is not None else comp.source.name
            base = os.path.dirname(origin) if origin not in ("<stdin>", "-") else "."
            inputs.append(value if os.path.isabs(value) else os.path.join(base or ".", value))
    for name in inputs:
        try:
            real = os.path.realpath(name)
        except (OSError, ValueError):
            continue
        if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
            return name
    return None


def blocked_by_suppression(all_diags: list, shown: list) -> list:
    """The errors that block the build (:func:`blocks_build`) a suppression comment removed from ``shown``."""
    kept = {id(d) for d in shown}
    return [d for d in all_diags if blocks_build(d) and id(d) not in kept]


def impossible_despite_suppression(comp, diags: list) -> tuple[list, str | None]:
    """The one rule ``build`` and ``simulate`` refuse a plan by although ``check`` passes it:
    (the suppressed errors of :data:`BUILD_BLOCKING` in ``comp``, a one-line reason), or
    ``([], None)``.  ``diags`` are the plan's diagnostics after suppressions."""
    blocked = blocked_by_suppression(comp.diagnostics, diags) if comp is not None else []
    if not blocked:
        return [], None
    return blocked, ("suppressed errors make the deployment impossible: "
                     + ", ".join(sorted({d.code.code for d in blocked})))


def suppression_hint(blocked: list) -> str:
    """Said after :func:`impossible_despite_suppression`'s reason on stderr: why the suppression
    does not count, and the ``sncc explain`` command of each blocked code."""
    explain = ", ".join(f"`sncc explain {c}`" for c in sorted({d.code.code for d in blocked}))
    return ("suppression comments do not apply to errors that make the deployment impossible; "
            f"see {explain or '`sncc explain`'}")


def still_blocking(comp, diags: list) -> list:
    """For ``check`` (and the editor): the suppressed errors that block the build
    (:func:`impossible_despite_suppression`), each with a note saying its suppression cannot make
    the plan buildable, so that a CI gate on ``check`` fails where ``build`` would.  ``diags``
    are the plan's diagnostics after suppressions; [] when nothing suppressed blocks the build."""
    import dataclasses

    blocked, _ = impossible_despite_suppression(comp, diags)
    return [dataclasses.replace(d, notes=d.notes + (
        f"a `# sncc: ignore[{d.code.code}]` comment covers this error, but a suppression cannot make the plan "
        f"buildable: {d.code.code} makes the deployment impossible, so `sncc build` and `sncc simulate` refuse "
        f"the plan (`sncc explain {d.code.code}`)",)) for d in blocked]


def build_one(comp, src, diags: list, sources: dict, out_dir: Path, *, force: bool, check_only: bool) -> BuildRun:
    """Build (or with ``check_only`` compare) the compiled plan ``comp`` into ``out_dir``.

    ``diags`` are the plan's diagnostics after suppressions, ``sources`` its files.  Never raises
    for bad input or an unwritable folder: the :class:`BuildRun` says what happened.
    """
    from sncc.compiler import internal_error

    run = BuildRun(plan=src.name, output=str(out_dir), diags=list(diags), sources=sources)
    if comp is None or any(d.is_error for d in diags):
        if any(d.code.code == "SN9001" for d in diags):
            return run
        run.status, run.exit_code = "errors", EXIT_PROBLEMS
        return run
    run.blocked, reason = impossible_despite_suppression(comp, diags)
    if run.blocked:
        run.status, run.exit_code, run.error = "errors", EXIT_PROBLEMS, reason
        return run
    try:
        dep, dep_diags = comp.deployment, comp.deployment_diagnostics
        if dep is None:
            run.diags += dep_diags
            run.status, run.exit_code = "errors", EXIT_PROBLEMS
            return run
        files = comp.outputs
        from sncc.emit.validate import validate_output

        for name, text in files.items():
            problems = validate_output(name, text)
            if problems:
                raise RuntimeError(f"{name} does not match its schema: {problems[0]}")
    except Exception as exc:  # noqa: BLE001 - an internal error, never a traceback
        run.diags = run.diags + [internal_error(src, exc)]
        return run
    facts = dep.manifest_facts
    if check_only:
        from sncc.emit.stale import stale_reasons

        reasons = stale_reasons(files, out_dir, src.text, facts)
        if reasons:
            run.status, run.stale, run.exit_code = "stale", list(reasons), EXIT_PROBLEMS
        else:
            run.status, run.exit_code = "up-to-date", EXIT_OK
        return run
    clash = inputs_inside(out_dir, comp)
    if clash:
        run.error = (f"refusing to replace {out_dir}: it holds the input {clash} "
                     "(the output folder is replaced as a whole; choose a folder of its own)")
        return run
    from sncc.emit.stale import stale_reasons
    from sncc.emit.writer import OutputError, refuse_nested, remove_leftovers, write_outputs

    try:   # also when the folder is already current: it cannot stay inside another build
        refuse_nested(out_dir)
    except OutputError as e:
        run.error = str(e)
        return run

    if stale_reasons(files, out_dir, src.text, facts):
        try:
            written = write_outputs(files, out_dir, force=force, plan_source=src.text, facts=facts)
        except OutputError as e:
            run.error = str(e)
            return run
        run.status, run.exit_code, run.written = "written", EXIT_OK, [str(p) for p in written]
    else:   # the folder holds this build byte for byte (manifest included): nothing is rewritten
        remove_leftovers(out_dir)
        run.status, run.exit_code = "up-to-date", EXIT_OK
    run.nodes = start_summary(dep)
    run.required = required_variables(dep)
    run.proxy = "proxy.sh" if "proxy.sh" in files else None
    run.bench = "bench.sh" if "bench.sh" in files else None
    return run


def start_summary(dep) -> list[tuple[int, str, list[str]]]:
    """(node index, ``start/node<k>.sh``, its ``launch/*.sh`` scripts) for every node."""
    out = []
    for n in dep.nodes:
        procs = [p for p in dep.processes if p.node == n.index]
        if procs:
            out.append((n.index, f"start/node{n.index}.sh", [f"launch/{p.name}.sh" for p in procs]))
    return out


def required_variables(dep) -> list[str]:
    """Every variable a script checks before it starts (launch, proxy and bench scripts:
    :meth:`~sncc.lowering.deployment.Deployment.required_by_script`, the data their checks are
    written from), node addresses in node order first."""
    import re

    names = list(dict.fromkeys(q.name for reqs in dep.required_by_script().values() for q in reqs))

    def key(n: str):
        m = re.fullmatch(r"NODE_(\d+)_IP", n)
        return (0, int(m.group(1)), n) if m else (1, 0, n)

    return sorted(names, key=key)

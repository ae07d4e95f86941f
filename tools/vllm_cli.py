"""vLLM's own `vllm serve` command line, built from the installed vLLM, for parsing without an accelerator.

Run with the python of a virtualenv that has one vLLM release installed (the wheel with ``--no-deps``
plus the light packages its argument parser imports, and the CPU torch; see README.md "Conformance").
No sncc import: this module is loaded by that interpreter, not by sncc's.

:func:`serve_parser` builds the same parser ``vllm serve`` builds (``vllm/entrypoints/cli/main.py``:
a :class:`FlexibleArgumentParser` with the ``serve`` subcommand registered by
``vllm.entrypoints.cli.serve.cmd_init``), after pinning vLLM's platform to the CPU platform: vLLM
resolves its platform lazily (``vllm/platforms/__init__.py``: ``_current_platform``) and, on a
machine without an accelerator or a CPU build, stops with "Failed to infer device type".  The CPU
platform is enough for argument parsing; nothing here starts an engine.

:func:`check_serve_argv` runs one ``vllm serve`` argv through the stages ``vllm serve`` itself runs
before it starts anything: ``parse_args`` (``--config`` YAML expansion, the ``--model`` rule, dotted
JSON keys, argparse types and choices), the subcommand's ``validate`` (``validate_parsed_serve_args``),
the subcommand's ``cmd`` up to the point where it would launch a server (its data-parallel
load-balancing rules; the launch functions are replaced by recorders), then
``AsyncEngineArgs.from_cli_args`` (the dataclass and its ``__post_init__``) and, when asked for, the
deep check ``create_engine_config`` (needs a model directory with a ``config.json``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.metadata
import io
import os
import sys
import traceback
from typing import Any

#: the stages of :func:`check_serve_argv`, in order
STAGES = ("parse", "validate", "cmd", "engine_args", "engine_config")


def use_cpu_platform(parser_choices: dict[str, list[Any]] | None = None) -> Any:
    """Pin vLLM's current platform to ``vllm.platforms.cpu.CpuPlatform`` before any other vLLM import
    asks for it (both the cached ``_current_platform`` and the module attribute, which later releases
    assign directly, e.g. vllm 0.23.0 ``entrypoints/cli/main.py`` for ``vllm bench``); return it.

    ``parser_choices`` (``{"--quantization": ["ascend"]}``) stands in for an out-of-tree platform's
    ``pre_register_and_update(parser)``, which vLLM calls from ``EngineArgs.add_cli_args`` while it
    builds the parser: vllm-ascend's and Omni-Infer's ``NPUPlatform`` append their quantization
    method to ``--quantization``'s choices there (the engine manifest's ``parser_choices_added``).
    The CPU platform is enough for argument parsing; nothing here starts an engine."""
    import vllm.platforms as platforms
    from vllm.platforms.cpu import CpuPlatform

    if parser_choices:
        additions = {k: list(v) for k, v in parser_choices.items()}

        class EnginePlatform(CpuPlatform):  # type: ignore[misc, valid-type]
            @classmethod
            def pre_register_and_update(cls, parser: Any = None) -> None:
                if parser is None:
                    return
                for option, values in additions.items():
                    action = parser._option_string_actions.get(option)  # noqa: SLF001 - as the engines do
                    if action is not None and action.choices:
                        action.choices = [*action.choices, *(v for v in values if v not in action.choices)]

        platform = EnginePlatform()
    else:
        platform = CpuPlatform()
    platforms._current_platform = platform
    platforms.current_platform = platform
    return platform


def vllm_version() -> str:
    """The installed vLLM's version string (``importlib.metadata``)."""
    return importlib.metadata.version("vllm")


def flexible_argument_parser_class() -> type:
    """vLLM's ``FlexibleArgumentParser`` (``vllm.utils.argparse_utils`` from 0.12 on, ``vllm.utils`` before)."""
    try:
        return importlib.import_module("vllm.utils.argparse_utils").FlexibleArgumentParser
    except (ImportError, AttributeError):
        return importlib.import_module("vllm.utils").FlexibleArgumentParser


class ServeCLI:
    """The top-level ``vllm`` parser with the ``serve`` subcommand, as ``vllm/entrypoints/cli/main.py`` builds it.

    ``parser`` is the top-level parser, ``serve`` the serve subparser (its ``_actions`` are the
    arguments), ``command`` the ``ServeSubcommand`` instance, ``module`` ``vllm.entrypoints.cli.serve``,
    ``platform`` the CPU platform stand-in (see :func:`use_cpu_platform` for ``parser_choices``).
    """

    def __init__(self, parser_choices: dict[str, list[Any]] | None = None) -> None:
        self.platform = use_cpu_platform(parser_choices)
        self.module = importlib.import_module("vllm.entrypoints.cli.serve")
        parser_cls = flexible_argument_parser_class()
        self.parser = parser_cls(description="vLLM CLI")
        subparsers = self.parser.add_subparsers(required=False, dest="subparser")
        commands = [c for c in self.module.cmd_init() if c.name == "serve"]
        if len(commands) != 1:
            raise RuntimeError("vllm.entrypoints.cli.serve.cmd_init() has no single `serve` command")
        self.command = commands[0]
        self.serve = self.command.subparser_init(subparsers)
        self.serve.set_defaults(dispatch_function=self.command.cmd)


class _Dispatched(Exception):
    """Raised by the recorders that stand in for vLLM's server launchers."""

    def __init__(self, launcher: str) -> None:
        super().__init__(launcher)
        self.launcher = launcher


#: the names ``ServeSubcommand.cmd`` calls to start servers, across releases (0.11.0 … 0.33.0)
_LAUNCHERS = ("run_headless", "run_multi_api_server", "run_dp_supervisor", "run_server")


@contextlib.contextmanager
def _launchers_recorded(module: Any):
    saved: dict[str, Any] = {}

    def recorder(name: str):
        def record(*_a: Any, **_k: Any) -> Any:
            raise _Dispatched(name)
        return record

    for name in _LAUNCHERS:
        if hasattr(module, name):
            saved[name] = getattr(module, name)
            setattr(module, name, recorder(name))
    uvloop = getattr(module, "uvloop", None)
    if uvloop is not None:
        saved["uvloop"] = uvloop

        class _Loop:
            @staticmethod
            def run(coro: Any, *_a: Any, **_k: Any) -> Any:
                close = getattr(coro, "close", None)
                if close is not None:
                    close()
                raise _Dispatched("run_server")

        setattr(module, "uvloop", _Loop)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


@contextlib.contextmanager
def _environment(env: dict[str, str] | None):
    if not env:
        yield
        return
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _cwd(path: str | None):
    if not path:
        yield
        return
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _error_text(exc: BaseException, stderr: str) -> str:
    if isinstance(exc, SystemExit):
        lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
        # argparse prints the usage, then "<prog>: error: <message>"
        errors = [ln for ln in lines if ": error: " in ln]
        return (errors[-1].split(": error: ", 1)[1] if errors else (lines[-1] if lines else f"exit {exc.code}"))
    return f"{type(exc).__name__}: {exc}"


def check_serve_argv(cli: ServeCLI, argv: list[str], *, cwd: str | None = None,
                     env: dict[str, str] | None = None, deep: bool = False) -> dict[str, Any]:
    """Run one ``vllm serve`` argv (``argv[0] == "serve"``) through vLLM's own stages.

    Returns ``{"ok": bool, "stage": last stage reached (one of :data:`STAGES`), "error": message or
    None, "launcher": the vLLM function ``cmd`` would have started the server with, "args": a few
    parsed values (model, tensor/data parallel sizes) for the caller's own assertions}``.  ``cwd``:
    directory the argv is resolved in (a relative ``--config`` path); ``env``: variables set while
    checking (vLLM reads some in ``cmd``).  Never raises for a rejected argv; argparse's ``SystemExit``
    is caught and its message returned.
    """
    result: dict[str, Any] = {"ok": False, "stage": "parse", "error": None, "launcher": None, "args": {}}
    stderr = io.StringIO()
    stage = "parse"
    import vllm.platforms as platforms

    platforms._current_platform = platforms.current_platform = cli.platform
    try:
        with _cwd(cwd), _environment(env), contextlib.redirect_stderr(stderr):
            args = cli.parser.parse_args(list(argv))
            if getattr(args, "subparser", None) != "serve":
                raise ValueError(f"not a `vllm serve` command line: {argv[:1]}")
            stage = "validate"
            cli.command.validate(args)
            stage = "cmd"
            with _launchers_recorded(cli.module):
                try:
                    cli.command.cmd(args)
                except _Dispatched as d:
                    result["launcher"] = d.launcher
            if result["launcher"] is None:
                raise RuntimeError("`vllm serve` returned without starting a server")
            stage = "engine_args"
            engine_args_cls = importlib.import_module("vllm.engine.arg_utils").AsyncEngineArgs
            engine_args = engine_args_cls.from_cli_args(args)
            result["args"] = {k: _plain(getattr(engine_args, k, None)) for k in (
                "model", "tensor_parallel_size", "data_parallel_size", "pipeline_parallel_size",
                "enable_expert_parallel", "max_num_seqs", "max_num_batched_tokens", "max_model_len",
                "enable_chunked_prefill", "enable_prefix_caching")}
            if deep:
                stage = "engine_config"
                headless = bool(getattr(args, "headless", False))
                try:
                    engine_args.create_engine_config(headless=headless)
                except TypeError:  # releases whose create_engine_config has no `headless`
                    engine_args.create_engine_config()
        result["ok"] = True
    except BaseException as exc:  # noqa: BLE001 - every rejection is a result, not a crash
        if isinstance(exc, KeyboardInterrupt):
            raise
        result["error"] = _error_text(exc, stderr.getvalue())
        if not isinstance(exc, (SystemExit, ValueError, TypeError, argparse.ArgumentError)):
            result["traceback"] = traceback.format_exc(limit=4)
    result["stage"] = stage
    return result


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def quiet_vllm_logging() -> None:
    """Send vLLM's import-time warnings (no CUDA runtime, no ``vllm._C``) away from stdout."""
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("VLLM_CONFIGURE_LOGGING", "1")
    sys.stdout.flush()

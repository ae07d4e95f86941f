#!/usr/bin/env python3
"""Check `vllm serve` command lines with the installed vLLM's own parser (run with a vLLM venv's python).

One command line::

    .venv-vllm-0.11.0/bin/python tools/check_vllm_argv.py -- serve /models/Qwen3-8B --config serve.yaml

A batch (what tests/conformance does: one interpreter start per vLLM release)::

    .venv-vllm-0.11.0/bin/python tools/check_vllm_argv.py --batch cases.json

``cases.json`` is ``{"cases": [{"id": str, "argv": ["serve", ...], "cwd": dir?, "env": {...}?,
"parser_choices": {"--quantization": ["ascend"]}?}], "deep": bool?}`` (``parser_choices``: what the
engine's platform plugin adds to the parser, from its manifest's ``parser_choices_added``); the answer, on stdout, is ``{"vllm": version, "results": [{"id", "ok", "stage",
"error", "launcher", "args"}]}`` (tools/vllm_cli.py ``check_serve_argv`` says what each stage runs).
``argv[0]`` may be ``vllm`` (dropped) or ``serve``.  With ``--deep`` (or ``"deep": true``) each
command line also runs ``create_engine_config``, which needs a local model folder with a
``config.json``.  Exit status: 0 when every command line is accepted, 1 when one is rejected, 2 for
bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import vllm_cli  # noqa: E402


def _serve_argv(argv: list[str]) -> list[str]:
    argv = list(argv)
    if argv and os.path.basename(argv[0]) == "vllm":
        argv = argv[1:]
    return argv


def check_cases(cases: list[dict[str, Any]], deep: bool = False) -> dict[str, Any]:
    """Run every case through one :class:`vllm_cli.ServeCLI`; see the module docstring for shapes."""
    vllm_cli.quiet_vllm_logging()
    clis: dict[str, vllm_cli.ServeCLI] = {}
    results = []
    for i, case in enumerate(cases):
        choices = case.get("parser_choices") or {}
        key = json.dumps(choices, sort_keys=True)
        if key not in clis:  # one parser per platform: plain vLLM, or vLLM under vllm-ascend / Omni-Infer
            clis[key] = vllm_cli.ServeCLI(choices)
        cli = clis[key]
        r = vllm_cli.check_serve_argv(cli, _serve_argv(case["argv"]), cwd=case.get("cwd"),
                                      env=case.get("env"), deep=bool(case.get("deep", deep)))
        r["id"] = case.get("id", str(i))
        results.append(r)
    return {"vllm": vllm_cli.vllm_version(), "results": results}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=Path, help="a JSON file of cases ('-' for stdin)")
    ap.add_argument("--deep", action="store_true", help="also run create_engine_config (needs a local config.json)")
    ap.add_argument("argv", nargs=argparse.REMAINDER, help="-- serve MODEL [options] (one command line)")
    ns = ap.parse_args(argv)
    if ns.batch is not None:
        text = sys.stdin.read() if str(ns.batch) == "-" else ns.batch.read_text(encoding="utf-8")
        try:
            doc = json.loads(text)
            cases = doc["cases"]
        except (ValueError, KeyError, TypeError) as exc:
            print(f"check_vllm_argv: bad batch file: {exc}", file=sys.stderr)
            return 2
        deep = ns.deep or bool(doc.get("deep"))
    else:
        one = ns.argv[1:] if ns.argv[:1] == ["--"] else ns.argv
        if not one:
            ap.error("give a command line after --, or --batch FILE")
        cases, deep = [{"id": "argv", "argv": one}], ns.deep
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # whatever vLLM prints while importing stays out of the JSON answer
    try:
        out = check_cases(cases, deep)
    finally:
        sys.stdout = real_stdout
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0 if all(r["ok"] for r in out["results"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())

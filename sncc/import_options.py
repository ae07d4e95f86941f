"""The click options of an import (``sncc import`` and ``sncc check --import``).

Kept apart from :mod:`sncc.importer`, whose package imports the script reader and the
release manifests: ``sncc check`` declares these options at start-up and must not pay for
the importer unless ``--import`` is given.
"""

from __future__ import annotations

import click


def import_options(f):
    """The import's choices as click options (``sncc import`` and ``sncc check --import``)."""
    for opt in reversed((
        click.option("--system", default=None, help="catalog id of the hardware system (default: one per vendor, said in SN8008)"),
        click.option("--engine", "engine", type=click.Choice(["vllm", "vllm-ascend"]), default=None,
                     help="engine the script runs (default: vllm-ascend when the script sets Ascend variables or options)"),
        click.option("--engine-version", default=None, help="engine release the arguments are read against (default: sncc's pin)"),
        click.option("--model", "model", default=None, help="catalog model id, for a script whose model is a local path or placeholder"),
    )):
        f = opt(f)
    return f

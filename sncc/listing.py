"""Terminal output of ``sncc catalog`` and ``sncc explain``, rendered with rich.

:func:`catalog_table` builds the table of one catalog kind (systems, chips, models, vLLM
Ascend releases, KV connectors): one row per entry, numbers right-aligned with their unit
and digit grouping (``64 GiB``, ``163,840``), the first source of the entry where the
catalog keeps one.  :func:`explain_page` lays out an error code's explanation with its
failing and fixed examples.  :func:`show` prints them, without colour when stdout is not a terminal and wide enough
there that rows never fold (scripts read the columns).
"""

from __future__ import annotations

import click

#: columns of a non-terminal output (a pipe, a file): wide, so no row folds
PIPE_WIDTH = 240


#: the column headings of `sncc catalog releases` (one row per vllm-ascend release)
_RELEASE_COLUMNS = ("vllm-ascend", "vLLM", "CANN", "torch", "torch_npu")

def show(*renderables) -> None:
    """Print ``renderables`` on stdout (``sys.stdout``, which click's CliRunner replaces in
    tests): on a terminal with rich's colours and the terminal's width; otherwise without
    colour, text unwrapped and trailing blanks (rich pads table cells) stripped."""
    import sys

    from rich.console import Console

    out = sys.stdout
    if hasattr(out, "isatty") and out.isatty():
        con = Console(file=out, highlight=False)
        for r in renderables:
            con.print(r)
        return
    con = Console(width=PIPE_WIDTH, no_color=True, highlight=False, soft_wrap=True, force_terminal=False)
    with con.capture() as cap:
        for r in renderables:
            con.print(r)
    click.echo("\n".join(line.rstrip() for line in cap.get().splitlines()))


def _gib(n_bytes: int | None) -> str:
    return f"{n_bytes / 2**30:,.0f} GiB" if n_bytes else "?"


def _source(entry) -> str:
    s = getattr(entry, "source", ()) or ()
    return s[0] if s else ""


def catalog_table(kind: str):
    """The rich Table of catalog ``kind``: ``systems``, ``chips``, ``models``, ``releases`` or
    ``connectors``.  Raises KeyError for another kind."""
    from rich import box
    from rich.table import Table

    from sncc import catalog

    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    if kind == "systems":
        for name, just in (("system", "left"), ("devices/node", "right"), ("chip", "left"), ("name", "left")):
            t.add_column(name, justify=just, no_wrap=True)
        for sid, sy in catalog.systems().items():
            t.add_row(sid, f"{sy.devices_per_node:,}", sy.chip, sy.name)
    elif kind == "chips":
        for name, just in (("chip", "left"), ("device type", "left"), ("HBM", "right"), ("weight formats", "left"),
                           ("status", "center"), ("source", "left")):
            t.add_column(name, justify=just, no_wrap=True)
        for cid, c in catalog.chips().items():
            t.add_row(cid, c.device_type, _gib(c.hbm_bytes), ", ".join(c.weight_formats), c.status, _source(c))
    elif kind == "models":
        for name, just in (("model", "left"), ("kind", "left"), ("layers", "right"), ("max positions", "right"),
                           ("aliases", "left")):
            t.add_column(name, justify=just, no_wrap=True)
        for mid, m in catalog.models().items():
            t.add_row(mid, "MoE" if m.is_moe else "dense", f"{m.num_hidden_layers:,}", f"{m.max_position_embeddings:,}",
                      ", ".join(m.aliases[:3]) or "-")
        t.caption = "any other model: point `model.weights` at a directory with its config.json"
    elif kind == "releases":
        for name in _RELEASE_COLUMNS:
            t.add_column(name, no_wrap=True)
        for r in catalog.vllm_ascend_releases():
            t.add_row(r.version, r.vllm, r.cann, r.torch, r.torch_npu)
        from sncc.engines.registry import KINDS, adapter_for

        pinned = []
        for kind in KINDS:
            a = adapter_for(kind)
            pinned.append(f"{kind} " + ", ".join(p.version + (" (default)" if p.version == a.default_version else "")
                                                 for p in a.pins))
        t.caption = ("the vllm-ascend releases above are checked against (CANN, torch, torch_npu); launch files are "
                     "written for the pinned releases: " + "; ".join(pinned) + " (another release: SN4040 and the "
                     "nearest pin's files)")
    elif kind == "connectors":
        for name in ("connector", "class", "engines"):
            t.add_column(name, no_wrap=True)
        for cid, c in catalog.kv_connectors().items():
            t.add_row(cid, c.class_name, ", ".join(c.engines))
    else:
        raise KeyError(kind)
    return t


def explain_page(ec):
    """The rich renderables of ``sncc explain`` for error code ``ec`` (a
    :class:`sncc.diagnostics.codes.ErrorCode`): heading, summary, explanation, the failing
    and fixed examples, the link."""
    from rich.padding import Padding
    from rich.text import Text

    def example(title: str, code: str):
        return [Text(title, style="bold"), Padding(Text(code), (0, 0, 1, 4))]

    return [
        Text.assemble((f"{ec.code} {ec.name}", "bold"), f" (default severity {ec.severity})"),
        Text(""),
        Text(f"{ec.summary}."),
        Text(""),
        Text(ec.explanation),
        Text(""),
        *example("Failing example:", ec.bad),
        *example("Fixed:", ec.good),
        *_build_blocking_note(ec),
        Text(f"See {ec.url}"),
    ]


def _build_blocking_note(ec) -> list:
    """One paragraph for the codes of :data:`sncc.build.BUILD_BLOCKING`, which a suppression
    comment cannot hide from ``sncc check`` or ``sncc build``."""
    from rich.text import Text

    from sncc.build import BUILD_BLOCKING, BUILD_BLOCKING_AT

    paths = [".".join(map(str, p)) for c, p in sorted(BUILD_BLOCKING_AT) if c == ec.code]
    if paths:
        return [Text(f"At {', '.join(f'`{p}`' for p in paths)} this error makes the deployment impossible: "
                     "`# sncc: ignore[...]` cannot make the plan buildable, so `sncc check` still reports it "
                     "(with a note saying so) and `sncc build` still refuses to write the plan's files."), Text("")]
    if ec.code not in BUILD_BLOCKING:
        return []
    return [Text("This error makes the deployment impossible: `# sncc: ignore[...]` cannot make the plan "
                 "buildable, so `sncc check` still reports it (with a note saying so) and `sncc build` still "
                 "refuses to write the plan's files."), Text("")]

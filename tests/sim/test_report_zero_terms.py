"""The step breakdown's "zero here" footnote says why a registered cost term costs no time: a
communication term that two-micro-batch overlap hides is named as hidden, with its time, not as
absent (seed 000's decode runs EP 64 with micro_batch = 2: its dispatch/combine exists)."""

from __future__ import annotations

from click.testing import CliRunner

from expect import ROOT
from sncc.cli import main


def _zero_lines(plan: str) -> list[str]:
    res = CliRunner().invoke(main, ["simulate", str(ROOT / plan)])
    assert res.exit_code in (0, 1), res.output
    return [ln for ln in res.output.splitlines() if ln.strip().startswith("zero here:")]


def test_hidden_ep_dispatch_is_not_reported_as_absent():
    decode = _zero_lines("examples/deepseek-r1-a3-7p1d.sn")[0]
    assert "comm.ep_dispatch_combine (" in decode and "hidden behind compute" in decode
    assert "no expert-parallel dispatch" not in decode

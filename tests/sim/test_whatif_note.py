"""The note printed when no what-if helps says why the what-ifs ran: a missed SLO, or (with none
missed) an uncertain one.  Before: "no what-if ... moves a missed SLO" also when none was missed."""
from __future__ import annotations

from types import SimpleNamespace as V

from sncc.sim.report.text import no_change_line


def test_missed_slos_are_named():
    line = no_change_line([V(name="tpot.mean < 40 ms", verdict="missed"), V(name="ttft.p90 < 2 s", verdict="met")])
    assert line.startswith("no what-if (") and "moves the missed SLO tpot.mean < 40 ms beyond the seed noise" in line


def test_with_none_missed_the_uncertain_one_is_named_not_a_missed_one():
    line = no_change_line([V(name="tpot.mean < 40 ms", verdict="uncertain"), V(name="ttft.p90 < 2 s", verdict="met")])
    assert "missed SLO" not in line and line.startswith("no SLO is missed; tpot.mean < 40 ms is uncertain")
    two = no_change_line([V(name="a", verdict="uncertain"), V(name="b", verdict="uncertain")])
    assert "a, b are uncertain" in two and "moves them" in two


def test_all_met():
    assert no_change_line([V(name="a", verdict="met")]).startswith("every SLO is met")

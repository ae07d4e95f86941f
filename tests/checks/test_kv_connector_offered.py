"""SN3008: a connector named in `kv_transfer` must be one the engine offers (software.toml
[[kv_connectors]] engines, the rows `sncc catalog connectors` lists), in P/D and aggregated
plans alike; the help names the connectors sncc builds for the engine release and roles (the
adapter's connector_offer over the same rows)."""

from __future__ import annotations

import pytest

from expect import ROOT, compile_text

BROKEN = (ROOT / "examples" / "broken" / "kv-connector-not-offered.sn").read_text()
PD = (ROOT / "tests" / "cases" / "fixed" / "port-conflict-nixl-side-channel.sn").read_text()


def _sn3008(text):
    comp = compile_text(text)
    return comp, [d for d in comp.diagnostics if d.code.code == "SN3008"]


@pytest.mark.parametrize("text", [BROKEN, PD.replace("connector = nixl", "connector = llmdatadist")],
                         ids=["serve", "prefill-decode"])
def test_a_connector_the_engine_does_not_offer_is_an_error_at_its_value(text):
    from sncc import catalog

    comp, got = _sn3008(text)
    assert len(got) == 1 and got[0].is_error, [(d.code.code, d.message) for d in comp.diagnostics]
    d = got[0]
    assert comp.source.text[d.span.start:d.span.end] == "llmdatadist"
    offered = [c.id for c in catalog.kv_connectors().values() if "vllm" in c.engines]
    assert "llmdatadist" not in offered and "nixl" in offered
    # the help lists what sncc builds for the plan's roles, the rest of the release marked
    # (tests/checks/test_kv_connector_without_peer.py)
    offer = comp.facts.kv_connector_offer
    assert d.help == offer.help() and set(offer.built + offer.unbuilt) <= set(offered)


def test_an_offered_connector_and_no_connector_are_clean():
    assert _sn3008(PD)[1] == []
    assert _sn3008(BROKEN.replace("  kv_transfer { connector = llmdatadist }  # E: SN3008:29\n", ""))[1] == []
    assert _sn3008(BROKEN.replace("connector = llmdatadist", "connector = none"))[1] == []

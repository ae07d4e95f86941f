"""KV connectors on an aggregated plan (SN3026) and the connectors offered in the help.

A P/D transfer connector (NIXL, Mooncake, ...) moves KV from a prefill instance to a decode
instance (https://docs.vllm.ai/en/latest/features/disagg_prefill.html); an aggregated plan's one
`serve` role has no such peer, so sncc writes no kv_transfer_config and says so (SN3026, at the
connector). A connector that works on one server, LMCache's in-process KV offload
(https://docs.vllm.ai/en/v0.25.0/examples/disaggregated/lmcache/: LMCacheConnectorV1, kv_role
kv_both), is written. The connectors the help and "did you mean" offer are the adapter's
`connector_offer`: those sncc has launch facts for, and the others of the release marked."""

from __future__ import annotations

import json

import pytest

from expect import ROOT, compile_text, outputs_of

CASES = ROOT / "tests" / "cases"
NIXL = (CASES / "k13-serve-nixl-no-peer.sn").read_text()
LMCACHE = (CASES / "k13-serve-nixl-no-peer.fixed.sn").read_text()
PD = (CASES / "fixed" / "port-conflict-nixl-side-channel.sn").read_text()


def _kv_configs(files: dict) -> list:
    """The --kv-transfer-config objects of every launch script."""
    out = []
    for path, text in files.items():
        if path.startswith("launch/"):
            for line in text.splitlines():
                if "--kv-transfer-config" in line:
                    out.append(json.loads(line.split("'")[1]))
    return out


def test_an_aggregated_plan_naming_a_pd_connector_gets_sn3026_at_the_connector():
    comp = compile_text(NIXL)
    got = [d for d in comp.diagnostics if d.code.code == "SN3026"]
    assert len(got) == 1 and got[0].severity == "warning", [(d.code.code, d.message) for d in comp.diagnostics]
    d = got[0]
    assert comp.source.text[d.span.start:d.span.end] == "nixl"
    assert "no prefill/decode peer" in d.message and "writes no kv_transfer_config" in d.message
    assert "`lmcache`" in d.help                        # the one connector sncc writes on a serve role
    assert _kv_configs(outputs_of(NIXL)) == []           # not written, as the warning says


def test_a_kv_offload_connector_is_written_on_a_serve_role():
    comp = compile_text(LMCACHE)
    assert not [d for d in comp.diagnostics if d.code.code in ("SN3008", "SN3026")]
    cfgs = _kv_configs(outputs_of(LMCACHE))
    assert cfgs and all(c == {"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"} for c in cfgs), cfgs


def test_the_offload_connector_is_refused_on_prefill_and_decode_at_build():
    comp = compile_text(PD.replace("connector = nixl", "connector = lmcache"))
    assert comp.deployment is None
    errors = [d for d in comp.diagnostics if d.is_error]
    assert [d.code.code for d in errors] == ["SN4042"], [(d.code.code, d.message) for d in errors]
    d = errors[0]
    assert "`serve` role only" in d.message and comp.source.text[d.span.start:d.span.end] == "lmcache"


def test_no_connector_and_none_are_clean_on_a_serve_role():
    for text in (LMCACHE.replace("  kv_transfer { connector = lmcache }\n", ""),
                 LMCACHE.replace("connector = lmcache", "connector = none")):
        comp = compile_text(text)
        assert not [d for d in comp.diagnostics if d.code.code in ("SN3008", "SN3026")]
        assert _kv_configs(outputs_of(text)) == []


@pytest.mark.parametrize("kind", ["vllm", "vllm-ascend", "omni-infer"])
@pytest.mark.parametrize("aggregated", [False, True], ids=["pd", "serve"])
def test_the_offer_is_what_the_adapter_has_launch_facts_for(kind, aggregated):
    from sncc import catalog
    from sncc.engines.registry import adapter_for

    a = adapter_for(kind)
    offer = a.connector_offer(a.choose(None).pin.version, aggregated)
    role = "serve" if aggregated else "prefill"
    for cid in offer.built:
        assert role in a.connector(cid).roles
    for cid in offer.unbuilt:
        spec = a.connector(cid)
        assert spec is None or role not in spec.roles
    for cid in offer.built + offer.unbuilt:
        c = catalog.kv_connector(cid)
        assert catalog.connector_runs_on(c, kind) and (c.aggregated or not aggregated)


def test_the_pd_help_lists_built_connectors_and_marks_the_others():
    comp = compile_text(PD.replace("connector = nixl", "connector = llmdatadist"))
    d = [d for d in comp.diagnostics if d.code.code == "SN3008"][0]
    offer = comp.facts.kv_connector_offer
    assert offer.built == ("nixl",) and "mooncake" in offer.unbuilt and "lmcache" in offer.unbuilt
    assert d.help == offer.help()
    assert d.help.startswith("connectors sncc builds for vllm 0.23.0: `nixl`; the release also has `mooncake`")
    assert "no launch facts" in d.help and "SN4042" in d.help


def test_a_misspelt_connector_keeps_did_you_mean_and_lists_the_offer():
    comp = compile_text(PD.replace("connector = nixl", "connector = nixel"))
    d = [d for d in comp.diagnostics if d.code.code == "SN2004"][0]
    assert d.help.startswith("did you mean `nixl`? connectors sncc builds for vllm 0.23.0: `nixl`;")
    assert "which sncc has no launch facts for" in d.help and d.fixes
    assert "`pynccl`" not in d.help                      # removed in vLLM 0.11.0, not offered by 0.23.0


def test_the_language_knows_exactly_the_catalogued_connectors():
    from sncc import catalog
    from sncc.plan.model import KVTransfer

    choices = KVTransfer.model_fields["connector"].json_schema_extra["choices"]
    assert sorted(choices) == sorted([*catalog.kv_connectors(), "none"])

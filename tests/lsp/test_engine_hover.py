"""Hover text of an engine label comes from its adapter's catalog rows (no engine-name tests in the LSP)."""
from __future__ import annotations

from sncc import catalog
from sncc.engines.registry import KINDS
from sncc.lsp.catalog_docs import engine_doc


def test_every_engine_label_has_hover_text():
    for kind in KINDS:
        doc = engine_doc(kind)
        assert doc and doc.startswith("**"), kind


def test_vllm_ascend_hover_lists_the_newest_release_with_its_cann():
    newest = max(catalog.vllm_ascend_releases(), key=lambda r: r.key)
    doc = engine_doc("vllm-ascend")
    first = doc.splitlines()[2]
    assert newest.version in first and f"CANN {newest.cann}" in first
    assert "*source*" in doc


def test_omni_infer_hover_lists_its_revisions():
    doc = engine_doc("omni-infer")
    for row in catalog.omni_infer_revisions():
        assert row.revision in doc


def test_unknown_label_has_no_hover():
    assert engine_doc("tgi") is None

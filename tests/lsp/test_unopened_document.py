"""A request about a document the client never opened, whose file does not exist (bt28 #9):
hover answers null, completion and definition nothing, and the server's log holds no
``hover failed`` FileNotFoundError traceback."""

from __future__ import annotations

import os

from test_lsp import ROOT, Client


def test_requests_on_a_missing_unopened_document_answer_nothing_and_log_nothing(tmp_path):
    c = Client()
    try:
        c.request("initialize", {"processId": os.getpid(), "rootUri": ROOT.as_uri(), "capabilities": {}})
        c.notify("initialized", {})
        uri = (tmp_path / "never-opened.sn").as_uri()
        where = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
        assert c.request("textDocument/hover", where) is None
        done = c.request("textDocument/completion", where)
        assert (done or {}).get("items", []) == []
        assert not c.request("textDocument/definition", where)
    finally:
        assert c.close() == 0
    log = b"".join(c.stderr).decode("utf-8", "replace")
    assert "Traceback" not in log and "ERROR" not in log, log

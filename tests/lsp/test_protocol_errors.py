"""The language server under abuse (issue 14 items 32–34), over stdio in a subprocess:

* a request whose params do not structure (a negative or 2^31 line, ``params: null``, a
  position that is not an object) gets a JSON-RPC error -32602 (it got no answer at all);
* after a wrong ``Content-Length`` (10 bytes short, or too long with no padding) the server
  resynchronises on the next header and answers what follows, ``initialize`` included (one
  wrong header silenced it for good);
* an import that is an open editor buffer over 64 MiB is refused like a file of that size,
  and the open document itself too (a 100 MB buffer went unanswered for 60 s).
"""

from __future__ import annotations

import json
import os
import time

import pytest

from test_lsp import ROOT, TIMEOUT, Client

INVALID_PARAMS = -32602


def _raw(c: Client, method: str, params, timeout: float = TIMEOUT) -> dict:
    """Send a request with ``params`` as given (null included) and return the whole response."""
    c.next_id += 1
    rid = c.next_id
    c.send({"id": rid, "method": method, "params": params})
    deadline = time.monotonic() + timeout
    while True:
        msg = c._next(deadline)
        if msg.get("id") == rid and "method" not in msg:
            return msg
        c._stash(msg)


def _initialize(c: Client) -> dict:
    return c.request("initialize", {"processId": os.getpid(), "rootUri": ROOT.as_uri(), "capabilities": {}})


@pytest.fixture(scope="module")
def server():
    c = Client()
    _initialize(c)
    c.notify("initialized", {})
    path = ROOT / "examples" / "deepseek-r1-a3-7p1d.sn"
    uri = c.open(path, path.read_text(encoding="utf-8"))
    c.diagnostics(uri)
    yield c, uri
    c.proc.kill()
    c.proc.wait(timeout=5)


@pytest.mark.parametrize("method,params", [
    ("textDocument/hover", {"position": {"line": -1, "character": 0}}),
    ("textDocument/hover", None),
    ("textDocument/hover", {"position": {"line": 2**31, "character": 0}}),
    ("textDocument/hover", {"position": {"line": 0, "character": 2**31}}),
    ("textDocument/completion", {"position": "here"}),
    ("textDocument/completion", {"position": {"line": 3}}),
    ("textDocument/definition", {"textDocument": 7, "position": {"line": 0, "character": 0}}),
], ids=["line-1", "null", "line-2^31", "char-2^31", "position-string", "no-character", "uri-number"])
def test_invalid_params_get_an_error_response(server, method, params):
    c, uri = server
    if isinstance(params, dict):
        params = {"textDocument": {"uri": uri}, **params}
    msg = _raw(c, method, params)
    assert msg.get("error", {}).get("code") == INVALID_PARAMS, msg
    # and the server still answers a good request
    ok = c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 5, "character": 4}})
    assert ok is None or "contents" in ok


def _framed(msg: dict, delta: int = 0) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) + delta) + body


@pytest.mark.parametrize("delta", [-10, +10, +5000], ids=["10-short", "10-long", "5000-long"])
def test_a_wrong_content_length_does_not_silence_the_server(delta):
    c = Client()
    try:
        bad = _framed({"id": 999, "method": "textDocument/hover", "params": None}, delta)
        c.proc.stdin.write(bad)
        c.proc.stdin.flush()
        result = _initialize(c)  # the very next message, unpadded
        assert result["serverInfo"]["name"] == "sncc"
        c.notify("initialized", {})
        assert c.request("shutdown") is None
    finally:
        c.proc.kill()
        c.proc.wait(timeout=5)


def test_an_oversized_buffer_import_is_refused(server, tmp_path):
    c, _ = server
    from sncc.source import MAX_FILE_BYTES

    big = tmp_path / "big.sn"
    big.write_text("# small on disk\n", encoding="utf-8")
    huge = "# " + "x" * (MAX_FILE_BYTES + 10) + "\n"
    c.open(big, huge)
    main = tmp_path / "main.sn"
    uri = c.open(main, 'import "big.sn"\nplan "p" {}\n')
    t0 = time.monotonic()
    diags = c.diagnostics(uri, lambda ds: any("big.sn" in d["message"] for d in ds), timeout=60)
    assert time.monotonic() - t0 < 30
    d = next(d for d in diags if "big.sn" in d["message"])
    assert "larger than 64 MiB" in d["message"], d
    # the oversized buffer itself: SN1060 without compiling it
    own = c.diagnostics(big.resolve().as_uri(), timeout=60)
    assert [x["code"] for x in own] == ["SN1060"] and "larger than 64 MiB" in own[0]["message"]

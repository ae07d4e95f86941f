"""`sncc lsp` driven over stdio by a real JSON-RPC client: the server runs as
`python -m sncc.cli lsp` in a subprocess; this file writes and reads the
Content-Length framing itself.  Every wait has a timeout, so a hang fails fast.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 20.0  # seconds for any one answer (a cold server start included)


class Client:
    """A minimal LSP client over a subprocess's stdin/stdout."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sncc.cli", "lsp"], cwd=ROOT,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.inbox: queue.Queue = queue.Queue()
        self.notes: list[dict] = []
        self.stderr: list[bytes] = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(iter(self.proc.stderr.readline, b"")), daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                k, _, v = line.decode("ascii").partition(":")
                headers[k.strip().lower()] = v.strip()
            body = out.read(int(headers["content-length"]))
            self.inbox.put(json.loads(body.decode("utf-8")))

    def send(self, msg: dict) -> None:
        msg = {"jsonrpc": "2.0", **msg}
        data = json.dumps(msg).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict | None = None) -> None:
        self.send({"method": method, **({"params": params} if params is not None else {})})

    def _next(self, deadline: float) -> dict:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no message from the server in time; stderr: " + b"".join(self.stderr).decode(errors="replace")[-2000:])
        try:
            msg = self.inbox.get(timeout=left)
        except queue.Empty:
            raise TimeoutError("no message from the server in time; stderr: " + b"".join(self.stderr).decode(errors="replace")[-2000:]) from None
        if msg is None:
            raise EOFError("the server closed its stdout; stderr: " + b"".join(self.stderr).decode(errors="replace")[-2000:])
        return msg

    def request(self, method: str, params: dict | None = None, timeout: float = TIMEOUT):
        self.next_id += 1
        rid = self.next_id
        self.send({"id": rid, "method": method, **({"params": params} if params is not None else {})})
        deadline = time.monotonic() + timeout
        while True:
            msg = self._next(deadline)
            if msg.get("id") == rid and "method" not in msg:
                assert "error" not in msg, msg
                return msg.get("result")
            self._stash(msg)

    def _stash(self, msg: dict) -> None:
        if "method" in msg and "id" in msg:  # a server→client request (e.g. registerCapability): answer it
            self.send({"id": msg["id"], "result": None})
        else:
            self.notes.append(msg)

    def wait_for(self, method: str, pred=lambda p: True, timeout: float = TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for i, n in enumerate(self.notes):
                if n.get("method") == method and pred(n.get("params")):
                    return self.notes.pop(i)["params"]
            self._stash(self._next(deadline))

    def diagnostics(self, uri: str, pred=lambda ds: True, timeout: float = TIMEOUT) -> list[dict]:
        return self.wait_for("textDocument/publishDiagnostics",
                             lambda p: p["uri"] == uri and pred(p["diagnostics"]), timeout)["diagnostics"]

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = path.resolve().as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "sncc", "version": version, "text": text}})
        return uri

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                self.request("shutdown", timeout=5)
                self.notify("exit")
                return self.proc.wait(timeout=5)
            except Exception:
                self.proc.kill()
                self.proc.wait(timeout=5)
                raise
        return self.proc.returncode


@pytest.fixture(scope="module")
def lsp():
    c = Client()
    result = c.request("initialize", {
        "processId": os.getpid(), "rootUri": ROOT.as_uri(),
        # offer UTF-8 first: the server must still answer in UTF-16
        "capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]},
                         "textDocument": {"publishDiagnostics": {"relatedInformation": True}}},
    })
    assert result["serverInfo"]["name"] == "sncc"
    caps = result["capabilities"]
    assert caps["positionEncoding"] == "utf-16"
    assert caps["hoverProvider"] and caps["completionProvider"] and caps["codeActionProvider"]
    c.notify("initialized", {})
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
        c.proc.wait(timeout=5)


def broken_text() -> str:
    """examples/broken/tp-ep-mismatch.sn with an emoji comment line before the
    error and a second error after two emoji on one line (U+1F680: 1 code point,
    2 UTF-16 units)."""
    t = (ROOT / "examples/broken/tp-ep-mismatch.sn").read_text(encoding="utf-8")
    assert "  decode {" in t
    t = t.replace("  decode {", "  # 🚀 decode: one instance over the whole supernode\n  decode {", 1)
    old = '    graph_cache = "/data/torchair_cache/deepseek-r1-w8a8"'
    assert old in t
    return t.replace(old, '    graph_cache = "/data/🚀🚀/torchair"  prefix_cache_hit = 2')


def rng(sl, sc, el, ec):
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


def test_diagnostics_with_exact_utf16_ranges_then_cleared_by_a_change(lsp):
    path = ROOT / "examples/broken/tp-ep-mismatch.sn"
    text = broken_text()
    uri = lsp.open(path, text)
    diags = lsp.diagnostics(uri)
    by_code = {d["code"]: d for d in diags}
    d = by_code["SN3001"]
    # the line after the inserted comment; `devices = 64`: the 64 (code points = UTF-16 units here)
    ln = next(i for i, s in enumerate(text.split("\n")) if s.startswith("  decode {"))
    col = text.split("\n")[ln].index("devices = 64") + len("devices = ")
    assert d["range"] == rng(ln, col, ln, col + 2)
    assert d["severity"] == 1 and d["source"] == "sncc"
    assert d["codeDescription"]["href"].endswith("SN3001")
    assert "tp × ep × pp" in d["message"]
    assert d["data"]["fixes"], "the SN3001 fix travels in data"
    # after two 🚀 the `2` sits at code point 58 but UTF-16 unit 60
    ln = next(i for i, s in enumerate(text.split("\n")) if "prefix_cache_hit = 2" in s)
    cp = text.split("\n")[ln].index("= 2") + 2
    assert by_code["SN2009"]["range"] == rng(ln, cp + 2, ln, cp + 3)
    warn = by_code["SN4008"]
    assert warn["severity"] == 2
    assert warn["relatedInformation"] and all(r["location"]["uri"] == uri for r in warn["relatedInformation"])

    fixed = text.replace("ep = 32", "ep = 64").replace("  prefix_cache_hit = 2", "")
    lsp.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                          "contentChanges": [{"text": fixed}]})
    after = lsp.diagnostics(uri, lambda ds: not any(x["code"] in ("SN3001", "SN2009") for x in ds))
    assert all(x["severity"] != 1 for x in after)
    lsp.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert lsp.diagnostics(uri, lambda ds: ds == []) == []


def test_hover_on_a_key_and_on_a_catalog_id(lsp):
    path = ROOT / "examples/deepseek-r1-a3-7p1d.sn"
    text = path.read_text(encoding="utf-8")
    uri = lsp.open(path, text)
    lsp.diagnostics(uri)
    lines = text.split("\n")
    ln = next(i for i, s in enumerate(lines) if s.strip() == "tp = 8")  # in prefill
    col = lines[ln].index("tp = 8")
    h = lsp.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": ln, "character": col}})
    assert "tensor-parallel size of attention" in h["contents"]["value"]
    assert "default: `1`" in h["contents"]["value"]
    assert h["range"] == rng(ln, col, ln, col + 2)
    ln = next(i for i, s in enumerate(lines) if "atlas-900-a3-superpod" in s)
    col = lines[ln].index("atlas-900") + 4
    h = lsp.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": ln, "character": col}})
    v = h["contents"]["value"]
    assert "Atlas 900 A3 SuperPoD" in v and "64 GiB HBM" in v and "source" in v and "https://" in v
    ln = next(i for i, s in enumerate(lines) if 'model "deepseek-r1"' in s)
    col = lines[ln].index('"deepseek-r1"') + 3
    h = lsp.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": ln, "character": col}})
    assert "layers: 61" in h["contents"]["value"] and "256 routed" in h["contents"]["value"]
    # a comment has no hover
    assert lsp.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 3}}) is None


def test_completion_of_keys_units_and_catalog_ids(lsp):
    path = ROOT / "scratch-completion.sn"  # never written: the buffer lives in the editor only
    text = 'plan "x" {\n  prefill { ma\n'
    uri = lsp.open(path, text)
    lsp.diagnostics(uri)  # a syntax error, published all the same

    def labels(line, ch):
        res = lsp.request("textDocument/completion", {"textDocument": {"uri": uri}, "position": {"line": line, "character": ch}})
        items = res["items"] if isinstance(res, dict) else res
        return {i["label"] for i in items}

    got = labels(1, 14)
    assert {"max_num_batched_tokens", "max_num_seqs", "tp", "ep", "devices"} <= got
    assert "dtype" not in got and "system" not in got
    lsp.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"text": 'plan "x" {\n  decode { max_num_batched_tokens = 32 }\n  kv_cache { dtype =  }\n  hardware { system = "atl\n'}]})
    assert {"32k", "32M"} == labels(1, 38)
    assert {"auto", "bf16", "int8", "fp8", "fp16"} == labels(2, 21)
    assert "atlas-900-a3-superpod" in labels(3, 25)


def test_code_action_for_an_unknown_key_typo(lsp):
    path = ROOT / "examples/broken/unknown-key.sn"
    text = path.read_text(encoding="utf-8")
    uri = lsp.open(path, text)
    diags = lsp.diagnostics(uri)
    typo = next(d for d in diags if d["code"] == "SN2001")
    actions = lsp.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": typo["range"], "context": {"diagnostics": [typo]}})
    assert len(actions) == 1
    a = actions[0]
    assert a["title"] == "rename to `max_num_seqs`" and a["kind"] == "quickfix" and a["isPreferred"] is True
    (edit,) = a["edit"]["changes"][uri]
    assert edit == {"range": typo["range"], "newText": "max_num_seqs"}
    # apply it as an editor would: the file becomes clean
    lines = text.split("\n")
    r = edit["range"]
    ln = lines[r["start"]["line"]]
    lines[r["start"]["line"]] = ln[: r["start"]["character"]] + edit["newText"] + ln[r["end"]["character"]:]
    lsp.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                          "contentChanges": [{"text": "\n".join(lines)}]})
    assert lsp.diagnostics(uri, lambda ds: ds == []) == []


def test_bad_input_never_kills_the_server(lsp):
    for i, text in enumerate(["", "plan", '"\x00\ud7ff', "plan \"x\" { " * 300, "}}}{{{", "plan \"x\" { prefill { tp = 1e999999 } }"]):
        uri = lsp.open(ROOT / f"scratch-bad-{i}.sn", text)
        lsp.diagnostics(uri)
        lsp.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 2}})
        lsp.request("textDocument/completion", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 1}})
    assert lsp.proc.poll() is None


def test_shutdown_and_exit():
    c = Client()
    try:
        c.request("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}})
        c.notify("initialized", {})
        assert c.request("shutdown") is None
        c.notify("exit")
        assert c.proc.wait(timeout=10) == 0
    finally:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait(timeout=5)


def test_lsp_without_pygls_exits_2(tmp_path):
    # a `pygls` package that fails to import stands in for a missing extra
    (tmp_path / "pygls").mkdir()
    (tmp_path / "pygls" / "__init__.py").write_text("raise ImportError('no pygls here')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    r = subprocess.run([sys.executable, "-m", "sncc.cli", "lsp"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode == 2
    assert "pip install 'sncc[lsp]'" in r.stderr

"""Issue 32: the language server behind a guarded transport (cli/lsp_transport.py). Every
bad frame a client (or anything writing to the server's stdin) can send gets a JSON-RPC
error and the server goes on with the next frame, in bounded memory; a request with
invalid parameters is answered; ``exit`` without ``shutdown`` exits 1."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pygls") is None, reason="pygls is not installed (server extra)"
)

INIT = {"processId": None, "rootUri": None, "capabilities": {}}


def _body(msg: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **msg}).encode()


def _frame(msg: dict[str, Any]) -> bytes:
    body = _body(msg)
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _client(tmp_path: Path) -> Any:
    from lsp_client import LspClient

    return LspClient(tmp_path)


def _raw(client: Any, data: bytes) -> None:
    client.proc.stdin.write(data)
    client.proc.stdin.flush()


def _error(client: Any, code: int, timeout: float = 120) -> dict[str, Any]:
    msg = client.wait(lambda m: "error" in m and "method" not in m, timeout)
    assert msg["error"]["code"] == code, msg
    return msg


INIT_BODY = _body({"id": 1, "method": "initialize", "params": INIT})
BAD_FRAMES = {
    "json_not_an_object": (b"Content-Length: 6\r\n\r\n[1, 2]", -32600),
    "length_too_long": (b"Content-Length: %d\r\n\r\n" % (len(INIT_BODY) + 40) + INIT_BODY, -32700),
    "length_too_short": (b"Content-Length: %d\r\n\r\n" % (len(INIT_BODY) - 9) + INIT_BODY, -32700),
    "length_negative": (b"Content-Length: -5\r\n\r\n" + INIT_BODY, -32600),
    "length_missing": (b"X-Whatever: 1\r\n\r\n" + INIT_BODY, -32600),
    "length_a_terabyte": (b"Content-Length: 1000000000000\r\n\r\n" + INIT_BODY, -32600),
    "not_jsonrpc": (b'Content-Length: 20\r\n\r\n{"id": 9, "x": 1234}', -32600),
}


@pytest.mark.parametrize("kind", sorted(BAD_FRAMES))
def test_a_bad_frame_is_answered_and_the_next_one_served(kind: str, tmp_path: Path) -> None:
    bad, code = BAD_FRAMES[kind]
    client = _client(tmp_path)
    try:
        # the good frame in the same write: a length too long waits for more bytes
        _raw(client, bad + _frame({"id": 1, "method": "initialize", "params": INIT}))
        _error(client, code)
        result = client.wait(lambda m: m.get("id") == 1, 60)["result"]
        assert result["capabilities"]["hoverProvider"]
    finally:
        assert client.close() == 0


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_huge_header_line_is_skipped_in_bounded_memory(tmp_path: Path) -> None:
    client = _client(tmp_path)
    try:
        client.request("initialize", INIT, timeout=60)
        before = _peak_kib(client.proc.pid)
        chunk = b"X" * (1 << 20)
        for _ in range(64):  # a 64 MiB header line, no newline until the end
            _raw(client, chunk)
        _raw(client, b"\r\n\r\n")
        _error(client, -32600, timeout=120)
        assert client.request("shutdown", {}, timeout=60) is None
        grown = _peak_kib(client.proc.pid) - before
        assert grown < 16 * 1024, f"the server grew by {grown} KiB reading a 64 MiB line"
        client.notify("exit", {})
        assert client.proc.wait(timeout=20) == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()


def test_a_request_with_invalid_params_is_answered(tmp_path: Path) -> None:
    client = _client(tmp_path)
    try:
        client.request("initialize", INIT, timeout=60)
        client.send(
            {"id": 7, "method": "textDocument/hover", "params": {"textDocument": 5, "x": []}}
        )
        msg = client.wait(lambda m: m.get("id") == 7, 30)
        assert msg["error"]["code"] == -32602, msg
        assert client.request("shutdown", {}, timeout=30) is None
    finally:
        client.notify("exit", {})
        assert client.proc.wait(timeout=20) == 0


def test_exit_without_shutdown_exits_1(tmp_path: Path) -> None:
    client = _client(tmp_path)
    try:
        client.request("initialize", INIT, timeout=60)
        client.notify("exit", {})
        assert client.proc.wait(timeout=20) == 1
    finally:
        if client.proc.poll() is None:
            client.proc.kill()

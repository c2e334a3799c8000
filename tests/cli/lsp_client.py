"""A minimal Language Server Protocol client: JSON-RPC with Content-Length framing over a
server process's stdio, as editors speak it (used by the server's tests and bench)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


class LspClient:
    def __init__(self, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cfglint", "server"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        # every message received, in order, whatever wait() dropped
        self.log: list[dict[str, Any]] = []
        self._id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            msg = json.loads(out.read(length))
            self.log.append(msg)
            self.messages.put(msg)

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict[str, Any], timeout: float = 60) -> Any:
        self._id += 1
        self.send({"id": self._id, "method": method, "params": params})
        msg = self.wait(lambda m: m.get("id") == self._id and "method" not in m, timeout)
        assert "error" not in msg, msg["error"]
        return msg.get("result")

    def wait(self, match: Any, timeout: float = 60) -> dict[str, Any]:
        """The next message ``match`` accepts (others are dropped)."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("no matching message from the server")
            msg = self.messages.get(timeout=left)
            if match(msg):
                return msg

    def diagnostics(self, uri: str, timeout: float = 60) -> list[dict[str, Any]]:
        msg = self.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
            ),
            timeout,
        )
        return msg["params"]["diagnostics"]

    def close(self) -> int:
        try:
            self.request("shutdown", {}, timeout=20)
            self.notify("exit", {})
            return self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()

"""The language server's guarded transport: what comes in on stdin is framed, bounded and
checked here before pygls sees it.

pygls's own reader (pygls 1.3 ``aio_readline`` and ``JsonRPCProtocol._data_received``)
trusts the client: issue 32 saw it stop answering for good, and then buffer everything
sent (+407 MB for 200 MB), on a body that is JSON but not an object, a ``Content-Length``
too long, too short, negative or missing, or a 200 MB header line; ``Content-Length:
10^12`` was a MemoryError; a request with invalid parameters was never answered. So the
server reads through :class:`GuardedInput`, which hands pygls only well-formed frames of
JSON objects and answers everything else itself:

* a header line is at most MAX_HEADER_LINE bytes, a header block MAX_HEADERS lines, a body
  MAX_BODY bytes; nothing longer is ever held (a longer line or a body over the limit is
  skipped in bounded reads);
* every bad frame gets a JSON-RPC error (``-32700`` parse error, ``-32600`` invalid
  request; id null unless the frame's own id could be read), and reading goes on at the
  next ``Content-Length`` header, also one hidden in a body that a wrong length cut or ran
  into;
* a request whose parameters pygls cannot read gets ``-32602`` with its id
  (:meth:`GuardedInput.answer_failed`, called from the server's error hook);
* ``exit`` without ``shutdown`` before it makes the process exit 1, as the protocol says.

The module needs nothing from pygls, so the fuzz suite drives it directly.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from typing import Any, BinaryIO

MAX_HEADER_LINE = 4096
MAX_HEADERS = 32
# a didOpen carries the whole document: cfglint reads files up to 8 MiB (load/safeio.py
# MAX_BYTES), which JSON escaping can double
MAX_BODY = 32 * 1024 * 1024
_READ = 64 * 1024
_MARK = b"Content-Length:"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


class LockedOutput:
    """The server's stdout, one whole message per write: pygls and the guard both write."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self._lock:
            self._raw.write(data)
            self._raw.flush()

    def flush(self) -> None:
        with self._lock:
            self._raw.flush()

    def close(self) -> None:
        self._raw.close()

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":")).encode()
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


class _Bad(Exception):
    """A frame that cannot be handed on: its JSON-RPC error code and reason."""

    def __init__(
        self, code: int, reason: str, msg_id: Any = None, *, resync: int | None = None
    ) -> None:
        super().__init__(reason)
        self.code, self.reason, self.msg_id = code, reason, msg_id
        # after answering: skip to the next Content-Length (from this offset of the
        # buffer), or None to read on where the frame ended
        self.resync = resync


class GuardedInput:
    """A binary stream for pygls's reader that yields only good frames: ``readline``
    gives their header lines, ``read(n)`` their bodies. Bad frames are answered on
    ``out`` and skipped."""

    def __init__(self, raw: BinaryIO, out: LockedOutput) -> None:
        self._raw = raw
        self._out = out
        self._buf = bytearray()
        self._eof = False
        self._pending: deque[bytes] = deque()
        self.current: dict[str, Any] | None = None  # the frame pygls is handling
        self.shutdown_seen = False
        self.exit_seen = False

    @property
    def buffered(self) -> int:
        """Bytes read ahead and not handed on yet (bounded by MAX_BODY plus one read)."""
        return len(self._buf)

    # -- the stream pygls reads ------------------------------------------------------
    @property
    def closed(self) -> bool:
        return bool(getattr(self._raw, "closed", False)) and not self._pending

    def close(self) -> None:
        self._raw.close()

    def readline(self, *_: Any) -> bytes:
        return self._next()

    def read(self, *_: Any) -> bytes:
        return self._next()

    def _next(self) -> bytes:
        if not self._pending:
            body = self.next_body()
            if body is None:
                return b""
            self._pending += (b"Content-Length: %d\r\n" % len(body), b"\r\n", body)
        return self._pending.popleft()

    # -- framing ---------------------------------------------------------------------
    def next_body(self) -> bytes | None:
        """The body of the next good frame (None at the end of input); every bad frame
        before it is answered with a JSON-RPC error."""
        while True:
            try:
                return self._frame()
            except _Bad as bad:
                # answered first: the next frame may be a while coming
                self._out.send(
                    {"id": bad.msg_id, "error": {"code": bad.code, "message": bad.reason}}
                )
                if bad.resync is not None:
                    self._resync(bad.resync)
            except EOFError:
                return None

    def _frame(self) -> bytes:
        length = self._headers()
        body = self._exact(length)
        try:
            msg = json.loads(body)
        except (ValueError, RecursionError):
            resync = self._push_back_from_mark(body)
            raise _Bad(
                PARSE_ERROR, "the body is not JSON (or its Content-Length is wrong)", resync=resync
            ) from None
        self._check(msg)
        self.current = msg
        method = msg.get("method")
        if method == "shutdown":
            self.shutdown_seen = True
        elif method == "exit":
            self.exit_seen = True
        return body

    def _check(self, msg: Any) -> None:
        if not isinstance(msg, dict):
            raise _Bad(INVALID_REQUEST, f"a message is a JSON object, not {type(msg).__name__}")
        msg_id = msg.get("id")
        if not (msg_id is None or isinstance(msg_id, (int, str))) or isinstance(msg_id, bool):
            raise _Bad(INVALID_REQUEST, "the id is neither a number nor a string")
        if msg.get("jsonrpc") != "2.0":
            raise _Bad(INVALID_REQUEST, 'the message lacks "jsonrpc": "2.0"', msg_id)
        method = msg.get("method")
        if method is None:
            if "id" in msg and ("result" in msg or "error" in msg):
                return  # a response to one of our requests
            raise _Bad(INVALID_REQUEST, "the message has no method", msg_id)
        if not isinstance(method, str):
            raise _Bad(INVALID_REQUEST, "the method is not a string", msg_id)
        params = msg.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            raise _Bad(INVALID_PARAMS, "params is neither an object nor an array", msg_id)

    def _headers(self) -> int:
        """The Content-Length of the next header block (skipping blank lines before it)."""
        length: int | None = None
        count = 0
        while True:
            line = self._line()
            if not line.strip():
                if count == 0:
                    continue  # blank lines between frames
                break
            count += 1
            if count > MAX_HEADERS:
                raise _Bad(INVALID_REQUEST, f"more than {MAX_HEADERS} header lines", resync=0)
            name, sep, value = line.partition(b":")
            if not sep:
                raise _Bad(INVALID_REQUEST, "a header line without a colon", resync=0)
            if name.strip().lower() == b"content-length":
                length = self._length(value)
        if length is None:
            raise _Bad(INVALID_REQUEST, "a frame without Content-Length", resync=0)
        return length

    def _length(self, value: bytes) -> int:
        text = value.strip()
        if not text.isdigit() or len(text) > 12:
            raise _Bad(INVALID_REQUEST, "Content-Length is not a non-negative integer", resync=0)
        n = int(text)
        if n > MAX_BODY:
            raise _Bad(
                INVALID_REQUEST, f"Content-Length {n} is over the {MAX_BODY}-byte limit", resync=0
            )
        return n

    # -- bounded reading ---------------------------------------------------------------
    def _fill(self) -> bool:
        if self._eof:
            return False
        read1 = getattr(self._raw, "read1", None)
        chunk = read1(_READ) if read1 is not None else self._raw.read(_READ)
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    def _line(self) -> bytes:
        """One header line, at most MAX_HEADER_LINE bytes (a longer one is skipped and
        answered)."""
        while True:
            nl = self._buf.find(b"\n", 0, MAX_HEADER_LINE + 1)
            if nl >= 0:
                line = bytes(self._buf[: nl + 1])
                del self._buf[: nl + 1]
                return line
            if len(self._buf) > MAX_HEADER_LINE:
                raise _Bad(INVALID_REQUEST, f"a header line over {MAX_HEADER_LINE} bytes", resync=1)
            if not self._fill():
                if self._buf:
                    self._buf.clear()
                raise EOFError

    def _exact(self, n: int) -> bytes:
        while len(self._buf) < n:
            if not self._fill():
                self._buf.clear()
                raise EOFError
        body = bytes(self._buf[:n])
        del self._buf[:n]
        return body

    def _resync(self, skip: int = 0) -> None:
        """Drop input up to the next ``Content-Length:`` (not at the very start when
        ``skip``), holding at most one read's worth of bytes."""
        start = skip
        while True:
            at = self._buf.find(_MARK, start)
            if at >= 0:
                del self._buf[:at]
                return
            keep = len(_MARK) - 1
            if len(self._buf) > keep:
                del self._buf[: len(self._buf) - keep]
            start = 0
            if not self._fill():
                self._buf.clear()
                return

    def _push_back_from_mark(self, body: bytes) -> int | None:
        """A body that a wrong Content-Length made run into the next frame: read on from
        the next frame's header inside it (or skip to the next one after it)."""
        at = body.find(_MARK)
        if at >= 0:
            self._buf[:0] = body[at:]
            return None
        return 0

    # -- answers pygls cannot give -------------------------------------------------------
    def answer_failed(self, error: BaseException) -> bool:
        """Called when pygls could not read the frame it was handed (its parameters do not
        fit the method's types): a request gets its ``-32602`` answer. True if answered."""
        msg = self.current
        if not msg or "method" not in msg or msg.get("id") is None:
            return False
        self.current = None
        self._out.send(
            {
                "id": msg["id"],
                "error": {
                    "code": INVALID_PARAMS,
                    "message": f"invalid params for {str(msg['method'])[:80]}: "
                    f"{str(error)[:200] or type(error).__name__}",
                },
            }
        )
        return True

    def exit_code(self) -> int:
        """What the process exits with: 1 for ``exit`` without ``shutdown`` (LSP 3.17,
        exit notification), else 0."""
        return 1 if self.exit_seen and not self.shutdown_seen else 0

"""HTTP/1.1 over a unix socket, written once for both clients.

asyncio has no HTTP client and the sync client should not differ from the async one, so every
operation is a generator that yields the I/O it needs (the op classes below) and returns its
result; _drive.py runs such a generator with blocking sockets or with asyncio. Each request
opens its own connection and closes it (``Connection: close``): a sandbox's socket costs a
connect, and no connection stays open to hold off its idle timer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Generator, Optional, Sequence
from urllib.parse import quote, urlencode

from . import errors

USER_AGENT = "jail-sandbox-python/0.1"


# The I/O a generator asks of its driver; the driver sends back the result, or throws the
# OSError it raised into the generator.
@dataclass
class Connect:
    path: str  # a unix socket; the driver closes any connection it had first


@dataclass
class Send:
    data: bytes


@dataclass
class ReadLine:
    pass  # up to and with b"\n"; b"" at the end of the stream


@dataclass
class ReadExactly:
    n: int


@dataclass
class ReadAll:
    pass  # until the peer closes


@dataclass
class Emit:
    callback: Callable[[bytes], Any]  # the async driver awaits what it returns, if awaitable
    data: bytes


@dataclass
class RunCommand:
    argv: list[str]
    cwd: Optional[str]  # the driver answers (exit status, stdout, stderr)


Op = Any
Gen = Generator[Op, Any, Any]


def connect(candidates: Sequence[str], none_answered: Callable[[], errors.JailError]) -> Gen:
    """Connects to the first socket that accepts: a stale daemon socket (its server killed) or a
    sandbox that has just been removed is passed over."""
    for path in candidates:
        try:
            yield Connect(path)
            return path
        except (FileNotFoundError, ConnectionRefusedError):
            continue
    raise none_answered()


def target(path: str, query: Optional[dict] = None) -> str:
    """The request target: path segments were quoted by the caller; None values are left out,
    and a list value repeats its key."""
    if not query:
        return path
    pairs = []
    for key, value in query.items():
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if v is None:
                continue
            if isinstance(v, bool):
                v = "1" if v else "0"
            pairs.append((key, str(v)))
    return f"{path}?{urlencode(pairs)}" if pairs else path


def segment(value: object) -> str:
    return quote(str(value), safe="")


def request(method: str, tgt: str, body: Optional[bytes] = None, content_type: Optional[str] = None) -> bytes:
    lines = [f"{method} {tgt} HTTP/1.1", "Host: jail", "Connection: close", f"User-Agent: {USER_AGENT}"]
    if body is not None or method in ("POST", "PUT", "PATCH"):
        body = body or b""
        if content_type:
            lines.append(f"Content-Type: {content_type}")
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")


def json_body(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


@dataclass
class Head:
    status: int
    headers: dict[str, str]


def read_head() -> Gen:
    line = yield ReadLine()
    if not line:
        # jail closes a connection it refuses without a byte: another user's socket, or a
        # process inside a sandbox.
        raise errors.error("permission_denied", "jail: the API socket closed the connection without an answer (is it another user's, or is this process inside a sandbox?)")
    parts = line.decode("latin-1").split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise errors.error("internal", f"jail: not an HTTP answer: {line[:80]!r}")
    headers = {}
    while True:
        line = yield ReadLine()
        if line in (b"\r\n", b"\n", b""):
            break
        key, _, value = line.decode("latin-1").partition(":")
        headers[key.strip().lower()] = value.strip()
    return Head(int(parts[1]), headers)


class Body:
    """An answer's body, read whole or line by line, whatever its framing."""

    def __init__(self, head: Head, method: str):
        self.chunked = "chunked" in head.headers.get("transfer-encoding", "").lower()
        length = head.headers.get("content-length")
        self.left: Optional[int] = int(length) if length is not None and not self.chunked else None
        if method == "HEAD" or head.status in (204, 304):
            self.left = 0
        self.buf = b""
        self.done = False

    def _more(self) -> Gen:
        """Appends the next piece of the body to buf; sets done at its end."""
        if self.chunked:
            size_line = yield ReadLine()
            size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while (yield ReadLine()) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                self.done = True
                return
            self.buf += yield ReadExactly(size)
            yield ReadExactly(2)  # the chunk's CRLF
        elif self.left is not None:
            if self.left:
                self.buf += yield ReadExactly(self.left)
            self.left = 0
            self.done = True
        else:
            self.buf += yield ReadAll()
            self.done = True

    def read(self) -> Gen:
        while not self.done:
            yield from self._more()
        data, self.buf = self.buf, b""
        return data

    def line(self) -> Gen:
        """The next line without its newline, or None at the end."""
        while b"\n" not in self.buf and not self.done:
            yield from self._more()
        if not self.buf:
            return None
        line, sep, rest = self.buf.partition(b"\n")
        self.buf = rest
        return line


def call(
    candidates: Sequence[str],
    none_answered: Callable[[], errors.JailError],
    method: str,
    path: str,
    query: Optional[dict] = None,
    body: Optional[bytes] = None,
    content_type: Optional[str] = None,
) -> Gen:
    """One request; returns (Head, Body) for a success, raises the answer's error otherwise."""
    yield from connect(candidates, none_answered)
    yield Send(request(method, target(path, query), body, content_type))
    head = yield from read_head()
    reader = Body(head, method)
    if head.status >= 300:
        raise errors.from_body((yield from reader.read()), head.status)
    return head, reader


def call_json(*args: Any, **kwargs: Any) -> Gen:
    """A request whose answer is JSON (None for 204)."""
    head, reader = yield from call(*args, **kwargs)
    data = yield from reader.read()
    if head.status == 204 or not data:
        return None
    return json.loads(data)


def call_bytes(*args: Any, **kwargs: Any) -> Gen:
    _, reader = yield from call(*args, **kwargs)
    return (yield from reader.read())

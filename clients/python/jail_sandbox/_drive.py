"""The two drivers of _wire's generators: blocking sockets for Sandbox, asyncio for AsyncSandbox.
Each runs one generator on one connection at a time and closes it when the generator ends,
fails or is interrupted (closing an exec's connection is what kills its command)."""

from __future__ import annotations

import asyncio
import inspect
import socket
import subprocess
from typing import Any

from . import errors
from ._wire import Connect, Emit, Gen, ReadAll, ReadExactly, ReadLine, RunCommand, Send


def _short() -> errors.JailError:
    return errors.error("internal", "jail: the API connection closed in the middle of an answer")


class _SyncConn:
    def __init__(self, path: str):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(path)
        except BaseException:
            self.sock.close()
            raise
        self.reader = self.sock.makefile("rb")

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


class _Steps:
    """Iterates over the operations of a generator: each is answered by setting ``value`` (or
    ``failure``, thrown into the generator) before the next is asked for; what the generator
    returns ends up in ``result``."""

    def __init__(self, gen: Gen):
        self.gen = gen
        self.value: Any = None
        self.failure: Exception | None = None
        self.result: Any = None

    def __iter__(self) -> "_Steps":
        return self

    def __next__(self) -> Any:
        value, failure, self.value, self.failure = self.value, self.failure, None, None
        try:
            return self.gen.throw(failure) if failure is not None else self.gen.send(value)
        except StopIteration as stop:
            self.result = stop.value
            raise StopIteration from None


def run_sync(gen: Gen) -> Any:
    """Runs an operation with blocking I/O and returns its result."""
    conn = None
    steps = _Steps(gen)
    try:
        for op in steps:
            try:
                if isinstance(op, Connect):
                    if conn is not None:
                        conn.close()
                        conn = None
                    conn = _SyncConn(op.path)
                elif isinstance(op, Send):
                    conn.sock.sendall(op.data)
                elif isinstance(op, ReadLine):
                    steps.value = conn.reader.readline()
                elif isinstance(op, ReadExactly):
                    steps.value = conn.reader.read(op.n)
                    if len(steps.value) != op.n:
                        raise _short()
                elif isinstance(op, ReadAll):
                    steps.value = conn.reader.read()
                elif isinstance(op, Emit):
                    op.callback(op.data)
                elif isinstance(op, RunCommand):
                    p = subprocess.run(op.argv, cwd=op.cwd, stdin=subprocess.DEVNULL, capture_output=True)
                    steps.value = (p.returncode, p.stdout, p.stderr)
                else:
                    raise TypeError(f"unknown operation {op!r}")
            except Exception as e:  # the generator decides: passes over a dead socket, or fails
                steps.failure = e
        return steps.result
    finally:
        gen.close()
        if conn is not None:
            conn.close()


async def run_async(gen: Gen) -> Any:
    """Runs an operation with asyncio and returns its result. Cancelling the task closes the
    connection, as closing a blocking socket does."""
    reader = writer = None
    steps = _Steps(gen)

    async def close() -> None:
        if writer is not None:
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass

    try:
        for op in steps:
            try:
                if isinstance(op, Connect):
                    await close()
                    reader = writer = None
                    reader, writer = await asyncio.open_unix_connection(op.path, limit=1 << 20)
                elif isinstance(op, Send):
                    writer.write(op.data)
                    await writer.drain()
                elif isinstance(op, ReadLine):
                    steps.value = await reader.readline()
                elif isinstance(op, ReadExactly):
                    try:
                        steps.value = await reader.readexactly(op.n)
                    except asyncio.IncompleteReadError:
                        raise _short() from None
                elif isinstance(op, ReadAll):
                    steps.value = await reader.read()
                elif isinstance(op, Emit):
                    result = op.callback(op.data)
                    if inspect.isawaitable(result):
                        await result
                elif isinstance(op, RunCommand):
                    p = await asyncio.create_subprocess_exec(
                        *op.argv, cwd=op.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
                    )
                    out, err = await p.communicate()
                    steps.value = (p.returncode, out, err)
                else:
                    raise TypeError(f"unknown operation {op!r}")
            except Exception as e:
                steps.failure = e
        return steps.result
    finally:
        gen.close()
        await close()

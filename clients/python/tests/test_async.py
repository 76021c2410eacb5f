"""AsyncSandbox against the real jail binary: the same surface, awaited; callbacks may be
coroutines; cancelling an exec kills its command."""

from __future__ import annotations

import asyncio
import io
import os
import tarfile
import unittest
import uuid

from jail_sandbox import AsyncSandbox, InvalidArgumentError, NotFoundError
from tests.jailenv import eventually, host_processes_with, setUpModule, tearDownModule, world  # noqa: F401


class TestAsyncSandbox(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        w = world()
        self.name = f"a-{uuid.uuid4().hex[:8]}"
        self.sb = await AsyncSandbox.create(workdir=w.work, name=self.name)

    async def asyncTearDown(self) -> None:
        await self.sb.delete(missing_ok=True)

    async def test_exec(self) -> None:
        seen: list[bytes] = []

        async def on_stdout(data: bytes) -> None:
            seen.append(data)

        r = await self.sb.exec("echo one; sleep 0.05; echo two; echo err >&2; exit 5", on_stdout=on_stdout)
        self.assertEqual((r.exit_code, r.stdout, r.stderr), (5, b"one\ntwo\n", b"err\n"))
        self.assertEqual(b"".join(seen), b"one\ntwo\n")
        r = await self.sb.exec(["sleep", "30"], timeout=0.2)
        self.assertEqual((r.exit_code, r.timed_out), (124, True))
        with self.assertRaises(InvalidArgumentError):
            await self.sb.exec(["no-such-command-here"])

    async def test_execs_run_concurrently(self) -> None:
        results = await asyncio.gather(*(self.sb.exec(f"sleep 0.2; echo {i}") for i in range(4)))
        self.assertEqual([r.stdout for r in results], [b"0\n", b"1\n", b"2\n", b"3\n"])

    async def test_cancelled_exec_kills_its_command(self) -> None:
        marker = f"jail-py-{uuid.uuid4().hex}"
        started = asyncio.Event()
        task = asyncio.create_task(self.sb.exec(f"echo go; sleep 1000; : {marker}", on_stdout=lambda d: started.set()))
        await asyncio.wait_for(started.wait(), 10)
        self.assertTrue(host_processes_with(marker))
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        self.assertTrue(await asyncio.to_thread(eventually, lambda: not host_processes_with(marker)))

    async def test_files_and_processes(self) -> None:
        await self.sb.exec("echo from-exec > /tmp/f")
        self.assertEqual(await self.sb.files.read("/tmp/f"), b"from-exec\n")
        await self.sb.files.write("/tmp/g/h.txt", b"client")
        self.assertEqual([e.name for e in await self.sb.files.list("/tmp/g")], ["h.txt"])
        self.assertEqual((await self.sb.exec("cat /tmp/g/h.txt")).stdout, b"client")
        await self.sb.files.remove("/tmp/g", recursive=True)
        self.assertFalse(await self.sb.files.exists("/tmp/g"))
        tar = await self.sb.files.read_archive("/tmp/f")
        with tarfile.open(fileobj=io.BytesIO(tar)) as t:
            self.assertEqual(t.getnames(), ["f"])
        await self.sb.files.write_archive("/tmp/copy", tar)
        self.assertEqual(await self.sb.files.read("/tmp/copy/f"), b"from-exec\n")

        p = await self.sb.processes.start(["sleep", "1000"])
        self.assertEqual([q.pid for q in await self.sb.processes.list(running=True)], [p.pid])
        self.assertTrue(await self.sb.processes.kill(p.pid))
        self.assertEqual((await self.sb.processes.wait(p.pid, timeout=10)).exit_code, 137)

    async def test_list_get_delete(self) -> None:
        self.assertEqual((await AsyncSandbox.get(self.name)).id, self.sb.id)
        self.assertIn(self.sb.id, [s.id for s in await AsyncSandbox.list()])
        async with await AsyncSandbox.create(workdir=world().work) as other:
            self.assertEqual((await other.exec("true")).exit_code, 0)
        self.assertNotIn(other.id, world().sandbox_dirs())
        await self.sb.delete()
        self.assertFalse(os.path.exists(os.path.join(world().runtime, self.sb.id)))
        with self.assertRaises(NotFoundError):
            await AsyncSandbox.get(self.name)


if __name__ == "__main__":
    unittest.main()

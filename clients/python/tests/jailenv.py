"""The tests' world: the real jail binary ($JAIL_BIN, else jail on PATH), a runtime directory of
their own, a working directory, and a home with a ~/.ssh inside a directory the sandboxes may
read, so that only the sandbox's private home can hide it."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest


class World:
    def __init__(self) -> None:
        self.binary = os.environ.get("JAIL_BIN") or shutil.which("jail")
        self.saved = {k: os.environ.get(k) for k in ("JAIL_RUNTIME_DIR", "HOME", "JAIL_BIN", "XDG_STATE_HOME")}
        self.root = tempfile.mkdtemp(prefix="jail-py-")
        self.runtime = os.path.join(self.root, "rt")
        self.work = os.path.join(self.root, "work")
        self.outer = os.path.join(self.root, "outer")  # granted read-only to the sandboxes
        self.home = os.path.join(self.outer, "home")
        self.secret = os.path.join(self.home, ".ssh", "id_test")
        os.makedirs(os.path.dirname(self.secret))
        os.mkdir(self.work)
        with open(self.secret, "w") as f:
            f.write("not for sandboxes\n")
        with open(os.path.join(self.outer, "visible"), "w") as f:
            f.write("granted\n")
        os.environ["JAIL_RUNTIME_DIR"] = self.runtime
        os.environ["HOME"] = self.home
        os.environ["XDG_STATE_HOME"] = os.path.join(self.root, "state")  # change sets go there
        if self.binary:
            os.environ["JAIL_BIN"] = self.binary

    def close(self) -> None:
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(self.root, ignore_errors=True)

    def sandbox_dirs(self) -> list[str]:
        if not os.path.isdir(self.runtime):
            return []
        return sorted(e for e in os.listdir(self.runtime) if e.startswith("jb_"))

    def serve(self) -> subprocess.Popen:
        """Starts `jail serve` on the runtime directory's jail.sock and waits until it answers."""
        proc = subprocess.Popen([self.binary, "serve"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        path = os.path.join(self.runtime, "jail.sock")
        for _ in range(200):
            if proc.poll() is not None:
                raise AssertionError(f"jail serve exited: {proc.stderr.read().decode()}")
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(path)
                return proc
            except OSError:
                time.sleep(0.025)
        stop(proc)
        raise AssertionError("jail serve did not answer within 5 s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stderr:
        proc.stderr.close()


def host_processes_with(marker: str) -> list[int]:
    """Pids of host processes whose command line holds marker (what a sandbox runs shows there)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    pids.append(int(entry))
        except OSError:
            pass
    return pids


def holders(path: str) -> list[int]:
    """Pids of processes with path open (a sandbox's keeper holds its lock file)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{entry}/fd/{fd}") == path:
                    pids.append(int(entry))
                    break
            except OSError:
                pass
    return pids


def eventually(check, timeout: float = 5.0) -> bool:
    """Whether check() turns true within timeout: for effects jail finishes asynchronously."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return bool(check())


WORLD: World | None = None


def setUpModule() -> None:
    global WORLD
    WORLD = World()
    if not WORLD.binary:
        WORLD.close()
        WORLD = None
        if os.environ.get("JAIL_MUST_WORK") == "1":
            raise AssertionError("no jail binary: set JAIL_BIN")
        raise unittest.SkipTest("no jail binary: set JAIL_BIN")


def tearDownModule() -> None:
    global WORLD
    if WORLD is not None:
        leftover = WORLD.sandbox_dirs()
        if leftover:  # a failed test's: remove them all the same, then say so
            subprocess.run([WORLD.binary, "rm", "-f", *leftover], stdin=subprocess.DEVNULL, capture_output=True)
        WORLD.close()
        WORLD = None
        if leftover:
            raise AssertionError(f"sandboxes left behind: {leftover}")


def world() -> World:
    assert WORLD is not None
    return WORLD

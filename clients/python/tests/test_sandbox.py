"""Sandbox against the real jail binary: without a daemon (jail create --json, each sandbox's own
socket) and through jail serve."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import tarfile
import tempfile
import unittest
import uuid

from jail_sandbox import (
    AlreadyExistsError,
    ApplyRefusedError,
    Change,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    Sandbox,
)
from tests.jailenv import eventually, holders, host_processes_with, setUpModule, stop, tearDownModule, world  # noqa: F401


def create(**kwargs) -> Sandbox:
    w = world()
    return Sandbox.create(workdir=w.work, read=[w.outer], **kwargs)


class TestSandbox(unittest.TestCase):
    def setUp(self) -> None:
        self.sb = create()
        self.addCleanup(self.sb.delete, missing_ok=True)

    def test_exec_exit_code_and_output(self) -> None:
        r = self.sb.exec("echo out; echo err >&2; exit 3")
        self.assertEqual((r.exit_code, r.stdout, r.stderr, r.timed_out), (3, b"out\n", b"err\n", False))
        r = self.sb.exec(["printf", "%s|", "a b", "c"])
        self.assertEqual((r.exit_code, r.stdout), (0, b"a b|c|"))

    def test_exec_streams_to_callbacks(self) -> None:
        seen: list[tuple[str, bytes]] = []
        r = self.sb.exec(
            "for i in 1 2 3; do echo $i; echo e$i >&2; sleep 0.05; done",
            on_stdout=lambda d: seen.append(("out", d)),
            on_stderr=lambda d: seen.append(("err", d)),
        )
        self.assertEqual(b"".join(d for k, d in seen if k == "out"), b"1\n2\n3\n")
        self.assertEqual(b"".join(d for k, d in seen if k == "err"), b"e1\ne2\ne3\n")
        self.assertGreaterEqual(len(seen), 6)  # as it came, not once at the end
        self.assertEqual(r.stdout, b"1\n2\n3\n")

    def test_exec_timeout(self) -> None:
        r = self.sb.exec(["sleep", "30"], timeout=0.3)
        self.assertEqual((r.exit_code, r.timed_out), (124, True))

    def test_exec_cwd_env_input(self) -> None:
        r = self.sb.exec("pwd; echo $GREETING; cat", cwd="/tmp", env={"GREETING": "hi"}, input=b"from stdin")
        self.assertEqual(r.stdout, b"/tmp\nhi\nfrom stdin")

    def test_exec_errors(self) -> None:
        with self.assertRaises(InvalidArgumentError) as cm:
            self.sb.exec(["no-such-command-here"])
        self.assertTrue(str(cm.exception).startswith("jail: exec no-such-command-here"), str(cm.exception))
        self.assertEqual((cm.exception.code, cm.exception.status), ("invalid_argument", 400))

    def test_files_persist_between_execs(self) -> None:
        self.assertEqual(self.sb.exec("echo kept > /tmp/note; echo home > ~/h").exit_code, 0)
        self.assertEqual(self.sb.exec("cat /tmp/note ~/h").stdout, b"kept\nhome\n")
        self.assertEqual(self.sb.files.read("/tmp/note"), b"kept\n")

    def test_runs_inside_jail(self) -> None:
        w = world()
        inside = self.sb.exec("readlink /proc/self/ns/pid").stdout.decode().strip()
        self.assertTrue(inside.startswith("pid:["), inside)
        self.assertNotEqual(inside, os.readlink("/proc/self/ns/pid"))
        # The home holding ~/.ssh sits in a directory the sandbox may read: what hides ~/.ssh
        # is the sandbox's private home, not a missing grant.
        self.assertTrue(os.path.exists(w.secret))
        r = self.sb.exec(f"cat {w.outer}/visible; echo HOME=$HOME; ls -A ~ | grep ssh; cat ~/.ssh/id_test")
        self.assertEqual(r.stdout, f"granted\nHOME={w.home}\n".encode(), r)
        self.assertNotEqual(r.exit_code, 0)
        self.assertFalse(self.sb.files.exists("~/.ssh") or self.sb.files.exists(w.secret))

    def test_files(self) -> None:
        f = self.sb.files
        self.assertEqual(f.write("/tmp/d/a.txt", "hello").size, 5)  # parents made
        f.write("/tmp/d/b.bin", bytes(range(256)), mode=0o600)
        self.assertEqual(f.read("/tmp/d/b.bin"), bytes(range(256)))
        self.assertEqual(f.read("/tmp/d/a.txt", offset=1, length=3), b"ell")
        self.assertEqual([(e.name, e.type, e.size) for e in f.list("/tmp/d")], [("a.txt", "file", 5), ("b.bin", "file", 256)])
        self.assertEqual(f.stat("/tmp/d/b.bin").mode, 0o600)
        self.assertEqual(f.mkdir("/tmp/d/sub").type, "dir")
        with self.assertRaises(AlreadyExistsError):
            f.mkdir("/tmp/d/sub")
        f.mkdir("/tmp/d/sub", parents=True)
        self.assertEqual(f.move("/tmp/d/a.txt", "/tmp/d/sub/a.txt").path, "/tmp/d/sub/a.txt")
        f.remove("/tmp/d/b.bin")
        self.assertFalse(f.exists("/tmp/d/b.bin"))
        with self.assertRaises(NotFoundError):
            f.read("/tmp/d/b.bin")
        with self.assertRaises(InvalidArgumentError):
            f.remove("/tmp/d")  # not empty
        f.remove("/tmp/d", recursive=True)
        f.remove("/tmp/d", missing_ok=True)
        with self.assertRaises(PermissionDeniedError):
            f.write("/usr/jail-client-test", b"x")
        # A file the client wrote is the commands' file, and the other way round.
        f.write("data.txt", "in workdir")
        self.assertEqual(self.sb.exec("cat data.txt").stdout, b"in workdir")
        with open(os.path.join(world().work, "data.txt")) as host:
            self.assertEqual(host.read(), "in workdir")

    def test_archive_round_trip(self) -> None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for name, data in (("proj/a.txt", b"A"), ("proj/sub/b.txt", b"BB")):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        res = self.sb.files.write_archive("/tmp/in", buf.getvalue())
        self.assertEqual(res.bytes, 3)
        self.assertEqual(self.sb.exec("cat /tmp/in/proj/a.txt /tmp/in/proj/sub/b.txt").stdout, b"ABB")
        out = self.sb.files.read_archive("/tmp/in/proj")
        with tarfile.open(fileobj=io.BytesIO(out)) as tar:
            files = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
        self.assertEqual(files, {"proj/a.txt": b"A", "proj/sub/b.txt": b"BB"})

    def test_background_process_killed(self) -> None:
        marker = f"jail-py-{uuid.uuid4().hex}"
        p = self.sb.processes.start(f"echo ready; sleep 1000; : {marker}")
        self.assertTrue(p.running)
        out = self.sb.processes.output(p.pid, wait=5)
        self.assertEqual(out.stdout, b"ready\n")
        self.assertTrue(eventually(lambda: host_processes_with(marker)))
        self.assertIn(p.pid, [q.pid for q in self.sb.processes.list(running=True)])
        self.assertTrue(self.sb.processes.kill(p.pid))
        done = self.sb.processes.wait(p.pid, timeout=10)
        self.assertEqual((done.running, done.exit_code, done.signal), (False, 137, "KILL"))
        self.assertFalse(self.sb.processes.kill(p.pid))  # ended: nothing to kill
        self.assertTrue(eventually(lambda: not host_processes_with(marker)))

    def test_process_stdin_and_output_by_offset(self) -> None:
        p = self.sb.processes.start(["sh", "-c", "echo start; cat; echo end >&2"], stdin=True)
        first = self.sb.processes.output(p.pid, wait=5)
        self.assertEqual(first.stdout, b"start\n")
        self.sb.processes.send_stdin(p.pid, b"one ")
        self.sb.processes.send_stdin(p.pid, "two", close=True)
        self.assertEqual(self.sb.processes.wait(p.pid, timeout=10).exit_code, 0)
        rest = self.sb.processes.output(p.pid, stdout=first.next_stdout, stderr=first.next_stderr)
        self.assertEqual((rest.stdout, rest.stderr, rest.running), (b"one two", b"end\n", False))
        self.assertEqual(rest.exit.exit_code, 0)
        got: list[bytes] = []
        again = self.sb.processes.attach(p.pid, on_stdout=got.append)
        self.assertEqual((again.stdout, b"".join(got), again.exit_code), (b"start\none two", b"start\none two", 0))
        self.sb.processes.remove(p.pid)
        with self.assertRaises(NotFoundError):
            self.sb.processes.get(p.pid)

    def test_delete_refused_while_a_command_runs_unless_forced(self) -> None:
        self.sb.processes.start(["sleep", "1000"])
        with self.assertRaises(FailedPreconditionError):
            self.sb.delete(force=False)
        self.sb.delete()


class TestLifecycle(unittest.TestCase):
    def test_list_get_by_name_delete_leaves_nothing(self) -> None:
        w = world()
        name = f"py-{uuid.uuid4().hex[:8]}"
        marker = f"jail-py-{uuid.uuid4().hex}"
        sb = create(name=name, labels={"suite": "python", "name": name}, idle_timeout=600, ttl=3600, cache=["none"])
        try:
            self.assertTrue(sb.id.startswith("jb_"))
            self.assertEqual((sb.name, sb.info.state, sb.info.labels["suite"]), (name, "running", "python"))
            self.assertEqual((sb.info.idle_timeout, sb.info.ttl), (600, 3600))
            other = create()
            try:
                self.assertEqual([s.id for s in Sandbox.list(labels={"name": name})], [sb.id])
                self.assertEqual({sb.id, other.id} - {s.id for s in Sandbox.list()}, set())
            finally:
                other.delete()
            got = Sandbox.get(name)
            self.assertEqual(got.id, sb.id)
            self.assertEqual(Sandbox.get(sb.id).name, name)
            with self.assertRaises(AlreadyExistsError):
                create(name=name)
            sb.set_timeout(1800)
            self.assertEqual(sb.info.ttl, 1800)
            sb.update(labels={"suite": "changed"})
            self.assertEqual(sb.refresh().labels, {"suite": "changed"})
            sb.processes.start(f"sleep 1000; : {marker}")
            self.assertTrue(eventually(lambda: host_processes_with(marker)))
        finally:
            sb.delete()
        self.assertNotIn(sb.id, w.sandbox_dirs())
        self.assertFalse(os.path.exists(os.path.join(w.runtime, sb.id)))
        self.assertFalse(os.path.lexists(os.path.join(w.runtime, "names", name)))
        self.assertEqual(host_processes_with(marker), [])
        # Its keeper, and the API handler that answered the delete, which exits once the
        # connection is closed.
        self.assertTrue(eventually(lambda: not host_processes_with(sb.id)), host_processes_with(sb.id))
        with self.assertRaises(NotFoundError):
            Sandbox.get(name)
        with self.assertRaises(NotFoundError):
            sb.exec("true")
        sb.delete(missing_ok=True)

    def test_context_manager_deletes(self) -> None:
        with create() as sb:
            self.assertEqual(sb.exec("true").exit_code, 0)
        self.assertNotIn(sb.id, world().sandbox_dirs())

    def test_dead_sandbox_listed_and_pruned(self) -> None:
        """A sandbox whose keeper died answers on no socket: listing finds its record through
        `jail ls --json`, and prune removes it."""
        w = world()
        sb = create(labels={"fate": "dead"})
        keepers = holders(os.path.join(w.runtime, sb.id, "lock"))
        self.assertEqual(len(keepers), 1, keepers)
        os.kill(keepers[0], signal.SIGKILL)
        self.assertTrue(eventually(lambda: not holders(os.path.join(w.runtime, sb.id, "lock"))))
        with self.assertRaises(NotFoundError):
            sb.exec("true")
        self.assertEqual([(s.id, s.info.state) for s in Sandbox.list(labels={"fate": "dead"})], [(sb.id, "dead")])
        self.assertEqual(Sandbox.list(labels={"fate": "alive"}), [])
        self.assertEqual(Sandbox.prune(), [sb.id])
        self.assertEqual(Sandbox.list(), [])
        self.assertNotIn(sb.id, w.sandbox_dirs())

    def test_create_errors(self) -> None:
        with self.assertRaises(InvalidArgumentError) as cm:
            create(profile="no-such-profile-here")
        self.assertTrue(str(cm.exception).startswith("jail: "), str(cm.exception))
        with self.assertRaises(InvalidArgumentError):
            create(write=["relative/dir"])
        with self.assertRaises(NotFoundError):
            Sandbox.get("no-such-sandbox")
        with self.assertRaises(NotFoundError):
            Sandbox.get("jb_000000000000")


class TestThroughDaemon(unittest.TestCase):
    """The same client with jail serve running: everything goes through its socket, and a
    socket it left behind when killed is passed over."""

    def test_daemon(self) -> None:
        w = world()
        server = w.serve()
        try:
            # No jail binary for the client: only the daemon can create.
            os.environ["JAIL_BIN"] = os.path.join(w.root, "no-such-jail")
            name = f"d-{uuid.uuid4().hex[:8]}"
            with create(name=name) as sb:
                self.assertEqual(sb.exec("echo via daemon").stdout, b"via daemon\n")
                self.assertEqual(Sandbox.get(name).id, sb.id)
                self.assertIn(sb.id, [s.id for s in Sandbox.list()])
                stop(server)
                # jail.sock may remain, answering nothing: the sandbox's own socket answers.
                self.assertEqual(Sandbox.get(name).id, sb.id)
                self.assertEqual(sb.exec("echo direct").stdout, b"direct\n")
        finally:
            os.environ["JAIL_BIN"] = w.binary
            stop(server)
        self.assertNotIn(sb.id, w.sandbox_dirs())


# A profile without protections or git rules: the sandbox may plant a git hook in its overlay,
# and only apply stands between it and the host's git.
BARE_PROFILE = """[filesystem]
read = ["/usr", "/etc", "/bin?", "/sbin?", "/lib?", "/lib64?"]
write = ["$CWD"]
tmpfs = ["/tmp", "~"]
[git]
mode = "off"
[process]
env = ["PATH"]
"""


class TestWorkspace(unittest.TestCase):
    """An overlay workspace's change set: listed, diffed, applied (a planted hook refused, nothing
    written), and after delete reached through jail serve and discarded."""

    def test_changes_diff_apply_discard(self) -> None:
        w = world()
        tree = tempfile.mkdtemp(dir=w.root)
        subprocess.run(["git", "init", "-q", tree], check=True)
        profile = tree + ".toml"
        with open(profile, "w") as f:
            f.write(BARE_PROFILE)
        hook = os.path.join(tree, ".git", "hooks", "pre-commit")
        sb = Sandbox.create(profile=profile, workdir=tree, workspace="overlay")
        self.addCleanup(sb.delete, missing_ok=True)
        self.assertEqual(sb.info.workspace, "overlay")
        r = sb.exec("echo new > new.txt && echo 'touch planted' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit")
        self.assertEqual(r.exit_code, 0, r)
        self.assertFalse(os.path.exists(os.path.join(tree, "new.txt")))

        cs = sb.workspace.changes()
        self.assertEqual((cs.id, cs.tree, cs.live, cs.conflicts), (sb.id, tree, True, []))
        self.assertEqual(sorted(cs.changes, key=lambda c: c.path), [Change("A", ".git/hooks/pre-commit"), Change("A", "new.txt")])
        diff = sb.workspace.diff("new.txt")
        self.assertIn("+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n", diff)
        self.assertNotIn("pre-commit", diff)

        with self.assertRaises(ApplyRefusedError) as cm:
            sb.workspace.apply()
        e = cm.exception
        self.assertIsInstance(e, FailedPreconditionError)
        self.assertEqual((e.status, [(h.path, h.allow) for h in e.refused], e.conflicts), (409, [(".git/hooks/pre-commit", "git")], []))
        self.assertFalse(os.path.exists(hook) or os.path.exists(os.path.join(tree, "new.txt")), "a refused apply wrote")

        res = sb.workspace.apply("new.txt")
        self.assertEqual((res.written, res.removed), ([Change("A", "new.txt")], False))
        with open(os.path.join(tree, "new.txt")) as f:
            self.assertEqual(f.read(), "new\n")
        self.assertEqual(sb.exec("cat new.txt").stdout, b"new\n")  # the sandbox sees its files still
        with self.assertRaises(FailedPreconditionError):
            sb.workspace.discard()  # its overlay is mounted on the change set

        sb.delete()
        server = w.serve()
        self.addCleanup(stop, server)
        cs = sb.workspace.changes()
        self.assertFalse(cs.live)
        self.assertIn(Change("A", ".git/hooks/pre-commit"), cs.changes)
        sb.workspace.discard()
        with self.assertRaises(NotFoundError):
            sb.workspace.changes()
        self.assertFalse(os.path.exists(hook))


if __name__ == "__main__":
    unittest.main()

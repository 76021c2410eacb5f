"""The surface Sandbox and AsyncSandbox share. Each method builds its operation once and hands it
to the class's driver: Sandbox's runs it and returns the result, AsyncSandbox's returns a
coroutine of it (so every method of AsyncSandbox, its files, processes and workspace is awaited)."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence, Union

from . import _routes
from ._routes import Command, Target
from ._wire import Gen
from .values import ApplyResult, ArchiveResult, ChangeSet, FileEntry, ProcessInfo, ProcessOutput, SandboxInfo, WriteResult, go_duration

Data = Union[bytes, bytearray, memoryview, str]
Callback = Callable[[bytes], Any]


def _bytes(data: Any) -> bytes:
    """What a write takes: bytes, text (UTF-8) or a binary file object."""
    if isinstance(data, str):
        return data.encode()
    if hasattr(data, "read"):
        data = data.read()
    return bytes(data)


def _then(gen: Gen, convert: Callable[[Any], Any]) -> Gen:
    return convert((yield from gen))


class Files:
    """Files inside the sandbox. Every operation runs inside it, with its restrictions: paths are
    the sandbox's, relative ones from its cwd, and a symlink resolves in its root."""

    def __init__(self, sb: "SandboxBase"):
        self._sb = sb

    def read(self, path: str, offset: Optional[int] = None, length: Optional[int] = None) -> Any:
        """The file's bytes (from ``offset``, at most ``length`` of them)."""
        return self._sb._run(self._sb._t.raw("GET", "/fs/file", {"path": path, "offset": offset, "length": length}))

    def write(self, path: str, data: Any, mode: Optional[int] = None) -> Any:
        """Writes a file (creating its parent directories; an existing file keeps its mode) and
        returns its absolute path and size."""
        query = {"path": path, "mode": f"{mode:04o}" if mode is not None else None}
        gen = self._sb._t.raw("PUT", "/fs/file", query, _bytes(data))
        return self._sb._run(_then(gen, lambda o: WriteResult(o["path"], o["size"])))

    def stat(self, path: str) -> Any:
        """The entry of path (a symlink itself, not followed)."""
        return self._sb._run(_then(self._sb._t.json("GET", "/fs/stat", {"path": path}), FileEntry.from_json))

    def exists(self, path: str) -> Any:
        return self._sb._run(_routes.exists(self._sb._t, path))

    def list(self, path: str = ".", depth: int = 1) -> Any:
        """The entries under a directory, ``depth`` levels deep, sorted by path."""
        gen = self._sb._t.json("GET", "/fs/list", {"path": path, "depth": depth})
        return self._sb._run(_then(gen, lambda o: [FileEntry.from_json(e) for e in o.get("entries") or []]))

    def mkdir(self, path: str, parents: bool = False, mode: Optional[int] = None) -> Any:
        """Makes a directory; AlreadyExistsError when it exists, unless ``parents``."""
        body: dict[str, Any] = {"path": path, "parents": parents}
        if mode is not None:
            body["mode"] = f"{mode:04o}"
        return self._sb._run(_then(self._sb._t.json("POST", "/fs/mkdir", None, body), FileEntry.from_json))

    def move(self, src: str, dst: str) -> Any:
        gen = self._sb._t.json("POST", "/fs/move", None, {"from": src, "to": dst})
        return self._sb._run(_then(gen, FileEntry.from_json))

    def remove(self, path: str, recursive: bool = False, missing_ok: bool = False) -> Any:
        body = {"path": path, "recursive": recursive, "missing_ok": missing_ok}
        return self._sb._run(self._sb._t.json("POST", "/fs/remove", None, body))

    def read_archive(self, path: str) -> Any:
        """A tar archive of path: a directory's tree under its own name, or the one file."""
        return self._sb._run(self._sb._t.raw("GET", "/fs/archive", {"path": path}))

    def write_archive(self, directory: str, tar: Any) -> Any:
        """Extracts a tar archive into directory (created if missing), inside the sandbox and
        never following a symlink; returns how many files and bytes it wrote."""
        gen = self._sb._t.raw("PUT", "/fs/archive", {"path": directory}, _bytes(tar), "application/x-tar")
        return self._sb._run(_then(gen, lambda o: ArchiveResult(o["files"], o["bytes"])))


class Processes:
    """Background processes: they outlive the request that started them, and jail keeps their
    output (the last MiB of each stream) to read by offset from any connection."""

    def __init__(self, sb: "SandboxBase"):
        self._sb = sb

    def _pid(self, pid: int, suffix: str = "") -> str:
        return f"/processes/{int(pid)}{suffix}"

    def start(
        self,
        cmd: Command,
        *,
        cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
        stdin: bool = False,
        input: Optional[Data] = None,
        tty: Optional[tuple[int, int]] = None,
        merge_output: bool = False,
    ) -> Any:
        """Starts a command (a string runs as /bin/sh -c) and returns its record once it runs.
        ``stdin=True`` gives it a pipe for send_stdin; ``tty=(cols, rows)`` a terminal."""
        body = _routes.command_body(cmd, cwd, env, timeout, stdin, input, tty, merge_output)
        return self._sb._run(_then(self._sb._t.json("POST", "/processes", None, body), ProcessInfo.from_json))

    def list(self, running: bool = False) -> Any:
        gen = self._sb._t.json("GET", "/processes", {"running": "1" if running else None})
        return self._sb._run(_then(gen, lambda o: [ProcessInfo.from_json(p) for p in o.get("processes") or []]))

    def get(self, pid: int) -> Any:
        return self._sb._run(_then(self._sb._t.json("GET", self._pid(pid)), ProcessInfo.from_json))

    def output(self, pid: int, stdout: int = 0, stderr: int = 0, wait: Optional[float] = None, max_bytes: Optional[int] = None) -> Any:
        """Output past the offsets; waits up to ``wait`` seconds for some (or the end)."""
        query = {"stdout": stdout, "stderr": stderr, "wait": go_duration(wait) if wait else None, "max_bytes": max_bytes}
        return self._sb._run(_then(self._sb._t.json("GET", self._pid(pid, "/output"), query), ProcessOutput.from_json))

    def attach(self, pid: int, on_stdout: Optional[Callback] = None, on_stderr: Optional[Callback] = None, stdout: int = 0, stderr: int = 0) -> Any:
        """Follows the output from the offsets until the process ends; returns it as exec does.
        Interrupting it leaves the process running."""
        query = {"stdout": stdout, "stderr": stderr}
        return self._sb._run(_routes.events(self._sb._t, "GET", self._pid(pid, "/attach"), query, None, on_stdout, on_stderr))

    def wait(self, pid: int, timeout: Optional[float] = None) -> Any:
        """The record once the process has ended; DeadlineExceededError after ``timeout``."""
        query = {"timeout": go_duration(timeout) if timeout else None}
        return self._sb._run(_then(self._sb._t.json("GET", self._pid(pid, "/wait"), query), ProcessInfo.from_json))

    def send_stdin(self, pid: int, data: Data, close: bool = False) -> Any:
        query = {"close": "1" if close else None}
        return self._sb._run(self._sb._t.raw("POST", self._pid(pid, "/stdin"), query, _bytes(data)))

    def close_stdin(self, pid: int) -> Any:
        return self.send_stdin(pid, b"", close=True)

    def signal(self, pid: int, sig: Union[str, int] = "TERM") -> Any:
        """Signals the process's group; returns False when it has ended already."""
        return self._sb._run(_routes.signal_or_missing(self._sb._t, pid, sig))

    def kill(self, pid: int) -> Any:
        """SIGKILL to the process's group; returns False when it has ended already."""
        return self.signal(pid, "KILL")

    def resize(self, pid: int, cols: int, rows: int) -> Any:
        return self._sb._run(self._sb._t.json("POST", self._pid(pid, "/resize"), None, {"cols": cols, "rows": rows}))

    def remove(self, pid: int) -> Any:
        """Kills the process if it runs and drops its record and output."""
        return self._sb._run(self._sb._t.json("DELETE", self._pid(pid)))


class Workspace:
    """The change set of an overlay workspace (``create(workspace="overlay")``): what the
    commands write in the working directory waits there, and the host's tree does not change
    until ``apply``. While the sandbox lives its socket answers; after ``delete`` (which keeps a
    change set holding changes) ``jail serve``'s does. NotFoundError: no change set."""

    def __init__(self, sb: "SandboxBase"):
        self._sb = sb

    def changes(self) -> Any:
        """The ChangeSet: its changes, and those in conflict with the tree."""
        return self._sb._run(_then(self._sb._t.json("GET", "/changes"), ChangeSet.from_json))

    def diff(self, *paths: str) -> Any:
        """The changes (at or beneath ``paths``; none: all) as one patch in git's format, as
        ``jail diff`` prints it. Bytes that are not UTF-8 stay surrogate escapes, so
        ``.encode("utf-8", "surrogateescape")`` is the patch ``git apply`` reads."""
        gen = self._sb._t.raw("GET", "/changes/diff", {"path": list(paths)})
        return self._sb._run(_then(gen, lambda b: b.decode("utf-8", "surrogateescape")))

    def apply(self, *paths: str, allow: Sequence[str] = (), overwrite: bool = False) -> Any:
        """Writes the changes (at or beneath ``paths``, relative to the tree or absolute inside
        it; none: all) into the tree and returns an ApplyResult. Every change is checked first:
        if any is refused or in conflict nothing is written and ApplyRefusedError names them.
        ``allow`` takes refused classes anyway (git, protected, autorun, links, special);
        ``overwrite`` takes conflicting changes over the tree's."""
        body: dict[str, Any] = {"paths": list(paths), "allow": list(allow), "overwrite": overwrite}
        return self._sb._run(_then(self._sb._t.json("POST", "/changes/apply", None, body), ApplyResult.from_json))

    def discard(self) -> Any:
        """Drops the change set; FailedPreconditionError while the sandbox lives (delete it
        first)."""
        return self._sb._run(self._sb._t.json("DELETE", "/changes"))


class SandboxBase:
    _run: Callable[[Gen], Any]  # the driver, set by each subclass

    def __init__(self, info: SandboxInfo):
        self.info = info
        self._t = Target(info.id, info.socket)
        self.files = Files(self)
        self.processes = Processes(self)
        self.workspace = Workspace(self)

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def name(self) -> Optional[str]:
        return self.info.name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id}{' ' + self.name if self.name else ''} {self.info.state}>"

    @classmethod
    def create(cls, profile: Optional[str] = None, **options: Any) -> Any:
        """Creates a sandbox from a profile (default ``agent``) and returns it once it is ready
        to run commands. The options (keyword only; durations in seconds):

        - ``workdir``: the host directory the profile's ``$CWD`` means (default: the current
          directory); ``cwd``: the commands' default working directory inside;
        - ``read``, ``write``, ``hide``, ``tmpfs``: lists of more grants;
        - ``network`` (``none``, ``host``, ``proxy``), ``allow_hosts`` (the hosts its egress
          proxy reaches), ``allow_private``;
        - ``env``: variables of every command; ``timeout``: every command's default timeout;
        - ``workspace``: ``"overlay"`` keeps the working directory's writes in the sandbox's
          change set (``sb.workspace``) until applied; default: the profile's (``bind``);
        - ``cache``: tools whose caches the project keeps between sandboxes and runs (e.g.
          ``["go", "npm"]``; ``["none"]`` for none; default: the profile's);
        - ``name`` (unique among your sandboxes, usable wherever the id is), ``labels``;
        - ``idle_timeout``: removes it after so long without API use; ``ttl``: so long after
          create.
        """
        return cls._run(cls._made(_routes.create(_routes.create_request(profile=profile, **options))))

    @classmethod
    def get(cls, id_or_name: str) -> Any:
        """The sandbox with this id or name; NotFoundError when there is none."""
        return cls._run(cls._made(_routes.get(id_or_name)))

    @classmethod
    def list(cls, labels: Optional[Mapping[str, str]] = None, name: Optional[str] = None, state: Optional[Sequence[str]] = None) -> Any:
        """Your sandboxes (running ones and records of ended ones), those with all ``labels``."""
        return cls._run(_then(_routes.list_(labels, name, state), lambda infos: [cls(i) for i in infos]))

    @classmethod
    def prune(cls) -> Any:
        """Removes the records of ended sandboxes; returns their ids."""
        return cls._run(_routes.prune())

    @classmethod
    def _made(cls, gen: Gen) -> Gen:
        """An operation answering a SandboxInfo, made to answer a sandbox of this class."""
        return cls((yield from gen))

    def _store(self, gen: Gen) -> Gen:
        """An operation answering the sandbox object, kept as ``info``."""
        self.info = SandboxInfo.from_json((yield from gen))
        return self.info

    def exec(
        self,
        cmd: Command,
        *,
        timeout: Optional[float] = None,
        cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        on_stdout: Optional[Callback] = None,
        on_stderr: Optional[Callback] = None,
        input: Optional[Data] = None,
        merge_output: bool = False,
    ) -> Any:
        """Runs a command to completion (a string runs as /bin/sh -c, a list is an argv) and
        returns its ExecResult; a timeout (seconds) ends it with exit code 124 and
        ``timed_out``. ``on_stdout``/``on_stderr`` get the output as it comes. Interrupting the
        call kills the command."""
        body = _routes.command_body(cmd, cwd, env, timeout, False, input, None, merge_output)
        return self._run(_routes.events(self._t, "POST", "/exec", None, body, on_stdout, on_stderr))

    def refresh(self) -> Any:
        """Fetches the sandbox object again (with its processes) into ``info`` and returns it."""
        return self._run(self._store(self._t.json("GET", "")))

    def update(self, *, ttl: Optional[float] = None, idle_timeout: Optional[float] = None, labels: Optional[Mapping[str, str]] = None) -> Any:
        """Changes the timers (seconds; ``ttl`` counts from now, 0 removes it) or replaces the
        labels. The policy (profile, grants, network) is fixed at create."""
        body: dict[str, Any] = {}
        if ttl is not None:
            body["ttl"] = go_duration(ttl)
        if idle_timeout is not None:
            body["idle_timeout"] = go_duration(idle_timeout)
        if labels is not None:
            body["labels"] = dict(labels)
        return self._run(self._store(self._t.json("PATCH", "", None, body)))

    def set_timeout(self, seconds: float) -> Any:
        """Removes the sandbox ``seconds`` from now (E2B's setTimeout); 0 removes the deadline."""
        return self.update(ttl=seconds)

    def delete(self, force: bool = True, missing_ok: bool = False) -> Any:
        """Removes the sandbox: every process, file and socket of it. ``force=False`` refuses
        (FailedPreconditionError) while a command of exec or start still runs."""
        return self._run(_routes.delete(self._t, force, missing_ok))

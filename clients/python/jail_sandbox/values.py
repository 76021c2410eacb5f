"""The values of jail's API as Python sees them: durations in seconds (the API's are Go duration
strings), times as aware datetimes, bytes as bytes (the API's are base64 inside JSON)."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Optional

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def go_duration(seconds: float) -> str:
    """A duration in seconds as Go's text ("1.5s"), the form every duration of the API takes."""
    if seconds < 0:
        raise ValueError(f"duration {seconds!r} is negative")
    text = f"{seconds:.6f}".rstrip("0").rstrip(".")
    return f"{text}s"


def seconds(text: Optional[str]) -> Optional[float]:
    """Go's duration text ("1h30m0s") in seconds; None for an absent one."""
    if not text:
        return None
    total, pos = 0.0, 0
    for m in _PART.finditer(text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(text) and text != "0":
        raise ValueError(f"jail: duration {text!r} is not Go's duration text")
    return total


_FRACTION = re.compile(r"\.(\d+)")


def time(text: Optional[str]) -> Optional[datetime]:
    """An RFC 3339 time of the API. Its fraction is cut or padded to microseconds: Go writes up
    to nine digits, Python before 3.11 reads exactly three or six."""
    if not text:
        return None
    text = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), text.replace("Z", "+00:00"), count=1)
    return datetime.fromisoformat(text)


def b64(text: Optional[str]) -> bytes:
    return base64.b64decode(text) if text else b""


@dataclass
class ExecResult:
    """How a command ended: its exit code (128+N when signal N killed it, 124 on timeout) and all
    it wrote."""

    exit_code: int
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False
    signal: Optional[str] = None
    pid: Optional[int] = None
    duration: Optional[float] = None


@dataclass
class ExitStatus:
    exit_code: int
    signal: Optional[str] = None
    timed_out: bool = False

    @classmethod
    def from_json(cls, obj: Optional[dict]) -> Optional["ExitStatus"]:
        if obj is None:
            return None
        return cls(obj.get("exit_code", 0), obj.get("signal"), bool(obj.get("timed_out")))


@dataclass
class ProcessInfo:
    """A process jail started in the sandbox; ``pid`` is its pid inside the sandbox."""

    pid: int
    cmd: list[str]
    running: bool
    background: bool = True
    cwd: Optional[str] = None
    tty: bool = False
    stdin: Optional[str] = None
    exit_code: Optional[int] = None
    signal: Optional[str] = None
    timed_out: bool = False
    started_at: Optional[datetime] = None
    ended_at: Optional[datetime] = None
    stdout_bytes: int = 0
    stderr_bytes: int = 0

    @classmethod
    def from_json(cls, obj: dict) -> "ProcessInfo":
        return cls(
            pid=obj["pid"],
            cmd=list(obj.get("cmd") or []),
            running=bool(obj.get("running")),
            background=bool(obj.get("background", True)),
            cwd=obj.get("cwd"),
            tty=bool(obj.get("tty")),
            stdin=obj.get("stdin"),
            exit_code=obj.get("exit_code"),
            signal=obj.get("signal"),
            timed_out=bool(obj.get("timed_out")),
            started_at=time(obj.get("started_at")),
            ended_at=time(obj.get("ended_at")),
            stdout_bytes=obj.get("stdout_bytes", 0),
            stderr_bytes=obj.get("stderr_bytes", 0),
        )


@dataclass
class ProcessOutput:
    """A background process's output from the offsets asked for: pass ``next_stdout`` and
    ``next_stderr`` back as the next offsets. ``exit`` is set once it ended and all is read."""

    stdout: bytes
    stderr: bytes
    next_stdout: int
    next_stderr: int
    stdout_dropped: int = 0
    stderr_dropped: int = 0
    running: bool = False
    exit: Optional[ExitStatus] = None

    @classmethod
    def from_json(cls, obj: dict) -> "ProcessOutput":
        return cls(
            stdout=b64(obj.get("stdout")),
            stderr=b64(obj.get("stderr")),
            next_stdout=obj.get("next_stdout", 0),
            next_stderr=obj.get("next_stderr", 0),
            stdout_dropped=obj.get("stdout_dropped", 0),
            stderr_dropped=obj.get("stderr_dropped", 0),
            running=bool(obj.get("running")),
            exit=ExitStatus.from_json(obj.get("exit")),
        )


@dataclass
class FileEntry:
    """A file as the sandbox sees it; ``type`` is file, dir, symlink or other."""

    name: str
    path: str
    type: str
    size: int = 0
    mode: int = 0
    mtime: Optional[datetime] = None
    symlink_target: Optional[str] = None

    @classmethod
    def from_json(cls, obj: dict) -> "FileEntry":
        return cls(
            name=obj.get("name", ""),
            path=obj["path"],
            type=obj.get("type", "other"),
            size=obj.get("size", 0),
            mode=int(obj.get("mode") or "0", 8),
            mtime=time(obj.get("mtime")),
            symlink_target=obj.get("symlink_target"),
        )


@dataclass
class WriteResult:
    path: str
    size: int


@dataclass
class ArchiveResult:
    files: int
    bytes: int


@dataclass
class Change:
    """One change of a change set: ``status`` is ``git status --short``'s letter (A, M, D, R, T),
    ``path`` relative to the tree, ``from_`` the old path of a rename."""

    status: str
    path: str
    from_: Optional[str] = None

    @classmethod
    def from_json(cls, obj: dict) -> "Change":
        return cls(status=obj["status"], path=obj["path"], from_=obj.get("from"))


@dataclass
class Held:
    """A change apply stops on: refused (``allow`` is the class that takes it anyway: git,
    protected, autorun, links, special) or in conflict with the tree."""

    path: str
    reason: str
    allow: Optional[str] = None

    @classmethod
    def from_json(cls, obj: dict) -> "Held":
        return cls(path=obj["path"], reason=obj.get("reason", ""), allow=obj.get("allow"))


@dataclass
class ChangeSet:
    """What an overlay workspace's commands wrote, held back from the host's ``tree``. ``live``:
    the sandbox lives and its commands still write here; ``conflicts``: changes whose path
    changed in the tree since the sandbox was created."""

    id: str
    tree: str
    live: bool
    changes: list[Change] = field(default_factory=list)
    conflicts: list[Held] = field(default_factory=list)

    @classmethod
    def from_json(cls, obj: dict) -> "ChangeSet":
        return cls(
            id=obj["id"],
            tree=obj.get("tree", ""),
            live=bool(obj.get("live")),
            changes=[Change.from_json(c) for c in obj.get("changes") or []],
            conflicts=[Held.from_json(c) for c in obj.get("conflicts") or []],
        )


@dataclass
class ApplyResult:
    """The changes apply wrote into the tree; ``removed``: the change set, applied in full after
    the sandbox's end, is gone."""

    written: list[Change]
    removed: bool = False

    @classmethod
    def from_json(cls, obj: dict) -> "ApplyResult":
        return cls(written=[Change.from_json(c) for c in obj.get("written") or []], removed=bool(obj.get("removed")))


@dataclass
class SandboxInfo:
    """The sandbox object of the API. Durations are seconds; ``raw`` is the object as jail sent
    it (fields a newer jail adds are there)."""

    id: str
    state: str
    name: Optional[str] = None
    profile: Optional[str] = None
    workdir: Optional[str] = None
    cwd: Optional[str] = None
    grants: dict = field(default_factory=dict)
    network: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    created_at: Optional[datetime] = None
    last_used_at: Optional[datetime] = None
    expires_at: Optional[datetime] = None
    idle_timeout: Optional[float] = None
    ttl: Optional[float] = None
    timeout: Optional[float] = None
    socket: Optional[str] = None
    workspace: Optional[str] = None
    ended: Optional[dict] = None
    processes: list[ProcessInfo] = field(default_factory=list)
    raw: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "SandboxInfo":
        return cls(
            id=obj["id"],
            state=obj.get("state", ""),
            name=obj.get("name") or None,
            profile=obj.get("profile"),
            workdir=obj.get("workdir"),
            cwd=obj.get("cwd"),
            grants=obj.get("grants") or {},
            network=obj.get("network") or {},
            labels=obj.get("labels") or {},
            created_at=time(obj.get("created_at")),
            last_used_at=time(obj.get("last_used_at")),
            expires_at=time(obj.get("expires_at")),
            idle_timeout=seconds(obj.get("idle_timeout")),
            ttl=seconds(obj.get("ttl")),
            timeout=seconds(obj.get("timeout")),
            socket=obj.get("socket"),
            workspace=obj.get("workspace"),
            ended=obj.get("ended"),
            processes=[ProcessInfo.from_json(p) for p in obj.get("processes") or []],
            raw=obj,
        )

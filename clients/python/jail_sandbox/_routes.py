"""docs/api.md's routes as _wire operations: what to send and what the answer means, for both
clients."""

from __future__ import annotations

import base64
import json
import os
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from . import _locate, errors
from ._wire import Emit, Gen, RunCommand, call, call_bytes, call_json, json_body, segment
from .values import ExecResult, SandboxInfo, go_duration, seconds

Command = Union[str, Sequence[str]]


class _NoDaemon(errors.JailError):
    """No daemon, and no sandbox's socket where any would do: the caller has a way without."""

    def __init__(self) -> None:
        super().__init__("jail: no socket answers")


def _no_sandbox(id_or_name: str) -> Callable[[], errors.JailError]:
    return lambda: errors.error("not_found", f'jail: sandbox "{id_or_name}": no such sandbox (no socket of it answers)', 404)


class Target:
    """Where one sandbox's routes go: its id (routes name it by id, so a name given later to
    another sandbox cannot redirect them) and the sockets that answer for it."""

    def __init__(self, sandbox_id: str, socket: Optional[str] = None):
        self.id = sandbox_id
        self.socket = socket

    def path(self, suffix: str = "") -> str:
        return f"/v1/sandboxes/{segment(self.id)}{suffix}"

    def json(self, method: str, suffix: str, query: Optional[dict] = None, body: Any = None) -> Gen:
        data = json_body(body) if body is not None else None
        return call_json(self._sockets(), _no_sandbox(self.id), method, self.path(suffix), query, data, "application/json" if data is not None else None)

    def raw(self, method: str, suffix: str, query: Optional[dict] = None, body: Optional[bytes] = None, content_type: str = "application/octet-stream") -> Gen:
        """A request whose body or answer is raw bytes (a file, a tar stream)."""
        if body is not None:
            return call_json(self._sockets(), _no_sandbox(self.id), method, self.path(suffix), query, body, content_type)
        return call_bytes(self._sockets(), _no_sandbox(self.id), method, self.path(suffix), query)

    def stream(self, method: str, suffix: str, query: Optional[dict] = None, body: Any = None) -> Gen:
        data = json_body(body) if body is not None else None
        return call(self._sockets(), _no_sandbox(self.id), method, self.path(suffix), query, data, "application/json" if data is not None else None)

    def _sockets(self) -> list[str]:
        return _locate.sandbox_sockets(self.id, self.socket)


def _lookup_sockets(id_or_name: str) -> list[str]:
    if id_or_name.startswith(_locate.ID_PREFIX):
        return _locate.sandbox_sockets(id_or_name)
    return _locate.any_sockets()


# Sandboxes


def create_request(
    *,
    profile: Optional[str] = None,
    workdir: Optional[str] = None,
    cwd: Optional[str] = None,
    read: Sequence[str] = (),
    write: Sequence[str] = (),
    hide: Sequence[str] = (),
    tmpfs: Sequence[str] = (),
    network: Optional[str] = None,
    allow_hosts: Sequence[str] = (),
    allow_private: bool = False,
    env: Optional[Mapping[str, str]] = None,
    cache: Sequence[str] = (),
    timeout: Optional[float] = None,
    name: Optional[str] = None,
    labels: Optional[Mapping[str, str]] = None,
    idle_timeout: Optional[float] = None,
    ttl: Optional[float] = None,
    workspace: Optional[str] = None,
) -> dict:
    """POST /v1/sandboxes's body; durations in seconds."""
    req: dict[str, Any] = {"workdir": os.path.abspath(workdir or os.getcwd())}
    for key, value in (("profile", profile), ("cwd", cwd), ("name", name), ("workspace", workspace)):
        if value:
            req[key] = value
    grants = {k: list(v) for k, v in (("read", read), ("write", write), ("hide", hide), ("tmpfs", tmpfs)) if v}
    for path in (p for paths in grants.values() for p in paths):
        # jail serve refuses these and `jail create` would take them from the workdir: refused
        # here, so a create means the same with a daemon and without.
        if not path.startswith(("/", "~", "$")):
            raise errors.error("invalid_argument", f'jail: grant "{path}": paths are absolute (or start with ~ or a variable)')
    if grants:
        req["grants"] = grants
    net: dict[str, Any] = {}
    if network:
        net["mode"] = network
    if allow_hosts:
        net["allow_hosts"] = list(allow_hosts)
    if allow_private:
        net["allow_private"] = True
    if net:
        req["network"] = net
    if env:
        req["env"] = dict(env)
    if cache:
        req["cache"] = list(cache)
    if labels:
        req["labels"] = dict(labels)
    for key, value in (("timeout", timeout), ("idle_timeout", idle_timeout), ("ttl", ttl)):
        if value:
            req[key] = go_duration(value)
    return req


def create_args(req: dict) -> list[str]:
    """The arguments of `jail create --json` for a create request: one flag for each field, as
    docs/api.md's table has them (and as `jail serve` turns the request into them)."""
    args = ["create", "--json"]

    def flag(name: str, value: str) -> None:
        args.append(f"--{name}={value}")

    if "profile" in req:
        flag("profile", req["profile"])
    if "cwd" in req:
        flag("cwd", req["cwd"])
    grants = req.get("grants", {})
    for key, name in (("read", "ro"), ("write", "rw"), ("hide", "hide"), ("tmpfs", "tmpfs")):
        for path in grants.get(key, []):
            flag(name, path)
    net = req.get("network", {})
    if "mode" in net:
        flag("net", net["mode"])
    for host in net.get("allow_hosts", []):
        flag("allow-host", host)
    if net.get("allow_private"):
        args.append("--allow-private")
    for k, v in sorted(req.get("env", {}).items()):
        flag("env", f"{k}={v}")
    if "cache" in req:
        flag("cache", ",".join(req["cache"]))
    for key, name in (("timeout", "timeout"), ("idle_timeout", "idle-timeout"), ("ttl", "ttl")):
        if key in req:
            flag(name, req[key])
    if "workspace" in req:
        flag("workspace", req["workspace"])
    if "name" in req:
        flag("name", req["name"])
    for k, v in sorted(req.get("labels", {}).items()):
        flag("label", f"{k}={v}")
    return args


def create(req: dict) -> Gen:
    """Creates through jail serve when it answers, else by running `jail create --json` in the
    workdir (the sandbox's keeper then answers on the sandbox's own socket)."""
    try:
        obj = yield from call_json(_locate.daemon_socket(), _NoDaemon, "POST", "/v1/sandboxes", None, json_body(req), "application/json")
        return SandboxInfo.from_json(obj)
    except _NoDaemon:
        pass
    if not os.path.isdir(req["workdir"]):  # checked first: a missing cwd fails as a missing binary would
        raise errors.error("invalid_argument", f"jail: create: workdir {req['workdir']}: no such directory")
    code, out, err = yield from _run_jail(create_args(req), req["workdir"])
    try:
        obj = json.loads(out)
    except ValueError:
        obj = None
    if code == 0 and isinstance(obj, dict) and "id" in obj:
        return SandboxInfo.from_json(obj)
    if isinstance(obj, dict) and "error" in obj:
        raise errors.from_object(obj["error"])
    raise _failure(err, "create", code)


def get(id_or_name: str) -> Gen:
    obj = yield from call_json(_lookup_sockets(id_or_name), _no_sandbox(id_or_name), "GET", f"/v1/sandboxes/{segment(id_or_name)}")
    return SandboxInfo.from_json(obj)


def list_(labels: Optional[Mapping[str, str]] = None, name: Optional[str] = None, state: Optional[Sequence[str]] = None) -> Gen:
    query = {
        "label": [f"{k}={v}" for k, v in (labels or {}).items()],
        "name": name,
        "state": ",".join(state) if state else None,
    }
    try:
        obj = yield from call_json(_locate.any_sockets(), _NoDaemon, "GET", "/v1/sandboxes", query)
    except _NoDaemon:
        if not _locate.any_records():
            return []
        # Only records of dead sandboxes are left, whose sockets answer nothing: `jail ls
        # --json` reads them, and the filter is applied here.
        obj = json.loads((yield from _cli(["ls", "--json"])))
        return [i for i in (SandboxInfo.from_json(o) for o in obj.get("sandboxes") or []) if _matches(i, labels, name, state)]
    return [SandboxInfo.from_json(o) for o in obj.get("sandboxes") or []]


def _matches(info: SandboxInfo, labels: Optional[Mapping[str, str]], name: Optional[str], state: Optional[Sequence[str]]) -> bool:
    return (
        all(info.labels.get(k) == v for k, v in (labels or {}).items())
        and (not name or info.name == name)
        and (not state or info.state in state)
    )


def _failure(err: bytes, what: str, code: int) -> errors.JailError:
    """jail's own error line (its last on stderr) of a command that failed."""
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return errors.error("internal", lines[-1] if lines else f"jail: {what} exited with status {code}")


def _run_jail(args: list[str], cwd: Optional[str]) -> Gen:
    """Runs jail's binary; answers its exit status, stdout and stderr."""
    argv = [_locate.jail_binary()] + args
    try:
        return (yield RunCommand(argv, cwd))
    except (FileNotFoundError, PermissionError) as e:
        raise errors.error("failed_precondition", f"jail: {args[0]}: {argv[0]}: {e.strerror} (install jail, or set JAIL_BIN)") from None


def _cli(args: list[str]) -> Gen:
    """Runs jail with args and answers what it printed."""
    code, out, err = yield from _run_jail(args, None)
    if code != 0:
        raise _failure(err, args[0], code)
    return out


def prune() -> Gen:
    try:
        obj = yield from call_json(_locate.any_sockets(), _NoDaemon, "POST", "/v1/prune")
    except _NoDaemon:
        # Nothing answers: `jail prune` finds dead sandboxes without any socket.
        return (yield from _cli(["prune"])).decode().split()
    return list(obj.get("removed") or [])


def delete(t: Target, force: bool, missing_ok: bool) -> Gen:
    try:
        yield from t.json("DELETE", "", {"force": "1" if force else None})
    except errors.NotFoundError:
        if not missing_ok:
            raise


# Commands


def command_body(
    cmd: Command,
    cwd: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    timeout: Optional[float] = None,
    stdin: bool = False,
    input: Optional[Union[bytes, str]] = None,
    tty: Optional[tuple[int, int]] = None,
    merge_output: bool = False,
) -> dict:
    """The request of exec and of a process's start: a string runs as /bin/sh -c, a list is
    an argv."""
    body: dict[str, Any] = {"shell": cmd} if isinstance(cmd, str) else {"cmd": list(cmd)}
    if cwd:
        body["cwd"] = cwd
    if env:
        body["env"] = dict(env)
    if timeout:
        body["timeout"] = go_duration(timeout)
    if stdin:
        body["stdin"] = "pipe"
    if input is not None:
        body["input"] = base64.b64encode(input.encode() if isinstance(input, str) else bytes(input)).decode()
    if tty:
        body["tty"] = {"cols": tty[0], "rows": tty[1]}
    if merge_output:
        body["merge_output"] = True
    return body


def events(t: Target, method: str, suffix: str, query: Optional[dict], body: Optional[dict], on_stdout: Any, on_stderr: Any) -> Gen:
    """Reads an exec stream (exec, attach) to its exit event: the output collected, each piece
    also handed to its callback as it comes."""
    _, reader = yield from t.stream(method, suffix, query, body)
    out, err = bytearray(), bytearray()
    pid = None
    while True:
        line = yield from reader.line()
        if line is None:
            raise errors.error("internal", "jail: exec: the stream ended without an exit event (the sandbox was removed?)")
        if not line.strip():
            continue
        ev = json.loads(line)
        kind = ev.get("event")
        if kind in ("stdout", "stderr", "output"):
            data = base64.b64decode(ev.get("data") or "")
            (err if kind == "stderr" else out).extend(data)
            callback = on_stderr if kind == "stderr" else on_stdout
            if callback is not None and data:
                yield Emit(callback, data)
        elif kind == "start":
            pid = ev.get("pid")
        elif kind == "exit":
            return ExecResult(
                exit_code=ev.get("exit_code", 0),
                stdout=bytes(out),
                stderr=bytes(err),
                timed_out=bool(ev.get("timed_out")),
                signal=ev.get("signal"),
                pid=pid,
                duration=seconds(ev.get("duration")),
            )
        elif kind == "error":
            raise errors.from_object(ev.get("error"))


def signal_or_missing(t: Target, pid: int, sig: Union[str, int]) -> Gen:
    """Signals a process; False when it has ended already."""
    try:
        yield from t.json("POST", f"/processes/{int(pid)}/signal", None, {"signal": str(sig)})
    except errors.NotFoundError:
        return False
    return True


def exists(t: Target, path: str) -> Gen:
    try:
        yield from t.json("GET", "/fs/stat", {"path": path})
    except errors.NotFoundError:
        return False
    return True

"""Where jail's API answers (docs/api.md, Transport): the per-user runtime directory, `jail
serve`'s socket in it, each sandbox's own socket, and the jail binary that creates sandboxes
when no daemon runs."""

from __future__ import annotations

import os
import shutil
import stat

from . import errors

DAEMON_SOCKET = "jail.sock"
SANDBOX_SOCKET = "api.sock"
ID_PREFIX = "jb_"


def runtime_dir() -> str:
    """$JAIL_RUNTIME_DIR, else $XDG_RUNTIME_DIR/jail, else $TMPDIR/jail-UID, as jail decides."""
    if os.environ.get("JAIL_RUNTIME_DIR"):
        return os.environ["JAIL_RUNTIME_DIR"]
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(xdg):
        return os.path.join(xdg, "jail")
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"jail-{os.getuid()}")


def _private(d: str) -> bool:
    """Whether d exists; refuses it, as jail does, unless it is a directory of this user's that
    no one else may enter: a socket in someone else's directory could be theirs."""
    try:
        st = os.lstat(d)
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        raise errors.error("failed_precondition", f"jail: runtime directory {d}: not a directory (a symlink?); remove it")
    if st.st_uid != os.getuid():
        raise errors.error("failed_precondition", f"jail: runtime directory {d}: owned by uid {st.st_uid}, not you; remove it or set XDG_RUNTIME_DIR")
    if st.st_mode & 0o077:
        raise errors.error("failed_precondition", f"jail: runtime directory {d}: mode {st.st_mode & 0o777:04o} lets others in; chmod 700 it")
    return True


def daemon_socket() -> list[str]:
    """jail serve's socket, as a list of candidates: empty when it does not exist."""
    d = runtime_dir()
    path = os.path.join(d, DAEMON_SOCKET)
    return [path] if _private(d) and os.path.exists(path) else []


def sandbox_sockets(sandbox_id: str | None, known: str | None = None) -> list[str]:
    """The sockets to try for a sandbox: the daemon's, then the sandbox's own (``known``, the
    object's ``socket``, else the one its id names)."""
    own = known
    if own is None and sandbox_id and sandbox_id.startswith(ID_PREFIX) and "/" not in sandbox_id:
        own = os.path.join(runtime_dir(), sandbox_id, SANDBOX_SOCKET)
    return daemon_socket() + ([own] if own else [])


def _sandbox_dirs(d: str) -> list[str]:
    return sorted(e for e in os.listdir(d) if e.startswith(ID_PREFIX))


def any_records() -> bool:
    """Whether the runtime directory holds any sandbox, live or dead."""
    d = runtime_dir()
    return _private(d) and bool(_sandbox_dirs(d))


def any_sockets() -> list[str]:
    """Every socket that may answer a route not tied to one sandbox (a list, a name): the
    daemon's, then every sandbox's own — each answers every route."""
    d = runtime_dir()
    if not _private(d):
        return []
    own = [os.path.join(d, e, SANDBOX_SOCKET) for e in _sandbox_dirs(d)]
    return daemon_socket() + [p for p in own if os.path.exists(p)]


def jail_binary() -> str:
    """$JAIL_BIN, else jail on PATH."""
    if os.environ.get("JAIL_BIN"):
        return os.environ["JAIL_BIN"]
    found = shutil.which("jail")
    if not found:
        raise errors.error("failed_precondition", "jail: create: no jail binary on PATH (install jail, or set JAIL_BIN)")
    return found
